// C++ with <cmath> and <algorithm>: a template stencil instantiated for float and
// double that calls std::sqrt, std::abs, std::fmin and std::max (overloads and
// templates of the standard library, whose bodies Tessera inlines down to the C
// library functions), and std::sqrt of an int (the standard's double overload).
// std::clamp of floats and ints: libstdc++ checks its precondition in a
// `do { if (std::__is_constant_evaluated() && …) … } while (false)`, which only a
// constant evaluation takes; the inlined body leaves it out.
// std::pow is not exact: its region stays on the host, the remark at the user's call
// (not in <cmath>, where the inlined overload calls powf).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>
#include "common.h"

template <typename T>
static void smooth(int n, const T *u, T *v) {
#pragma omp target teams distribute parallel for map(to: u[0:n]) map(tofrom: v[0:n]) // expect: emu tiled
  for (int i = 1; i < n - 1; i++)
    v[i] = std::max(std::abs(u[i - 1] - 2 * u[i] + u[i + 1]), std::sqrt(std::abs(u[i]))) +
           std::fmin(u[i], T(0.25)) + T(std::sqrt(i));
}

int main() {
  const int n = 97;
  std::vector<float> uf(n), vf(n, 0.0f);
  std::vector<double> ud(n), vd(n, 0.0);
  for (int i = 0; i < n; i++) {
    uf[i] = rng_float();
    ud[i] = rng_float();
  }
  smooth<float>(n, uf.data(), vf.data());
  smooth<double>(n, ud.data(), vd.data());
  std::vector<float> cube(n);
  const float *u = uf.data();
  float *c = cube.data();
#pragma omp target teams distribute parallel for map(to: u[0:n]) map(from: c[0:n]) // expect: host
  for (int i = 0; i < n; i++)
    c[i] = std::pow(u[i], 3.0f); // expect-remark: [inexact-math] 'powf' is not correctly rounded in every math library; the kernel's results could differ from the host's
  std::vector<int> k(n), r(n);
  for (int i = 0; i < n; i++) k[i] = (int)(rng_next() % 200u) - 100;
  const int *pk = k.data();
  int *pr = r.data();
  float *pv = vf.data();
#pragma omp target teams distribute parallel for map(to: pk[0:n]) map(tofrom: pv[0:n]) map(from: pr[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    pv[i] = std::clamp(pv[i] * 2.0f, -1.0f, 1.0f);
    pr[i] = std::clamp(pk[i], -50, 50) + std::abs(pk[i]);
  }
  print_ints("r", pr, n);
  print_floats("vf", vf.data(), n);
  print_floats("cube", c, n);
  print_doubles("vd", vd.data(), n);
  return 0;
}
