/* Host runs of regions whose pointers alias one mapping. Inside a data region that
   maps `a`, a region Tessera keeps on the host (it writes `a` but maps it `to`) uses
   `a` and `b = a + 4`: its host run gets the device copy of both ranges, which
   overlap, and after the host code puts every result on the device before it puts
   the host copy's saved bytes back — in either order a saved byte of one range would
   otherwise reach the device through the other and undo the region's writes there. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 32;
  float *a = malloc(n * sizeof *a); // expect-remark: [write-to-input]
  for (int i = 0; i < n; i++) a[i] = (float)i;
  float *b = a + 4;
#pragma omp target data map(tofrom: a[0:n]) // expect: emu
  {
#pragma omp target map(to: a[0:n]) // expect: host
    for (int i = 0; i < 8; i++) {
      a[i] = a[i] + 100.0f;
      b[i] = b[i] + 1000.0f;
    }
  }
  print_floats("a", a, n);

  double *c = malloc(n * sizeof *c), *d = malloc(n * sizeof *d); // expect-remark: [write-to-input]
  for (int i = 0; i < n; i++) { c[i] = rng_float(); d[i] = rng_float(); }
  double *e = c + n / 2;
#pragma omp target enter data map(to: c[0:n], d[0:n]) // expect: emu
#pragma omp target map(to: c[0:n]) map(tofrom: d[0:n]) // expect: host
  for (int i = 0; i < n / 2; i++) {
    d[i] = c[i] * 2.0 + e[i];
    e[i] = e[i] - c[i];
    c[i] = 0.5 * d[i];
  }
#pragma omp target exit data map(from: c[0:n], d[0:n]) // expect: emu
  print_doubles("c", c, n);
  print_doubles("d", d, n);
  free(a); free(c); free(d);
  return 0;
}
