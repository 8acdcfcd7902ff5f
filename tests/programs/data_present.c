/* OpenMP 5.1's `present` modifier on data directives: `target update to(present:
   …)` / `from(present: …)`, `map(present, …)` on `target enter data`, `target
   exit data` and `target data`. Each names data already on the device, so each
   runs on the device like its form without the modifier (the runtime checks the
   presence; tests/fatal/present_absent.c is the failing case). The output is the
   same whether the "device" shares the host's memory (plain clang) or not. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 200, h = n / 2;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (int i = 0; i < n; i++) { a[i] = rng_float(); b[i] = 0.0f; }

#pragma omp target enter data map(to: a[0:n]) map(alloc: b[0:n]) // expect: emu
  /* The host changes a; a present update sends the part the region reads. */
  for (int i = 0; i < h; i++) a[i] = 2.0f * a[i];
#pragma omp target update to(present: a[0:h]) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < n; i++)
    b[i] = a[i] + 1.0f;
#pragma omp target update from(present: b[h:n-h]) // expect: emu
  print_floats("b upper", b + h, n - h);

  /* A present enter raises a's reference count; a `target data` with present
     maps finds both arrays and moves nothing at its start. */
#pragma omp target enter data map(present, to: a[0:n]) // expect: emu
#pragma omp target data map(present, tofrom: b[0:n]) map(present, to: a[10:20]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++)
      b[i] = b[i] * a[i];
  }
#pragma omp target exit data map(present, release: a[0:n]) // expect: emu
#pragma omp target exit data map(from: a[0:n], b[0:n]) // expect: emu
  print_floats("a", a, n);
  print_floats("b", b, n);
  free(a);
  free(b);
  return 0;
}
