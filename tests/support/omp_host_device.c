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

int omp_target_memcpy_rect(void *dst, const void *src, size_t element_size, int num_dims,
                           const size_t *volume, const size_t *dst_offsets, const size_t *src_offsets,
                           const size_t *dst_dimensions, const size_t *src_dimensions, int dst_device_num,
                           int src_device_num) {
  if (!dst && !src)
    return 3;
  if (dst_device_num != omp_get_initial_device() || src_device_num != omp_get_initial_device() || num_dims < 1)
    return 1;
  if (num_dims == 1) {
    memmove((char *)dst + dst_offsets[0] * element_size, (const char *)src + src_offsets[0] * element_size,
            volume[0] * element_size);
    return 0;
  }
  /* Row-major: one dimension less per recursion level. */
  size_t dst_row = element_size, src_row = element_size;
  for (int k = 1; k < num_dims; k++) {
    dst_row *= dst_dimensions[k];
    src_row *= src_dimensions[k];
  }
  for (size_t i = 0; i < volume[0]; i++) {
    int rc = omp_target_memcpy_rect((char *)dst + (dst_offsets[0] + i) * dst_row,
                                    (const char *)src + (src_offsets[0] + i) * src_row, element_size,
                                    num_dims - 1, volume + 1, dst_offsets + 1, src_offsets + 1, dst_dimensions + 1,
                                    src_dimensions + 1, dst_device_num, src_device_num);
    if (rc)
      return rc;
  }
  return 0;
}

void *omp_get_mapped_ptr(const void *ptr, int device_num) {
  return device_num == omp_get_initial_device() ? (void *)ptr : NULL;
}

int omp_target_is_accessible(const void *ptr, size_t size, int device_num) {
  (void)ptr;
  (void)size;
  return device_num == omp_get_initial_device();
}

int omp_target_is_present(const void *ptr, int device_num) {
  (void)ptr;
  return device_num == omp_get_initial_device();
}
