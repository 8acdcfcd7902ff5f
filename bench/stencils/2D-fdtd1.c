/* 2D-fdtd1 — PolyBench fdtd-2d, ex update, in place (4 points).
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

static void sweep_cpu(float (*ex)[NJ], const float (*hz)[NJ]) {
  for (int i = 0; i < NI; i++)
    for (int j = 1; j < NJ; j++)
      ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);
}

int main(void) {
  float (*ex)[NJ] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ);
  float (*hz)[NJ] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ);
  float (*R_ex)[NJ] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ);
  float *flat[] = {(float *)ex, (float *)hz};
  for (int a = 0; a < 2; a++)
    for (size_t e = 0; e < (size_t)NI * (size_t)NJ; e++) flat[a][e] = next_float();
  memcpy(R_ex, ex, sizeof(float) * (size_t)NI * (size_t)NJ);
  struct timespec t0, t1; /* the CPU loop, timed: `tessera bench` reports it as host_loop_s */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sweep_cpu(R_ex, hz);
  clock_gettime(CLOCK_MONOTONIC, &t1);

#pragma omp target teams distribute parallel for collapse(2) map(to: hz[0:NI][0:NJ]) map(tofrom: ex[0:NI][0:NJ])
  for (int i = 0; i < NI; i++)
    for (int j = 1; j < NJ; j++)
      ex[i][j] = ex[i][j] - 0.5 * (hz[i][j] - hz[i][j - 1]);

  int ok = 1;
  ok &= memcmp(ex, R_ex, sizeof(float) * (size_t)NI * (size_t)NJ) == 0;
  printf("2D-fdtd1: %s\n", ok ? "bit-exact" : "MISMATCH");
  printf("2D-fdtd1: host loop %.9f s\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  free(ex);
  free(hz);
  free(R_ex);
  return ok ? 0 : 1;
}
