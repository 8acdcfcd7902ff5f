/* An in-place update in 1D: the read-and-written group can only be a full buffer,
   filled before the tile and written back, trimmed, after it. */
void inplace1d(int n, float A[n], const float B[n]) {
#pragma omp target teams distribute parallel for map(tofrom: A[0:n]) map(to: B[0:n])
  for (int i = 0; i < n - 1; i++)
    A[i] = 0.5f * (A[i] + B[i + 1]);
}
