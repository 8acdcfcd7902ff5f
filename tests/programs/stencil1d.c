/* 1D Jacobi (PolyBench jacobi-1d, first statement) on a prime extent, with
   array sections on plain pointers and a combined construct. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 1009;
  float *A = malloc(n * sizeof *A), *B = malloc(n * sizeof *B);
  for (int i = 0; i < n; i++) { A[i] = rng_float(); B[i] = -1.0f; }

#pragma omp target teams distribute parallel for map(to: A[0:n]) map(from: B[0:n]) // expect: emu
  for (int i = 1; i < n - 1; i++)
    B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);

  print_floats("B", B, n);
  free(A);
  free(B);
  return 0;
}
