/* Host fallbacks inside a parallel region that touch only part of their box. Thread 0
   updates the even elements of `b`, mapped by an enclosing `target data`, with a region
   Tessera keeps on the host (it writes `b` but maps it `to`), again and again; thread 1
   meanwhile increments the odd elements of the host copy of `b` and sums them, in
   plain host code. The program is race-free and portable: the region touches only
   `b[2*i]`. A host run copies the device copy of what the region touches over the host
   copy and back; if it copied the region's box (every element from `b[0]` to
   `b[2*n - 2]`), thread 1 would read device values and lose increments while it runs.
   The region's footprint is exact (`b[2*i]`: every other element), so the runtime
   swaps only the even elements. Only data the device would give the same values for
   is printed after the data region (the even elements), and the sums thread 1 saw. */
#include <omp.h>
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 3000, rounds = 100, sums_n = 1000;
  float *a = malloc(n * sizeof *a), *b = malloc(2 * n * sizeof *b); // expect-remark: [write-to-input]
  float *sums = malloc(sums_n * sizeof *sums), *even = malloc(n * sizeof *even);
  for (int i = 0; i < n; i++) a[i] = rng_float();
  for (int i = 0; i < 2 * n; i++) b[i] = (float)(i % 7);
#pragma omp target data map(to: a[0:n]) map(tofrom: b[0:2 * n]) // expect: emu
  {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) {
        for (int r = 0; r < rounds; r++) {
#pragma omp target teams distribute parallel for map(to: b[0:2 * n]) // expect: host
          for (int i = 0; i < n; i++)
            b[2 * i] = b[2 * i] * 0.5f + a[i];
        }
      } else {
        for (int r = 0; r < sums_n; r++) {
          float s = 0.0f;
          for (int i = 0; i < n; i++) {
            b[2 * i + 1] = b[2 * i + 1] + 1.0f;
            s += b[2 * i + 1];
          }
          sums[r] = s;
        }
      }
    }
  }
  for (int i = 0; i < n; i++) even[i] = b[2 * i];
  print_floats("even", even, n);
  print_floats("sums", sums, sums_n);
  free(a);
  free(b);
  free(sums);
  free(even);
  return 0;
}
