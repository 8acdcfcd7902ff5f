/* 1D-jacobi — PolyBench jacobi-1d, first statement (4 points).
   One sweep, float arrays, offloaded with Tessera and checked bit for bit against
   the same loop run sequentially on the CPU. Sizes: -DN=<n> (defaults: small).
   Part of the paper's benchmark set (docs/benchmarks.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef N
#define N 1031
#endif

static unsigned rng = 2024u;
static float next_float(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)(rng >> 8) / 16777216.0f - 0.5f;
}

static void sweep_cpu(const float *A, float *B) {
  for (int i = 1; i < N - 1; i++)
    B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);
}

int main(void) {
  float *A = malloc(sizeof(float) * (size_t)N);
  float *B = malloc(sizeof(float) * (size_t)N);
  float *R_B = malloc(sizeof(float) * (size_t)N);
  float *flat[] = {(float *)A, (float *)B};
  for (int a = 0; a < 2; a++)
    for (size_t e = 0; e < (size_t)N; e++) flat[a][e] = next_float();
  memcpy(R_B, B, sizeof(float) * (size_t)N);
  struct timespec t0, t1; /* the CPU loop, timed: `tessera bench` reports it as host_loop_s */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sweep_cpu(A, R_B);
  clock_gettime(CLOCK_MONOTONIC, &t1);

#pragma omp target teams distribute parallel for collapse(1) map(to: A[0:N]) map(tofrom: B[0:N])
  for (int i = 1; i < N - 1; i++)
    B[i] = 0.33333 * (A[i - 1] + A[i] + A[i + 1]);

  int ok = 1;
  ok &= memcmp(B, R_B, sizeof(float) * (size_t)N) == 0;
  printf("1D-jacobi: %s\n", ok ? "bit-exact" : "MISMATCH");
  printf("1D-jacobi: host loop %.9f s\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  free(A);
  free(B);
  free(R_B);
  return ok ? 0 : 1;
}
