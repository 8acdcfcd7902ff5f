/* Device memory routines and `is_device_ptr`: blocks from omp_target_alloc live on
   Tessera's device (in its data environment, as present data), omp_target_memcpy
   moves bytes between host memory and device blocks, and a region with
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
    e[i] = scale(e[i]); // expect-remark: [call] call 'scale(e[i])' is not supported: the body of 'scale' is not visible here (Tessera inlines functions defined before the region, e.g. 'static inline' or 'declare target' ones)

  /* Device to device, then back to the host in two pieces with offsets. */
  printf("device to device: %d\n", omp_target_memcpy(d, e, n * sizeof *e, 0, 0, dev, dev));
  printf("copy out: %d", omp_target_memcpy(back, d, 100 * sizeof *d, 0, 0, host, dev));
  printf(" %d\n", omp_target_memcpy(back, d, (n - 100) * sizeof *d, 100 * sizeof *d, 100 * sizeof *d, host, dev));
  print_floats("back", back, n);
  printf("host data present on the host device: %d\n", omp_target_is_present(h, host));

  omp_target_free(d, dev);
  omp_target_free(e, dev);
  free(h);
  free(back);
  return 0;
}

static float scale(float x) { return 3.0f * x; }
