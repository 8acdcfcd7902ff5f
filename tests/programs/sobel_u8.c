/* A Sobel edge detector on a flat uint8_t image, as image-processing code writes it:
   the gradients in int locals, their magnitude through a static inline clamp helper,
   the border left alone. The gradients are copied into every use of the magnitude
   for the tiled kernels (the locals module's size limit allows it). A histogram of
   the result indexes its bins with the pixels it reads, which stays on the host. */
#include <stdint.h>
#include <stdlib.h>
#include "common.h"

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

int main(void) {
  int w = 97, h = 61;
  uint8_t *in = malloc(w * h), *out = malloc(w * h);
  for (int i = 0; i < w * h; i++) {
    in[i] = (uint8_t)(rng_next() & 255u);
    out[i] = 0;
  }
#pragma omp target teams distribute parallel for collapse(2) map(to: in[0:w * h]) map(tofrom: out[0:w * h]) // expect: emu tiled
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      int gx = -in[(y - 1) * w + x - 1] + in[(y - 1) * w + x + 1] - 2 * in[y * w + x - 1] + 2 * in[y * w + x + 1] -
               in[(y + 1) * w + x - 1] + in[(y + 1) * w + x + 1];
      int gy = -in[(y - 1) * w + x - 1] - 2 * in[(y - 1) * w + x] - in[(y - 1) * w + x + 1] + in[(y + 1) * w + x - 1] +
               2 * in[(y + 1) * w + x] + in[(y + 1) * w + x + 1];
      int g = (gx < 0 ? -gx : gx) + (gy < 0 ? -gy : gy);
      out[y * w + x] = (uint8_t)clampi(g, 0, 255);
    }

  int hist[8] = {0};
#pragma omp target teams distribute parallel for reduction(+: hist[0:8]) map(to: out[0:w * h]) // expect: host
  for (int i = 0; i < w * h; i++) hist[out[i] >> 5]++; // expect-remark: [non-affine-subscript] subscript 'out[i] >> 5' of 'hist' is not affine

  printf("out:");
  for (int i = 0; i < w * h; i++) printf(" %d", out[i]);
  printf("\n");
  print_ints("hist", hist, 8);
  free(in);
  free(out);
  return 0;
}
