/* Image filters on 8-bit images, as image-processing code writes them: a 3x3 box blur
   with integer rounding ((sum + 4) / 9 in int, stored back to uint8_t), a threshold
   with a conditional expression, and a horizontal gradient clamped to 0..255. The
   images are flat buffers indexed img[y*w + x]. */
#include <stdint.h>
#include <stdlib.h>
#include "common.h"

int main(void) {
  int h = 48, w = 67;
  uint8_t *img = malloc((size_t)h * w), *blur = malloc((size_t)h * w), *mask = malloc((size_t)h * w);
  uint8_t *grad = malloc((size_t)h * w);
  for (int i = 0; i < h * w; i++) { img[i] = (uint8_t)(rng_next() >> 24); blur[i] = img[i]; mask[i] = 0; grad[i] = 0; }

#pragma omp target teams distribute parallel for collapse(2) map(to: img[0:h*w]) map(tofrom: blur[0:h*w]) // expect: emu tiled
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++)
      blur[y * w + x] = (uint8_t)((img[(y - 1) * w + x - 1] + img[(y - 1) * w + x] + img[(y - 1) * w + x + 1]
                                 + img[y * w + x - 1] + img[y * w + x] + img[y * w + x + 1]
                                 + img[(y + 1) * w + x - 1] + img[(y + 1) * w + x] + img[(y + 1) * w + x + 1] + 4) / 9);

  int level = 128;
#pragma omp target teams distribute parallel for collapse(2) map(to: blur[0:h*w]) map(tofrom: mask[0:h*w]) // expect: emu tiled
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++)
      mask[y * w + x] = blur[y * w + x] > level ? 255 : 0;

#pragma omp target teams distribute parallel for collapse(2) map(to: img[0:h*w]) map(tofrom: grad[0:h*w]) // expect: emu tiled
  for (int y = 0; y < h; y++)
    for (int x = 1; x < w - 1; x++) {
      int d = 2 * (img[y * w + x + 1] - img[y * w + x - 1]) + 128;
      grad[y * w + x] = (uint8_t)(d < 0 ? 0 : d > 255 ? 255 : d);
    }

  long sb = 0, sm = 0, sg = 0;
  for (int i = 0; i < h * w; i++) { sb = sb * 31 + blur[i]; sm += mask[i]; sg = sg * 17 + grad[i]; }
  printf("blur %ld mask %ld grad %ld\n", sb, sm, sg);
  for (int x = 0; x < w; x++) printf("%d ", blur[20 * w + x]);
  printf("\n");
  free(img); free(blur); free(mask); free(grad);
  return 0;
}
