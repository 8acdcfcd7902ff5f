/* int, float and double regions in one program; integer division, remainder,
   shifts, unsigned arithmetic, a conditional expression, a local variable and an
   `if` in the loop body, and `<=` loop bounds. */
#include "common.h"

#define N 97
static int ia[N], ib[N];
static float fa[N], fb[N];
static double da[N], db[N];
static unsigned ua[N];

int main(void) {
  for (int i = 0; i < N; i++) {
    ia[i] = (int)(rng_next() % 2001) - 1000;
    fa[i] = rng_float();
    da[i] = (double)rng_float() * 3.0;
    ua[i] = rng_next();
  }
  int k = 3;

#pragma omp target map(to: ia, ua) map(from: ib) // expect: emu
#pragma omp parallel for
  for (int i = 1; i <= N - 2; i++) {
    int t = ia[i - 1] * k + ia[i + 1] / 7 - ia[i] % 5;
    if (t > 0)
      ib[i] = (t << 2) ^ (int)(ua[i] >> 3);
    else
      ib[i] = t < -100 ? -t : t + (int)(ua[i] & 15u);
  }

#pragma omp target teams distribute parallel for map(to: fa) map(tofrom: fb) // expect: emu
  for (int i = 1; i < N - 1; i++)
    fb[i] = fa[i - 1] * 0.1f + fa[i] / 3.0f - fa[i + 1];

#pragma omp target teams distribute parallel for map(to: da) map(tofrom: db) // expect: emu
  for (int i = 2; i < N; i += 3)
    db[i] = -da[i - 2] * 1e-3 + da[i] * (double)k;

  print_ints("ib", ib, N);
  print_floats("fb", fb, N);
  print_doubles("db", db, N);
  return 0;
}
