/* Every directive goes through Tessera's runtime, or its whole data environment is
   left to the host OpenMP runtime; a host run inside a data region copies in and
   back everything the region may use. Each block below once gave a silently wrong
   result while the data lived on the device:
   1. regions the plugin used to leave untouched (a local array declared in the
      body; a VLA pointer parameter whose extent the region does not name), also
      inside nested `target data` and inside `omp parallel`;
   2. `target exit data map(delete:)` inside `target data`: the mapping goes;
   3. a zero-length section `map(p[:0])` finds the existing mapping;
   4. a strided `target update` (`r[0:4:2]`) moves exactly its elements;
   5. section bounds that are struct members (`a[0:c.n]`), evaluated at the
      directive;
   6. host fallbacks that write an array mapped `to:` or reached without a map
      clause, or name it only inside a construct Tessera cannot represent;
   8. accesses outside the mapped section (undefined in OpenMP): reported, and the
      region runs on the host instead of reading whatever the device holds there;
   9. a region whose `if` clause is false runs on OpenMP's host device: on host
      memory, leaving the device copies alone (it used to run as a host fallback,
      whose copies around it put the host bytes back). */
#include <stdlib.h>
#include "common.h"

struct cfg { int n; };

/* Defined at the end: its body is not visible at the regions, which stay on the host. */
static float twice(float x);

static void vla_extent(int n, int m, double (*A)[m]) {
#pragma omp target data map(tofrom: A[0:n][0:m]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++)
      A[i][0] = A[i][0] + i;
  }
#pragma omp parallel num_threads(1)
  {
#pragma omp target data map(tofrom: A[0:n][0:m]) // expect: emu
    {
#pragma omp target teams distribute parallel for // expect: emu
      for (int i = 0; i < n; i++)
        A[i][1] = A[i][1] * 2.0 + i;
    }
  }
}

int main(void) {
  int n = 157;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  for (int i = 0; i < n; i++) { a[i] = rng_float(); b[i] = rng_float(); }

  /* 1. A local array in the body: the region runs on the host, in the data region. */
#pragma omp target data map(to: a[0:n]) map(from: b[0:n]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: host
    for (int i = 0; i < n; i++) { float t[2]; t[0] = a[i]; t[1] = 1.0f; b[i] = t[0] + t[1]; } // expect-remark: [unsupported-statement] local array 'float t[2];' is not supported
  }
  print_floats("local", b, n);
#pragma omp target data map(to: a[0:n]) map(tofrom: b[0:n]) // expect: emu
  {
#pragma omp target data map(to: a[0:n]) // expect: emu
    {
#pragma omp target teams distribute parallel for // expect: host
      for (int i = 0; i < n; i++) { float t[2]; t[0] = a[i]; t[1] = 2.0f; b[i] = t[0] * t[1]; } // expect-remark: [unsupported-statement] local array 'float t[2];' is not supported
    }
  }
  print_floats("nested", b, n);
  int m = 3;
  double (*A)[m] = malloc(n * sizeof *A);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) A[i][j] = i - j;
  vla_extent(n, m, A);
  print_doubles("vla", &A[0][0], (long)n * m);

  /* 2. delete inside target data: the next region maps the host's new values. */
  float d[16];
  for (int i = 0; i < 16; i++) d[i] = i;
#pragma omp target data map(tofrom: d[0:16]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < 16; i++) d[i] += 1.0f;
#pragma omp target exit data map(delete: d[0:16]) // expect: emu
    for (int i = 0; i < 16; i++) d[i] = 100.0f + i;
#pragma omp target teams distribute parallel for map(tofrom: d[0:16]) // expect: emu
    for (int i = 0; i < 16; i++) d[i] += 1.0f;
  }
  print_floats("delete", d, 16);

  /* 3. A zero-length section finds the existing mapping. */
#pragma omp target data map(tofrom: a[0:n]) // expect: emu
  {
#pragma omp target teams distribute parallel for map(a[:0]) // expect: emu
    for (int i = 0; i < n; i++) a[i] = a[i] * 2.0f;
  }
  print_floats("zero-length", a, n);

  /* 4. A strided update: the even elements come back, the odd ones keep their
     host values (printed: only what a discrete device defines). */
  int r[8], s2 = 2;
  for (int i = 0; i < 8; i++) r[i] = i;
