/* Boundary handling written inside the loop nest: every element of the output is
   computed, the edges copied and the interior smoothed, with `?:` or `if`/`else`
   choosing. The halo
   reads happen only in the interior; over the whole nest they would reach row -1 and
   row n, outside the arrays. A kernel may read them only as far as the unconditional
   reads of the same array reach (the dataflow kernel's load process reads the box of
   every read, so it is refused here and the tessera kernel, which clips its reads to
   the buffers, runs; where the kernel does not know an array's size, the runtime
   passes its buffer's). */
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

// The same with `if`/`else` (converted into the select above).
static void smooth_if(int n, int m, const float (*a)[m], float (*b)[m]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: a[0:n]) map(from: b[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      if (i == 0 || i == n - 1 || j == 0 || j == m - 1)
        b[i][j] = a[i][j];
      else
        b[i][j] = 0.25f * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
    }
}

// On a flat array seen as rows a[?][m] the kernel does not know the array's size: it
// takes the elements of the array's buffer as a parameter and clips its reads to
// them, so the halo reads that may not happen (over the whole nest: row n) stay inside.
static void smooth_flat(int n, int m, const float *a, float *b) {
#pragma omp target teams distribute parallel for collapse(2) map(to: a[0:n*m]) map(from: b[0:n*m]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      if (i == 0 || i == n - 1 || j == 0 || j == m - 1)
        b[i * m + j] = a[i * m + j];
      else
        b[i * m + j] = 0.25f * (a[(i - 1) * m + j] + a[(i + 1) * m + j] + a[i * m + j - 1] + a[i * m + j + 1]);
    }
}

// A guarded read behind an unconditional one (a[i][j - 1] only where j > 0): isl
// proves the view's condition 0 <= j - 1 < m where the read happens, so no launch
// condition, and the tiled kernel runs.
static void left_average(int n, int m, const float *a, float *b) {
#pragma omp target teams distribute parallel for collapse(2) map(to: a[0:n*m]) map(from: b[0:n*m]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      b[i * m + j] = 0.5f * a[i * m + j] + (j > 0 ? 0.5f * a[i * m + j - 1] : 0.0f);
}

// A present array without a section of its own: a read that may not happen must not
// lead the kernel past the end of its buffer (exactly 1024 ints, 64 words of 16); the
// kernel's size parameter is the mapping's elements from `a` on.
static void shift(int n, const int *a, int *b) {
#pragma omp target teams distribute parallel for map(from: b[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    b[i] = (i < n - 1) ? a[i + 1] : a[i];
}

int main(void) {
  int n = 37, m = 53;
  float *a = malloc(sizeof(float) * n * m), *b = malloc(sizeof(float) * n * m);
  for (int i = 0; i < n * m; i++) a[i] = rng_float();
  smooth(n, m, (const float (*)[m])a, (float (*)[m])b);
  print_floats("smooth", b, n * m);
  smooth_if(n, m, (const float (*)[m])a, (float (*)[m])b);
  print_floats("smooth_if", b, n * m);
  smooth_flat(n, m, a, b);
  print_floats("smooth_flat", b, n * m);
  left_average(n, m, a, b);
  print_floats("left_average", b, n * m);
  rectify(n, m, (const float (*)[m])a, (float (*)[m])b);
  print_floats("rectify", b, n * m);
  int *x = malloc(sizeof(int) * 101), *up = malloc(sizeof(int) * 101);
  for (int i = 0; i < 101; i++) x[i] = (int)(rng_next() % 1000);
  rising(101, x, up);
  print_ints("up", up, 101);
  int *s = malloc(sizeof(int) * 1024), *t = malloc(sizeof(int) * 1024);
  for (int i = 0; i < 1024; i++) s[i] = (int)(rng_next() % 1000);
#pragma omp target data map(to: s[0:1024]) // expect: emu
  {
    shift(1024, s, t);
    print_ints("shift", t, 1024);
    // From the middle of the mapping: 524 elements, not a whole number of words.
    shift(524, s + 500, t);
    print_ints("shift_mid", t, 524);
  }
  return 0;
}
