/* Unsigned loop indices and an unsigned size: box rows start left of the array
   (j - 1 at j = 0 wraps in unsigned arithmetic unless the generator widens first);
   int elements; an integer division whose divisor is zero in a padded iteration
   (j = 40), which the generator must skip. */
void uidx(unsigned n, int Y[n][40], const int X[n][40]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: X[0:n][0:40]) map(tofrom: Y[0:n][0:40])
  for (unsigned i = 1; i < n; i++)
    for (unsigned j = 1; j < 39; j++)
      Y[i][j] = X[i - 1][j - 1] + 3 * X[i][j + 1] - (X[i][j] >> 2) + X[i][j] / (int)(40 - j);
}
