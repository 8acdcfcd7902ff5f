/* Triangular loop nests over flat arrays, as dense linear algebra writes them:
   `for (j = 0; j <= i; j++) … L[i*n + j] … U[j*n + i]`. The inner loop's bound
   names the outer index, so the loops do not span a box; the view L[?][n] is still
   valid — isl proves 0 <= j < n over the triangle — and the region reaches the
   device (its kernel untiled: the tiled kernels need rectangular nests). Rows of a
   run-time length m: the view is valid when the triangle's widest row fits in m, a
   launch condition on the hull of j (0 … n - 1), which holds for m >= n and fails
   for m < n (rows overlap). Either way the kernel is the baseline kernel of the
   region as written (linear subscripts), which needs no condition; the view gives
   the region its footprints. */
#include <stdlib.h>
#include "common.h"

static void lower_copy(int n, int m, const float *a, float *b) {
#pragma omp target teams distribute parallel for map(to: a[0:n*m+n]) map(tofrom: b[0:n*m+n]) // expect: emu baseline
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      b[i * m + j] = a[i * m + j] * 2.0f + b[i * m + j];
}

static void lower_copy_narrow(int n, int m, const float *a, float *b) {
#pragma omp target map(to: a[0:n*m+n]) map(tofrom: b[0:n*m+n]) // expect: emu baseline
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++)
      b[i * m + j] = a[i * m + j] * 0.5f + b[i * m + j];
}

int main(void) {
  int n = 57;
  double *L = malloc(sizeof(double) * n * n), *U = malloc(sizeof(double) * n * n);
  for (int i = 0; i < n * n; i++) { L[i] = rng_float(); U[i] = rng_float(); }
#pragma omp target teams distribute parallel for map(tofrom: L[0:n*n]) map(to: U[0:n*n]) // expect: emu baseline ~ [non-rectangular] bound 'i + 1' of loop 'j'
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++)
      L[i * n + j] = 0.5 * (L[i * n + j] + U[j * n + i]);
  print_doubles("L", L, (long)n * n);

  int rows = 40, wide = 45, narrow = 30;
  long len = (long)rows * wide + rows;
  float *a = malloc(sizeof(float) * len), *b = malloc(sizeof(float) * len);
  for (long i = 0; i < len; i++) { a[i] = rng_float(); b[i] = rng_float(); }
  lower_copy(rows, wide, a, b);
  lower_copy_narrow(rows, narrow, a, b);
  print_floats("b", b, len);
  free(L); free(U); free(a); free(b);
  return 0;
}
