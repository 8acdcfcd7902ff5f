/* A quadratic subscript: outside the input class. */
void sq(int n, const float A[n], float B[n]) {
#pragma omp target teams distribute parallel for map(to: A[0:n]) map(tofrom: B[0:n])
  for (int i = 0; i < n; i++)
    B[i] = A[i * i % n];
}
