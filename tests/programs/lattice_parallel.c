/* Host fallbacks inside a parallel region whose accesses are not a box: the diagonal
   `A[i][i]` of a matrix, and the interior `F[i*n + j]` (1 <= i, j < n - 1) of a flat
   n×n array, whose flat range also holds the first and last element of each inner
   row. Thread 0 updates them again and again with regions Tessera keeps on the host
   (they write `A` and `F` but map them `to`), both arrays mapped by an enclosing
   `target data`; thread 1 meanwhile increments the elements the regions do not
   touch — the rest of each row of `A`, and the border columns of `F` — in the host
   copies, in plain host code, and sums them. The program is race-free and portable.
   A host run copies the device copy of what its region touches over the host copy
   and back; if it copied the box (all of `A`; `F` from `F[n + 1]` to
   `F[(n - 2)*n + n - 2]`), thread 1 would read device values and lose increments.
   The footprints are lattices (every affine subscript over a box-shaped domain is
   one), so the runtime swaps exactly the elements taken. Only data the device would
   give the same values for is printed after the data region (the diagonal, the
   interior), and the sums thread 1 saw. */
#include <omp.h>
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 160, rounds = 60, sums_n = 300;
  float (*A)[n] = malloc(sizeof(float[n][n])); // expect-remark: [write-to-input]
  float *F = malloc(n * n * sizeof *F);         // expect-remark: [write-to-input]
  float *d = malloc(n * sizeof *d);
  float *sums = malloc(2 * sums_n * sizeof *sums);
  float *out = malloc(n * n * sizeof *out);
  for (int i = 0; i < n; i++) {
    d[i] = rng_float();
    for (int j = 0; j < n; j++) {
      A[i][j] = (float)((i + j) % 5);
      F[i * n + j] = (float)((i * j) % 7);
    }
  }
#pragma omp target data map(to: d[0:n]) map(tofrom: A[0:n][0:n], F[0:n * n]) // expect: emu
  {
#pragma omp parallel num_threads(2)
    {
      if (omp_get_thread_num() == 0) {
        for (int r = 0; r < rounds; r++) {
#pragma omp target teams distribute parallel for map(to: A[0:n][0:n]) // expect: host
          for (int i = 0; i < n; i++)
            A[i][i] = A[i][i] * 0.5f + d[i];
#pragma omp target teams distribute parallel for collapse(2) map(to: F[0:n * n]) // expect: host
          for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
              F[i * n + j] = F[i * n + j] * 0.25f + d[j];
        }
      } else {
        for (int r = 0; r < sums_n; r++) {
          float s = 0.0f, t = 0.0f;
          for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
              if (j != i) {
                A[i][j] = A[i][j] + 1.0f;
                s += A[i][j];
              }
            }
            F[i * n] = F[i * n] + 1.0f;
            F[i * n + n - 1] = F[i * n + n - 1] + 2.0f;
            t += F[i * n] + F[i * n + n - 1];
          }
          sums[2 * r] = s;
          sums[2 * r + 1] = t;
        }
      }
    }
  }
  for (int i = 0; i < n; i++) out[i] = A[i][i];
  print_floats("diagonal", out, n);
  int k = 0;
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < n - 1; j++) out[k++] = F[i * n + j];
  print_floats("interior", out, k);
  print_floats("sums", sums, 2 * sums_n);
  free(A);
  free(F);
  free(d);
  free(sums);
  free(out);
  return 0;
}
