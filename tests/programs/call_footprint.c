/* Calls in target regions that reach data the region does not name. A host run of
   such a region inside a data environment must see the device copies of that data
   too, or it computes with the stale host copies. Covered: a function defined before
   the region that reads a file-scope array (Tessera finds the array in its body, and
   in the body of a function it calls, and treats it as the region's); one defined
   only after the region and one called through a pointer (Tessera cannot see what
   they use: the region's footprint is unknown, so its host run gets the device copy
   of every mapping). */
#include "common.h"

#define N 61

float G[N], H[N];

__attribute__((noinline)) static float read_g(int i) { return G[i] * 0.5f; }
__attribute__((noinline)) static float via(int i) { return read_g(i) + 1.0f; }
static float later(int i);

int main(void) {
  float out[N], out2[N], out3[N];
  for (int i = 0; i < N; i++) { G[i] = rng_float(); H[i] = rng_float(); out[i] = out2[i] = out3[i] = 0.0f; }
  float (*fp)(int) = via;
#pragma omp target enter data map(to: G, H) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < N; i++) { G[i] = G[i] * 2.0f + 1.0f; H[i] = H[i] - G[i]; }
  /* The device copies of G and H are current, the host copies stale. */
#pragma omp target teams distribute parallel for map(from: out) // expect: host
  for (int i = 0; i < N; i++) out[i] = via(i); // expect-remark: [call] call 'via(i)' is not supported: the body of 'via' calls 'read_g(i)': the body of 'read_g' has array access 'G[i]'
#pragma omp target teams distribute parallel for map(from: out2) // expect: host
  for (int i = 0; i < N; i++) out2[i] = later(i); // expect-remark@-1: [unpassable] it calls 'later', whose body Tessera cannot see here
#pragma omp target teams distribute parallel for map(from: out3) // expect: host
  for (int i = 0; i < N; i++) out3[i] = fp(i) + G[i]; // expect-remark@-1: [unpassable] it calls a function through a pointer
#pragma omp target exit data map(from: G, H) // expect: emu
  print_floats("out", out, N);
  print_floats("out2", out2, N);
  print_floats("out3", out3, N);
  print_floats("G", G, N);
  print_floats("H", H, N);
  return 0;
}

static float later(int i) { return H[i] * 0.25f + G[i]; }
