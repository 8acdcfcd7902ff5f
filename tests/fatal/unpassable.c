/* A region whose variables Tessera cannot pass to its runtime (here the extent
   `m + 1` of a VLA parameter the region does not name, inside a `target data`)
   runs on the host as written, and the construct around it does not map. That is
   right while nothing else is on the device (the first call). When the caller has
   mapped the array with `target enter data`, the host run would read the stale host
   copy: the program stops with an error instead of printing wrong results. */
#include "../programs/common.h"
#include <stdlib.h>

static void bump(int n, int m, double (*A)[m + 1]) {
#pragma omp target data map(tofrom: A[0:n][0:m+1])
  {
#pragma omp target teams distribute parallel for
    for (int i = 0; i < n; i++)
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
#pragma omp target enter data map(to: A[0:n][0:m+1])
  bump(n, m, A); // expect-fatal: the target region must run on the host ([unpassable] Tessera cannot pass 'm'
#pragma omp target exit data map(from: A[0:n][0:m+1])
  print_doubles("second", &A[0][0], (long)n * (m + 1));
  free(A);
  return 0;
}
