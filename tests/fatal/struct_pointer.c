/* A region that reaches an array through a struct's pointer member (`g.p[i]`)
   cannot be offloaded, and Tessera cannot tell which mapped data it uses: here `a`,
   which `target enter data` put on the device and a kernel changed there. A host
   run would read the stale host copy; the program stops with an error instead of
   printing wrong results. */
#include "../programs/common.h"
#include <stdlib.h>

struct grid {
  int n;
  float *p;
};

int main(void) {
  int n = 16;
  float *a = malloc(n * sizeof *a);
  struct grid g = {n, a};
  for (int i = 0; i < n; i++) a[i] = i;
  print_floats("before", a, n);
#pragma omp target enter data map(to: a[0:n])
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f;
#pragma omp target teams distribute parallel for // expect-fatal: it reaches memory through 'g' (type 'struct grid')
  for (int i = 0; i < g.n; i++) g.p[i] = g.p[i] + 1.0f;
#pragma omp target exit data map(from: a[0:n])
  print_floats("after", a, n);
  free(a);
  return 0;
}
