/* A function with C99 VLA parameters and a scalar coefficient (2D 9-point, Adept),
   called twice with different shapes. */
#include <stdlib.h>
#include "common.h"

static void smooth(int n, int m, float A[n][m], float X[n][m], float fac) {
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n][0:m]) map(tofrom: X[0:n][0:m]) // expect: emu
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      X[i][j] = fac * (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1] + A[i][j + 1] +
                       A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]);
}

static void run(int n, int m) {
  float (*A)[m] = malloc(sizeof(float[n][m]));
  float (*X)[m] = malloc(sizeof(float[n][m]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) { A[i][j] = rng_float(); X[i][j] = 7.0f; }
  smooth(n, m, A, X, 0.125f);
  print_floats("X", &X[0][0], (long)n * m);
  free(A);
  free(X);
}

int main(void) {
  run(19, 31);
  run(8, 5);
  return 0;
}
