/* 2-D 3x3 convolution on a flat malloc'd image, indexed by hand as img[y*w + x]
   (the way image code is written). Delinearised into in[?][w], out[?][w]; every
   inner subscript stays within the row (isl proves it), so no launch condition. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int h = 41, w = 59;
  float *in = malloc(sizeof(float) * h * w);
  float *out = malloc(sizeof(float) * h * w);
  for (int i = 0; i < h * w; i++) { in[i] = rng_float(); out[i] = 0.0f; }

#pragma omp target teams distribute parallel for collapse(2) map(to: in[0:h*w]) map(tofrom: out[0:h*w]) // expect: emu tiled
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      out[y * w + x] = 0.0625f * in[(y - 1) * w + x - 1] + 0.125f * in[(y - 1) * w + x] + 0.0625f * in[(y - 1) * w + x + 1]
                     + 0.125f * in[y * w + x - 1] + 0.25f * in[y * w + x] + 0.125f * in[y * w + x + 1]
                     + 0.0625f * in[(y + 1) * w + x - 1] + 0.125f * in[(y + 1) * w + x] + 0.0625f * in[(y + 1) * w + x + 1];

  print_floats("out", out, (long)h * w);
  free(in);
  free(out);
  return 0;
}
