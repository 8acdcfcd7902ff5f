/* Members of structs that data directives map, read by regions as loop bounds and
   coefficients (`c.n`, `pc->scale`). OpenMP maps a struct a region names implicitly,
   so the region sees the struct's device copy; where a host run of another region
   changed that copy (`c.n = 5` in a region Tessera keeps on the host), a region
   reading `c.n` must see 5, not the host copy's 10. The member is read where the
   region sees it: the runtime is passed its address and reads the device copy when a
   mapping holds it. A region kept on the host that reads it gets the device copy in
   place, like its arrays. After the data regions the host copies come back. (The
   arrays are of `double`, so that writing them cannot change the `float` members.) */
#include <stdlib.h>
#include "common.h"

struct cfg { int n; float scale; };

int main(void) {
  struct cfg c = {10, 0.5f};
  double a[100];
  for (int i = 0; i < 100; i++) a[i] = 0.0;
#pragma omp target data map(tofrom: c, a[0:100]) // expect: emu
  {
#pragma omp target // expect: host
    { c.n = 5; c.scale = 2.0f; } // expect-remark: [unsupported-statement] member access 'c.n = 5' is not supported
#pragma omp target teams distribute parallel for // expect: emu tiled
    for (int i = 0; i < c.n; i++) a[i] = a[i] + c.scale;
  }
  printf("c: %d %a\n", c.n, (double)c.scale);
  print_doubles("a", a, 100);

  struct cfg *pc = malloc(sizeof *pc);
  pc->n = 40;
  pc->scale = 0.25f;
  double *b = malloc(64 * sizeof *b), *d = malloc(64 * sizeof *d); // expect-remark: [write-to-input]
  for (int i = 0; i < 64; i++) { b[i] = rng_float(); d[i] = 0.0f; }
#pragma omp target enter data map(to: pc[0:1], b[0:64], d[0:64]) // expect: emu
#pragma omp target map(tofrom: pc[0:1]) // expect: host
  { pc->n = 20; } // expect-remark: [unsupported-statement] member access 'pc->n = 20' is not supported
#pragma omp target teams distribute parallel for // expect: emu tiled
  for (int i = 0; i < pc->n; i++) d[i] = b[i] * pc->scale;
  /* Kept on the host (it writes `b`, mapped `to`): its host run reads the device
     copy of `pc->n` too. */
#pragma omp target teams distribute parallel for map(to: b[0:64]) // expect: host
  for (int i = 0; i < pc->n; i++) b[i] = b[i] + d[i];
#pragma omp target exit data map(from: pc[0:1], b[0:64], d[0:64]) // expect: emu
  printf("pc: %d\n", pc->n);
  print_doubles("b", b, 64);
  print_doubles("d", d, 64);
  free(pc); free(b); free(d);
  return 0;
}