#pragma omp target enter data map(to: r[0:8]) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < 8; i++) r[i] = r[i] * 10 + 1;
#pragma omp target update from(r[0:4:2]) // expect: emu
  int even[4] = { r[0], r[2], r[4], r[6] };
  print_ints("strided", even, 4);
  for (int i = 0; i < 8; i++) r[i] = -i;
#pragma omp target update to(r[1:4:s2]) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < 8; i++) r[i] = r[i] * 3;
#pragma omp target exit data map(from: r[0:8]) // expect: emu
  int odd[4] = { r[1], r[3], r[5], r[7] };
  print_ints("strided-to", odd, 4);

  /* 5. Struct members as section bounds. */
  struct cfg c = { 10 };
  float e[10];
  for (int i = 0; i < 10; i++) e[i] = i;
#pragma omp target enter data map(to: e[0:c.n]) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < 10; i++) e[i] = e[i] + 1.0f;
#pragma omp target update from(e[0:c.n]) // expect: emu
  print_floats("member-from", e, 10);
  for (int i = 0; i < 10; i++) e[i] = 2.0f * i;
#pragma omp target update to(e[0:c.n]) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < 10; i++) e[i] = e[i] + 1.0f;
#pragma omp target exit data map(from: e[0:c.n]) // expect: emu
  print_floats("member-exit", e, 10);

  /* 6. Host fallbacks write what a device run would have written on the device. */
  for (int i = 0; i < n; i++) { a[i] = i; b[i] = 0.0f; }
#pragma omp target data map(to: a[0:n]) map(tofrom: b[0:n]) // expect: emu
  {
#pragma omp target teams distribute parallel for map(to: a[0:n]) // expect: host
    for (int i = 0; i < n; i++) a[i] = twice(a[i]); // expect-remark@-1: [unpassable] it calls 'twice', whose body Tessera cannot see here
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++) b[i] = a[i] + 1.0f;
#pragma omp target teams distribute parallel for // expect: host
    for (int i = 0; i < n; i++) a[i] = twice(b[i]); // expect-remark@-1: [unpassable] it calls 'twice', whose body Tessera cannot see here
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++) b[i] = b[i] + a[i];
  }
  print_floats("fallback", b, n);

  /* 8. Reads beyond the mapped section: a parametric one (found at run time) and a
     constant one (also a compile-time warning). */
  float (*R)[4] = malloc(n * sizeof *R);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < 4; j++) R[i][j] = i * 4 + j;
#pragma omp target teams distribute parallel for map(to: R[0:n/2]) map(from: b[0:n]) // expect: host ~ out-of-section access: 'R[i][1]' reads R[156][1]
  for (int i = 0; i < n; i++) b[i] = R[i][1];
  print_floats("outside", b, n);
  float k[16];
#pragma omp target teams distribute parallel for map(to: d[0:8]) map(from: k[0:16]) // expect: host ~ reads d[15]
  for (int i = 0; i < 16; i++) k[i] = d[i];
  print_floats("outside-const", k, 16);
  free(R);

  /* 9. if(false) inside a data region writes host memory; `to:` copies nothing back. */
  int yes = n > 0, no = n < 0;
  for (int i = 0; i < n; i++) a[i] = i;
#pragma omp target data map(to: a[0:n]) map(from: b[0:n]) // expect: emu
  {
#pragma omp target teams distribute parallel for if(yes) // expect: emu
    for (int i = 0; i < n; i++) b[i] = a[i] * 2.0f;
#pragma omp target teams distribute parallel for if(no) map(tofrom: a[0:n]) // expect: host ~ 'if' clause is false
    for (int i = 0; i < n; i++) a[i] = -1.0f - i;
  }
  print_floats("if-true", b, n);
  print_floats("if-false", a, n);
  free(a);
  free(b);
  free(A);
  return 0;
}

static float twice(float x) { return 2.0f * x; }
