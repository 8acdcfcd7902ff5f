/* Host fallbacks inside a parallel region whose reads sit under `c ? … : …`. Each
   of two threads updates its own half of `b`, mapped by an enclosing `target data`,
   with a region Tessera keeps on the host (it writes `b` but maps it `to`). The
   runtime copies around such a host run only what the region may touch: the ranges
   of its accesses, those of the guarded reads included as bounds of what they may
   read. Without ranges for the guarded reads it would swap the whole mapping of `b`,
   losing the other thread's writes, and so stops the program instead. The same for
   a flat 2-D array indexed `c[i * m + j]` with rows from the thread's `lo`: its
   region stays on the host for mapping `c` `to` (the remark says so, not that the
   subscripts are not affine), and the delinearised view's ranges bound its copies.
   Last, a region whose clauses name an array its body never uses: its host run
   moves none of that array (the compiler knows every access of the region, and none
   is of it), rather than stopping for not knowing which part of it the region uses. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 200, h = n / 2;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b); // expect-remark: [write-to-input]
  for (int i = 0; i < n; i++) {
    a[i] = rng_float();
    b[i] = rng_float();
  }
#pragma omp target data map(to: a[0:n]) map(tofrom: b[0:n]) // expect: emu
  {
#pragma omp parallel for num_threads(2)
    for (int t = 0; t < 2; t++) {
      int lo = t * h;
#pragma omp target teams distribute parallel for map(to: b[lo:h]) // expect: host
      for (int i = lo; i < lo + h; i++)
        b[i] = (a[i] > 0.0f ? b[i] * 2.0f : a[i] + b[i]);
    }
  }
  print_floats("b", b, n);

  int rows = 12, m = 10;
  float *c = malloc(rows * m * sizeof *c); // expect-remark: [write-to-input]
  for (int i = 0; i < rows * m; i++) c[i] = rng_float();
#pragma omp target data map(tofrom: c[0:rows * m]) // expect: emu
  {
#pragma omp parallel for num_threads(2)
    for (int t = 0; t < 2; t++) {
      int lo = 1 + t * 5;
#pragma omp target teams distribute parallel for collapse(2) map(to: c[lo * m:5 * m]) // expect: host
      for (int i = lo; i < lo + 5; i++)
        for (int j = 1; j < m - 1; j++)
          c[i * m + j] = c[i * m + j - 1] * 0.5f + c[i * m + j + 1];
    }
  }
  print_floats("c", c, rows * m);

  float *d = malloc(n * sizeof *d); // expect-remark: [write-to-input]
  for (int i = 0; i < n; i++) d[i] = rng_float();
#pragma omp target data map(to: a[0:n]) map(tofrom: d[0:n]) // expect: emu
  {
#pragma omp parallel for num_threads(2)
    for (int t = 0; t < 2; t++) {
      int lo = t * h;
#pragma omp target teams distribute parallel for map(to: a[lo:h], d[lo:h]) // expect: host
      for (int i = lo; i < lo + h; i++)
        d[i] = d[i] * 0.5f + 1.0f;
    }
  }
  print_floats("d", d, n);
  free(d);
  free(a);
  free(b);
  free(c);
  return 0;
}
