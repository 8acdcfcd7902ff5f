/* A time loop inside `target data`: 40 steps of two alternating 2D 5-point
   stencils (A -> B, B -> A). A is mapped tofrom and B alloc once, around the whole
   loop: the data stays on the device, so A moves to the device once and back once,
   and B never moves. The first stencil names A and B without map clauses (OpenMP:
   pointers are zero-length array sections, found in the present table); the second
   maps them explicitly, which for present data copies nothing. B's device copy is
   never initialised from the host (alloc), so the first stencil writes all of it. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 37, m = 53, steps = 40;
  float (*A)[m] = malloc(sizeof(float[n][m]));
  float (*B)[m] = malloc(sizeof(float[n][m]));
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) { A[i][j] = rng_float(); B[i][j] = 0.0f; }

#pragma omp target data map(tofrom: A[0:n][0:m]) map(alloc: B[0:n][0:m]) // expect: emu
  {
    for (int t = 0; t < steps; t++) {
#pragma omp target teams distribute parallel for collapse(2) // expect: emu
      for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++) {
          if (i == 0 || i == n - 1 || j == 0 || j == m - 1)
            B[i][j] = A[i][j]; // B is alloc: every element is written before it is read
          else
            B[i][j] = 0.2f * (A[i][j] + A[i - 1][j] + A[i + 1][j] + A[i][j - 1] + A[i][j + 1]);
        }
#pragma omp target teams distribute parallel for collapse(2) map(to: B[0:n][0:m]) map(tofrom: A[0:n][0:m]) // expect: emu
      for (int i = 1; i < n - 1; i++)
        for (int j = 1; j < m - 1; j++)
          A[i][j] = 0.2f * (B[i][j] + B[i - 1][j] + B[i + 1][j] + B[i][j - 1] + B[i][j + 1]);
    }
  }
  // expect-transfers: A to=7844 from=7844
  // expect-transfers: B to=0 from=0

  print_floats("A", &A[0][0], (long)n * m);
  free(A);
  free(B);
  return 0;
}
