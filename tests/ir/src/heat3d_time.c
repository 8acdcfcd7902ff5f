/* PolyBench heat-3d with its time loop (TSTEPS = 4, N = 10): B from A, then A from
   B, in every time step (7-point stencils, A[i][j][k] read four times). For the FIFO
   recovery tests (crates/poly/src/fifo.rs). */
#define TSTEPS 4
#define N 10
void heat3d_time(float A[N][N][N], float B[N][N][N]) {
#pragma omp target map(tofrom: A[0:N][0:N][0:N], B[0:N][0:N][0:N])
  for (int t = 0; t < TSTEPS; t++) {
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        for (int k = 1; k < N - 1; k++)
          B[i][j][k] = 0.125f * (A[i + 1][j][k] - 2.0f * A[i][j][k] + A[i - 1][j][k]) +
                       0.125f * (A[i][j + 1][k] - 2.0f * A[i][j][k] + A[i][j - 1][k]) +
                       0.125f * (A[i][j][k + 1] - 2.0f * A[i][j][k] + A[i][j][k - 1]) + A[i][j][k];
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        for (int k = 1; k < N - 1; k++)
          A[i][j][k] = 0.125f * (B[i + 1][j][k] - 2.0f * B[i][j][k] + B[i - 1][j][k]) +
                       0.125f * (B[i][j + 1][k] - 2.0f * B[i][j][k] + B[i][j - 1][k]) +
                       0.125f * (B[i][j][k + 1] - 2.0f * B[i][j][k] + B[i][j][k - 1]) + B[i][j][k];
  }
}
