/* PolyBench jacobi-2d (first statement), one sweep on a 1024 x 1000 float grid,
   offloaded with Tessera and checked bit for bit against the same loop on the CPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void sweep_cpu(int n, int m, const float (*A)[m], float (*B)[m]) {
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
}

int main(void) {
  int n = 1024, m = 1000;
  float (*A)[m] = malloc(sizeof(float[n][m]));
  float (*B)[m] = malloc(sizeof(float[n][m]));
  float (*R)[m] = malloc(sizeof(float[n][m]));
  unsigned s = 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      s = s * 1664525u + 1013904223u;
      A[i][j] = (float)(s >> 8) / 16777216.0f;
      B[i][j] = R[i][j] = 0.0f;
    }
  sweep_cpu(n, m, (const float (*)[m])A, R);

#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n][0:m]) map(tofrom: B[0:n][0:m])
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);

  int ok = memcmp(B, R, sizeof(float[n][m])) == 0;
  printf("jacobi-2d %dx%d: %s\n", n, m, ok ? "bit-exact" : "MISMATCH");
  return ok ? 0 : 1;
}
