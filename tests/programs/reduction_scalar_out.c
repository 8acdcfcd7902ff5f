/* Mapped scalars the region writes: an error estimate `map(tofrom: err)`
   computed in a sequential loop of a plain `target` region, a count
   `map(from: count)`, a firstprivate scalar the region uses as a running
   value (its writes stay on the device), and a scalar written but mapped
   `to`, which stays on the host. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 1500;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (int i = 0; i < n; i++) { a[i] = rng_float(); b[i] = -1.0f; }

  float err = -1.0f;
  int count;
#pragma omp target map(to: a[0:n]) map(tofrom: err) map(from: count) // expect: emu baseline
  {
    count = 0;
    for (int i = 0; i < n; i++) {
      float d = a[i] - 0.5f;
      if (d > err) err = d;
      if (a[i] > 0.0f) count = count + 1;
    }
  }

  /* `carry` has no map clause: firstprivate, the host keeps 0.25. */
  float carry = 0.25f;
#pragma omp target map(to: a[0:n]) map(from: b[0:n]) // expect: emu baseline
  for (int i = 0; i < n; i++) {
    carry = 0.5f * carry + a[i];
    b[i] = carry;
  }

  float last = 0.0f; // expect-remark: [write-to-input] 'last' is written but mapped 'to'
#pragma omp target map(to: a[0:n], last) // expect: host
  for (int i = 0; i < n; i++)
    last = a[i];

  printf("err %a count %d carry %a last %a\n", (double)err, count, (double)carry, (double)last);
  print_floats("b", b, n);
  free(a);
  free(b);
  return 0;
}
