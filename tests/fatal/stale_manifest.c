/* A region compiled by another version of Tessera (an old object file linked with a
   new runtime): its manifest has another schema version. The runtime cannot tell
   which device data the region uses; with an enclosing `target data` holding `a` on
   the device, running the host code would write the host copy, which the end of the
   data region then overwrites with the device copy. The run stops instead. The call
   below is what the rewritten region does; declared weak, it is null in the plain
   clang build (no Tessera runtime), which runs the host code. */
#include <stdio.h>

extern int tessera_offload_v(const char *manifest, int nargs, void **args) __attribute__((weak));

int main(void) {
  float a[8];
  for (int i = 0; i < 8; i++) a[i] = 0.0f;
  printf("start\n");
  fflush(stdout);
#pragma omp target data map(tofrom: a)
  {
    if (!tessera_offload_v || !tessera_offload_v("{\"version\": 1, \"region\": \"stale.c:3\"}", 0, 0))
      for (int i = 0; i < 8; i++) a[i] = 1.0f;
  }
  for (int i = 0; i < 8; i++) printf("%g ", a[i]);
  printf("\n");
  return 0;
}
// expect-fatal: its manifest is invalid
