/* `target enter data` / `target exit data` / `target update` round trips, with
   reference counts (a is entered twice), `always`, `release` and `delete`, and
   updates of part of an array. The program is portable: it never reads a host copy
   that a device would have left stale, so its output is the same whether the
   "device" shares the host's memory (plain clang) or not (Tessera). */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 301, h = n / 2;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  float c[64];
  for (int i = 0; i < n; i++) { a[i] = rng_float(); b[i] = 0.0f; }
  for (int i = 0; i < 64; i++) c[i] = rng_float();

#pragma omp target enter data map(to: a[0:n]) map(alloc: b[0:n]) // expect: emu
#pragma omp target enter data map(to: a[0:n]) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < n; i++)
    b[i] = 2.0f * a[i] + 1.0f;
#pragma omp target update from(b[0:n]) // expect: emu
  print_floats("b1", b, n);

  /* The host changes the first half of b and sends it; a region updates it in
     place (present: nothing moves). */
  for (int i = 0; i < h; i++) b[i] = 0.5f * b[i];
#pragma omp target update to(b[0:h]) // expect: emu
#pragma omp target teams distribute parallel for map(tofrom: b[0:h]) // expect: emu
  for (int i = 0; i < h; i++)
    b[i] = b[i] + a[i];

  /* `always` sends the host's new a although a is present. */
  for (int i = 0; i < n; i++) a[i] = -a[i];
#pragma omp target teams distribute parallel for map(always, to: a[0:n]) map(tofrom: b[0:n]) // expect: emu
  for (int i = 0; i < n; i++)
    b[i] = b[i] + a[i];

  /* a: count 2 -> 1, nothing moves; b: count 1 -> 0, b comes back. */
#pragma omp target exit data map(release: a[0:n]) // expect: emu
#pragma omp target exit data map(from: b[0:n]) // expect: emu
  print_floats("b2", b, n);

  /* c: mapped, read by a region, deleted without a copy back. b is no longer
     present: the region maps its part for itself. */
#pragma omp target enter data map(to: c) // expect: emu
#pragma omp target teams distribute parallel for map(to: c) map(tofrom: b[0:64]) // expect: emu
  for (int i = 0; i < 64; i++)
    b[i] = b[i] * c[i];
#pragma omp target exit data map(delete: c) // expect: emu
  print_floats("b3", b, n);

  /* a is still present (count 1): fetch it, then delete it. An update of data that
     is not present does nothing. */
#pragma omp target update from(a[0:n]) // expect: emu
#pragma omp target exit data map(delete: a[0:n]) // expect: emu
#pragma omp target update from(a[0:n]) // expect: emu
  print_floats("a", a, n);

  // expect-transfers: a to=2408 from=1204
  // expect-transfers: b to=856 from=2664
  // expect-transfers: c to=256 from=0
  free(a);
  free(b);
  return 0;
}
