/* Distance (1,-1) along a j loop that fits in one tile of the default 2D tiles (128):
   tiling with the original order is legal, interchanging the intra-tile loops is not. */
#define NI 1000
#define NJ 129
void skew(float A[NI][NJ]) {
#pragma omp target teams distribute parallel for collapse(2) map(tofrom: A[0:NI][0:NJ])
  for (int i = 1; i < NI; i++)
    for (int j = 0; j < NJ - 1; j++)
      A[i][j] = 0.5f * (A[i][j] + A[i - 1][j + 1]);
}
