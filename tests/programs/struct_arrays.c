/* Arrays of structs, the way particle, complex and cell codes keep their data
   (`p[i].x`, `c[i].re`, `g[i][j].v[k]`, `b[i].pos.c[k]`, `p->x`): a struct whose fields
   are all one scalar type without padding is, to a region, one more dimension of its
   array (`p[i].vx` is `p[i][3]`), so kernels, footprints and the data environment
   treat it like any array. Covered: in-place particle updates (tiled), complex
   products, a 2-D grid of cells with an array field, nested structs with a loop over
   an array field, a member written through `->`, arrays of structs in `target data`,
   `enter`/`update`/`exit data` and regions without map clauses, copies of whole
   structs (`pp[i] = p[j]`: one assignment per field); a struct with padding stays on
   the host with a remark, inside a data region that maps it, and its results reach the
   host. */
#include <stdlib.h>
#include "common.h"

struct particle {
  double x, y, z;
  double vx, vy, vz;
};

typedef struct {
  float re, im;
} cplx;

struct cell {
  float v[2];
};

struct vec3 {
  float c[3];
};

struct body {
  struct vec3 pos;
  struct vec3 vel;
};

struct mixed {
  double x;
  float y; /* 4 bytes of padding follow */
};

#define NX 24
#define NY 40
static struct cell grid[NX][NY], next[NX][NY];

int main(void) {
  int n = 300;
  struct particle *p = malloc(n * sizeof *p);
  for (int i = 0; i < n; i++) {
    p[i].x = rng_float(); p[i].y = rng_float(); p[i].z = rng_float();
    p[i].vx = rng_float(); p[i].vy = rng_float(); p[i].vz = rng_float();
  }
  double dt = 0.125;

  /* Positions advance by their velocities, in place. */
#pragma omp target teams distribute parallel for map(tofrom: p[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    p[i].x = p[i].x + dt * p[i].vx;
    p[i].y = p[i].y + dt * p[i].vy;
    p[i].z = p[i].z + dt * p[i].vz;
  }
  for (int i = 0; i < n; i += 37) printf("p %d %a %a %a\n", i, p[i].x, p[i].y, p[i].z);

  /* Complex products. */
  int m = 200;
  cplx *a = malloc(m * sizeof *a), *b = malloc(m * sizeof *b), *c = malloc(m * sizeof *c);
  for (int i = 0; i < m; i++) {
    a[i].re = rng_float(); a[i].im = rng_float();
    b[i].re = rng_float(); b[i].im = rng_float();
  }
#pragma omp target teams distribute parallel for map(to: a[0:m], b[0:m]) map(from: c[0:m]) // expect: emu tiled
  for (int i = 0; i < m; i++) {
    c[i].re = a[i].re * b[i].re - a[i].im * b[i].im;
    c[i].im = a[i].re * b[i].im + a[i].im * b[i].re;
  }
  for (int i = 0; i < m; i += 23) printf("c %d %a %a\n", i, (double)c[i].re, (double)c[i].im);

  /* A 2-D grid of cells: a stencil on one field writes the other. */
  for (int i = 0; i < NX; i++)
    for (int j = 0; j < NY; j++) {
      grid[i][j].v[0] = rng_float();
      grid[i][j].v[1] = 0.0f;
      next[i][j] = grid[i][j];
    }
#pragma omp target teams distribute parallel for collapse(2) map(to: grid) map(tofrom: next) // expect: emu tiled
  for (int i = 1; i < NX - 1; i++)
    for (int j = 1; j < NY - 1; j++)
      next[i][j].v[1] = 0.25f * (grid[i - 1][j].v[0] + grid[i + 1][j].v[0] + grid[i][j - 1].v[0] + grid[i][j + 1].v[0]);
  for (int i = 0; i < NX; i += 5) printf("next %d %a %a\n", i, (double)next[i][7].v[0], (double)next[i][7].v[1]);

  /* Nested structs with an array field, in a data region: the host changes a field
     between two regions (updates both ways), the second without map clauses. */
  int nb = 128;
  struct body *bd = malloc(nb * sizeof *bd);
  for (int i = 0; i < nb; i++)
    for (int k = 0; k < 3; k++) { bd[i].pos.c[k] = rng_float(); bd[i].vel.c[k] = rng_float(); }
#pragma omp target data map(tofrom: bd[0:nb]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < nb; i++)
      for (int k = 0; k < 3; k++)
        bd[i].pos.c[k] = bd[i].pos.c[k] + 0.5f * bd[i].vel.c[k];
#pragma omp target update from(bd[0:nb]) // expect: emu
    for (int i = 0; i < nb; i++) bd[i].vel.c[1] = -1.0f; /* the host copy only */
#pragma omp target update to(bd[0:nb]) // expect: emu
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < nb; i++)
      bd[i].vel.c[0] = bd[i].vel.c[1] * bd[i].pos.c[2];
  }
  for (int i = 0; i < nb; i += 17)
    printf("bd %d %a %a %a\n", i, (double)bd[i].pos.c[0], (double)bd[i].vel.c[0], (double)bd[i].vel.c[2]);

  /* One struct written through `->`, kept on the device between regions. */
  cplx *acc = malloc(sizeof *acc);
  acc->re = 0.0f; acc->im = 0.0f;
#pragma omp target enter data map(to: acc[0:1], a[0:m]) // expect: emu
#pragma omp target // expect: emu
  for (int i = 0; i < m; i++) {
    acc->re = acc->re + a[i].re;
    acc->im = acc->im - a[i].im;
  }
#pragma omp target exit data map(from: acc[0:1]) map(release: a[0:m]) // expect: emu
  printf("acc %a %a\n", (double)acc->re, (double)acc->im);

  /* Whole structs copied between arrays of structs; a struct with padding (its
     members, whole copies) on the host, inside a data region that maps its array: the
     results come back. */
  struct mixed *q = malloc(n * sizeof *q);
  struct particle *pp = malloc(n * sizeof *pp);
  for (int i = 0; i < n; i++) { q[i].x = rng_float(); q[i].y = rng_float(); }
#pragma omp target data map(tofrom: q[0:n]) map(to: p[0:n]) map(from: pp[0:n]) // expect: emu
  {
#pragma omp target teams distribute parallel for // expect: host
    for (int i = 0; i < n; i++)
      q[i].x = q[i].x * q[i].y; // expect-remark: [unsupported-statement] member of type 'struct mixed'
#pragma omp target teams distribute parallel for // expect: emu
    for (int i = 0; i < n; i++)
      pp[i] = p[n - 1 - i];
#pragma omp target teams distribute parallel for map(tofrom: q[0:n]) // expect: host
    for (int i = 1; i < n; i++)
      q[i] = q[0]; // expect-remark: [unsupported-statement] use of a whole struct
  }
  for (int i = 0; i < n; i += 41) printf("q %d %a %a %a %a\n", i, q[i].x, (double)q[i].y, pp[i].x, pp[i].vz);
  free(p); free(pp); free(a); free(b); free(c); free(bd); free(acc); free(q);
  return 0;
}
