/* In-place 5-point Gauss-Seidel sweep. Dependence distances (1,0) and (0,1) only:
   rectangular tiling and every intra-tile permutation stay legal. */
void gs5(int n, int m, float A[n][m]) {
#pragma omp target teams distribute parallel for collapse(2) map(tofrom: A[0:n][0:m])
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      A[i][j] = (A[i - 1][j] + A[i][j - 1] + A[i + 1][j] + A[i][j + 1]) / 4;
}
