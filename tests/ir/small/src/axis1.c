/* The outermost intra-tile loop walks dimension 1 (loop order j, i, k): chunk buffers
   shift along an inner array dimension. */
#define NI 7
#define NJ 19
#define NK 23
void axis1(float B[NI][NJ][NK], const float A[NI][NJ][NK]) {
#pragma omp target teams distribute parallel for collapse(3) map(to: A[0:NI][0:NJ][0:NK]) map(tofrom: B[0:NI][0:NJ][0:NK])
  for (int j = 1; j < NJ - 1; j++)
    for (int i = 0; i < NI; i++)
      for (int k = 1; k < NK - 1; k++)
        B[i][j][k] = A[i][j - 1][k] + A[i][j + 1][k] - A[i][j][k - 1] * A[i][j][k + 1];
}
