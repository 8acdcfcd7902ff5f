/* PolyBench jacobi-1d (first statement), one sweep over 2^20 floats, offloaded
   with Tessera and checked bit for bit against the same loop on the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  int n = 1 << 20;
  float *A = malloc(n * sizeof *A), *B = calloc(n, sizeof *B), *R = calloc(n, sizeof *R);
  unsigned s = 3;
  for (int i = 0; i < n; i++) {
    s = s * 1664525u + 1013904223u;
    A[i] = (float)(s >> 8) / 16777216.0f;
  }
  for (int i = 1; i < n - 1; i++) R[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);

#pragma omp target teams distribute parallel for map(to: A[0:n]) map(tofrom: B[0:n])
  for (int i = 1; i < n - 1; i++)
    B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);

  int ok = memcmp(B, R, n * sizeof *B) == 0;
  printf("jacobi-1d %d: %s\n", n, ok ? "bit-exact" : "MISMATCH");
  return ok ? 0 : 1;
}
