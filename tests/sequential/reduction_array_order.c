/* Floating reductions on array sections whose sums round differently in every
   order: OpenMP's private copy starts at 0 and is added to the original value at
   the end, so the result is `y[j] + (x0 + x1 + …)`, not `((y[j] + x0) + x1) + …`
   as a loop updating y in place would compute. Tessera's kernel accumulates in the
   loop's order into the device copy, which the runtime sets to the identity before
   the launch and combines with the saved values after it: the CPU's result with one
   thread (OMP_NUM_THREADS=1), bit for bit. Run by tests/e2e.rs
   (floating_array_reductions_start_at_the_identity). The program prints whether the
   in-place order would have given another result, so the test shows it matters. */
#include <stdlib.h>
#include "../programs/common.h"

int main(void) {
  int n = 4001, m = 13;
  float *w = malloc(n * m * sizeof *w);
  for (int k = 0; k < n * m; k++) w[k] = 0.75f + 0.001f * (float)(k % 7);

  /* Large starting values: adding 0.75 to 1e8 in float rounds it away. */
  float *y = malloc(m * sizeof *y), *inplace = malloc(m * sizeof *inplace);
  for (int j = 0; j < m; j++) y[j] = inplace[j] = 1.0e8f + 16.0f * (float)j;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) inplace[j] += w[i * m + j];

#pragma omp target teams distribute parallel for map(to: w[0:n*m]) reduction(+: y[0:m])
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      y[j] += w[i * m + j];

  /* Products in double, a 2-D section. */
  static double p[3][5];
  double inplace_p[3][5];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 5; c++) p[r][c] = inplace_p[r][c] = 1.0e300 * (1.0 + r + c);
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 5; c++) inplace_p[1][c] *= 1.0 + 1.0e-3 * (double)w[i * m + c];
#pragma omp target teams distribute parallel for map(to: w[0:n*m]) map(tofrom: p) reduction(*: p[1:1][0:5])
  for (int i = 0; i < n; i++)
    for (int c = 0; c < 5; c++)
      p[1][c] *= 1.0 + 1.0e-3 * (double)w[i * m + c];

  int differs = 0;
  for (int j = 0; j < m; j++) differs += y[j] != inplace[j];
  printf("in-place sums differ: %d of %d\n", differs, m);
  differs = 0;
  for (int c = 0; c < 5; c++) differs += p[1][c] != inplace_p[1][c];
  printf("in-place products differ: %d of 5\n", differs);
  print_floats("y", y, m);
  for (int r = 0; r < 3; r++) print_doubles("p", p[r], 5);
  free(w); free(y); free(inplace);
  return 0;
}
