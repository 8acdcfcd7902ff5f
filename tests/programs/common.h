/* Shared helpers of the end-to-end test programs: a fixed-seed generator and
   exact printing (hexadecimal floating point), so stdout compares bit for bit. */
#ifndef TESSERA_TEST_COMMON_H
#define TESSERA_TEST_COMMON_H
#include <stdio.h>
#include <stdint.h>

static uint32_t rng_state = 12345u;

/* xorshift32: deterministic inputs on every platform. */
static inline uint32_t rng_next(void) {
  uint32_t x = rng_state;
  x ^= x << 13;
  x ^= x >> 17;
  x ^= x << 5;
  return rng_state = x;
}

/* A float in [-1, 1). */
static inline float rng_float(void) { return (float)((int32_t)rng_next()) / 2147483648.0f; }

static inline void print_floats(const char *name, const float *a, long n) {
  printf("%s:", name);
  for (long i = 0; i < n; i++) printf(" %a", (double)a[i]);
  printf("\n");
}

static inline void print_doubles(const char *name, const double *a, long n) {
  printf("%s:", name);
  for (long i = 0; i < n; i++) printf(" %a", a[i]);
  printf("\n");
}

static inline void print_ints(const char *name, const int *a, long n) {
  printf("%s:", name);
  for (long i = 0; i < n; i++) printf(" %d", a[i]);
  printf("\n");
}
#endif
