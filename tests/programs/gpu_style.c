/* A GPU-style region: each team sums a block into a team-local array, threads meet
   at a barrier, and thread 0 writes the team's partial sum. It is not a loop nest a
   kernel runs, so it goes through the runtime to the host (with a remark), inside a
   data region whose device copies it reads and writes; the loop regions around it
   run on the device. */
#include <omp.h>
#include <stdlib.h>
#include "common.h"

#define TEAMS 4
#define THREADS 8

int main(void) {
  int n = TEAMS * THREADS * 16;
  float *a = malloc(sizeof(float) * n), *part = malloc(sizeof(float) * TEAMS);
  for (int i = 0; i < n; i++) a[i] = (float)(i % 13) * 0.25f;
  for (int t = 0; t < TEAMS; t++) part[t] = 0.0f;

#pragma omp target data map(tofrom: a[0:n]) map(tofrom: part[0:TEAMS]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++)
      a[i] = a[i] * 2.0f;
#pragma omp target teams num_teams(TEAMS) thread_limit(THREADS) // expect: host
    {
      float local[THREADS]; // expect-remark: [unsupported-statement] local array 'float local[THREADS];' is not supported
      /* Whatever numbers of teams and threads the implementation forms. */
      for (int t = omp_get_team_num(); t < TEAMS; t += omp_get_num_teams()) {
#pragma omp parallel num_threads(THREADS)
        {
          int k0 = omp_get_thread_num(), nk = omp_get_num_threads();
          for (int k = k0; k < THREADS; k += nk) {
            float s = 0.0f;
            for (int i = 0; i < 16; i++) s += a[(t * THREADS + k) * 16 + i];
            local[k] = s;
          }
#pragma omp barrier
          if (k0 == 0) {
            float sum = 0.0f;
            for (int j = 0; j < THREADS; j++) sum += local[j];
            part[t] = sum;
          }
        }
      }
    }
#pragma omp target teams distribute parallel for // expect: emu
    for (int t = 0; t < TEAMS; t++)
      part[t] = part[t] + 1.0f;
  }
  print_floats("part", part, TEAMS);
  print_floats("a", a, 16);
  free(a); free(part);
  return 0;
}
