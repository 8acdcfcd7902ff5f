/* A region whose variables Tessera cannot pass (it reaches an array through a
   struct's pointer-to-pointer member) runs on the host over the device copies of everything
   mapped: the runtime puts them in place of the host copies for the host run and
   restores the host copies after. Inside a parallel region the other threads may use
   those host copies meanwhile (here thread 1 updates `b`, mapped `to` and never
   copied back, while thread 0 runs the region), and their writes would be lost. While
   data is mapped the program stops with an error instead. */
#include "../programs/common.h"
#include <omp.h>
#include <stdlib.h>

struct grid {
  int n;
  float **p;
};

int main(void) {
  int n = 16;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
  float *rows[1] = {c};
  struct grid g = {n, rows};
  for (int i = 0; i < n; i++) { a[i] = i; b[i] = -i; c[i] = 2 * i; }
  print_floats("before", a, n);
#pragma omp target data map(tofrom: a[0:n]) map(to: b[0:n])
  {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 1) {
        for (int i = 0; i < n; i++) b[i] = b[i] * 3.0f;
      } else {
#pragma omp target teams distribute parallel for // expect-fatal: it runs inside a parallel region, whose other threads may use the host copies of mapped data
        for (int i = 0; i < g.n; i++) g.p[0][i] = g.p[0][i] + 1.0f;
      }
    }
  }
  print_floats("b", b, n);
  print_floats("c", c, n);
  free(a); free(b); free(c);
  return 0;
}
