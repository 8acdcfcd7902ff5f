/* Imperfect nests the way linear algebra is written: a statement beside the inner
   loop. An initialisation before an accumulating inner loop (gemm's C = beta*C, a
   zeroed accumulator) or a local accumulator stored after it is folded into the inner
   loop's first iteration, which makes the nest perfect and tileable, under the launch
   condition that the inner loops run at least once. When it fails (an empty inner
   loop at run time), the baseline kernel of the region as written runs. */
#include <stdint.h>
#include <stdlib.h>
#include "common.h"

// Local accumulator of another type than the element it is stored into: the store
// converts, so the local is not the element (baseline kernel).
static void matvec_mixed(int m, int n, const float *A, const float *x, float *y) {
#pragma omp target teams distribute parallel for map(to: A[0:m*n], x[0:n]) map(from: y[0:m]) // expect: emu baseline ~ [not-a-loop-nest]
  for (int i = 0; i < m; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++)
      s += A[i * n + j] * x[j];
    y[i] = s;
  }
}

static void matvec(int m, int n, const double *A, const double *x, double *y) {
#pragma omp target teams distribute parallel for map(to: A[0:m*n], x[0:n]) map(from: y[0:m]) // expect: emu tiled
  for (int i = 0; i < m; i++) {
    double s = 0.0;
    for (int j = 0; j < n; j++)
      s += A[i * n + j] * x[j];
    y[i] = s;
  }
}

// The same code called with n == 0: the launch condition fails.
static void matvec_empty(int m, int n, const double *A, const double *x, double *y) {
#pragma omp target teams distribute parallel for map(to: A[0:m*n+1], x[0:n+1]) map(from: y[0:m]) // expect: emu linear
  for (int i = 0; i < m; i++) {
    double s = 1.0;
    for (int j = 0; j < n; j++)
      s += A[i * n + j] * x[j];
    y[i] = s;
  }
}

static void gemm(int ni, int nj, int nk, float alpha, float beta, float *C, const float *A, const float *B) {
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:ni*nk], B[0:nk*nj]) map(tofrom: C[0:ni*nj]) // expect: emu tiled
  for (int i = 0; i < ni; i++)
    for (int j = 0; j < nj; j++) {
      C[i * nj + j] *= beta;
      for (int k = 0; k < nk; k++)
        C[i * nj + j] += alpha * A[i * nk + k] * B[k * nj + j];
    }
}

// Two accumulators initialised before one inner loop (mvt/bicg-style).
static void two_products(int m, int n, const float *A, const float *p, const float *r, float *q, float *s) {
#pragma omp target teams distribute parallel for map(to: A[0:m*n], p[0:n], r[0:n]) map(from: q[0:m], s[0:m]) // expect: emu tiled
  for (int i = 0; i < m; i++) {
    q[i] = 0.0f;
    s[i] = 1.0f;
    for (int j = 0; j < n; j++) {
      q[i] = q[i] + A[i * n + j] * p[j];
      s[i] = s[i] * 0.5f + A[i * n + j] * r[j];
    }
  }
}

// A 3x3 convolution with the filter's loops written out: the folded nest has depth 4;
// its filter loops have constant trip counts (no launch condition) within one tile.
static void conv3x3(int h, int w, const float *in, const float *k, float *out) {
#pragma omp target teams distribute parallel for collapse(2) map(to: in[0:h*w], k[0:9]) map(tofrom: out[0:h*w]) // expect: emu tiled
  for (int y = 1; y < h - 1; y++)
    for (int x = 1; x < w - 1; x++) {
      float acc = 0.0f;
      for (int ky = 0; ky < 3; ky++)
        for (int kx = 0; kx < 3; kx++)
          acc += k[ky * 3 + kx] * in[(y + ky - 1) * w + x + kx - 1];
      out[y * w + x] = acc;
    }
}

// Two inner loops: a 3-row window summed into each output. Folded, but the sum runs
// along both inner loops (dependence distance (0, 1, -w) among others), which
// rectangular tiles of them would break: the baseline kernel.
static void window_sums(int rows, int w, const uint8_t *img, int *out) {
#pragma omp target teams distribute parallel for map(to: img[0:(rows+2)*w]) map(from: out[0:rows]) // expect: emu baseline ~ [tiling-illegal]
  for (int i = 0; i < rows; i++) {
    int acc = 7;
    for (int k = 0; k < 3; k++)
      for (int l = 0; l < w; l++)
        acc += img[(i + k) * w + l];
    out[i] = acc;
  }
}

int main(void) {
  int m = 29, n = 23;
  float *Af = malloc(sizeof(float) * m * n), *xf = malloc(sizeof(float) * n), *yf = malloc(sizeof(float) * m);
  double *A = malloc(sizeof(double) * (m * n + 1)), *x = malloc(sizeof(double) * (n + 1)), *y = malloc(sizeof(double) * m);
  for (int i = 0; i < m * n; i++) { Af[i] = rng_float(); A[i] = rng_float(); }
  A[m * n] = 0.0;
  for (int j = 0; j < n; j++) { xf[j] = rng_float(); x[j] = rng_float(); }
  x[n] = 0.0;
  matvec_mixed(m, n, Af, xf, yf);
  print_floats("yf", yf, m);
  matvec(m, n, A, x, y);
  print_doubles("y", y, m);
  matvec_empty(m, 0, A, x, y);
  print_doubles("y0", y, m);

  int ni = 21, nj = 19, nk = 17;
  float *Ca = malloc(sizeof(float) * ni * nj), *Aa = malloc(sizeof(float) * ni * nk), *Ba = malloc(sizeof(float) * nk * nj);
  for (int i = 0; i < ni * nj; i++) Ca[i] = rng_float();
  for (int i = 0; i < ni * nk; i++) Aa[i] = rng_float();
  for (int i = 0; i < nk * nj; i++) Ba[i] = rng_float();
  gemm(ni, nj, nk, 1.25f, 0.75f, Ca, Aa, Ba);
  print_floats("C", Ca, ni * nj);

  float *p = malloc(sizeof(float) * n), *r = malloc(sizeof(float) * n), *q = malloc(sizeof(float) * m), *s = malloc(sizeof(float) * m);
  for (int j = 0; j < n; j++) { p[j] = rng_float(); r[j] = rng_float(); }
  two_products(m, n, Af, p, r, q, s);
  print_floats("q", q, m);
  print_floats("s", s, m);

  int h = 31, wc = 43;
  float *img_f = malloc(sizeof(float) * h * wc), *conv = malloc(sizeof(float) * h * wc), filt[9];
  for (int i = 0; i < h * wc; i++) { img_f[i] = rng_float(); conv[i] = rng_float(); }
  for (int i = 0; i < 9; i++) filt[i] = rng_float();
  conv3x3(h, wc, img_f, filt, conv);
  print_floats("conv", conv, h * wc);

  int rows = 17, w = 37;
  uint8_t *img = malloc((rows + 2) * w);
  int *out = malloc(sizeof(int) * rows);
  for (int i = 0; i < (rows + 2) * w; i++) img[i] = (uint8_t)(rng_next() >> 24);
  window_sums(rows, w, img, out);
  print_ints("out", out, rows);
  return 0;
}
