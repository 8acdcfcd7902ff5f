/* 3D heat (PolyBench heat-3d, first statement) in double on fixed-size global
   arrays mapped implicitly (no map clause), with a plain `target` around a nested
   `parallel for`. */
#include "common.h"

#define NI 11
#define NJ 13
#define NK 17
static double A[NI][NJ][NK], B[NI][NJ][NK];

int main(void) {
  for (int i = 0; i < NI; i++)
    for (int j = 0; j < NJ; j++)
      for (int k = 0; k < NK; k++) { A[i][j][k] = rng_float(); B[i][j][k] = 0.0; }

#pragma omp target // expect: emu
  {
#pragma omp parallel for
    for (int i = 1; i < NI - 1; i++)
      for (int j = 1; j < NJ - 1; j++)
        for (int k = 1; k < NK - 1; k++)
          B[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])
                     + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])
                     + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])
                     + A[i][j][k];
  }

  print_doubles("B", &B[0][0][0], (long)NI * NJ * NK);
  return 0;
}
