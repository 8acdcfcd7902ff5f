/* Regions whose variables Tessera cannot pass to its runtime (their footprint is
   unknown): they run on the host as written, and while data is mapped on the device
   the runtime copies the device copy of every mapping to the host around them (and
   what they wrote back to the device, restoring the host bytes), so they see and
   leave what a device run would. Covered: the extent `m + 1` of a VLA parameter
   (which Tessera cannot recompute where the regions are), inside a `target data`
   (which still maps) and with the array already mapped by the caller; a region
   reaching an array through a struct's pointer-to-pointer member after `target enter
   data`; such a region writing an array mapped `to` between two kernels, read back by
   `target update`; and a `nowait` one (its host task finishes before the copies
   back). The same regions through a plain pointer member (`g.p[i]`, mapped by
   `map(g.p[0:n])`) run on the device: Tessera reads the member at the directive. */
#include <stdlib.h>
#include "common.h"

struct grid {
  int n;
  float *p;
};

struct rows {
  int n;
  float **r;
};

static void bump(int n, int m, double (*A)[m + 1]) {
#pragma omp target data map(tofrom: A[0:n][0:m+1]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: host
    for (int i = 0; i < n; i++) // expect-remark@-1: [unpassable] Tessera cannot pass 'm' to its runtime from this context
      A[i][1] = A[i][1] * 0.5;
#pragma omp target teams distribute parallel for // expect: host
    for (int i = 0; i < n; i++) // expect-remark@-1: [unpassable] Tessera cannot pass 'm' to its runtime from this context
      A[i][0] = A[i][0] + i;
  }
}

int main(void) {
  int n = 20, m = 3;
  double (*A)[m + 1] = malloc(n * sizeof *A);
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= m; j++) A[i][j] = i + j;
  bump(n, m, A);
  print_doubles("first", &A[0][0], (long)n * (m + 1));
#pragma omp target enter data map(to: A[0:n][0:m+1]) // expect: emu
  bump(n, m, A);
#pragma omp target exit data map(from: A[0:n][0:m+1]) // expect: emu
  print_doubles("second", &A[0][0], (long)n * (m + 1));
  free(A);

  int k = 37;
  float *a = malloc(k * sizeof *a), *b = malloc(k * sizeof *b);
  for (int i = 0; i < k; i++) { a[i] = rng_float(); b[i] = rng_float(); }
  struct grid g = {k, a};
  float *rp[1] = {a};
  struct rows h = {k, rp};
#pragma omp target enter data map(to: a[0:k]) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < k; i++) a[i] = a[i] * 2.0f;
#pragma omp target teams distribute parallel for map(to: g) map(tofrom: g.p[0:k]) // expect: emu
  for (int i = 0; i < g.n; i++) g.p[i] = g.p[i] + 1.0f;
#pragma omp target teams distribute parallel for // expect: host
  for (int i = 0; i < h.n; i++) h.r[0][i] = h.r[0][i] + 1.0f; // expect-remark@-1: [unpassable] it reaches memory through 'h'
#pragma omp target exit data map(from: a[0:k]) // expect: emu
  print_floats("struct", a, k);

#pragma omp target data map(to: a[0:k]) map(tofrom: b[0:k]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < k; i++) a[i] = a[i] - b[i];
#pragma omp target map(to: g) map(tofrom: g.p[0:k]) // expect: emu
    for (int i = 0; i < g.n; i++) g.p[i] = g.p[i] * 3.0f;
#pragma omp target // expect: host
    for (int i = 0; i < h.n; i++) h.r[0][i] = h.r[0][i] * 3.0f; // expect-remark@-1: [unpassable] it reaches memory through 'h'
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < k; i++) b[i] = b[i] + a[i];
#pragma omp target map(to: g) map(tofrom: g.p[0:k]) nowait // expect: emu
    for (int i = 0; i < g.n; i++) g.p[i] = g.p[i] + 0.25f;
#pragma omp target nowait // expect: host
    for (int i = 0; i < h.n; i++) h.r[0][i] = h.r[0][i] + 0.25f; // expect-remark@-1: [unpassable] it reaches memory through 'h'
#pragma omp taskwait
#pragma omp target update from(a[0:k]) // expect: emu
  }
  print_floats("a", a, k);
  print_floats("b", b, k);
  free(a);
  free(b);
  return 0;
}
