/* PolyBench heat-3d (first statement), one sweep on a 64^3 float grid, offloaded
   with Tessera and checked bit for bit against the same loop on the CPU. */
#include <stdio.h>
#include <string.h>

#define N 64
static float A[N][N][N], B[N][N][N], R[N][N][N];

#define HEAT(OUT)                                                                       \
  for (int i = 1; i < N - 1; i++)                                                       \
    for (int j = 1; j < N - 1; j++)                                                     \
      for (int k = 1; k < N - 1; k++)                                                   \
        OUT[i][j][k] = 0.125 * (A[i + 1][j][k] - 2.0 * A[i][j][k] + A[i - 1][j][k])     \
                     + 0.125 * (A[i][j + 1][k] - 2.0 * A[i][j][k] + A[i][j - 1][k])     \
                     + 0.125 * (A[i][j][k + 1] - 2.0 * A[i][j][k] + A[i][j][k - 1])     \
                     + A[i][j][k];

int main(void) {
  unsigned s = 7;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      for (int k = 0; k < N; k++) {
        s = s * 1664525u + 1013904223u;
        A[i][j][k] = (float)(s >> 8) / 16777216.0f;
      }
  HEAT(R)

#pragma omp target teams distribute parallel for collapse(3) map(to: A) map(tofrom: B)
  HEAT(B)

  int ok = memcmp(B, R, sizeof B) == 0;
  printf("heat-3d %d^3: %s\n", N, ok ? "bit-exact" : "MISMATCH");
  return ok ? 0 : 1;
}
