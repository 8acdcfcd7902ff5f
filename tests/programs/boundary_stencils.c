/* Boundary handling written inside the loop nest: every element of the output is
   computed, the edges copied and the interior smoothed, with `?:` choosing. The halo
   reads happen only in the interior; over the whole nest they would reach row -1 and
   row n, outside the arrays. A kernel may read them only as far as the unconditional
   reads of the same array reach (the dataflow kernel's load process reads the box of
   every read, so it is refused here and the tessera kernel, which clips its reads to
   the buffers, runs). */
#include <stdlib.h>
#include "common.h"

static void smooth(int n, int m, const float (*a)[m], float (*b)[m]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: a[0:n]) map(from: b[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      b[i][j] = (i == 0 || i == n - 1 || j == 0 || j == m - 1) ? a[i][j]
                : 0.25f * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
}

// 1-D, the halo read under `&&` (the right operand is evaluated only when i > 0).
static void rising(int n, const int *a, int *up) {
#pragma omp target teams distribute parallel for map(to: a[0:n]) map(from: up[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    up[i] = i > 0 && a[i] > a[i - 1];
}

// The conditional read is the unconditional one's element: streamed.
static void rectify(int n, int m, const float (*a)[m], float (*b)[m]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: a[0:n]) map(from: b[0:n]) // expect: emu dataflow
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      b[i][j] = a[i][j] > 0.0f ? a[i][j] : 0.0f;
}

int main(void) {
  int n = 37, m = 53;
  float *a = malloc(sizeof(float) * n * m), *b = malloc(sizeof(float) * n * m);
  for (int i = 0; i < n * m; i++) a[i] = rng_float();
  smooth(n, m, (const float (*)[m])a, (float (*)[m])b);
  print_floats("smooth", b, n * m);
  rectify(n, m, (const float (*)[m])a, (float (*)[m])b);
  print_floats("rectify", b, n * m);
  int *x = malloc(sizeof(int) * 101), *up = malloc(sizeof(int) * 101);
  for (int i = 0; i < 101; i++) x[i] = (int)(rng_next() % 1000);
  rising(101, x, up);
  print_ints("up", up, 101);
  return 0;
}
