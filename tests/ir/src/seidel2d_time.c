/* PolyBench seidel-2d with its time loop (TSTEPS = 4, N = 16): a 9-point
   Gauss-Seidel sweep in place, every time step. One perfect nest (t, i, j). For the
   FIFO recovery tests (crates/poly/src/fifo.rs). */
#define TSTEPS 4
#define N 16
void seidel2d_time(float A[N][N]) {
#pragma omp target map(tofrom: A[0:N][0:N])
  for (int t = 0; t < TSTEPS; t++)
    for (int i = 1; i < N - 1; i++)
      for (int j = 1; j < N - 1; j++)
        A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1] + A[i][j] + A[i][j + 1] + A[i + 1][j - 1] +
                   A[i + 1][j] + A[i + 1][j + 1]) / 9.0f;
}
