/* Jacobi-2D (PolyBench style) on flat arrays with a constant row length,
   A[i*N + j] with #define N: the constant stride is the row length. */
#include <stdlib.h>
#include "common.h"

#define N 48
#define TSTEPS 3

int main(void) {
  float *A = malloc(sizeof(float) * N * N);
  float *B = malloc(sizeof(float) * N * N);
  for (int i = 0; i < N * N; i++) { A[i] = rng_float(); B[i] = A[i]; }
  for (int t = 0; t < TSTEPS; t++) {
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:N*N]) map(tofrom: B[0:N*N]) // expect: emu tiled
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        B[i * N + j] = 0.2f * (A[i * N + j] + A[i * N + j - 1] + A[i * N + j + 1] + A[(i + 1) * N + j] + A[(i - 1) * N + j]);
#pragma omp target teams distribute parallel for collapse(2) map(to: B[0:N*N]) map(tofrom: A[0:N*N]) // expect: emu tiled
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        A[i * N + j] = 0.2f * (B[i * N + j] + B[i * N + j - 1] + B[i * N + j + 1] + B[(i + 1) * N + j] + B[(i - 1) * N + j]);
  }
  print_floats("A", A, (long)N * N);
  free(A);
  free(B);
  return 0;
}
