/* Matrix-vector product y = A x with A stored row-major in a flat array, A[i*n + j]
   (the BLAS/PolyBench way). Each y[i] is accumulated in the source's order. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int m = 45, n = 38;
  float *A = malloc(sizeof(float) * m * n);
  float *x = malloc(sizeof(float) * n);
  float *y = malloc(sizeof(float) * m);
  for (int i = 0; i < m * n; i++) A[i] = rng_float();
  for (int j = 0; j < n; j++) x[j] = rng_float();
  for (int i = 0; i < m; i++) y[i] = 0.0f;

#pragma omp target teams distribute parallel for map(to: A[0:m*n], x[0:n]) map(tofrom: y[0:m]) // expect: emu tiled
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      y[i] = y[i] + A[i * n + j] * x[j];

  print_floats("y", y, m);
  free(A);
  free(x);
  free(y);
  return 0;
}
