/* Scalar members of parameter structs read in regions that write arrays of the
   members' own type (`u[i] = u[i] + p.dt * f[i]` with `double *u` and `double dt`),
   the way simulation codes keep their constants. Tessera reads such a member once,
   at the directive; that needs that no write of the region can change it. C's
   effective types do not rule that out when the region writes `double`s, but a
   local struct (or a by-value parameter) that the function never takes the address
   of, binds a reference to or calls a member of is reachable by no pointer at all,
   so its members are read at the directive whatever the region writes. With its
   address taken, only after the launch has checked that no write of the region
   lands on the member (struct_params.c has one that does).
   Also: the struct mapped by `target data`, updated with `target update to` after
   the host changes a member, and read as the device copy. */
#include <stdlib.h>
#include "common.h"

struct params {
  double dt;
  int n;
  float scale;
};

static void step(struct params p, double *u, const double *f) {
#pragma omp target teams distribute parallel for map(tofrom: u[0:p.n]) map(to: f[0:p.n]) // expect: emu tiled
  for (int i = 0; i < p.n; i++)
    u[i] = u[i] + p.dt * f[i];
}

int main(void) {
  struct params p = { 0.125, 300, 2.0f };
  double *u = malloc(p.n * sizeof *u), *f = malloc(p.n * sizeof *f);
  float *a = malloc(p.n * sizeof *a);
  for (int i = 0; i < p.n; i++) { u[i] = rng_float(); f[i] = rng_float(); a[i] = rng_float(); }

#pragma omp target teams distribute parallel for map(tofrom: u[0:p.n]) map(to: f[0:p.n]) // expect: emu tiled
  for (int i = 0; i < p.n; i++)
    u[i] = u[i] + p.dt * f[i];
  step(p, u, f);
  print_doubles("u", u, p.n);

  // Mapped, changed on the host, updated: regions read the device copy.
#pragma omp target data map(to: p) map(tofrom: a[0:p.n]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu tiled
    for (int i = 0; i < p.n; i++)
      a[i] = a[i] * p.scale;
    p.scale = 0.5f;
#pragma omp target update to(p) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu tiled
    for (int i = 0; i < p.n; i++)
      a[i] = a[i] * p.scale + 1.0f;
  }
  print_floats("a", a, p.n);

  // Its address taken: a pointer may reach it, and the region writes doubles, so
  // the launch first checks that none of the region's writes lands on `q.dt`.
  struct params q = p;
  struct params *pq = &q;
  pq->dt = 0.25;
#pragma omp target teams distribute parallel for map(tofrom: u[0:q.n]) map(to: f[0:q.n]) // expect: emu tiled
  for (int i = 0; i < q.n; i++)
    u[i] = u[i] - q.dt * f[i];
  print_doubles("u", u, p.n);
  free(u);
  free(f);
  free(a);
  return 0;
}
