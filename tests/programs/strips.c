/* Stencils on malloc'd VLA-typed arrays whose extents are known at run time only: the
   inner trip counts are not compile-time constants, so the dataflow kernel streams
   them in strips sized by the resource model (crates/hls/src/dataflow.rs), a 2D
   5-point star, a point-wise in-place update and a 3D 7-point heat step, each run at
   several shapes (rows narrower than a port word, not multiples of it, one
   iteration). */
#include <stdlib.h>
#include "common.h"

static void jacobi2d(int n, int m, float (*A)[m], float (*B)[m]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n][0:m]) map(tofrom: B[0:n][0:m]) // expect: emu dataflow
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      B[i][j] = 0.2f * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i - 1][j] + A[i + 1][j]);
}

static void relax(int n, int m, float (*A)[m], float (*B)[m]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n][0:m]) map(tofrom: B[0:n][0:m]) // expect: emu dataflow
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      B[i][j] = B[i][j] - 0.5f * (A[i][j + 1] - A[i][j - 1]);
}

static void heat3d(int n, int m, int l, double (*A)[m][l], double (*B)[m][l]) {
#pragma omp target teams distribute parallel for collapse(3) map(to: A[0:n][0:m][0:l]) map(tofrom: B[0:n][0:m][0:l]) // expect: emu dataflow
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      for (int k = 1; k < l - 1; k++)
        B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                   + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                   + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                   + A[i][j][k];
}

static void run2d(int n, int m) {
  float (*A)[m] = malloc(sizeof(float[n][m]));
  float (*B)[m] = malloc(sizeof(float[n][m]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) { A[i][j] = rng_float(); B[i][j] = 3.0f; }
  jacobi2d(n, m, A, B);
  relax(n, m, A, B);
  print_floats("B", &B[0][0], (long)n * m);
  free(A);
  free(B);
}

static void run3d(int n, int m, int l) {
  double (*A)[m][l] = malloc(sizeof(double[n][m][l]));
  double (*B)[m][l] = malloc(sizeof(double[n][m][l]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      for (int k = 0; k < l; k++) { A[i][j][k] = rng_float(); B[i][j][k] = 0.0; }
  heat3d(n, m, l, A, B);
  print_doubles("B", &B[0][0][0], (long)n * m * l);
  free(A);
  free(B);
}

int main(void) {
  run2d(23, 71);
  run2d(6, 5);
  run2d(4, 3);
  run3d(9, 13, 37);
  run3d(5, 4, 3);
  return 0;
}
