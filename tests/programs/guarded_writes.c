/* Guarded writes: `if (c) a[s] = e;` without `else`, the way masks, thresholds and
   boundary conditions are written. The tiled kernels compute `a[s] = c ? e : a[s]`
   (the old value where c is false), which writes every element of the loop's range,
   also those the source leaves alone — so the kernel's launch checks that its writes
   stay in the device's data of the array (the mapped section, or the mapping a
   pointer without a map clause points into). When they would not, the baseline
   kernel of the region as written, which keeps the `if`, runs instead. */
#include <stdint.h>
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 1000, h = 61, w = 47;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  int *mask = malloc(n * sizeof *mask);
  for (int i = 0; i < n; i++) { x[i] = rng_float(); y[i] = rng_float(); mask[i] = (int)(rng_next() % 3u); }

  // A mask, and a boundary condition on the loop index.
#pragma omp target teams distribute parallel for map(to: x[0:n], mask[0:n]) map(tofrom: y[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    if (mask[i] != 0) y[i] = x[i] * 2.0f + y[i];
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    if (i > 0 && i < n - 1) y[i] = 0.25f * x[i - 1] + 0.5f * x[i] + 0.25f * x[i + 1];
  print_floats("y", y, n);

  // Two guarded writes under one condition, a threshold on a flat 2-D image.
  uint8_t *img = malloc((size_t)h * w), *out = malloc((size_t)h * w), *edge = malloc((size_t)h * w);
  for (int i = 0; i < h * w; i++) { img[i] = (uint8_t)rng_next(); out[i] = 7; edge[i] = 0; }
#pragma omp target teams distribute parallel for collapse(2) map(to: img[0:h*w]) map(tofrom: out[0:h*w], edge[0:h*w]) // expect: emu tiled
  for (int i = 1; i < h - 1; i++)
    for (int j = 1; j < w - 1; j++)
      if (img[i * w + j] > 200) {
        out[i * w + j] = (uint8_t)((img[i * w + j - 1] + img[i * w + j + 1]) / 2);
        edge[i * w + j] = 1;
      }
  for (int i = 0; i < h * w; i++) printf("%d%c", out[i] + 256 * edge[i], i % 32 == 31 ? '\n' : ' ');
  printf("\n");

  // The source writes only y[0:n/2], and only that is mapped: the kernel's writes
  // of y[n/2:n/2] would leave the section, so the baseline kernel runs.
  int half = n / 2;
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:half]) // expect: emu linear
  for (int i = 0; i < n; i++)
    if (i < half) y[i] = x[i] - 1.0f;
  // The same with y present from an enclosing data region (no map clause on the
  // region: the mapping y points into holds half of it), and a region whose writes
  // stay inside the mapping, which gets the tiled kernel.
#pragma omp target data map(tofrom: y[0:half]) map(to: x[0:n], mask[0:n]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu linear
    for (int i = 0; i < n; i++)
      if (i < half) y[i] = y[i] * 0.5f + x[i];
#pragma omp target teams distribute parallel for // expect: emu tiled
    for (int i = 0; i < half; i++)
      if (mask[i] == 2) y[i] = -y[i];
  }
  print_floats("y", y, n);
  free(x);
  free(y);
  free(mask);
  free(img);
  free(out);
  free(edge);
  return 0;
}
