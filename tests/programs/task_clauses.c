/* Target tasks and implicit maps, the way task-parallel OpenMP codes write them.
   `nowait` and `depend` regions run on the device undeferred: a region with `depend`
   starts after the sibling tasks it depends on (here a slow host task producing its
   input) and completes before later tasks that depend on it; a standalone data
   directive with `depend` likewise. A `nowait` region kept on the host inside a data
   region is a deferred host task, finished before its writes go back to the device.
   `defaultmap` sets the implicit map type of arrays without a map clause. */
#include <stdlib.h>
#include "common.h"

#define M 96
float da[M], db[M];

/* Slow enough that a region not waiting for it would read zeros. */
static void produce(float *a, int n) {
  for (int i = 0; i < n; i++) {
    float s = 0.0f;
    for (int k = 0; k < 20000; k++) s += 1e-7f * (float)((i + k) % 7);
    a[i] = s + (float)i;
  }
}

int main(void) {
  int n = 1000;
  float *a = calloc(n, sizeof *a), *b = calloc(n, sizeof *b), *c = calloc(n, sizeof *c);
  float *d = calloc(n, sizeof *d);

#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task depend(out: a[0:n])
    produce(a, n);
#pragma omp target teams distribute parallel for nowait depend(in: a[0:n]) depend(out: b[0:n]) map(to: a[0:n]) map(from: b[0:n]) // expect: emu
    for (int i = 0; i < n; i++)
      b[i] = 2.0f * a[i] + 1.0f;
#pragma omp task depend(in: b[0:n])
    for (int i = 0; i < n; i++)
      c[i] = b[i] - 0.5f;
#pragma omp taskwait
  }
  print_floats("c", c, 8);
  print_floats("c_tail", c + n - 4, 4);

  /* A data directive with depend: the update waits for the producing task. */
#pragma omp target enter data map(alloc: d[0:n]) // expect: emu
#pragma omp parallel num_threads(2)
#pragma omp single
  {
#pragma omp task depend(out: d[0:n])
    produce(d, n);
#pragma omp target update to(d[0:n]) depend(in: d[0:n]) nowait // expect: emu
#pragma omp taskwait
  }
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < n; i++)
    d[i] = d[i] * 0.25f;
#pragma omp target exit data map(from: d[0:n]) // expect: emu
  print_floats("d", d, 8);

  /* A nowait region that stays on the host inside a data region. */
#pragma omp target data map(tofrom: b[0:n]) // expect: emu
  {
#pragma omp target nowait map(tofrom: b[0:n]) // expect: host
    {
      int i = 0;
      while (i < n) { b[i] = b[i] + 3.0f; i++; } // expect-remark: [unsupported-statement] while loop 'while (i < n)' is not supported
    }
#pragma omp taskwait
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++)
      b[i] = b[i] * 0.5f;
  }
  print_floats("b", b, 8);

  /* defaultmap: `da` only read (to), `db` only written (from). */
  for (int i = 0; i < M; i++) da[i] = rng_float();
#pragma omp target teams distribute parallel for defaultmap(to: aggregate) map(from: db) // expect: emu
  for (int i = 0; i < M; i++)
    db[i] = da[i] * da[i];
  // expect-transfers: da to=384 from=0
  // (a `from` section is pre-filled from the host: runtime/README.md)
  // expect-transfers: db to=384 from=384
  print_floats("db", db, 8);
  free(a); free(b); free(c); free(d);
  return 0;
}
