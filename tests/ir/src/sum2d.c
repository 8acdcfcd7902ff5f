/* A floating sum over a 2-D grid of symbolic size: every tiling of the nest splits
   a row across tiles, which reorders the additions, so it keeps the baseline kernel
   (reduction-order) unless reassociation is allowed. */
void sum2d(int n, int m, const double g[n][m], double *sum) {
  double s = 0.0;
#pragma omp target teams distribute parallel for collapse(2) reduction(+: s) map(to: g[0:n][0:m])
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      s += g[i][j] * g[i][j];
  *sum = s;
}
