/* Scalars and structs in the device data environment. A scalar list item of a data
   directive is mapped like an array of one element (reference counts, copies on
   `to`/`from`); a struct list item is mapped as its bytes. A region writes the device
   copy of a present scalar; a region that runs on the host inside a data region
   (member accesses, a call) puts its writes of a mapped struct or of a file-scope
   scalar that a called function writes on the device, so that the end of the data
   region brings them back. The program is portable: it never reads a host copy that
   a device would have left stale. */
#include <stdlib.h>
#include "common.h"

struct stats {
  int count;
  float sum;
  float w[4];
};

static int total; /* written by a function the region calls, not by the region */
__attribute__((noinline)) static void add_total(int v) { total += v; }

int main(void) {
  int n = 257;
  float *a = malloc(n * sizeof *a);
  for (int i = 0; i < n; i++) a[i] = rng_float();
  int count = 0;

  /* A reduction into the device copy of a present scalar, fetched by an update. */
#pragma omp target enter data map(to: a[0:n], count) // expect: emu
#pragma omp target teams distribute parallel for reduction(+: count) // expect: emu
  for (int i = 0; i < n; i++)
    count += a[i] > 0.25f;
#pragma omp target update from(count) // expect: emu
  printf("count %d\n", count);

  /* The host's new value goes to the device; a region doubles it there, and the
     exit brings it back. */
  count = count + 1;
#pragma omp target update to(count) // expect: emu
#pragma omp target map(tofrom: count) // expect: emu baseline ~ not-a-loop-nest
  count = count * 2;
#pragma omp target exit data map(from: count) map(delete: a[0:n]) // expect: emu
  printf("count %d\n", count);

  /* A struct mapped whole, written by a region that runs on the host (member
     accesses): its device copy gets the results, the end of the data region brings
     them back. */
  struct stats st = {0, 0.0f, {1.0f, 2.0f, 3.0f, 4.0f}};
#pragma omp target data map(tofrom: st) map(to: a[0:n]) // expect: emu
  {
#pragma omp target // expect: host
    for (int i = 0; i < n; i++) {
      st.count += 1; // expect-remark: [unsupported-statement] member access
      st.sum += a[i] * st.w[i % 4];
    }
  }
  printf("st %d %a\n", st.count, (double)st.sum);

  /* The same struct entered, changed by a host fallback, fetched by an update. */
#pragma omp target enter data map(to: st) // expect: emu
#pragma omp target map(tofrom: st) // expect: host
  {
    st.w[0] = st.w[1] + st.w[2]; // expect-remark: [unsupported-statement] member access
    st.count = -st.count;
  }
#pragma omp target update from(st) // expect: emu
  printf("st %d %a %a\n", st.count, (double)st.w[0], (double)st.sum);
#pragma omp target exit data map(release: st) // expect: emu

  /* A file-scope scalar that a called function writes. */
  total = 5;
#pragma omp target data map(tofrom: total) // expect: emu
  {
#pragma omp target // expect: host
    add_total(7); // expect-remark: [call]
  }
  printf("total %d\n", total);

  /* A scalar that a region running on the host (a local array) writes, mapped by
     enter data and fetched by exit data. */
  int z = 4;
#pragma omp target enter data map(to: z) // expect: emu
#pragma omp target map(tofrom: z) // expect: host
  {
    int t[2]; // expect-remark: [unsupported-statement] local array
    t[0] = z;
    t[1] = 3;
    z = t[0] * t[1];
  }
#pragma omp target exit data map(from: z) // expect: emu
  printf("z %d\n", z);
  /* A region that writes a present scalar mapped `to` runs on the host; a device
     would write the device copy, which the exit brings back: so does its host run. */
  int v = 1; // expect-remark: [write-to-input]
#pragma omp target enter data map(to: v) // expect: emu
#pragma omp target map(to: v) // expect: host
  v = v + 41;
#pragma omp target exit data map(from: v) // expect: emu
  printf("v %d\n", v);
  /* The same with the `present` modifier, which regions do not implement (the
     region runs on the host). */
#pragma omp target data map(tofrom: v) // expect: emu
  {
#pragma omp target map(present, tofrom: v) // expect: host
    v = v * 3 - 1; // expect-remark@-1: [unsupported-clause]
  }
  printf("v %d\n", v);

  /* A write the region IR does not represent (`omp atomic`) of a scalar that
     `defaultmap` maps. */
#pragma omp target data map(tofrom: v) // expect: emu
  {
#pragma omp target defaultmap(tofrom: scalar) // expect: host
    {
#pragma omp atomic
      v += 2; // expect-remark@-1: [unsupported-statement] omp atomic
    }
  }
  printf("v %d\n", v);
  free(a);

  // expect-transfers: count to=8 from=8
  return 0;
}
