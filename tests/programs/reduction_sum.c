/* Sums and dot products the way HPC codes write them: `reduction(+: s)` on a
   combined construct (the variable is mapped tofrom implicitly), on a nested
   `parallel for` inside `target` with an explicit map, and in double. The data
   are small integers, so every sum is exact in any order: the reference, plain
   clang with however many threads, adds in another order than the kernel. The 1-D
   sums get the tiled kernel, whose tiles accumulate in the loop's order (n = 4099
   leaves a partial last tile); a 2-D sum keeps the baseline kernel, because tiling
   would reorder its additions, unless reassociation allows that. */
#include <stdlib.h>
#include "common.h"

static float small(void) { return (float)((int)(rng_next() % 17u) - 8); }

int main(void) {
  int n = 4099;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (int i = 0; i < n; i++) { x[i] = small(); y[i] = small(); }

  float sum = 1.5f;
#pragma omp target teams distribute parallel for reduction(+: sum) map(to: x[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    sum += x[i];

  double dot = 0.0;
#pragma omp target map(to: x[0:n], y[0:n]) map(tofrom: dot) // expect: emu tiled
  {
#pragma omp parallel for reduction(+: dot)
    for (int i = 0; i < n; i++)
      dot += (double)x[i] * y[i];
  }

  /* `-` combines as `+` (OpenMP 5.2); the subtraction is in the loop body. */
  long balance = 100;
#pragma omp target teams distribute parallel for reduction(-: balance) map(to: x[0:n], y[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++)
    balance -= (long)(x[i] - y[i]);

  /* Without a map clause a reduction variable of a nested construct is the
     target region's firstprivate copy: the result stays on the device. */
  float lost = 2.0f;
#pragma omp target map(to: x[0:n]) // expect: emu tiled
  {
#pragma omp parallel for reduction(+: lost)
    for (int i = 0; i < n; i++)
      lost += x[i];
  }

  /* A 2-D sum over a grid whose size is known only at run time: every tiling splits
     the rows, which would reorder the additions. */
  static float grid[64][80];
  for (int i = 0; i < 64; i++)
    for (int j = 0; j < 80; j++) grid[i][j] = small();
  int rows = 61, cols = 77;
  double gsum = 0.25;
#pragma omp target teams distribute parallel for collapse(2) reduction(+: gsum) map(to: grid) // expect: emu baseline ~ [reduction-order] the floating-point sum 'reduction(+: gsum)' // expect(reassociate): emu tiled
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++)
      gsum += grid[i][j] * 0.5;

  printf("sum %a dot %a balance %ld lost %a gsum %a\n", (double)sum, dot, balance, (double)lost, gsum);
  free(x);
  free(y);
  return 0;
}
