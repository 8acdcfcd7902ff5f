/* OpenMP's device memory routines as the host device implements them (OpenMP 5.2,
   §18.8, for device_num == omp_get_initial_device()): host memory, host copies. The
   reference builds of the tests link this file, because plain `clang -fopenmp`
   without offload targets has no device — the initial device is the only one — and
   does not link libomptarget, where these routines live (and which cannot run
   without offload targets). Not Tessera's implementation, which is in
   runtime/src/memory.rs. */
#include <omp.h>
#include <stdlib.h>
#include <string.h>

void *omp_target_alloc(size_t size, int device_num) {
  if (device_num != omp_get_initial_device() || size == 0)
    return NULL;
  return malloc(size);
}

void omp_target_free(void *device_ptr, int device_num) {
  (void)device_num;
  free(device_ptr);
}

int omp_target_memcpy(void *dst, const void *src, size_t length, size_t dst_offset, size_t src_offset,
                      int dst_device_num, int src_device_num) {
  if (dst_device_num != omp_get_initial_device() || src_device_num != omp_get_initial_device())
    return 1;
  memmove((char *)dst + dst_offset, (const char *)src + src_offset, length);
  return 0;
}

int omp_target_is_present(const void *ptr, int device_num) {
  (void)ptr;
  return device_num == omp_get_initial_device();
}
