/* In-place 9-point Gauss-Seidel sweep (PolyBench seidel-2d, one time step).
   A[i-1][j+1] (flow) and A[i+1][j-1] (anti) give dependence distance (1,-1):
   rectangular tiling is illegal. */
void seidel9(int n, float A[n][n]) {
#pragma omp target teams distribute parallel for collapse(2) map(tofrom: A[0:n][0:n])
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++)
      A[i][j] = (A[i - 1][j - 1] + A[i - 1][j] + A[i - 1][j + 1] + A[i][j - 1] + A[i][j] +
                 A[i][j + 1] + A[i + 1][j - 1] + A[i + 1][j] + A[i + 1][j + 1]) / 9;
}
