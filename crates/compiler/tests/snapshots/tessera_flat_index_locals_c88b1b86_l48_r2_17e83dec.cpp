// Tessera kernel tessera_flat_index_locals_c88b1b86_l48_r2_17e83dec
// Region: tests/programs/flat_index_locals.c:48:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_flat_index_locals_c88b1b86_l48_r2_17e83dec(tessera::maxi<const int> p, int n, int m, tessera::maxi<int> q) {
#pragma HLS INTERFACE mode=m_axi port=p offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=q offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=m
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i < n; i += 1) {
    for (int j = 0; j < m; j += 1) {
      q[i * m + j] = (p[i * m + j] < 0 ? -p[i * m + j] : p[i * m + j]) - (p[i * m + j] / 3 < 0 ? -(p[i * m + j] / 3) : p[i * m + j] / 3) + 7;
    }
  }
}
