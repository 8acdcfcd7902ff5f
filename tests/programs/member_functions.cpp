/* C++ classes that keep their arrays as pointer members and offload in member
   functions (`u[i]` is `this->u[i]`), also from a lambda and in a template, and a
   struct reached through a reference: Tessera reads the members at the directive.
   Lambdas without captures called in a region are inlined. */
#include <vector>
#include "common.h"

template <typename T> struct Solver {
  int n;
  T *u;
  T *v;
  void step() {
    auto body = [&]() {
#pragma omp target teams distribute parallel for map(to: u[0:n]) map(from: v[0:n]) // expect: emu tiled
      for (int i = 0; i < n; i++) v[i] = u[i] * T(2) + T(1);
    };
    body();
  }
  void smooth(int k) {
#pragma omp target data map(tofrom: u[0:n]) map(alloc: v[0:n]) // expect: emu
    for (int s = 0; s < k; s++) {
#pragma omp target teams distribute parallel for // expect: emu tiled
      for (int i = 1; i < n - 1; i++) v[i] = (u[i - 1] + u[i + 1]) / T(2);
#pragma omp target teams distribute parallel for // expect: emu tiled
      for (int i = 1; i < n - 1; i++) u[i] = v[i];
    }
  }
};

struct Field {
  int n;
  float *a;
  float *b;
};

int main() {
  std::vector<double> U(301), V(301);
  for (double &x : U) x = rng_float();
  Solver<double> s{301, U.data(), V.data()};
  s.step();
  print_doubles("step", V.data(), 301);
  s.smooth(5);
  print_doubles("smooth", U.data(), 301);

  std::vector<float> A(97), B(97);
  for (int i = 0; i < 97; i++) { A[i] = rng_float(); B[i] = rng_float(); }
  Field f{97, A.data(), B.data()};
  Field &r = f;
#pragma omp target teams distribute parallel for map(to: r.a[0:r.n]) map(tofrom: r.b[0:r.n]) // expect: emu tiled
  for (int i = 0; i < r.n; i++) r.b[i] = r.b[i] + 0.5f * r.a[i];
  print_floats("field", B.data(), 97);

  /* Lambdas without captures called in a region are inlined like plain functions;
     one with captures keeps its region on the host. */
  auto sq1 = [](float t) { return t * t + 1.0f; };
  auto dist = [](float t, float u) -> float {
    if (t < u)
      return u - t;
    return t - u;
  };
  float *pa = A.data(), *pb = B.data();
#pragma omp target teams distribute parallel for map(to: pa[0:97]) map(from: pb[0:97]) // expect: emu tiled
  for (int i = 0; i < 97; i++) pb[i] = sq1(pa[i]) + dist(pa[i], 0.25f);
  print_floats("lambdas", pb, 97);
  float scale = 3.0f;
  auto scaled = [scale](float t) { return t * scale; };
#pragma omp target teams distribute parallel for map(to: pa[0:97]) map(from: pb[0:97]) // expect: host
  for (int i = 0; i < 97; i++) pb[i] = scaled(pa[i]); // expect-remark: [call] call 'scaled(pa[i])' is not supported: 'scaled' is a lambda with captures
  print_floats("captures", pb, 97);
  return 0;
}
