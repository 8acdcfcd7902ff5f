/* 2D 5-point stencil (Adept) on non-square prime extents, pointer-to-VLA arrays,
   `collapse(2)` and a runtime float coefficient. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 37, m = 53;
  float (*A)[m] = malloc(sizeof(float[n][m]));
  float (*X)[m] = malloc(sizeof(float[n][m]));
  float fac = 0.25f;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) { A[i][j] = rng_float(); X[i][j] = 0.0f; }

#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n][0:m]) map(tofrom: X[0:n][0:m]) // expect: emu
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      X[i][j] = fac * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);

  print_floats("X", &X[0][0], (long)n * m);
  free(A);
  free(X);
  return 0;
}
