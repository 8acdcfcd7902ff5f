/* In-place updates (PolyBench fdtd-2d, ey and hz statements) with compound
   assignment, in float. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int nx = 23, ny = 29;
  float (*ey)[ny] = malloc(sizeof(float[nx][ny]));
  float (*hz)[ny] = malloc(sizeof(float[nx][ny]));
  float (*ex)[ny] = malloc(sizeof(float[nx][ny]));
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) { ey[i][j] = rng_float(); hz[i][j] = rng_float(); ex[i][j] = rng_float(); }

#pragma omp target teams distribute parallel for collapse(2) map(tofrom: ey[0:nx][0:ny]) map(to: hz[0:nx][0:ny]) // expect: emu
  for (int i = 1; i < nx; i++)
    for (int j = 0; j < ny; j++)
      ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);

#pragma omp target teams distribute parallel for collapse(2) map(to: ex[0:nx][0:ny], ey[0:nx][0:ny]) map(tofrom: hz[0:nx][0:ny]) // expect: emu
  for (int i = 0; i < nx - 1; i++)
    for (int j = 0; j < ny - 1; j++)
      hz[i][j] -= 0.7 * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);

  print_floats("ey", &ey[0][0], (long)nx * ny);
  print_floats("hz", &hz[0][0], (long)nx * ny);
  free(ey);
  free(hz);
  free(ex);
  return 0;
}
