/* Every loop form of OpenMP's canonical loop nest form (OpenMP 5.2, 4.4.1): tests
   `var op b` and `b op var` with <, <=, >, >=, !=; increments ++var, var++, --var,
   var--, var += c, var -= c, var = var + c, var = c + var, var = var - c; increasing
   and decreasing; int, long, unsigned, size_t, short and unsigned char indices; in
   loops a directive distributes and in sequential loops inside a region, where the
   order of the iterations matters; empty loops. The last regions stay on the host:
   loops outside the form Tessera offloads. */
#include <stddef.h>
#include "common.h"

#define N 37
#define NX 13
#define NY 11

static float a[N], b[N], e[N], s[N], h[256];
static float c[NX][NY], d[NX][NY], g[NX][NY];

int main(int argc, char **argv) {
  (void)argv;
  int n = N, nx = NX, ny = NY, m = 5, st = argc + 1, flag = argc > 7;
  unsigned un = N;
  long ln = N;
  for (int i = 0; i < N; i++) { a[i] = rng_float(); b[i] = rng_float(); e[i] = rng_float(); s[i] = rng_float(); }
  for (int i = 0; i < 256; i++) h[i] = rng_float();
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++) { c[i][j] = rng_float(); d[i][j] = rng_float(); g[i][j] = rng_float(); }

  /* Distributed loops: any order is allowed, the iterations are independent. */
#pragma omp target teams distribute parallel for map(to: a) map(tofrom: b) // expect: emu
  for (int i = n - 2; i >= 1; i--)
    b[i] = a[i - 1] + 0.5f * a[i + 1] - (float)i;
  print_floats("ge_dec", b, N);

#pragma omp target teams distribute parallel for map(to: a) map(tofrom: b) // expect: emu
  for (int i = 0; n - 1 >= i; ++i)
    b[i] = b[i] * a[i] + 1.0f;
  print_floats("rev_le_preinc", b, N);

#pragma omp target teams distribute parallel for collapse(2) map(to: c) map(tofrom: d) // expect: emu
  for (int i = 0; i != nx; i = 1 + i)
    for (int j = ny - 1; -1 < j; j = j - 1)
      d[i][j] = d[i][j] - 0.25f * c[i][j] * (float)(i - j);
  print_floats("ne_rev_lt_dec", &d[0][0], NX * NY);

#pragma omp target teams distribute parallel for map(to: a) map(tofrom: b) // expect: emu
  for (long i = ln; i != 0; i -= 1)
    b[i - 1] = b[i - 1] + a[ln - i] * (float)i;
  print_floats("long_ne_dec", b, N);

#pragma omp target teams distribute parallel for map(to: a) map(tofrom: b) // expect: emu
  for (unsigned i = un; i > 0u; i--)
    b[i - 1] = 2.0f * a[i - 1] - b[i - 1] + (float)i;
  print_floats("unsigned_dec", b, N);

#pragma omp target teams distribute parallel for map(to: a) map(tofrom: b) // expect: emu
  for (size_t i = 0; i != (size_t)n; i++)
    b[i] = b[i] - a[i];
  print_floats("size_t_ne", b, N);

#pragma omp target teams distribute parallel for map(to: a) map(tofrom: b) // expect: emu
  for (int i = n - 1; i >= 0; i -= 3)
    b[i] = a[i] * 3.0f;
  print_floats("step_minus3", b, N);

  /* A distributed loop around a sequential decreasing one: each row is a recurrence
     over the old values (the order of j matters). */
#pragma omp target teams distribute parallel for map(tofrom: d) // expect: emu
  for (int i = 0; i < nx; i++)
    for (int j = ny - 1; j > 0; j--)
      d[i][j] = d[i][j] + 0.5f * d[i][j - 1];
  print_floats("seq_inner_dec", &d[0][0], NX * NY);

  /* Sequential loops in a target region: the source order is the result. */
#pragma omp target map(tofrom: e) // expect: emu
  for (int i = n - 2; i >= 0; --i)
    e[i] = e[i] + 0.5f * e[i + 1];
  print_floats("seq_suffix_sum", e, N);

#pragma omp target map(tofrom: g) // expect: emu
  for (int i = nx - 1; i > 0; i--)
    for (int j = 0; j != ny; j++)
      g[i][j] = g[i][j] * 0.5f + g[i - 1][j];
  print_floats("seq_dec_ne", &g[0][0], NX * NY);

#pragma omp target map(tofrom: h, s) // expect: emu
  {
    for (unsigned char u = 250; u != 4; u++) /* wraps around: 250..255, 0..3 */
      h[u] = h[u] + 1.0f;
    for (int i = 1; i < n; i += 2)
      s[i] = s[i] * 2.0f;
    for (short k = 9; k >= 0; k -= 4)
      s[k] = s[k] + 1.0f;
    for (int i = m; i > m; i--) /* empty */
      s[i] = 0.0f;
    for (int i = m; i <= m - 1; i++) /* empty */
      s[i] = 0.0f;
    for (int i = m; i != m; i--) /* empty */
      s[i] = 0.0f;
  }
  print_floats("wrap_steps_empty_h", h, 256);
  print_floats("wrap_steps_empty_s", s, N);

  /* Outside the form Tessera offloads: on the host, with the reason. */
#pragma omp target map(tofrom: s) // expect: host
  if (flag)
    for (unsigned u = 3; u >= 0; u--) // expect-remark: [non-canonical-loop] loop 'for (unsigned u = 3; u >= 0; u--)' is not in the canonical form Tessera offloads: its test 'u >= 0' is always true
      s[u] = 0.0f;

#pragma omp target map(tofrom: s) // expect: host
  for (int i = n; i < n; i--) // expect-remark: [non-canonical-loop] loop 'for (int i = n; i < n; i--)' is not in the canonical form Tessera offloads: 'i' decreases but its test 'i < n' needs it to increase
    s[i] = 0.0f;

#pragma omp target map(tofrom: s) // expect: host
  for (int i = 0; i < n; i += st) // expect-remark: [non-canonical-loop] loop 'for (int i = 0; i < n; i += st)' is not in the canonical form Tessera offloads: its step 'st' is not an integer constant
    s[i] = s[i] + 1.0f;
  print_floats("host", s, N);

  /* A signed index compared with an unsigned bound: the comparison converts a
     negative index to a huge value, so this loop runs no iteration. The baseline
     kernel keeps that arithmetic; the tiled optimizer, which models the integers,
     must not take it (it would run 5 + un iterations). */
  for (int i = 0; i < N; i++) s[i] = (float)i;
#pragma omp target teams distribute parallel for map(tofrom: s) // expect: emu
  for (int i = -5; i < un - 5; i++)
    s[i + 5] = -1.0f;
  print_floats("mixed_sign", s, N);
  return 0;
}
