/* Floating reductions on data whose sums round differently in every order:
   Tessera's kernel accumulates in the loop's order, which is the CPU's result
   with one thread (OMP_NUM_THREADS=1), bit for bit. Run by
   tests/e2e.rs (floating_reductions_in_the_loops_order), not by the corpus:
   with more threads the CPU adds in another order. The 1-D loops get the tiled
   kernel (its tiles run in order, the last one partial); the 2-D sum the baseline
   kernel (tiling would split its rows). */
#include <stdlib.h>
#include "../programs/common.h"

int main(void) {
  int n = 100003;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y);
  for (int i = 0; i < n; i++) { x[i] = rng_float(); y[i] = rng_float(); }

  float sum = 0.1f;
#pragma omp target teams distribute parallel for reduction(+: sum) map(to: x[0:n])
  for (int i = 0; i < n; i++)
    sum += x[i];

  double dot = 0.3;
#pragma omp target map(to: x[0:n], y[0:n]) map(tofrom: dot)
  {
#pragma omp parallel for reduction(+: dot)
    for (int i = 0; i < n; i++)
      dot += (double)x[i] * y[i];
  }

  float prod = 1.0f;
#pragma omp target teams distribute parallel for reduction(*: prod) map(to: x[0:n])
  for (int i = 0; i < 200; i++)
    prod *= 1.0f + x[i] / 8.0f;

  int rows = 300, cols = 333;
  float (*g)[cols] = (float (*)[cols])x;
  float gsum = 0.7f;
#pragma omp target teams distribute parallel for collapse(2) reduction(+: gsum) map(to: g[0:rows][0:cols])
  for (int i = 0; i < rows; i++)
    for (int j = 0; j < cols; j++)
      gsum += g[i][j];

  printf("sum %a dot %a prod %a gsum %a\n", (double)sum, dot, (double)prod, (double)gsum);
  free(x);
  free(y);
  return 0;
}
