// C++ the way numerical codes write it: std::vector storage passed as .data(), a
// class holding the grid sizes, a function template over the element type, and a
// time loop swapping the two buffers.
#include <cstdio>
#include <utility>
#include <vector>
extern "C" {
#include "common.h"
}

struct Grid {
  int nx, ny;
};

template <typename T>
void sweep(const Grid &g, const T *in, T *out, T c) {
  const int nx = g.nx, ny = g.ny;
#pragma omp target teams distribute parallel for collapse(2) map(to: in[0:nx*ny]) map(tofrom: out[0:nx*ny]) // expect: emu tiled
  for (int i = 1; i < nx - 1; i++)
    for (int j = 1; j < ny - 1; j++)
      out[i * ny + j] = in[i * ny + j] + c * (in[(i - 1) * ny + j] + in[(i + 1) * ny + j] + in[i * ny + j - 1] + in[i * ny + j + 1] - T(4) * in[i * ny + j]);
}

int main() {
  Grid g{30, 41};
  std::vector<float> u(g.nx * g.ny), v(g.nx * g.ny);
  std::vector<double> p(g.nx * g.ny), q(g.nx * g.ny);
  for (size_t i = 0; i < u.size(); i++) { u[i] = v[i] = rng_float(); p[i] = q[i] = rng_float(); }
  for (int t = 0; t < 3; t++) {
    sweep(g, u.data(), v.data(), 0.125f);
    std::swap(u, v);
  }
  sweep(g, p.data(), q.data(), 0.25);
  print_floats("u", u.data(), (long)u.size());
  print_doubles("q", q.data(), (long)q.size());
  return 0;
}
