/* 2D-jacobi (PolyBench jacobi-2d, first statement) with symbolic sizes n x m. */
void jacobi2d(int n, int m, const float A[n][m], float B[n][m]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n][0:m]) map(tofrom: B[0:n][0:m])
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
}
