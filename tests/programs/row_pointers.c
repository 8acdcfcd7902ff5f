/* Local pointers to rows, the way ported codes walk matrices (`const float *row = A +
   i * n;`, `float *o = out[i];`, `&in[i - 1][0]`): a pointer initialised to a place in
   a region array and only ever subscripted is that array, its subscripts added (in
   pointer arithmetic's ptrdiff_t). One whose initialiser may change (a local that is
   assigned) or that is passed to a function stays a pointer the kernel cannot follow. */
#include <stdlib.h>
#include "common.h"

static void gemv(int m, int n, const float *A, const float *x, float *y) {
#pragma omp target teams distribute parallel for map(to: A[0:m*n], x[0:n]) map(from: y[0:m]) // expect: emu tiled
  for (int i = 0; i < m; i++) {
    const float *row = A + i * n;
    float s = 0.0f;
    for (int j = 0; j < n; j++) s += row[j] * x[j];
    y[i] = s;
  }
}

static void blur(int h, int w, float (*in)[w], float (*out)[w]) {
#pragma omp target teams distribute parallel for map(to: in[0:h][0:w]) map(tofrom: out[0:h][0:w]) // expect: emu tiled
  for (int i = 1; i < h - 1; i++) {
    float *o = out[i];
    const float *up = &in[i - 1][0], *mid = in[i], *dn = &in[i + 1][1];
    for (int j = 1; j < w - 1; j++) o[j] = (up[j] + mid[j - 1] + mid[j] + mid[j + 1] + dn[j - 1]) * 0.2f;
  }
}

__attribute__((noinline)) static float first(const float *p) { return p[0]; }

int main(void) {
  int m = 37, n = 45, off = 3;
  float *A = malloc(sizeof(float) * m * n), *x = malloc(sizeof(float) * n), *y = malloc(sizeof(float) * m);
  for (int i = 0; i < m * n; i++) A[i] = rng_float();
  for (int j = 0; j < n; j++) x[j] = rng_float();
  gemv(m, n, A, x, y);
  print_floats("y", y, m);

  int h = 20, w = 33;
  float (*in)[w] = malloc(sizeof(float[h][w])), (*out)[w] = malloc(sizeof(float[h][w]));
  for (int i = 0; i < h; i++)
    for (int j = 0; j < w; j++) { in[i][j] = rng_float(); out[i][j] = 0.0f; }
  blur(h, w, in, out);
  print_floats("blur", &out[0][0], (long)h * w);

  float *b = malloc(sizeof(float) * 2 * n);
  for (int i = 0; i < 2 * n; i++) b[i] = rng_float();
#pragma omp target teams distribute parallel for map(to: A[0:m*n]) map(tofrom: b[0:2*n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    const float *p = A + i + off;
    b[i + n] = b[i + n] + p[1] * 2.0f;
  }
#pragma omp target teams distribute parallel for map(to: A[0:m*n]) map(tofrom: b[0:2*n]) // expect: host
  for (int i = 0; i < n; i++) {
    const float *p = A + i + off;
    b[i] = b[i] + first(p); // expect-remark@-1: [unsupported-statement] local pointer of type 'const float *'
  }
#pragma omp target teams distribute parallel for map(to: A[0:m*n]) map(tofrom: b[0:2*n]) // expect: host
  for (int i = 0; i < n; i++) {
    int k = i;
    k = k + 1;
    const float *p = &A[k]; // expect-remark: [unsupported-statement] local pointer of type 'const float *'
    b[i] = b[i] + p[0];
  }
  print_floats("b", b, 2 * n);
  free(A); free(x); free(y); free(in); free(out); free(b);
  return 0;
}
