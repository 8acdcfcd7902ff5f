/* A region Tessera cannot compile (a local array) runs on the host. Its statements
   are not in the region IR, so Tessera cannot tell which part of `a` it uses: its host
   run puts the device copy of all of `a`'s mapping in place of the host copy and
   back after. Inside a parallel region the other thread may write the host copy
   meanwhile (here thread 1 writes a[12], outside what thread 0's region touches), and
   that write would be lost (found by the data-environment fuzzer). While data is
   mapped the program stops with an error instead. */
#include "../programs/common.h"
#include <omp.h>
#include <stdlib.h>

int main(void) {
  int n = 16;
  float *a = malloc(n * sizeof *a);
  for (int i = 0; i < n; i++) a[i] = i;
#pragma omp target data map(tofrom: a[0:n])
  {
#pragma omp target enter data map(to: a[0:n])
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 1) {
        a[12] = -1.0f;
      } else {
#pragma omp target teams distribute parallel for // expect-fatal: inside a parallel region, but Tessera cannot tell which parts of 'a' it uses
        for (int i = 0; i < 4; i++) { float t[2]; t[0] = a[i]; t[1] = 1.0f; a[i] = t[0] + t[1]; }
      }
    }
#pragma omp target update to(a[12:1])
#pragma omp target exit data map(release: a[0:n])
  }
  print_floats("a", a, n);
  free(a);
  return 0;
}
