/* Image and error-norm kernels written the usual way with <math.h>: gradient
   magnitude with sqrtf, clamping with fminf/fmaxf, rounding to uint8, per-element
   |error| with fabs, explicit fma, trunc/ceil/copysign. These functions are exact
   in IEEE 754, so the kernels must match the CPU bit for bit — also on NaN, -0.0
   and infinities, which the inputs contain. expf is not exact and stays on the
   host (unless -fplugin-arg-tessera-math=relaxed: see tests/e2e.rs). The OpenMP
   team/thread queries are the kernel's single team and thread. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include "common.h"

#define H 37
#define W 45

static void gradient(int h, int w, const float (*img)[w], float (*mag)[w]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: img[0:h]) map(tofrom: mag[0:h]) // expect: emu tiled
  for (int i = 1; i < h - 1; i++)
    for (int j = 1; j < w - 1; j++)
      mag[i][j] = sqrtf((img[i][j + 1] - img[i][j - 1]) * (img[i][j + 1] - img[i][j - 1]) +
                        (img[i + 1][j] - img[i - 1][j]) * (img[i + 1][j] - img[i - 1][j]));
}

static void clamp_quantise(int h, int w, const float (*img)[w], float lo, float hi, float (*c)[w],
                           unsigned char (*q)[w], unsigned char (*f)[w]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: img[0:h]) map(from: c[0:h], q[0:h], f[0:h]) // expect: emu tiled
  for (int i = 0; i < h; i++)
    for (int j = 0; j < w; j++) {
      c[i][j] = fminf(fmaxf(img[i][j], lo), hi);
      q[i][j] = (unsigned char)fminf(255.0f, fmaxf(0.0f, roundf(img[i][j] * 127.5f + 127.5f)));
      f[i][j] = (unsigned char)fmaxf(0.0f, floorf(fminf(img[i][j] * 128.0f + 128.0f, 255.0f)));
    }
}

static void errors(int n, const double *x, const double *ref, double *err, double *fused, double *misc) {
#pragma omp target teams distribute parallel for map(to: x[0:n], ref[0:n]) map(tofrom: err[0:n], fused[0:n], misc[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    err[i] = fabs(x[i] - ref[i]) / fmax(fabs(ref[i]), 1e-300);
    fused[i] = fma(x[i], ref[i], -x[i] * ref[i]); /* the rounding error of the product */
    misc[i] = copysign(trunc(x[i] * 8.0), ref[i]) + ceil(ref[i] * 3.0) + sqrt(fabs(x[i]));
  }
}

int main(void) {
  int h = H, w = W, n = 301;
  float (*img)[W] = malloc(sizeof(float[H][W]));
  float (*mag)[W] = malloc(sizeof(float[H][W]));
  float (*c)[W] = malloc(sizeof(float[H][W]));
  unsigned char (*q)[W] = malloc(sizeof(unsigned char[H][W]));
  unsigned char (*f)[W] = malloc(sizeof(unsigned char[H][W]));
  for (int i = 0; i < h; i++)
    for (int j = 0; j < w; j++) {
      img[i][j] = 1.5f * rng_float();
      mag[i][j] = 0.0f;
    }
  /* Special values: NaN, signed zeros, infinities, exact halves for roundf. */
  img[3][4] = NAN;
  img[3][5] = -0.0f;
  img[3][6] = 0.0f;
  img[4][4] = INFINITY;
  img[4][5] = -INFINITY;
  img[5][5] = 0.5f / 127.5f;
  img[5][6] = -1.5f / 127.5f;
  img[6][6] = -1.0f;

  gradient(h, w, (const float (*)[w])img, mag);
  clamp_quantise(h, w, (const float (*)[w])img, -0.75f, 0.75f, c, q, f);
  clamp_quantise(h, w, (const float (*)[w])img, -0.0f, 0.0f, c, q, f);

  double *x = malloc(n * sizeof *x), *ref = malloc(n * sizeof *ref);
  double *err = malloc(n * sizeof *err), *fused = malloc(n * sizeof *fused), *misc = malloc(n * sizeof *misc);
  for (int i = 0; i < n; i++) {
    ref[i] = rng_float() * 100.0;
    x[i] = ref[i] + rng_float() * 1e-3;
    err[i] = fused[i] = misc[i] = 0.0;
  }
  ref[7] = -0.0;
  x[8] = -2.5;
  ref[9] = 0.0;
  errors(n, x, ref, err, fused, misc);

  /* expf: library-dependent, stays on the host. */
  float *e = malloc(W * sizeof *e);
#pragma omp target teams distribute parallel for map(to: img[0:H]) map(from: e[0:W]) // expect: host
  for (int j = 0; j < W; j++)
    e[j] = expf(img[2][j]); // expect-remark: [inexact-math] 'expf' is not correctly rounded in every math library; the kernel's results could differ from the host's

  /* A plain target region is one team of one thread on the host as in the kernel. */
  int ids[4 * W];
#pragma omp target map(from: ids[0:4 * W]) // expect: emu tiled
  for (int j = 0; j < W; j++) {
    ids[j] = omp_get_team_num() + j;
    ids[W + j] = omp_get_num_teams() * j;
    ids[2 * W + j] = omp_get_thread_num() - j;
    ids[3 * W + j] = omp_get_num_threads() + 2 * j;
  }

  for (int i = 0; i < h; i++) print_floats("mag", mag[i], w);
  for (int i = 0; i < h; i++) print_floats("c", c[i], w);
  for (int i = 0; i < h; i++) {
    printf("q:");
    for (int j = 0; j < w; j++) printf(" %d/%d", q[i][j], f[i][j]);
    printf("\n");
  }
  print_doubles("err", err, n);
  print_doubles("fused", fused, n);
  print_doubles("misc", misc, n);
  print_floats("e", e, W);
  print_ints("ids", ids, 4 * W);
  free(img); free(mag); free(c); free(q); free(f); free(x); free(ref); free(err); free(fused); free(misc); free(e);
  return 0;
}
