/* Device memory routines and `is_device_ptr`: blocks from omp_target_alloc live on
   Tessera's device (in its data environment, as present data), omp_target_memcpy
   moves bytes between host memory and device blocks (omp_target_memcpy_rect: a
   sub-box of a 2D array, row by row), and a region with
   `is_device_ptr(d)` finds the block d points to — also at an offset into it. A
   region that must run on the host with a device pointer sees the block's device
   bytes and gives its results back to the device. The reference build links
   OpenMP's host-device versions of the routines (tests/support/omp_host_device.c:
   plain clang without offload targets has no device, so the initial device is the
   only one); the program only uses device numbers from omp_get_default_device() and
   omp_get_initial_device(), so it means the same on both. */
#include <omp.h>
#include <stdlib.h>
#include "common.h"

/* Defined at the end: its body is not visible at the region, which stays on the host. */
static float scale(float x);

int main(void) {
  int n = 300;
  int dev = omp_get_default_device(), host = omp_get_initial_device();
  float *h = malloc(n * sizeof *h), *back = malloc(n * sizeof *back);
  for (int i = 0; i < n; i++) h[i] = rng_float();

  float *d = omp_target_alloc(n * sizeof *d, dev);
  float *e = omp_target_alloc(n * sizeof *e, dev);
  if (!d || !e) { printf("omp_target_alloc failed\n"); return 1; }
  printf("copy in: %d\n", omp_target_memcpy(d, h, n * sizeof *h, 0, 0, dev, host));

#pragma omp target teams distribute parallel for is_device_ptr(d, e) // expect: emu
  for (int i = 0; i < n; i++)
    e[i] = 2.0f * d[i] + 1.0f;

  /* From element 10 on, through a device pointer into the middle of the block. */
  float *mid = e + 10;
#pragma omp target teams distribute parallel for is_device_ptr(mid) // expect: emu
  for (int i = 0; i < n - 10; i++)
    mid[i] = mid[i] - 0.25f;

#pragma omp target teams distribute parallel for is_device_ptr(e) // expect: host
  for (int i = 0; i < n; i++)
    e[i] = scale(e[i]); // expect-remark@-2: [unpassable] it calls 'scale', whose body Tessera cannot see here

  /* Device to device, then back to the host in two pieces with offsets. */
  printf("device to device: %d\n", omp_target_memcpy(d, e, n * sizeof *e, 0, 0, dev, dev));
  printf("copy out: %d", omp_target_memcpy(back, d, 100 * sizeof *d, 0, 0, host, dev));
  printf(" %d\n", omp_target_memcpy(back, d, (n - 100) * sizeof *d, 100 * sizeof *d, 100 * sizeof *d, host, dev));
  print_floats("back", back, n);
  printf("host data present on the host device: %d\n", omp_target_is_present(h, host));

  /* A 7x9 box at (2, 3) of a 12x20 host array into the corner of a 10x10 block,
     doubled on the device, back to (4, 5) of another host array. */
  enum { R = 12, C = 20, DR = 10, DC = 10 };
  static double g[R][C], out[R][C];
  for (int i = 0; i < R; i++)
    for (int j = 0; j < C; j++) g[i][j] = rng_float();
  double *blk = omp_target_alloc(DR * DC * sizeof *blk, dev);
  if (!blk) { printf("omp_target_alloc failed\n"); return 1; }
  size_t vol[2] = {7, 9}, at[2] = {2, 3}, zero[2] = {0, 0}, to[2] = {4, 5};
  size_t hdims[2] = {R, C}, ddims[2] = {DR, DC};
  printf("rect in: %d\n", omp_target_memcpy_rect(blk, g, sizeof(double), 2, vol, zero, at, ddims, hdims, dev, host));
#pragma omp target teams distribute parallel for is_device_ptr(blk) // expect: emu
  for (int i = 0; i < DR * DC; i++)
    blk[i] = 2.0 * blk[i];
  printf("rect out: %d\n", omp_target_memcpy_rect(out, blk, sizeof(double), 2, vol, to, zero, hdims, ddims, host, dev));
  print_doubles("rect", &out[0][0], R * C);
  omp_target_free(blk, dev);

  /* The device address of mapped data, used as a device pointer. */
#pragma omp target enter data map(to: h[0:n]) // expect: emu
  float *hm = omp_get_mapped_ptr(h, dev);
  printf("mapped: %d\n", hm != NULL);
#pragma omp target teams distribute parallel for is_device_ptr(hm) // expect: emu
  for (int i = 0; i < n; i++)
    hm[i] = hm[i] + 1.0f;
#pragma omp target exit data map(from: h[0:n]) // expect: emu
  print_floats("h", h, n);

  omp_target_free(d, dev);
  omp_target_free(e, dev);
  free(h);
  free(back);
  return 0;
}

static float scale(float x) { return 3.0f * x; }
