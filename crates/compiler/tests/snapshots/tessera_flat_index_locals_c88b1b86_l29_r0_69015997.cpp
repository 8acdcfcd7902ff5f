// Tessera kernel tessera_flat_index_locals_c88b1b86_l29_r0_69015997
// Region: tests/programs/flat_index_locals.c:29:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_flat_index_locals_c88b1b86_l29_r0_69015997(tessera::maxi<const float> a, int n, int m, tessera::maxi<float> b) {
#pragma HLS INTERFACE mode=m_axi port=a offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=b offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=m
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < n - 1; i += 1) {
    for (int j = 1; j < m - 1; j += 1) {
      b[i * m + j] = 0.25f * (a[i * m + j - 1] + a[i * m + j + 1] + a[i * m + j - m] + a[i * m + j + m]);
    }
  }
}
