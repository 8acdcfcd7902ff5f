/* Two assignments in one loop body (fdtd-2d ey and ex updates fused by hand). */
void two(int n, int m, float ex[n][m], float ey[n][m], const float hz[n][m]) {
#pragma omp target teams distribute parallel for collapse(2) map(tofrom: ex[0:n][0:m], ey[0:n][0:m]) map(to: hz[0:n][0:m])
  for (int i = 1; i < n; i++)
    for (int j = 1; j < m; j++) {
      ey[i][j] = ey[i][j] - 0.5f * (hz[i][j] - hz[i - 1][j]);
      ex[i][j] = ex[i][j] - 0.5f * (hz[i][j] - hz[i][j - 1]);
    }
}
