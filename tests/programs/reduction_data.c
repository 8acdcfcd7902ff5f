/* Reductions in a time loop inside a `target data` region (the arrays stay on
   the device; the sums come back every step), an L2 norm in a 2-D collapse(2)
   nest, and reductions the host keeps with a remark. */
#include <stdlib.h>
#include "common.h"

#define NX 61
#define NY 47

int main(void) {
  int n = 2048;
  float *u = malloc(n * sizeof *u), *v = malloc(n * sizeof *v);
  for (int i = 0; i < n; i++) { u[i] = (float)(int)(rng_next() % 9u); v[i] = 0.0f; }

  float mass[4];
  float total = 0.0f;
#pragma omp target data map(tofrom: u[0:n]) map(alloc: v[0:n]) map(tofrom: total) // expect: emu
  {
    for (int t = 0; t < 4; t++) {
#pragma omp target teams distribute parallel for // expect: emu
      for (int i = 1; i < n - 1; i++)
        v[i] = 0.5f * u[i] + 0.25f * (u[i - 1] + u[i + 1]);
      float m = 0.0f;
#pragma omp target teams distribute parallel for reduction(+: m) // expect: emu tiled
      for (int i = 1; i < n - 1; i++) {
        u[i] = v[i];
        m += u[i];
      }
      mass[t] = m;
#pragma omp target teams distribute parallel for reduction(+: total) // expect: emu baseline
      for (int i = 0; i < n; i += 64)
        total += u[i];
    }
  }

  /* Sum of squares over a 2-D grid (values k/4: exact sums), and a count under a
     condition. The tile pragma keeps each loop in one tile, so the tiled kernel adds
     in the loop's order, whatever tile sizes the compilation asks for. */
  static double g[NX][NY];
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++) g[i][j] = (double)(int)(rng_next() % 13u) / 4.0;
  double norm2 = 0.0;
  int nonzero = 0;
#pragma tessera tile(64, 64)
#pragma omp target teams distribute parallel for collapse(2) reduction(+: norm2, nonzero) map(to: g) // expect: emu tiled
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++) {
      norm2 += g[i][j] * g[i][j];
      if (g[i][j] != 0.0) nonzero += 1;
    }

  /* A histogram: an array section as a reduction variable is reduced on the device
     (reduction_array.c), but its bins here are indexed by data: the host runs it. */
  int hist[4] = {0, 0, 0, 0};
#pragma omp target teams distribute parallel for reduction(+: hist[0:4]) map(to: u[0:n]) // expect: host
  for (int i = 0; i < n; i++)
    hist[(int)u[i] & 3] += 1; // expect-remark: [non-affine-subscript] subscript 'u[i] & 3' of 'hist' is not affine; the index is read from memory; Tessera offloads regular access patterns only

  /* A reduction on a construct that is only part of the region (the assignment
     before it runs once, outside the private copies), and one on a variable of
     the region: the host runs them. */
  int evens = 0, odds = 0;
#pragma omp target map(to: u[0:n]) map(tofrom: evens) // expect: host
  {
    evens = 1;
#pragma omp parallel for reduction(+: evens) // expect-remark: [unsupported-reduction] a reduction on a construct that is only part of the target region is not supported: 'reduction(+: evens)'; put the clause on the target construct, or make the construct the region's only statement
    for (int i = 0; i < n; i++)
      evens += ((int)u[i] & 1) == 0;
  }
#pragma omp target map(to: u[0:n]) map(from: odds) // expect: host
  {
    int c = 0;
#pragma omp parallel for reduction(+: c) // expect-remark: [unsupported-reduction] a reduction variable declared inside the target region is not supported: 'reduction(+: c)'; declare it before the directive and map it 'tofrom'
    for (int i = 0; i < n; i++)
      c += (int)u[i] & 1;
    odds = c;
  }

  printf("evens %d odds %d\n", evens, odds);
  printf("mass %a %a %a %a total %a\n", (double)mass[0], (double)mass[1], (double)mass[2], (double)mass[3], (double)total);
  printf("norm2 %a nonzero %d hist %d %d %d %d\n", norm2, nonzero, hist[0], hist[1], hist[2], hist[3]);
  print_floats("u", u, 16);
  free(u);
  free(v);
  return 0;
}
