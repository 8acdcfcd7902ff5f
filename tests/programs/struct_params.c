/* Loop bounds, section bounds and coefficients read from structs, the way solver
   codes pass their problem sizes (`c->n`, `p->g.lo`, `s.steps`). A member access the
   region cannot change becomes a parameter read at the directive; one it might
   change only by a write landing on it (the region writes data of the member's
   type) too, once the launch has checked that none does; one it might change
   otherwise (the region writes bytes, which may alias anything) keeps the region on
   the host with a remark saying what to do. Calls do not count as writes of an `int`
   member: a C library function writes at most errno, and a helper whose body the
   region inlines writes only its own locals. */
#include <math.h>
#include <stdlib.h>
#include "common.h"

struct range { int lo, hi; };
struct config { int n; struct range r; double w; };

static void smooth(const struct config *c, const float *in, float *out) {
#pragma omp target teams distribute parallel for map(to: in[0:c->n]) map(tofrom: out[0:c->n]) // expect: emu
  for (int i = c->r.lo; i < c->r.hi; i++)
    out[i] = (in[i - 1] + in[i] + in[i + 1]) * 0.25f + out[i] * 0.25f;
}

static void scale(const struct config *c, double *x) {
  /* `c->w` is a double member reached through a pointer and the region writes
     doubles: only a write landing on `c->w` could change it, so the launch checks
     that it lies outside everything the region writes, and reads it at the
     directive. (A struct no pointer reaches — a by-value parameter, a local whose
     address is never taken — needs no check: struct_scalars.c.) */
#pragma omp target teams distribute parallel for map(tofrom: x[0:c->n]) // expect: emu tiled
  for (int i = 0; i < c->n; i++)
    x[i] = x[i] * c->w;
}

struct coef { double w; };

static void scale_aliased(double *x, int n) {
  /* Here the member is one of the elements the region writes: the check finds it
     and the region runs as written, on the host, where iterations after 5 see the
     new x[5]. */
  struct coef *cw = (struct coef *)&x[5];
#pragma omp target map(tofrom: x[0:n]) // expect: host ~ lies in 'x'
  for (int i = 0; i < n; i++)
    x[i] = x[i] * cw->w + 0.5;
}

static void quantize(const struct config *c, const double *x, unsigned char *q) {
  /* A region writing bytes may write any memory: the members stay member
     accesses, and the region stays on the host with the remark. */
#pragma omp target teams distribute parallel for map(to: x[0:c->n]) map(tofrom: q[0:c->n]) // expect: host
  for (int i = 0; i < c->n; i++) // expect-remark: [unsupported-expression] member access (the region writes data of its type
    q[i] = (unsigned char)(x[i] * c->w > 0.0 ? 1 : 0);
}

static void scale_local(struct config c, double *x) {
  double w = c.w; /* the remark's advice */
#pragma omp target teams distribute parallel for map(tofrom: x[0:c.n]) // expect: emu
  for (int i = 0; i < c.n; i++)
    x[i] = x[i] * w;
}

static inline double damp(double v) {
  double t = v * 0.5; /* its own local: no write the caller sees */
  t = t + 0.125;
  return t;
}

static void root(struct config c, double *x) {
#pragma omp target teams distribute parallel for map(tofrom: x[0:c.n]) // expect: emu tiled
  for (int i = c.r.lo; i < c.n; i++)
    x[i] = sqrt(fabs(x[i])) + damp(x[i]);
}

int main(void) {
  struct config c = {300, {1, 299}, 0.5};
  float *in = malloc(c.n * sizeof *in), *out = malloc(c.n * sizeof *out);
  double *x = malloc(c.n * sizeof *x);
  for (int i = 0; i < c.n; i++) { in[i] = rng_float(); out[i] = rng_float(); x[i] = rng_float(); }
  smooth(&c, in, out);
  c.r.lo = 7; /* the next call reads the new bound */
  smooth(&c, out, in);
  scale(&c, x);
  scale_aliased(x, c.n);
  unsigned char *q = calloc(c.n, 1);
  quantize(&c, x, q);
  for (int i = 0; i < c.n; i++) printf("%d", q[i]);
  printf("\n");
  free(q);
  scale_local(c, x);
  root(c, x);
  print_floats("out", out, c.n);
  print_floats("in", in, c.n);
  print_doubles("x", x, c.n);
  free(in); free(out); free(x);
  return 0;
}
