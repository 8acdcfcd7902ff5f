/* Small helpers called from target regions: `static inline` functions and a
   `#pragma omp declare target` one, pure, with locals, early returns and nested
   calls, inlined into the kernels. A helper that counts its calls in a global is
   not pure and keeps its region on the host; so does one defined after the
   region (its body is not visible there). */
#include <math.h>
#include <stdlib.h>
#include "common.h"

static inline float sq(float x) { return x * x; }

/* Hermite smoothstep of x between e0 and e1, clamped. */
static inline float smoothstep(float e0, float e1, float x) {
  float t = (x - e0) / (e1 - e0);
  if (t < 0.0f) return 0.0f;
  if (t > 1.0f) return 1.0f;
  t = t * t * (3.0f - 2.0f * t);
  return t;
}

static inline int clampi(int v, int lo, int hi) { return v < lo ? lo : v > hi ? hi : v; }

#pragma omp declare target
double inverse_distance(double dx, double dy) {
  double d2 = dx * dx;
  d2 += dy * dy;
  return 1.0 / sqrt(d2 + 1e-12);
}
#pragma omp end declare target

static int calls;
static float counted(float x) {
  calls++;
  return 2.0f * x;
}

static float gain = 2.0f;
static inline float amplified(float x) { return gain * x; }

float later(float x);

int main(void) {
  int n = 211, m = 29;
  float *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b);
  int *k = malloc(n * sizeof *k);
  double (*w)[29] = malloc(sizeof(double[29][29]));
  for (int i = 0; i < n; i++) { a[i] = 2.0f * rng_float(); b[i] = 0.0f; k[i] = 0; }

#pragma omp target teams distribute parallel for map(to: a[0:n]) map(tofrom: b[0:n], k[0:n]) // expect: emu tiled
  for (int i = 1; i < n - 1; i++) {
    b[i] = smoothstep(-0.5f, 0.5f, a[i]) + sq(a[i + 1] - a[i - 1]);
    k[i] = clampi((int)(a[i] * 100.0f), -50, 50) + clampi(i, 3, n - 3) + (int)__builtin_fabsf(4.0f * a[i]);
  }

#pragma omp target teams distribute parallel for collapse(2) map(from: w[0:m]) // expect: emu tiled
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++)
      w[i][j] = inverse_distance(i - m / 2, (double)j - 14.5);

#pragma omp target teams distribute parallel for map(to: a[0:n]) map(tofrom: b[0:n]) // expect: host
  for (int i = 0; i < n; i++)
    b[i] += counted(a[i]); // expect-remark: [call] call 'counted(a[i])' is not supported: the body of 'counted' has 'calls++', which is not an assignment to its own parameter or local

#pragma omp target teams distribute parallel for map(to: a[0:n]) map(tofrom: b[0:n]) // expect: host
  for (int i = 0; i < n; i++)
    b[i] *= amplified(a[i]); // expect-remark: [call] call 'amplified(a[i])' is not supported: the body of 'amplified' reads the global 'gain' (Tessera inlines only pure functions)

#pragma omp target teams distribute parallel for map(to: a[0:n]) map(tofrom: b[0:n]) // expect: host
  for (int i = 0; i < n; i++)
    b[i] -= later(a[i]); // expect-remark@-2: [unpassable] it calls 'later', whose body Tessera cannot see here

  print_floats("b", b, n);
  print_ints("k", k, n);
  for (int i = 0; i < m; i++) print_doubles("w", w[i], m);
  printf("called: %d\n", calls > 0); /* how often is a race between the host's threads */
  free(a); free(b); free(k); free(w);
  return 0;
}

float later(float x) { return x * 0.5f; }
