/* PolyBench jacobi-2d with its time loop (TSTEPS = 4, N = 16): B from A, then A
   from B, in every time step (5-point stencils). For the FIFO recovery tests
   (crates/poly/src/fifo.rs). */
#define TSTEPS 4
#define N 16
void jacobi2d_time(float A[N][N], float B[N][N]) {
#pragma omp target map(tofrom: A[0:N][0:N], B[0:N][0:N])
  for (int t = 0; t < TSTEPS; t++) {
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        B[i][j] = 0.2f * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        A[i][j] = 0.2f * (B[i][j] + B[i][j - 1] + B[i][j + 1] + B[i + 1][j] + B[i - 1][j]);
  }
}
