/* Loop bodies that name intermediate values, as hand-written code does: a local per
   neighbour sum, a chain of locals, a local of another type (the conversion happens
   where it is declared), locals feeding a reduction, and in-place updates through a
   local. The tiled kernels compute each local where it is used; a local assigned
   again in its own block is a new version from there on (computed where it is used in
   turn); a local whose value a later statement would change before its use (the array
   it read is written in between, or the local is assigned again inside an `if` or a
   loop) keeps its declaration and the region the baseline kernel, with the same
   results. */
#include <stdlib.h>
#include "common.h"

#define N 61
#define M 75

int main(void) {
  static float a[N][M], b[N][M], c[N][M];
  static double d[N][M];
  static int q[N][M];
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      a[i][j] = rng_float();
      c[i][j] = rng_float();
      q[i][j] = (int)(rng_next() % 1000u) - 500;
    }

  /* A 5-point stencil through named neighbours. */
#pragma omp target teams distribute parallel for collapse(2) map(to: a) map(from: b) // expect: emu tiled
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < M - 1; j++) {
      float north = a[i - 1][j], south = a[i + 1][j];
      float ew = a[i][j - 1] + a[i][j + 1];
      float centre = a[i][j];
      b[i][j] = 0.2f * (centre + north + south + ew);
    }

  /* A chain of locals in double; `g2` is assigned again in its block: its second
     value is a new version, and the region is tiled. */
#pragma omp target teams distribute parallel for collapse(2) map(to: b) map(from: d) // expect: emu tiled
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < M - 1; j++) {
      double dx = (double)b[i][j + 1] - b[i][j - 1];
      double dy = (double)b[i + 1][j] - b[i - 1][j];
      double g2 = dx * dx;
      g2 = g2 + dy * dy;
      d[i][j] = g2 * 0.25;
    }

  /* An int local narrowed from long arithmetic, and a local in a conditional store. */
#pragma omp target teams distribute parallel for collapse(2) map(tofrom: q) // expect: emu tiled
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      int t = (int)((long)q[i][j] * 3 - 7);
      q[i][j] = t > 0 ? t : -t / 2;
    }

  /* In place through a local: the old value is read before the store. */
#pragma omp target teams distribute parallel for collapse(2) map(tofrom: c) // expect: emu tiled
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) {
      float old = c[i][j];
      c[i][j] = old * old - 0.5f;
    }

  /* A local read after a store to the array it read: keeps its declaration. */
#pragma omp target teams distribute parallel for map(tofrom: c) map(to: a) // expect: emu baseline ~ [unsupported-statement] local declaration 'first'
  for (int i = 0; i < N; i++) {
    float first = c[i][0];
    c[i][0] = a[i][0];
    c[i][1] = first + c[i][0];
  }

  /* Locals feeding integer reductions (exact in any order: tiled at any tile size). */
  int peak = 0;
  long total = 0;
#pragma omp target teams distribute parallel for collapse(2) reduction(max: peak) reduction(+: total) map(to: q) // expect: emu tiled
  for (int i = 1; i < N - 1; i++)
    for (int j = 1; j < M - 1; j++) {
      int v = q[i][j] < 0 ? -q[i][j] : q[i][j];
      int w = q[i][j - 1] % 10;
      if (v > peak) peak = v;
      total += w;
    }

  /* The index declared before its loop, as conformance tests write it: the loop
     assigns the local, so it is no constant to substitute. */
  static float e[M];
  for (int j = 0; j < M; j++) e[j] = (float)j;
#pragma omp target map(tofrom: e) // expect: emu
  {
    int j = 0;
    for (j = 0; j < M; j++)
      e[j] = e[j] * 2.0f + 1.0f;
  }
  print_floats("e", e, M);

  for (int i = 0; i < N; i += 7) {
    print_floats("b", b[i], M);
    print_doubles("d", d[i], M);
    print_floats("c", c[i], M);
  }
  long qs = 0;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < M; j++) qs = qs * 31 + q[i][j];
  printf("q %ld peak %d total %ld\n", qs, peak, total);
  return 0;
}
