/* 2D-5p — Adept 5-point stencil, no centre, runtime coefficient (5 points).
   One sweep, float arrays, offloaded with Tessera and checked bit for bit against
   the same loop run sequentially on the CPU. Sizes: -DNI=<n> -DNJ=<n> (defaults: small).
   Part of the paper's benchmark set (docs/benchmarks.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef NI
#define NI 67
#endif
#ifndef NJ
#define NJ 71
#endif

static unsigned rng = 2024u;
static float next_float(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)(rng >> 8) / 16777216.0f - 0.5f;
}

static void sweep_cpu(const float (*A)[NJ], float (*X)[NJ], float fac) {
  for (int i = 1; i < NI - 1; i++)
    for (int j = 1; j < NJ - 1; j++)
      X[i][j] = fac * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
}

int main(void) {
  float (*A)[NJ] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ);
  float (*X)[NJ] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ);
  float (*R_X)[NJ] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ);
  float fac = 0.125f;
  float *flat[] = {(float *)A, (float *)X};
  for (int a = 0; a < 2; a++)
    for (size_t e = 0; e < (size_t)NI * (size_t)NJ; e++) flat[a][e] = next_float();
  memcpy(R_X, X, sizeof(float) * (size_t)NI * (size_t)NJ);
  struct timespec t0, t1; /* the CPU loop, timed: `tessera bench` reports it as host_loop_s */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sweep_cpu(A, R_X, fac);
  clock_gettime(CLOCK_MONOTONIC, &t1);

#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:NI][0:NJ]) map(tofrom: X[0:NI][0:NJ])
  for (int i = 1; i < NI - 1; i++)
    for (int j = 1; j < NJ - 1; j++)
      X[i][j] = fac * (A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);

  int ok = 1;
  ok &= memcmp(X, R_X, sizeof(float) * (size_t)NI * (size_t)NJ) == 0;
  printf("2D-5p: %s\n", ok ? "bit-exact" : "MISMATCH");
  printf("2D-5p: host loop %.9f s\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  free(A);
  free(X);
  free(R_X);
  return ok ? 0 : 1;
}
