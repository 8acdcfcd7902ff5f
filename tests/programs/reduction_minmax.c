/* Floating min/max reductions, the max norm of a residual, and a product of powers
   of two. The 1-D loops get the tiled kernel, whose tiles accumulate in the loop's
   order (which also keeps which of -0.0 and +0.0 a min or max returns); the residual
   loop declares locals, which the tiled kernels do not model. The math library's
   fmax / fminf as the accumulation, as Jacobi solvers write their convergence test:
   tiled in 1-D; in a 2-D nest, whose tiles reorder the accumulations, tiled when the
   candidates are fabs(…) (never -0.0: the result is the same in any order), else the
   baseline kernel, whose loop order keeps which of -0.0 and +0.0 comes out. */
#include <math.h>
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 2053;
  float *u = malloc(n * sizeof *u), *f = malloc(n * sizeof *f);
  double *w = malloc(n * sizeof *w);
  for (int i = 0; i < n; i++) {
    u[i] = rng_float();
    f[i] = rng_float();
    w[i] = (rng_next() & 1u) ? 2.0 : ((rng_next() & 1u) ? 0.5 : -1.0);
  }

  /* max |u[i-1] - 2 u[i] + u[i+1] - f[i]|: the residual's max norm, through two
     locals (the tiled kernels compute them where they are used). */
  float res = 0.0f;
#pragma omp target teams distribute parallel for reduction(max: res) map(to: u[0:n], f[0:n]) // expect: emu tiled
  for (int i = 1; i < n - 1; i++) {
    float r = u[i - 1] - 2.0f * u[i] + u[i + 1] - f[i];
    float a = r < 0.0f ? -r : r;
    if (a > res) res = a;
  }

  float umin = 0.25f, umax = 0.25f;
#pragma omp target teams distribute parallel for reduction(min: umin) reduction(max: umax) map(to: u[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    umin = u[i] < umin ? u[i] : umin;
    umax = u[i] > umax ? u[i] : umax;
  }

  /* The private copies start at the identities (min: the largest double, max:
     its negation), then combine with the host's values. */
  double dmin = 3.0, dmax = -3.0, prod = 0.75;
#pragma omp target teams distribute parallel for reduction(min: dmin) reduction(max: dmax) reduction(*: prod) map(to: w[0:n]) // expect: emu tiled
  for (int i = 0; i < 64; i++) {
    dmin = w[i] < dmin ? w[i] : dmin;
    dmax = w[i] > dmax ? w[i] : dmax;
    prod *= w[i];
  }

  /* Only infinities: the private copies start at the largest finite values (as
     clang initialises them), so the results are FLT_MAX and -DBL_MAX. */
  float inf[4];
  double ninf[4];
  for (int i = 0; i < 4; i++) { inf[i] = 1.0f / 0.0f; ninf[i] = -1.0 / 0.0; }
  float least = inf[0];
  double most = ninf[0];
#pragma omp target teams distribute parallel for reduction(min: least) reduction(max: most) map(to: inf, ninf) // expect: emu tiled
  for (int i = 0; i < 4; i++) {
    least = inf[i] < least ? inf[i] : least;
    most = ninf[i] > most ? ninf[i] : most;
  }

  double err = 0.0;
  float lo = 1.0f;
#pragma omp target teams distribute parallel for reduction(max: err) reduction(min: lo) map(to: u[0:n], f[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    err = fmax(err, fabs((double)u[i] - (double)f[i]));
    lo = fminf(u[i], lo);
  }
  double err2 = 0.0;
#pragma omp target teams distribute parallel for collapse(2) reduction(max: err2) map(to: u[0:n]) // expect: emu tiled
  for (int i = 1; i < 10; i++)
    for (int j = 1; j < 200; j++)
      err2 = fmax(fabs(u[i * 200 + j] - 0.5 * u[(i - 1) * 200 + j]), err2);
  float top = -1.0f;
#pragma omp target teams distribute parallel for collapse(2) reduction(max: top) map(to: u[0:n]) // expect: emu baseline ~ [reduction-order] the floating-point maximum 'reduction(max: top)'
  for (int i = 1; i < 10; i++)
    for (int j = 1; j < 200; j++)
      top = fmaxf(top, u[i * 200 + j] - u[(i - 1) * 200 + j]);

  printf("err %a lo %a err2 %a top %a\n", err, (double)lo, err2, (double)top);
  printf("least %a most %a\n", (double)least, most);
  printf("res %a umin %a umax %a\n", (double)res, (double)umin, (double)umax);
  printf("dmin %a dmax %a prod %a\n", dmin, dmax, prod);
  free(u);
  free(f);
  free(w);
  return 0;
}
