/* A `target update` with a motion modifier Tessera does not implement (a mapper)
   names a section that `target enter data` put on the device. Left to the host
   OpenMP runtime, the update would be lost (it moves nothing on the host device)
   and the exit's copy back would overwrite the host's new p[12]; the program stops
   with an error instead. The section does not contain p[0], so only the clause's
   own section tells Tessera which data it names (DataDesc::probes). */
#include "../programs/common.h"
#include <stdlib.h>

int main(void) {
  int n = 64;
  float *p = malloc(n * sizeof *p);
  for (int i = 0; i < n; i++) p[i] = i;
  print_floats("before", p, n);
#pragma omp target enter data map(to: p[10:20])
  p[12] = 100.0f;
#pragma omp target update to(mapper(default): p[10:20]) // expect-fatal: 'p' is mapped on the device by Tessera
#pragma omp target exit data map(from: p[10:20])
  print_floats("after", p, n);
  free(p);
  return 0;
}
