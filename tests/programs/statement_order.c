/* Several statements per iteration that read and write the same arrays, in every
   order the streaming (dataflow) kernel must get right: a read of an array an earlier
   statement of the same iteration wrote needs the new value (OpenMP_VV's
   test_target_is_device_ptr has `d[i] = i; h[i] += d[i];`), a read before a later
   write needs the old one, and a temporary array links two statements. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 1000, rows = 37, cols = 53;
  float *d = malloc(n * sizeof *d), *h = malloc(n * sizeof *h), *t = malloc(n * sizeof *t), *o = malloc(n * sizeof *o);
  float (*a)[cols] = malloc(sizeof(float[rows][cols]));
  float (*b)[cols] = malloc(sizeof(float[rows][cols]));
  float (*c)[cols] = malloc(sizeof(float[rows][cols]));
  for (int i = 0; i < n; i++) { d[i] = rng_float(); h[i] = rng_float(); t[i] = rng_float(); o[i] = 0.0f; }
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++) { a[i][j] = rng_float(); b[i][j] = rng_float(); c[i][j] = rng_float(); }

  /* Write, then read the new value in the same iteration. */
#pragma omp target teams distribute parallel for map(tofrom: d[0:n], h[0:n]) // expect: emu
  for (int i = 0; i < n; i++) {
    d[i] = (float)i * 0.5f;
    h[i] = h[i] + d[i];
  }

  /* Read the old value, then overwrite it. */
#pragma omp target teams distribute parallel for map(tofrom: d[0:n], h[0:n]) // expect: emu
  for (int i = 0; i < n; i++) {
    h[i] = h[i] * 2.0f + d[i];
    d[i] = d[i] - 1.0f;
  }

  /* A temporary array between two statements. */
#pragma omp target teams distribute parallel for map(to: h[0:n]) map(tofrom: t[0:n]) map(from: o[0:n]) // expect: emu
  for (int i = 1; i < n - 1; i++) {
    t[i] = h[i - 1] + h[i + 1];
    o[i] = t[i] * 0.25f;
  }

  /* 2D: a stencil writes b, the next statement reads the b it wrote. */
#pragma omp target teams distribute parallel for collapse(2) map(to: a[0:rows][0:cols]) map(tofrom: b[0:rows][0:cols], c[0:rows][0:cols]) // expect: emu
  for (int i = 1; i < rows - 1; i++)
    for (int j = 1; j < cols - 1; j++) {
      b[i][j] = 0.25f * (a[i - 1][j] + a[i + 1][j] + a[i][j - 1] + a[i][j + 1]);
      c[i][j] = b[i][j] * 2.0f - a[i][j];
    }

  print_floats("d", d, n);
  print_floats("h", h, n);
  print_floats("t", t, n);
  print_floats("o", o, n);
  print_floats("a", &a[0][0], (long)rows * cols);
  print_floats("b", &b[0][0], (long)rows * cols);
  print_floats("c", &c[0][0], (long)rows * cols);
  free(d);
  free(h);
  free(t);
  free(o);
  free(a);
  free(b);
  free(c);
  return 0;
}
