/* A loop with step 2: outside what the paper generator supports (it returns an error
   and the baseline kernel is used). */
void strided(int n, float B[n], const float A[n]) {
#pragma omp target teams distribute parallel for map(to: A[0:n]) map(tofrom: B[0:n])
  for (int i = 1; i < n - 1; i += 2)
    B[i] = A[i - 1] + A[i + 1];
}
