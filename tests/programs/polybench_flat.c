/* PolyBench/C-style kernels on flat row-major arrays with run-time sizes, the way
   ported codes index them (A[i*nk + k]): gemm (C = beta*C + alpha*A*B, the k loop
   accumulating into C[i][j]), atax (y = A^T (A x), two regions), and a 2-D Jacobi time
   loop inside a target data region. gemm and atax are imperfect nests (a statement
   beside the inner loop); the initialisation is folded into the inner loop's first
   iteration, which makes them perfect nests for the tiled kernel (imperfect_nests.c). */
#include <stdlib.h>
#include "common.h"

static void gemm(int ni, int nj, int nk, float alpha, float beta, float *C, const float *A, const float *B) {
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:ni*nk], B[0:nk*nj]) map(tofrom: C[0:ni*nj]) // expect: emu tiled
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      C[i * nj + j] = beta * C[i * nj + j];
      for (int k = 0; k < nk; k++)
        C[i * nj + j] = C[i * nj + j] + alpha * A[i * nk + k] * B[k * nj + j];
    }
}

static void atax(int m, int n, const double *A, const double *x, double *y, double *tmp) {
#pragma omp target teams distribute parallel for map(to: A[0:m*n], x[0:n]) map(from: tmp[0:m]) // expect: emu tiled
  for (int i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (int j = 0; j < n; j++)
      tmp[i] = tmp[i] + A[i * n + j] * x[j];
  }
#pragma omp target teams distribute parallel for map(to: A[0:m*n], tmp[0:m]) map(from: y[0:n]) // expect: emu tiled
  for (int j = 0; j < n; j++) {
    y[j] = 0.0;
    for (int i = 0; i < m; i++)
      y[j] = y[j] + A[i * n + j] * tmp[i];
  }
}

static void jacobi(int n, int steps, float *a, float *b) {
#pragma omp target data map(tofrom: a[0:n*n]) map(to: b[0:n*n]) // expect: emu
  for (int t = 0; t < steps; t++) {
#pragma omp target teams distribute parallel for collapse(2) // expect: emu tiled
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        b[i * n + j] = 0.2f * (a[i * n + j] + a[i * n + j - 1] + a[i * n + j + 1] + a[(i + 1) * n + j] + a[(i - 1) * n + j]);
#pragma omp target teams distribute parallel for collapse(2) // expect: emu tiled
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        a[i * n + j] = 0.2f * (b[i * n + j] + b[i * n + j - 1] + b[i * n + j + 1] + b[(i + 1) * n + j] + b[(i - 1) * n + j]);
  }
}

int main(void) {
  int ni = 23, nj = 29, nk = 17;
  float *A = malloc(sizeof(float) * ni * nk), *B = malloc(sizeof(float) * nk * nj), *C = malloc(sizeof(float) * ni * nj);
  for (int i = 0; i < ni * nk; i++) A[i] = rng_float();
  for (int i = 0; i < nk * nj; i++) B[i] = rng_float();
  for (int i = 0; i < ni * nj; i++) C[i] = rng_float();
  gemm(ni, nj, nk, 1.5f, 0.5f, C, A, B);
  print_floats("gemm", C, (long)ni * nj);

  int m = 31, n = 37;
  double *D = malloc(sizeof(double) * m * n), *x = malloc(sizeof(double) * n), *y = malloc(sizeof(double) * n), *tmp = malloc(sizeof(double) * m);
  for (int i = 0; i < m * n; i++) D[i] = rng_float();
  for (int i = 0; i < n; i++) x[i] = rng_float();
  atax(m, n, D, x, y, tmp);
  print_doubles("atax", y, n);

  int s = 34;
  float *a = malloc(sizeof(float) * s * s), *b = malloc(sizeof(float) * s * s);
  for (int i = 0; i < s * s; i++) { a[i] = rng_float(); b[i] = a[i]; }
  jacobi(s, 4, a, b);
  print_floats("jacobi", a, (long)s * s);
  free(A); free(B); free(C); free(D); free(x); free(y); free(tmp); free(a); free(b);
  return 0;
}
