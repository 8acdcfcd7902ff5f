/* A linearised region whose view a[?][n] is valid only when the inner loop stays
   within the row: launch condition 0 <= j < n over j < len. The same code runs once
   with len == n (the tiled kernel of the view) and once with len > n, where rows
   overlap: the launch condition fails and the baseline kernel of the region as
   written (linear subscripts) runs, in the source's order. */
#include <stdlib.h>
#include "common.h"

static void scale_rows(int rows, int n, int len, const float *a, float *b, float f) {
  // One task, loops in order (rows overlap when len > n: the order matters).
#pragma omp target map(to: a[0:rows*n+len]) map(tofrom: b[0:rows*n+len]) // expect: emu tiled
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < len; j++)
      b[i * n + j] = f * a[i * n + j] + b[i * n + j];
}

static void scale_rows_long(int rows, int n, int len, const float *a, float *b, float f) {
#pragma omp target map(to: a[0:rows*n+len]) map(tofrom: b[0:rows*n+len]) // expect: emu linear
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < len; j++)
      b[i * n + j] = f * a[i * n + j] + b[i * n + j];
}

int main(void) {
  int rows = 23, n = 31;
  float *a = malloc(sizeof(float) * (rows * n + n + 8));
  float *b = malloc(sizeof(float) * (rows * n + n + 8));
  for (int i = 0; i < rows * n + n + 8; i++) { a[i] = rng_float(); b[i] = rng_float(); }
  scale_rows(rows, n, n, a, b, 0.5f);
  scale_rows_long(rows, n, n + 5, a, b, 0.25f);
  print_floats("b", b, (long)rows * n + n + 8);
  free(a);
  free(b);
  return 0;
}
