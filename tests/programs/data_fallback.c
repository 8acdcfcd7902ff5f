/* Regions that run on the host inside a data region. The host code reads and writes
   host memory, so the runtime copies the present data they use to the host first and
   back to the device after (and restores the host copies a device run would not have
   touched): results stay those of the CPU run. Covered: a region kept on the host for
   a call, a `nowait` region (a deferred host task: the rewritten code waits for it
   before copying back), a `target data` left to the host OpenMP runtime (its
   `use_device_ptr` clause), inside which every region then runs on the host, and one whose
   `if` clause is false, which maps nothing (its regions map for themselves). */
#include <stdlib.h>
#include "common.h"

/* Defined at the end: its body is not visible at the regions, which stay on the host. */
static float twice(float x);

int main(void) {
  int n = 203;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (int i = 0; i < n; i++) { a[i] = rng_float(); b[i] = rng_float(); }

#pragma omp target data map(tofrom: a[0:n]) map(to: b[0:n]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++)
      a[i] = a[i] + b[i];
#pragma omp target teams distribute parallel for // expect: host
    for (int i = 0; i < n; i++)
      a[i] = twice(a[i]); // expect-remark@-2: [unpassable] it calls 'twice', whose body Tessera cannot see here
#pragma omp target nowait // expect: host
    {
      int i = 0;
      while (i < n) { a[i] = a[i] - b[i]; i++; } // expect-remark: [unsupported-statement] while loop 'while (i < n)' is not supported
    }
#pragma omp taskwait
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++)
      a[i] = a[i] * 0.5f;
  }
  print_floats("a", a, n);

#pragma omp target data map(tofrom: b[0:n]) use_device_ptr(b) // expect: host
  { // expect-remark@-1: [unsupported-clause] clause 'use_device_ptr' is not supported
#pragma omp target teams distribute parallel for map(alloc: b[0:n]) // expect: host ~ did not map its data
    for (int i = 0; i < n; i++)
      b[i] = b[i] + 1.0f;
  }
  print_floats("b", b, n);

  int big = n > 1000;
#pragma omp target data map(tofrom: b[0:n]) if(big) // expect: host ~ 'if' clause is false
  {
#pragma omp target teams distribute parallel for map(tofrom: b[0:n]) // expect: emu
    for (int i = 0; i < n; i++)
      b[i] = b[i] * 0.5f;
  }
  print_floats("b", b, n);

  // expect-transfers: a to=2436 from=2436
  // expect-transfers: b to=3248 from=2436
  free(a);
  free(b);
  return 0;
}

static float twice(float x) { return 2.0f * x; }
