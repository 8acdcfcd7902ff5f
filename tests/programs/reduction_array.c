/* Reductions on arrays and array sections (OpenMP 4.5 on): column sums of a flat
   matrix, a transposed matrix-vector product, per-bin extrema, a whole array,
   a section of a row block, a subsection of a mapped array, on a nested
   `parallel for`, and inside a `target data` region where the array stays on the
   device between regions. Inside the region the reduced elements are a private
   copy that starts at the operator's identity; the result is `original op
   private`, so the values the arrays had before each region matter, and every
   array here starts nonzero. The data are small integers, so the floating sums
   are exact in any order (the reference, plain clang, may use many threads). */
#include <stdlib.h>
#include "common.h"

#define BINS 8

int main(void) {
  int n = 211, m = 37;
  int *a = malloc(n * m * sizeof *a);
  float *x = malloc(n * sizeof *x), *w = malloc(n * m * sizeof *w);
  for (int k = 0; k < n * m; k++) {
    a[k] = (int)(rng_next() % 201u) - 100;
    w[k] = (float)((int)(rng_next() % 17u) - 8);
  }
  for (int i = 0; i < n; i++) x[i] = (float)((int)(rng_next() % 9u) - 4);

  /* Column sums of a flat n x m matrix: each column's sum added to its start. */
  int *colsum = malloc(m * sizeof *colsum);
  for (int j = 0; j < m; j++) colsum[j] = 1000 * j;
#pragma omp target teams distribute parallel for map(to: a[0:n*m]) reduction(+: colsum[0:m]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      colsum[j] += a[i * m + j];
  print_ints("colsum", colsum, m);

  /* y = W^T x, parallel over the rows of W: every thread adds into all of y. */
  float *y = malloc(m * sizeof *y);
  for (int j = 0; j < m; j++) y[j] = 0.5f * (float)j;
#pragma omp target teams distribute parallel for map(to: w[0:n*m], x[0:n]) reduction(+: y[0:m]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      y[j] += w[i * m + j] * x[i];
  print_floats("y", y, m);

  /* Extrema per bin of a fixed-size array (the whole array is the list item), and a
     product and a bitwise reduction on sections. */
  int lo[BINS], hi[BINS];
  unsigned mix[BINS];
  long prod[BINS];
  for (int b = 0; b < BINS; b++) { lo[b] = 50; hi[b] = -50; mix[b] = 0x9e3779b9u * (unsigned)b; prod[b] = b + 1; }
#pragma omp target teams distribute parallel for map(to: a[0:n*m]) reduction(min: lo) reduction(max: hi) reduction(^: mix[0:BINS]) reduction(*: prod[0:BINS]) // expect: emu baseline
  for (int i = 0; i < n; i++)
    for (int b = 0; b < BINS; b++) {
      int v = a[i * m + b];
      if (v < lo[b]) lo[b] = v;
      hi[b] = v > hi[b] ? v : hi[b];
      mix[b] ^= (unsigned)v * 2654435761u;
      prod[b] *= (long)(v | 1);
    }
  print_ints("lo", lo, BINS);
  print_ints("hi", hi, BINS);
  printf("mix:");
  for (int b = 0; b < BINS; b++) printf(" %08x", mix[b]);
  printf("\nprod:");
  for (int b = 0; b < BINS; b++) printf(" %ld", prod[b]);
  printf("\n");

  /* A 2-D section of a static array: rows 1 and 2 of four; rows 0 and 3 keep their
     values (mapped, not reduced: the loop never writes them). */
  static double h[4][BINS];
  for (int r = 0; r < 4; r++)
    for (int b = 0; b < BINS; b++) h[r][b] = 0.25 * (r * BINS + b);
#pragma omp target teams distribute parallel for map(to: w[0:n*m]) map(tofrom: h) reduction(+: h[1:2][0:BINS]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    for (int b = 0; b < BINS; b++) {
      h[1][b] += (double)w[i * m + b];
      h[2][b] += (double)w[i * m + b + 1] * 0.5;
    }
  for (int r = 0; r < 4; r++) print_doubles("h", h[r], BINS);

  /* A subsection of a mapped array, reduced on a nested `parallel for` whose loop is
     the whole region. */
  int *z = malloc(m * sizeof *z);
  for (int j = 0; j < m; j++) z[j] = -j;
#pragma omp target map(to: a[0:n*m]) map(tofrom: z[0:m]) // expect: emu tiled
  {
#pragma omp parallel for reduction(+: z[3:5])
    for (int i = 0; i < n; i++)
      for (int j = 3; j < 8; j++)
        z[j] += a[i * m + j] / 3;
  }
  print_ints("z", z, m);

  /* In a data region: the histogram stays on the device; two regions add to it, the
     host's changes reach it through `update to`, and the result comes back at the
     end. */
  int hist[BINS];
  for (int b = 0; b < BINS; b++) hist[b] = b;
#pragma omp target data map(to: a[0:n*m]) map(tofrom: hist) // expect: emu
  {
    for (int t = 0; t < 2; t++) {
#pragma omp target teams distribute parallel for reduction(+: hist) // expect: emu tiled
      for (int i = 0; i < n; i++)
        for (int b = 0; b < BINS; b++)
          hist[b] += a[i * m + b] > 10 * t ? 1 : 0;
#pragma omp target update from(hist) // expect: emu
      print_ints("hist", hist, BINS);
      hist[0] += 1000;
#pragma omp target update to(hist) // expect: emu
    }
  }
  print_ints("hist", hist, BINS);

  /* A reduced array the target construct does not map (the nested construct reduces
     it): Tessera keeps this region on the host, inside the data region. */
  int *cnt = malloc(BINS * sizeof *cnt);
  for (int b = 0; b < BINS; b++) cnt[b] = 7;
#pragma omp target data map(tofrom: cnt[0:BINS]) map(to: a[0:n*m]) // expect: emu
  {
#pragma omp target // expect: host
    {
#pragma omp parallel for reduction(+: cnt[0:BINS]) // expect-remark: [unsupported-reduction] the reduced array is not mapped by the target construct: 'reduction(+: cnt)'; map it on the target construct, e.g. 'map(tofrom: cnt[0:n])'
      for (int i = 0; i < n; i++)
        for (int b = 0; b < BINS; b++)
          cnt[b] += a[i * m + b] & 1;
    }
  }
  print_ints("cnt", cnt, BINS);

  free(a); free(x); free(w); free(colsum); free(y); free(z); free(cnt);
  return 0;
}
