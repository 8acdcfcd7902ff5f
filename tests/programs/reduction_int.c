/* Integer and logical reductions: histograms of flags, checksums, parity,
   "all positive" / "any zero" tests, products and extrema — every operator
   OpenMP predefines, on int, unsigned, long and unsigned char. Integer
   reductions are exact in any order, so every region gets the tiled kernel (in
   any legal tiling): accumulations `s op= e`, `s = e > s ? e : s` and
   `if (e < s) s = e`, the last as min / max. */
#include <stdlib.h>
#include "common.h"

#define H 37
#define W 53

int main(void) {
  int n = 3001;
  int *v = malloc(n * sizeof *v);
  unsigned *bits = malloc(n * sizeof *bits);
  unsigned char *px = malloc(n);
  for (int i = 0; i < n; i++) {
    v[i] = (int)(rng_next() % 2001u) - 1000;
    bits[i] = rng_next() | 0x80000001u;
    px[i] = (unsigned char)(rng_next() >> 24);
  }

  unsigned all = 0xffffffffu, any = 0u, parity = 0x5a5a5a5au;
#pragma omp target teams distribute parallel for reduction(&: all) reduction(|: any) reduction(^: parity) map(to: bits[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    all &= bits[i];
    any |= bits[i] >> 3;
    parity ^= bits[i];
  }

  int positive = 1, zero = 0;
#pragma omp target teams distribute parallel for reduction(&&: positive) reduction(||: zero) map(to: v[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    positive = positive && v[i] > -1001;
    zero = zero || v[i] == 0;
  }

  int lo = 7, hi = -7;
  long total = -5;
#pragma omp target teams distribute parallel for reduction(min: lo) reduction(max: hi) reduction(+: total) map(to: v[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    if (v[i] < lo) lo = v[i];
    hi = v[i] > hi ? v[i] : hi;
    total += v[i];
  }

  /* A product that wraps around (unsigned arithmetic is modulo 2^32). */
  unsigned prod = 3u;
  unsigned char brightest = 0, darkest = 255;
#pragma omp target teams distribute parallel for reduction(*: prod) reduction(max: brightest) reduction(min: darkest) map(to: bits[0:n], px[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    prod *= bits[i] | 1u;
    if (px[i] > brightest) brightest = px[i];
    if (px[i] < darkest) darkest = px[i];
  }

  /* Narrow types: each addition is done in int and converted back (wrapping), in
     the loop and in the combiner alike. */
  signed char wrap = 100;
  short sprod = 3;
#pragma omp target teams distribute parallel for reduction(+: wrap) reduction(*: sprod) map(to: v[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    wrap += (signed char)v[i];
    sprod *= (short)(v[i] | 1);
  }

  /* A 2-D image: a sum, a hash, extrema and an edge count over a stencil-like
     neighbourhood, tiled like a stencil (tiles of 5 split rows and columns). */
  static int img[H][W];
  for (int i = 0; i < H; i++)
    for (int j = 0; j < W; j++) img[i][j] = (int)(rng_next() % 1001u) - 500;
  long isum = 11;
  unsigned ihash = 0x1234u;
  int ipeak = -5000, ilow = 5000, edges = 0;
#pragma omp target teams distribute parallel for collapse(2) reduction(+: isum, edges) reduction(^: ihash) reduction(max: ipeak) reduction(min: ilow) map(to: img) // expect: emu tiled
  for (int i = 1; i < H - 1; i++)
    for (int j = 1; j < W - 1; j++) {
      isum += img[i][j];
      ihash ^= (unsigned)(img[i][j] - img[i - 1][j]) * 2654435761u + (unsigned)(i * W + j);
      if (img[i][j + 1] > ipeak) ipeak = img[i][j + 1];
      ilow = img[i + 1][j - 1] < ilow ? img[i + 1][j - 1] : ilow;
      if (img[i][j] > img[i][j - 1] + 400) edges += 1;
    }

  printf("isum %ld ihash %08x ipeak %d ilow %d edges %d\n", isum, ihash, ipeak, ilow, edges);
  printf("wrap %d sprod %d\n", wrap, sprod);
  printf("all %08x any %08x parity %08x\n", all, any, parity);
  printf("positive %d zero %d lo %d hi %d total %ld\n", positive, zero, lo, hi, total);
  printf("prod %08x brightest %u darkest %u\n", prod, brightest, darkest);
  free(v);
  free(bits);
  free(px);
  return 0;
}
