/* PolyBench jacobi-1d with its time loop (TSTEPS = 4, N = 32): B from A, then A
   from B, in every time step. Two statements in sibling loops under t: the FIFO
   recovery tests (crates/poly/src/fifo.rs) read its channels. */
#define TSTEPS 4
#define N 32
void jacobi1d_time(float A[N], float B[N]) {
#pragma omp target map(tofrom: A[0:N], B[0:N])
  for (int t = 0; t < TSTEPS; t++) {
    for (int i = 1; i < N - 1; i++)
      B[i] = 0.33333f * (A[i - 1] + A[i] + A[i + 1]);
    for (int i = 1; i < N - 1; i++)
      A[i] = 0.33333f * (B[i - 1] + B[i] + B[i + 1]);
  }
}
