// C++: a function template instantiated for float and double, and a target region
// inside a lambda that captures its arrays by reference.
#include <cstdio>
#include <vector>
#include "common.h"

template <typename T>
static void axpy(int n, T a, const T *x, T *y) {
#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n]) // expect: emu
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
}

int main() {
  const int n = 41;
  std::vector<float> xf(n), yf(n);
  std::vector<double> xd(n), yd(n);
  for (int i = 0; i < n; i++) {
    xf[i] = rng_float();
    yf[i] = rng_float();
    xd[i] = rng_float();
    yd[i] = rng_float();
  }
  axpy<float>(n, 0.3f, xf.data(), yf.data());
  axpy<double>(n, 0.3, xd.data(), yd.data());

  float *p = xf.data(), *q = yf.data();
  auto twice = [&](int m) {
#pragma omp target teams distribute parallel for map(to: p[0:m]) map(tofrom: q[0:m]) // expect: emu
    for (int i = 0; i < m; i++)
      q[i] = q[i] - 2.0f * p[i];
  };
  twice(n);
  twice(n - 4);

  print_floats("yf", yf.data(), n);
  print_doubles("yd", yd.data(), n);
  return 0;
}
