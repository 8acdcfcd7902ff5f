/* 3-D heat equation on malloc'd arrays indexed a[(i*ny + j)*nz + k], a few time
   steps with the region inside the time loop. Delinearised into a[?][ny][nz]. */
#include <stdlib.h>
#include "common.h"

static void step(int nx, int ny, int nz, const double *a, double *b) {
#pragma omp target teams distribute parallel for collapse(3) map(to: a[0:nx*ny*nz]) map(tofrom: b[0:nx*ny*nz]) // expect: emu tiled
  for (int i = 1; i < nx - 1; i++)
    for (int j = 1; j < ny - 1; j++)
      for (int k = 1; k < nz - 1; k++)
        b[(i * ny + j) * nz + k] = 0.125 * (a[((i + 1) * ny + j) * nz + k] - 2.0 * a[(i * ny + j) * nz + k] + a[((i - 1) * ny + j) * nz + k])
                                 + 0.125 * (a[(i * ny + j + 1) * nz + k] - 2.0 * a[(i * ny + j) * nz + k] + a[(i * ny + j - 1) * nz + k])
                                 + 0.125 * (a[(i * ny + j) * nz + k + 1] - 2.0 * a[(i * ny + j) * nz + k] + a[(i * ny + j) * nz + k - 1])
                                 + a[(i * ny + j) * nz + k];
}

int main(void) {
  int nx = 13, ny = 11, nz = 17;
  double *a = malloc(sizeof(double) * nx * ny * nz);
  double *b = malloc(sizeof(double) * nx * ny * nz);
  for (int i = 0; i < nx * ny * nz; i++) { a[i] = rng_float(); b[i] = a[i]; }
  for (int t = 0; t < 4; t++) {
    step(nx, ny, nz, a, b);
    double *s = a; a = b; b = s;
  }
  print_doubles("a", a, (long)nx * ny * nz);
  free(a);
  free(b);
  return 0;
}
