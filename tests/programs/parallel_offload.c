/* Target regions inside `omp parallel`: 4 host threads offload at once, each its
   own slice. First each region maps its slice itself; then, inside a data region,
   the threads share the present read-only array c and update their slices of the
   present arrays a and t (no copies per launch). */
#include <omp.h>
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 4000, k = 1000;
  float *a = malloc(n * sizeof *a), *c = malloc(n * sizeof *c), *t = malloc(n * sizeof *t);
  for (int i = 0; i < n; i++) { a[i] = rng_float(); c[i] = rng_float(); t[i] = 0.0f; }

#pragma omp parallel num_threads(4)
  {
    int lo = omp_get_thread_num() * k;
    for (int rep = 0; rep < 3; rep++) {
#pragma omp target teams distribute parallel for map(tofrom: a[lo:k]) // expect: emu
      for (int i = lo; i < lo + k; i++)
        a[i] = a[i] * 1.5f + (float)rep;
    }
  }

#pragma omp target data map(to: c[0:n]) map(tofrom: a[0:n]) map(alloc: t[0:n]) // expect: emu
  {
#pragma omp parallel num_threads(4)
    {
      int lo = omp_get_thread_num() * k;
      for (int rep = 0; rep < 3; rep++) {
#pragma omp target teams distribute parallel for map(tofrom: a[lo:k]) // expect: emu
        for (int i = lo; i < lo + k; i++)
          a[i] = a[i] + c[i];
#pragma omp target teams distribute parallel for map(from: t[lo:k]) // expect: emu
        for (int i = lo; i < lo + k; i++)
          t[i] = a[i] - c[i];
      }
    }
#pragma omp target update from(t[0:n]) // expect: emu
  }
  print_floats("a", a, n);
  print_floats("t", t, n);

  // expect-transfers: a to=64000 from=64000
  // expect-transfers: c to=16000 from=0
  // expect-transfers: t to=0 from=16000
  free(a);
  free(c);
  free(t);
  return 0;
}
