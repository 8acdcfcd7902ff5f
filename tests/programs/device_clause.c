/* The `device` clause: a number that names Tessera's device (omp_get_default_device())
   offloads as if the clause were absent; omp_get_initial_device() names OpenMP's host
   device, whose data environment is host memory, so a region or data directive sent
   there moves nothing (like a false `if`). Plain clang without offload targets has
   only the host device (both numbers are 0), so the program is written to give the
   same results either way: the host-device region runs after the device copy came
   back, and writes an array no data region maps. */
#include <omp.h>
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 257;
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  for (int i = 0; i < n; i++) { a[i] = rng_float(); b[i] = 0.0f; c[i] = rng_float(); }

#pragma omp target enter data map(to: a[0:n]) device(dev) // expect: emu
#pragma omp target teams distribute parallel for device(dev) // expect: emu
  for (int i = 0; i < n; i++)
    a[i] = 0.5f * a[i] + 1.0f;
#pragma omp target update from(a[0:n]) device(dev) // expect: emu
  /* On the host device: reads the host copy of a, just refreshed. */
#pragma omp target teams distribute parallel for device(host) map(to: a[0:n]) map(from: b[0:n]) // expect: host ~ its 'device' clause names the host device
  for (int i = 0; i < n; i++)
    b[i] = a[i] * a[i];
  /* A motion to the host device moves nothing. */
#pragma omp target update to(c[0:n]) device(host) // expect: host ~ its 'device' clause names the host device
#pragma omp target exit data map(delete: a[0:n]) device(dev) // expect: emu
  print_floats("a", a, n);
  print_floats("b", b, n);

  /* A region with both clauses: `if` first, then the device. */
  int big = n > 100;
#pragma omp target teams distribute parallel for if(big) device(dev) map(tofrom: c[0:n]) // expect: emu
  for (int i = 0; i < n; i++)
    c[i] = c[i] - 2.0f;
  print_floats("c", c, n);
  free(a);
  free(b);
  free(c);
  return 0;
}
