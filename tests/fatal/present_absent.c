/* `target update to(present: a[0:n])` while only the first half of a is on the
   device: OpenMP's `present` modifier makes that an error that stops the program
   (plain clang without a device runs on the host, where everything is present). */
#include "../programs/common.h"
#include <stdlib.h>

int main(void) {
  int n = 16;
  float *a = malloc(n * sizeof *a);
  for (int i = 0; i < n; i++) a[i] = i;
  print_floats("before", a, n);
#pragma omp target enter data map(to: a[0:n/2])
#pragma omp target update to(present: a[0:n]) // expect-fatal: 'a' is not present on the device, which its 'present' modifier requires
#pragma omp target exit data map(from: a[0:n/2])
  print_floats("after", a, n);
  free(a);
  return 0;
}
