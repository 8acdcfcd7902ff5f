/* Regions Tessera keeps on the host, each with its remark: an indirect subscript,
   a call, and a `reduction` on a construct that is only part of the region. Results must still be exactly the CPU's. */
#include <math.h>
#include <stdlib.h>
#include "common.h"

/* Defined at the end: its body is not visible at the regions, which stay on the host. */
static float scale(float x);

int main(void) {
  int n = 61;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  int *idx = malloc(n * sizeof *idx);
  for (int i = 0; i < n; i++) { a[i] = rng_float(); b[i] = 0.0f; c[i] = 0.0f; idx[i] = (int)(rng_next() % (unsigned)n); }

#pragma omp target teams distribute parallel for map(to: a[0:n], idx[0:n]) map(tofrom: b[0:n]) // expect: host
  for (int i = 0; i < n; i++)
    b[i] = a[idx[i]] + 1.0f; // expect-remark: [non-affine-subscript] subscript 'idx[i]' of 'a' is not affine

#pragma omp target teams distribute parallel for map(to: a[0:n]) map(tofrom: c[0:n]) // expect: host
  for (int i = 0; i < n; i++)
    c[i] = scale(a[i]) + sqrtf(fabsf(a[i])); // expect-remark@-2: [unpassable] it calls 'scale', whose body Tessera cannot see here

  double sum[2] = {0.0, 0.0};
#pragma omp target map(to: c[0:n]) map(tofrom: sum[0:2]) // expect: host
  {
    sum[1] = 1.0;
#pragma omp parallel for reduction(+: sum[0:1]) // expect-remark: [unsupported-reduction] a reduction on a construct that is only part of the target region is not supported: 'reduction(+: sum[0:1])'; put the clause on the target construct, or make the construct the region's only statement
    for (int i = 0; i < n; i++)
      sum[0] += c[i];
  }

  print_floats("b", b, n);
  print_floats("c", c, n);
  printf("sum: %a %a\n", sum[0], sum[1]);
  free(a); free(b); free(c); free(idx);
  return 0;
}

static float scale(float x) { return 2.0f * x; }
