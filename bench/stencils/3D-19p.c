/* 3D-19p — Adept 19-point stencil: faces and edges, no corners, no centre, runtime coefficient (19 points).
   One sweep, float arrays, offloaded with Tessera and checked bit for bit against
   the same loop run sequentially on the CPU. Sizes: -DNI=<n> -DNJ=<n> -DNK=<n> (defaults: small).
   Part of the paper's benchmark set (docs/benchmarks.md). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifndef NI
#define NI 19
#endif
#ifndef NJ
#define NJ 21
#endif
#ifndef NK
#define NK 23
#endif

static unsigned rng = 2024u;
static float next_float(void) {
  rng = rng * 1664525u + 1013904223u;
  return (float)(rng >> 8) / 16777216.0f - 0.5f;
}

static void sweep_cpu(const float (*A)[NJ][NK], float (*X)[NJ][NK], float fac) {
  for (int i = 1; i < NI - 1; i++)
    for (int j = 1; j < NJ - 1; j++)
      for (int k = 1; k < NK - 1; k++)
        X[i][j][k] = fac * (A[i - 1][j - 1][k] + A[i - 1][j][k - 1] + A[i - 1][j][k] + A[i - 1][j][k + 1] + A[i - 1][j + 1][k] + A[i][j - 1][k - 1] + A[i][j - 1][k] + A[i][j - 1][k + 1] + A[i][j][k - 1] + A[i][j][k + 1] + A[i][j + 1][k - 1] + A[i][j + 1][k] + A[i][j + 1][k + 1] + A[i + 1][j - 1][k] + A[i + 1][j][k - 1] + A[i + 1][j][k] + A[i + 1][j][k + 1] + A[i + 1][j + 1][k]);
}

int main(void) {
  float (*A)[NJ][NK] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ * (size_t)NK);
  float (*X)[NJ][NK] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ * (size_t)NK);
  float (*R_X)[NJ][NK] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ * (size_t)NK);
  float fac = 0.125f;
  float *flat[] = {(float *)A, (float *)X};
  for (int a = 0; a < 2; a++)
    for (size_t e = 0; e < (size_t)NI * (size_t)NJ * (size_t)NK; e++) flat[a][e] = next_float();
  memcpy(R_X, X, sizeof(float) * (size_t)NI * (size_t)NJ * (size_t)NK);
  struct timespec t0, t1; /* the CPU loop, timed: `tessera bench` reports it as host_loop_s */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sweep_cpu(A, R_X, fac);
  clock_gettime(CLOCK_MONOTONIC, &t1);

#pragma omp target teams distribute parallel for collapse(3) map(to: A[0:NI][0:NJ][0:NK]) map(tofrom: X[0:NI][0:NJ][0:NK])
  for (int i = 1; i < NI - 1; i++)
    for (int j = 1; j < NJ - 1; j++)
      for (int k = 1; k < NK - 1; k++)
        X[i][j][k] = fac * (A[i - 1][j - 1][k] + A[i - 1][j][k - 1] + A[i - 1][j][k] + A[i - 1][j][k + 1] + A[i - 1][j + 1][k] + A[i][j - 1][k - 1] + A[i][j - 1][k] + A[i][j - 1][k + 1] + A[i][j][k - 1] + A[i][j][k + 1] + A[i][j + 1][k - 1] + A[i][j + 1][k] + A[i][j + 1][k + 1] + A[i + 1][j - 1][k] + A[i + 1][j][k - 1] + A[i + 1][j][k] + A[i + 1][j][k + 1] + A[i + 1][j + 1][k]);

  int ok = 1;
  ok &= memcmp(X, R_X, sizeof(float) * (size_t)NI * (size_t)NJ * (size_t)NK) == 0;
  printf("3D-19p: %s\n", ok ? "bit-exact" : "MISMATCH");
  printf("3D-19p: host loop %.9f s\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  free(A);
  free(X);
  free(R_X);
  return ok ? 0 : 1;
}
