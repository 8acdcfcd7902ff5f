/* A region whose variables Tessera cannot pass (it reaches an array through a
   struct's pointer-to-pointer member) runs on the host; with the device data of every mapping
   around it that stands for a device run — but not with an `if` clause, whose value
   the runtime does not see (false sends the region to the host device, on host
   data). While `target enter data` holds the array on the device the program stops
   with an error instead of guessing. */
#include "../programs/common.h"
#include <stdlib.h>

struct grid {
  int n;
  float **p;
};

int main(void) {
  int n = 16, on = n > 4;
  float *a = malloc(n * sizeof *a);
  float *rows[1] = {a};
  struct grid g = {n, rows};
  for (int i = 0; i < n; i++) a[i] = i;
  print_floats("before", a, n);
#pragma omp target enter data map(to: a[0:n])
#pragma omp target teams distribute parallel for
  for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f;
#pragma omp target teams distribute parallel for if(on) // expect-fatal: and its 'if' clause may send it to the host device, on host data
  for (int i = 0; i < g.n; i++) g.p[0][i] = g.p[0][i] + 1.0f;
#pragma omp target exit data map(from: a[0:n])
  print_floats("after", a, n);
  free(a);
  return 0;
}
