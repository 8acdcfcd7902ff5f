/* Locals that name struct elements of arrays of structs, the way C++ particle and cell
   codes write loop bodies: references (`P &t = p[i]`, `const P &t = p[i]`), pointers
   (`const P *t = &p[i]`, `P *t = q + i`) and copies (`P t = p[i]`, `P t;` filled field by field).
   A reference or pointer is the element it names (`t.x` is `p[i].x`; writes through it
   reach the array); a copy has its own storage: one local per scalar, so a later write
   to the element does not change it, and `q[i] = t` copies it back field by field. A
   copy's array field at a run-time subscript and a struct passed to a function stay on
   the host with a remark. Last, scalar members of local parameter structs. */
#include <stdlib.h>
#include "common.h"

struct P {
  float x, y, z;
};

struct C {
  double v[3];
};

static double norm2(C c) { return c.v[0] * c.v[0] + c.v[1] * c.v[1] + c.v[2] * c.v[2]; }

int main() {
  int n = 500, nx = 20, ny = 33;
  P *p = (P *)malloc(n * sizeof *p), *q = (P *)malloc(n * sizeof *q);
  float *o = (float *)malloc(n * sizeof *o);
  C(*g)[33] = (C(*)[33])malloc(nx * sizeof *g);
  double(*h)[33] = (double(*)[33])malloc(nx * sizeof *h);
  for (int i = 0; i < n; i++) {
    p[i].x = rng_float();
    p[i].y = rng_float();
    p[i].z = rng_float();
    q[i].x = q[i].y = q[i].z = 0.0f;
  }
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++)
      for (int k = 0; k < 3; k++) g[i][j].v[k] = rng_float();

  /* A copy, read field by field. */
#pragma omp target teams distribute parallel for map(to: p[0:n]) map(from: q[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    P t = p[i];
    q[i].x = t.x * 2.0f;
    q[i].y = t.y + t.z;
    q[i].z = t.z;
  }
  print_floats("copy", &q[0].x, 3 * n);

  /* A reference, written through. */
#pragma omp target teams distribute parallel for map(tofrom: p[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    P &t = p[i];
    t.x = t.y + t.z;
    t.z = t.z * 0.5f;
  }
  print_floats("reference", &p[0].x, 3 * n);

  /* A const reference and a pointer, read. */
#pragma omp target teams distribute parallel for map(to: p[0:n]) map(from: o[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    const P &t = p[i];
    const P *u = &p[i];
    o[i] = t.x * t.x + t.y * t.y + u->z * u->z;
  }
  print_floats("norms", o, n);

  /* A copy keeps its values when the element changes after it (its local stays
     declared: the baseline kernel). */
#pragma omp target teams distribute parallel for map(tofrom: p[0:n]) map(from: o[0:n]) // expect: emu baseline ~ [unsupported-statement] local declaration 't_0'
  for (int i = 0; i < n; i++) {
    P t = p[i];
    p[i].x = 0.25f;
    o[i] = t.x + p[i].x;
  }
  print_floats("snapshot", o, n);
  print_floats("changed", &p[0].x, 3 * n);

  /* A copy changed and stored whole, a struct filled field by field, and a pointer
     into the output. */
#pragma omp target teams distribute parallel for map(to: p[0:n]) map(tofrom: q[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    P t = p[i];
    t.y = -t.y;
    P s;
    s.x = t.z;
    s.y = t.x;
    s.z = t.y;
    q[i] = t;
    P *w = &q[i];
    w->z = w->z + s.x + s.y + s.z;
  }
  print_floats("stored", &q[0].x, 3 * n);

  /* A pointer by pointer arithmetic. */
#pragma omp target teams distribute parallel for map(tofrom: q[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    P *w = q + i;
    w->x = w->x * 2.0f + w->y;
  }
  print_floats("arith", &q[0].x, 3 * n);

  /* A 2-D grid of cells with an array field, through a const reference. */
#pragma omp target teams distribute parallel for collapse(2) map(to: g[0:nx][0:ny]) map(from: h[0:nx][0:ny]) // expect: emu tiled
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      const C &c = g[i][j];
      C d = g[i][j];
      h[i][j] = c.v[0] + c.v[1] * c.v[2] - d.v[1];
    }
  for (int i = 0; i < nx; i++) print_doubles("cells", h[i], ny);

  /* A copy's array field at a run-time subscript: on the host. */
#pragma omp target teams distribute parallel for collapse(2) map(to: g[0:nx][0:ny]) map(from: h[0:nx][0:ny]) // expect: host
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      C d = g[i][j];
      h[i][j] = d.v[(i + j) % 3]; // expect-remark: [unsupported-expression] member of a local struct at a subscript that is not a constant
    }
  for (int i = 0; i < nx; i++) print_doubles("picked", h[i], ny);

  /* A struct passed to a function: on the host. */
#pragma omp target teams distribute parallel for collapse(2) map(to: g[0:nx][0:ny]) map(from: h[0:nx][0:ny]) // expect: host
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      const C &c = g[i][j];
      h[i][j] = norm2(c); // expect-remark: [call]
    }
  for (int i = 0; i < nx; i++) print_doubles("norm2", h[i], ny);

  // Scalar members of local parameter structs in regions writing floats: read at the
  // directive when nothing can reach the struct, and when a lambda holds it by
  // reference (the region does not call it) after the launch has checked that no
  // write of the region lands on the member.
  struct K { float f; int n; } k = {0.5f, n}, k2 = {0.25f, n};
  auto grow = [&]() { k.f = k.f * 2.0f; };
  grow();
#pragma omp target teams distribute parallel for map(tofrom: o[0:n]) // expect: emu tiled
  for (int i = 0; i < k2.n; i++)
    o[i] = o[i] + k2.f;
#pragma omp target teams distribute parallel for map(tofrom: o[0:n]) // expect: emu tiled
  for (int i = 0; i < k.n; i++)
    o[i] = o[i] * k.f;
  print_floats("o", o, n);

  free(p);
  free(q);
  free(o);
  free(g);
  free(h);
  return 0;
}
