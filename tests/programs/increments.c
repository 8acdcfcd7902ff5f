/* Increments and decrements as statements — `a[i]++`, `--f[i]`, `count++` under
   `reduction(+: count)` — the way counting loops and conformance tests write them.
   Each is `x += 1` / `x -= 1` in the type C computes it in: `unsigned char` and
   `signed char` are promoted to int and wrap when stored back, floats add 1.0f.
   The value of an increment used inside an expression (`b[i] = a[i]++`) and an
   increment of a pointer stay on the host with a remark. */
#include <stdlib.h>
#include "common.h"

#define N 2000
#define H 33
#define W 47

int main(void) {
  int *a = malloc(N * sizeof *a);
  unsigned char *u = malloc(N);
  signed char *sc = malloc(N);
  float *f = malloc(N * sizeof *f);
  double *d = malloc(N * sizeof *d);
  long *l = malloc(N * sizeof *l);
  for (int i = 0; i < N; i++) {
    a[i] = (int)(rng_next() % 2001u) - 1000;
    u[i] = (unsigned char)(rng_next() >> 24); /* 255 wraps to 0 */
    sc[i] = (signed char)(rng_next() >> 24);  /* 127 wraps to -128 */
    f[i] = rng_float() * 1e7f;                /* + 1 rounds at large magnitudes */
    d[i] = (double)rng_float() * 1e16;
    l[i] = (long)rng_next() << 20;
  }
  u[5] = 255;
  sc[6] = 127;

#pragma omp target teams distribute parallel for map(tofrom: a[0:N], u[0:N], sc[0:N], f[0:N], d[0:N], l[0:N]) // expect: emu
  for (int i = 0; i < N; i++) {
    a[i]++;
    ++u[i];
    sc[i]++;
    --f[i];
    d[i]--;
    ++l[i];
    l[i]++;
  }

  /* Counting under a reduction: `errors++` is `errors += 1`. */
  int even = 0, big = 0;
  long negatives = 7;
#pragma omp target teams distribute parallel for reduction(+: even, big) reduction(-: negatives) map(to: a[0:N], u[0:N]) // expect: emu tiled
  for (int i = 0; i < N; i++) {
    if (a[i] % 2 == 0)
      even++;
    if (u[i] > 200)
      ++big;
    if (a[i] < 0)
      negatives--;
  }

  /* A histogram-free 2-D count and an in-place stencil-shaped increment. */
  static int img[H][W];
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++) img[i][j] = (int)(rng_next() % 100u);
  int peaks = 0;
#pragma omp target teams distribute parallel for collapse(2) reduction(+: peaks) map(tofrom: img) // expect: emu tiled
  for (int i = 1; i < H - 1; i++)
    for (int j = 1; j < W - 1; j++) {
      if (img[i][j] > img[i][j - 1] && img[i][j] > img[i - 1][j])
        peaks++;
      img[i][j]--;
    }

  /* A sequential counter in a single-threaded target region: the baseline kernel
     (the tiled ones do not yet take a conditional update of a scalar outside a
     reduction). */
  int runs = 0;
#pragma omp target map(tofrom: runs) map(to: a[0:N]) // expect: emu baseline ~ [unsupported-statement] if statement
  for (int i = 1; i < N; i++)
    if ((a[i] > 0) != (a[i - 1] > 0))
      runs++;

  /* The value of the increment is used: not a statement Tessera rewrites. */
  int *b = malloc(N * sizeof *b);
#pragma omp target teams distribute parallel for map(tofrom: a[0:N]) map(from: b[0:N]) // expect: host
  for (int i = 0; i < N; i++)
    b[i] = a[i]++; // expect-remark: [unsupported-expression] increment 'a[i]++' is not supported

  long bsum = 0;
  for (int i = 0; i < N; i++) bsum += b[i];
  long asum = 0, usum = 0, scsum = 0, lsum = 0;
  for (int i = 0; i < N; i++) {
    asum += a[i];
    usum += u[i];
    scsum += sc[i];
    lsum ^= l[i];
  }
  printf("a %ld u %ld sc %ld l %lx u5 %d sc6 %d b %ld\n", asum, usum, scsum, (unsigned long)lsum, u[5], sc[6], bsum);
  print_floats("f", f, 16);
  print_doubles("d", d, 16);
  printf("even %d big %d negatives %ld peaks %d runs %d\n", even, big, negatives, peaks, runs);
  long isum = 0;
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++) isum += img[i][j] * (i + j);
  printf("img %ld\n", isum);
  free(a); free(u); free(sc); free(f); free(d); free(l); free(b);
  return 0;
}
