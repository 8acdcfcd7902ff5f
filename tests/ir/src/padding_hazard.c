/* Distance (1,-1) inside one tile along j (99 iterations, tile 128): tiling is legal,
   but padding j to 128 makes the padded iteration (i, 99) write A[i][99] before the
   real iteration (i+1, 98) of the same tile reads it. The write must not be cached:
   it is guarded, and the read it feeds shares its fate (nc). */
#define NI 1000
#define NJ 100
void hazard(float A[NI][NJ]) {
#pragma omp target teams distribute parallel for collapse(2) map(tofrom: A[0:NI][0:NJ])
  for (int i = 1; i < NI; i++)
    for (int j = 0; j < NJ - 1; j++)
      A[i][j] = 0.5f * (A[i][j] + A[i - 1][j + 1]);
}
