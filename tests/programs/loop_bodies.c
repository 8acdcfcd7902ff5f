/* Loop bodies as hand-written code has them: `continue` to skip an iteration, a
   local clamped in place. The region IR has no jumps; the plugin turns a loop's own
   `continue` at the top of its body into structure (`if (c) continue; rest` is
   `if (c) {} else { rest }`, `if (c) { s; continue; }` keeps `s` in the then
   branch, statements after a plain `continue;` are unreachable). A conditional
   write without a prior one is a guarded write (guarded_writes.c): the tiled
   kernel stores the old value where the source writes nothing, once the launch has
   checked that those stores stay in the device's data. With an `else`, the branch that does not
   `continue` runs on into the rest of the body; when it declares a local (whose
   name could clash with the rest's) the `continue` is not turned, and its region
   stays on the host with the remark. `if (v < 0) v = 0;`
   on a local is a select whose condition reads the one place it assigns. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int n = 1000, m = 37;
  float *x = malloc(n * sizeof *x), *y = malloc(n * sizeof *y), *z = malloc(n * m * sizeof *z);
  int *mask = malloc(n * sizeof *mask);
  for (int i = 0; i < n; i++) { x[i] = rng_float(); y[i] = 0.0f; mask[i] = (int)(rng_next() & 1u); }
  for (int i = 0; i < n * m; i++) z[i] = rng_float();

#pragma omp target teams distribute parallel for map(to: x[0:n], mask[0:n]) map(tofrom: y[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    if (mask[i] == 0) continue;
    y[i] = x[i] * 2.0f;
  }

#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n], z[0:n * m]) // expect: emu baseline
  for (int i = 0; i < n; i++) {
    y[i] = y[i] + 1.0f;
    if (x[i] < -0.5f) {
      y[i] = -y[i];
      continue;
    }
    for (int j = 0; j < m; j++) {
      if (j == i % m) continue;
      z[i * m + j] = z[i * m + j] * 0.5f + y[i];
    }
    continue;
    y[i] = 99.0f;
  }

#pragma omp target teams distribute parallel for map(to: x[0:n]) map(tofrom: y[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    float v = x[i];
    if (v < 0.0f) v = 0.0f;
    y[i] = y[i] + v;
  }

#pragma omp target teams distribute parallel for map(to: x[0:n], mask[0:n]) map(tofrom: y[0:n]) // expect: emu tiled
  for (int i = 0; i < n; i++) {
    if (mask[i] != 0) continue;
    else y[i] = y[i] * 0.5f;
    y[i] = y[i] + x[i];
  }

#pragma omp target teams distribute parallel for map(to: x[0:n], mask[0:n]) map(tofrom: y[0:n]) // expect: emu baseline
  for (int i = 0; i < n; i++) {
    if (mask[i] == 0) y[i] = y[i] - 1.0f;
    else { y[i] = -y[i]; continue; }
    y[i] = y[i] * 2.0f;
  }

#pragma omp target teams distribute parallel for map(to: x[0:n], mask[0:n]) map(tofrom: y[0:n]) // expect: host
  for (int i = 0; i < n; i++) {
    if (mask[i] != 0) continue; // expect-remark: [unsupported-statement] continue 'continue' is not supported
    else {
      float h = x[i] * 0.25f;
      y[i] = y[i] + h;
    }
    float h = 1.0f;
    y[i] = y[i] * h;
  }

  print_floats("y", y, n);
  print_floats("z", z, (long)n * m);
  free(x); free(y); free(z); free(mask);
  return 0;
}
