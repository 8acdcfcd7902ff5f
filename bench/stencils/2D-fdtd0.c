/* 2D-fdtd0 — PolyBench fdtd-2d, ey update, in place (4 points).
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

static void sweep_cpu(float (*ey)[NJ], const float (*hz)[NJ]) {
  for (int i = 1; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);
}

int main(void) {
  float (*ey)[NJ] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ);
  float (*hz)[NJ] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ);
  float (*R_ey)[NJ] = malloc(sizeof(float) * (size_t)NI * (size_t)NJ);
  float *flat[] = {(float *)ey, (float *)hz};
  for (int a = 0; a < 2; a++)
    for (size_t e = 0; e < (size_t)NI * (size_t)NJ; e++) flat[a][e] = next_float();
  memcpy(R_ey, ey, sizeof(float) * (size_t)NI * (size_t)NJ);
  struct timespec t0, t1; /* the CPU loop, timed: `tessera bench` reports it as host_loop_s */
  clock_gettime(CLOCK_MONOTONIC, &t0);
  sweep_cpu(R_ey, hz);
  clock_gettime(CLOCK_MONOTONIC, &t1);

#pragma omp target teams distribute parallel for collapse(2) map(to: hz[0:NI][0:NJ]) map(tofrom: ey[0:NI][0:NJ])
  for (int i = 1; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      ey[i][j] = ey[i][j] - 0.5 * (hz[i][j] - hz[i - 1][j]);

  int ok = 1;
  ok &= memcmp(ey, R_ey, sizeof(float) * (size_t)NI * (size_t)NJ) == 0;
  printf("2D-fdtd0: %s\n", ok ? "bit-exact" : "MISMATCH");
  printf("2D-fdtd0: host loop %.9f s\n", (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec));
  free(ey);
  free(hz);
  free(R_ey);
  return ok ? 0 : 1;
}
