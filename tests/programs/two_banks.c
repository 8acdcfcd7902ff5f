/* Regions whose arrays a dataflow kernel built for two DDR banks (banks=2) interleaves
   over both: in-place updates (fdtd's ey and hz statements: the in-place array's
   reads and writes against one read-only array), three inputs against one output,
   inside a data region over several time steps, and through a pointer into the middle
   of a mapping (a present argument whose element 0 is not its buffer's). The arrays
   span several 4 KiB segments and their rows cross segment boundaries. Compiled
   without banks=2 the same regions use whole arrays; the output is the CPU's either
   way. */
#include <stdlib.h>
#include "common.h"

int main(void) {
  int nx = 70, ny = 53, steps = 3;
  float (*ey)[ny] = malloc(sizeof(float[nx][ny]));
  float (*hz)[ny] = malloc(sizeof(float[nx][ny]));
  float (*ex)[ny] = malloc(sizeof(float[nx][ny]));
  float (*s)[ny] = malloc(sizeof(float[nx][ny]));
  for (int i = 0; i < nx; i++)
    for (int j = 0; j < ny; j++) {
      ey[i][j] = rng_float();
      hz[i][j] = rng_float();
      ex[i][j] = rng_float();
      s[i][j] = 0.0f;
    }

#pragma omp target data map(tofrom: ey[0:nx][0:ny], hz[0:nx][0:ny]) map(to: ex[0:nx][0:ny]) // expect: emu
  {
    for (int t = 0; t < steps; t++) {
#pragma omp target teams distribute parallel for collapse(2) // expect: emu
      for (int i = 1; i < nx; i++)
        for (int j = 0; j < ny; j++)
          ey[i][j] = ey[i][j] - 0.5f * (hz[i][j] - hz[i - 1][j]);
#pragma omp target teams distribute parallel for collapse(2) // expect: emu
      for (int i = 0; i < nx - 1; i++)
        for (int j = 0; j < ny - 1; j++)
          hz[i][j] = hz[i][j] - 0.7f * (ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j]);
    }
    /* Rows 3 .. nx-4 of ey through a pointer into its mapping: present data that
       starts 3 rows into the device buffer. */
    float (*q)[ny] = (float (*)[ny])&ey[3][0];
    int m = nx - 6;
#pragma omp target teams distribute parallel for collapse(2) // expect: emu
    for (int i = 1; i < m; i++)
      for (int j = 0; j < ny; j++)
        q[i][j] = q[i][j] + 0.25f * (hz[i + 3][j] - hz[i + 2][j]);
  }

  /* Three arrays read, one written. */
#pragma omp target teams distribute parallel for collapse(2) map(to: ey[0:nx][0:ny], hz[0:nx][0:ny], ex[0:nx][0:ny]) map(tofrom: s[0:nx][0:ny]) // expect: emu
  for (int i = 1; i < nx - 1; i++)
    for (int j = 1; j < ny - 1; j++)
      s[i][j] = ey[i - 1][j] + hz[i][j + 1] * ex[i + 1][j - 1];

  print_floats("ey", &ey[0][0], (long)nx * ny);
  print_floats("hz", &hz[0][0], (long)nx * ny);
  print_floats("s", &s[0][0], (long)nx * ny);
  free(ey);
  free(hz);
  free(ex);
  free(s);
  return 0;
}
