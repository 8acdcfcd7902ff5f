/* Quasi-affine and parametric loop bounds: n/2, (n+1)/2, 128/2 + 1, nx*ny. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 77, nx = 9, ny = 13;
  float *a = malloc(sizeof(float) * (n + 1));
  float *h = malloc(sizeof(float) * n);
  float *o = malloc(sizeof(float) * n);
  float *c = malloc(sizeof(float) * 65);
  float *p = malloc(sizeof(float) * nx * ny);
  float *q = malloc(sizeof(float) * nx * ny);
  for (int i = 0; i <= n; i++) a[i] = rng_float();
  for (int i = 0; i < n; i++) { h[i] = 0.0f; o[i] = 0.0f; }
  for (int i = 0; i < 65; i++) c[i] = rng_float();
  for (int i = 0; i < nx * ny; i++) { p[i] = rng_float(); q[i] = 0.0f; }

#pragma omp target teams distribute parallel for map(to: a[0:n+1]) map(tofrom: h[0:n]) // expect: emu tiled
  for (int i = 0; i < n / 2; i++)
    h[i] = a[2 * i] + a[2 * i + 1];

#pragma omp target teams distribute parallel for map(to: a[0:n+1]) map(tofrom: o[0:n]) // expect: emu tiled
  for (int i = 1; i < (n + 1) / 2; i++)
    o[i] = a[i] - a[i - 1];

#pragma omp target teams distribute parallel for map(tofrom: c[0:65]) // expect: emu tiled
  for (int i = 1; i < 128 / 2 + 1; i++)
    c[i] = c[i] * 0.5f;

#pragma omp target teams distribute parallel for map(to: p[0:nx*ny]) map(tofrom: q[0:nx*ny]) // expect: emu tiled
  for (int i = 0; i < nx * ny; i++)
    q[i] = 2.0f * p[i];

  print_floats("h", h, n);
  print_floats("o", o, n);
  print_floats("c", c, 65);
  print_floats("q", q, (long)nx * ny);
  free(a); free(h); free(o); free(c); free(p); free(q);
  return 0;
}
