/* Arrays reached through pointer members of structs, the way real codes keep their
   fields (`g->u[i]`, `m.g.v[i]`, `s.u[0:s.n]`): Tessera reads the pointer member at
   the directive, like a pointer the region names, in regions and in the list items
   of map clauses and data directives. Covered: a 2-D time loop on a grid passed by
   pointer, inside `target data` mapping the members, with the members swapped on the
   host between steps; `enter data` / `update` / `exit data` of a member of a nested
   struct; regions without map clauses on present members; one array reached as a
   member and through a plain pointer in one data region; a host fallback (a call)
   that writes a member array mapped `to`; a region given a null struct pointer and
   no iterations (the member is read at the directive only through a pointer that is
   not null: the region then finds no data and runs on the host, as written). */
#include <stdlib.h>
#include "common.h"

typedef struct {
  int nx, ny;
  float *u, *v;
} grid_t;

typedef struct {
  grid_t g;
  double *w;
} model_t;

__attribute__((noinline)) static void touch(float *p) { p[0] = p[0] * 1.0f; }

static void steps(grid_t *g, int t_end) {
#pragma omp target data map(tofrom: g->u[0:g->nx*g->ny], g->v[0:g->nx*g->ny]) // expect: emu
  for (int t = 0; t < t_end; t++) {
#pragma omp target teams distribute parallel for collapse(2) // expect: emu tiled
    for (int i = 1; i < g->nx - 1; i++)
      for (int j = 1; j < g->ny - 1; j++)
        g->v[i * g->ny + j] = 0.25f * (g->u[(i - 1) * g->ny + j] + g->u[(i + 1) * g->ny + j] +
                                       g->u[i * g->ny + j - 1] + g->u[i * g->ny + j + 1]);
    float *tmp = g->u;
    g->u = g->v;
    g->v = tmp;
  }
}

static void scale(grid_t *g, int n) {
#pragma omp target teams distribute parallel for // expect: host ~ has no map clause
  for (int i = 0; i < n; i++) g->u[i] = g->u[i] * 2.0f;
}

int main(void) {
  scale(NULL, 0);
  model_t m;
  m.g.nx = 23;
  m.g.ny = 29;
  int n = m.g.nx * m.g.ny;
  m.g.u = malloc(n * sizeof(float));
  m.g.v = malloc(n * sizeof(float));
  m.w = malloc(n * sizeof(double));
  for (int i = 0; i < n; i++) { m.g.u[i] = rng_float(); m.g.v[i] = m.g.u[i]; m.w[i] = 0.0; }
  steps(&m.g, 4); /* an even number of steps: u is the array it started as */
  print_floats("u", m.g.u, n);

#pragma omp target enter data map(to: m.g.u[0:n]) // expect: emu
  for (int i = 0; i < n; i++) m.g.u[i] = m.g.u[i] * 0.5f - 1.0f;
#pragma omp target update to(m.g.u[0:n]) // expect: emu
#pragma omp target teams distribute parallel for map(from: m.w[0:n]) // expect: emu
  for (int i = 0; i < n; i++) m.w[i] = 2.0 * m.g.u[i] + 1.0;
#pragma omp target teams distribute parallel for // expect: emu
  for (int i = 0; i < n; i++) m.g.u[i] = m.g.u[i] + 3.0f;
#pragma omp target update from(m.g.u[0:n]) // expect: emu
#pragma omp target exit data map(delete: m.g.u[0:n]) // expect: emu
  print_doubles("w", m.w, n);
  print_floats("u2", m.g.u, n);

  float *alias = m.g.v;
#pragma omp target data map(tofrom: m.g.v[0:n]) map(to: m.g.u[0:n]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++) m.g.v[i] = m.g.v[i] + m.g.u[i];
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 1; i < n; i++) alias[i] = alias[i] * 2.0f + m.g.u[i - 1];
#pragma omp target teams distribute parallel for // expect: host
    for (int i = 0; i < n; i++) { m.g.u[i] = m.g.u[i] + 1.0f; touch(&m.g.v[i]); } // expect-remark: [call] call 'touch(&m.g.v[i])' is not supported
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++) m.g.v[i] = m.g.v[i] + m.g.u[i];
  }
  print_floats("v", m.g.v, n);
  free(m.g.u);
  free(m.g.v);
  free(m.w);
  return 0;
}
