/* The paper's running example (IMPACT'24, Fig. 2), symbolic size N. */
void fig2(int N, float V[N][N][N], const float A[N][N][N]) {
#pragma omp target teams distribute parallel for collapse(3) map(tofrom: V[0:N][0:N][0:N]) map(to: A[0:N][0:N][0:N])
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < N - 1; j++)
      for (int k = 1; k < N - 1; k++)
        V[i][k][j] = V[i][k][j] + A[i][j][k] + A[i + 1][j + 1][k + 1];
}
