/* Floating-point contraction. clang 19 compiles C and C++ with -ffp-contract=on: an
   `a * b + c` inside one expression becomes llvm.fmuladd, which is one fused
   multiply-add (one rounding) on a target with FMA instructions and a
   multiplication and an addition (two roundings) without them. The reference
   (plain clang-19 -O2, x86-64's baseline without FMA) rounds twice, as the kernels
   do, so every region here is offloaded. tests/e2e.rs builds this program again
   with -mfma: the regions the host then fuses stay on the host with the remark
   `host-fp-contraction`, those written with fma() or under
   `#pragma STDC FP_CONTRACT OFF` are still offloaded, and the results are the
   host's either way. */
#include <math.h>
#include <stdlib.h>
#include "common.h"

static void axpy(int n, float a, const float *x, float *y) {
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i]; // fused with -mfma
}

static void residual(int n, const double *x, double *r) {
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: r[0:n]) // expect: emu tiled
  for (int i = 1; i < n - 1; i++)
    r[i] -= 0.5 * x[i - 1] * x[i + 1]; // fused with -mfma (a compound assignment)
}

static void explicit_fma(int n, const double *x, double *r) {
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: r[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    r[i] = fma(x[i], x[i], -r[i]); // one rounding everywhere
}

static void not_contracted(int n, float a, const float *x, float *y) {
#pragma STDC FP_CONTRACT OFF
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i]; // never fused
}

int main(void) {
  int n = 257;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  double *xd = malloc(n * sizeof *xd), *r = malloc(n * sizeof *r);
  for (int i = 0; i < n; i++) {
    x[i] = rng_float();
    y[i] = rng_float();
    xd[i] = 1.0 + rng_float() * 0x1p-20;
    r[i] = rng_float();
  }
  axpy(n, 1.0f / 3.0f, x, y);
  not_contracted(n, 3.0f / 7.0f, x, y);
  residual(n, xd, r);
  explicit_fma(n, xd, r);
  print_floats("y", y, n);
  print_doubles("r", r, n);
  free(x); free(y); free(xd); free(r);
  return 0;
}
