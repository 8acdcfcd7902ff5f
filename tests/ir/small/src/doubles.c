/* Double elements (8-byte lanes and strobes), the loop indices used as values, a
   1-D array read in a 2-D nest (a buffer that does not move with the outer loop),
   and symbolic sizes. */
void doubles(int n, int m, double B[n][m], const double A[n][m], const double w[m]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n][0:m], w[0:m]) map(tofrom: B[0:n][0:m])
  for (int i = 2; i < n; i++)
    for (int j = 0; j < m - 3; j++)
      B[i][j] = w[j] * (A[i - 2][j + 3] - A[i][j]) + 0.5 * i - (double)j / 3.0;
}
