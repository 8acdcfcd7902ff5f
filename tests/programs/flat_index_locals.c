/* Flat arrays indexed through a local, the way most hand-written HPC loops do it:
   `int idx = i*m + j; b[idx] = … a[idx - m] …`, a 3-D `const long c = (i*ny + j)*nz + k`,
   and an index local reused for two arrays. A subscript through a local is the
   local's value: the region is compiled with its locals substituted into their uses,
   delinearised and tiled like `b[i*m + j]`. Also the integer `abs`/`labs` of C's
   library, which kernels compute as `x < 0 ? -x : x`. A local index assigned in a
   branch is no single value, and the region stays on the host with the subscript's
   remark. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 37, m = 53, nx = 11, ny = 13, nz = 17;
  float *a = malloc(n * m * sizeof *a), *b = malloc(n * m * sizeof *b);
  double *u = malloc(nx * ny * nz * sizeof *u), *v = malloc(nx * ny * nz * sizeof *v);
  int *p = malloc(n * m * sizeof *p), *q = malloc(n * m * sizeof *q);
  long *r = malloc(n * sizeof *r);
  for (int i = 0; i < n * m; i++) {
    a[i] = rng_float();
    b[i] = 0.0f;
    p[i] = (int)(rng_next() % 2001u) - 1000;
  }
  for (int i = 0; i < nx * ny * nz; i++) {
    u[i] = rng_float();
    v[i] = 0.0;
  }

  /* A 5-point stencil on a flat image through `idx`. */
#pragma omp target teams distribute parallel for collapse(2) map(to: a[0:n * m]) map(tofrom: b[0:n * m]) // expect: emu tiled
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++) {
      int idx = i * m + j;
      b[idx] = 0.25f * (a[idx - 1] + a[idx + 1] + a[idx - m] + a[idx + m]);
    }
  print_floats("b", b, n * m);

  /* A 7-point stencil on a flat 3-D grid through a `const long` index. */
#pragma omp target teams distribute parallel for collapse(3) map(to: u[0:nx * ny * nz]) map(tofrom: v[0:nx * ny * nz]) // expect: emu tiled
  for (int i = 1; i < nx - 1; i++)
    for (int j = 1; j < ny - 1; j++)
      for (int k = 1; k < nz - 1; k++) {
        const long c = ((long)i * ny + j) * nz + k;
        v[c] = u[c] - (u[c - 1] + u[c + 1] + u[c - nz] + u[c + nz] + u[c - (long)ny * nz] + u[c + (long)ny * nz]) / 6.0;
      }
  print_doubles("v", v, nx * ny * nz);

  /* Absolute values of integers, one index local for two arrays. */
#pragma omp target teams distribute parallel for collapse(2) map(to: p[0:n * m]) map(from: q[0:n * m]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      int at = i * m + j;
      q[at] = abs(p[at]) - abs(p[at] / 3) + 7;
    }
  print_ints("q", q, n * m);
#pragma omp target teams distribute parallel for map(to: p[0:n * m]) map(from: r[0:n]) // expect: emu
  for (int i = 0; i < n; i++)
    r[i] = labs((long)p[i * m] * 100000L);
  for (int i = 0; i < n; i++) printf("r[%d] = %ld\n", i, r[i]);

  /* An index assigned in a branch: no single value, on the host. */
#pragma omp target teams distribute parallel for map(to: a[0:n * m]) map(from: b[0:n]) // expect: host
  for (int i = 0; i < n; i++) {
    int at = i * m;
    if (i % 2)
      at = at + 1;
    b[i] = a[at] * 2.0f; // expect-remark: [non-affine-subscript] subscript 'at'
  }
  print_floats("b2", b, n);

  free(a);
  free(b);
  free(u);
  free(v);
  free(p);
  free(q);
  free(r);
  return 0;
}
