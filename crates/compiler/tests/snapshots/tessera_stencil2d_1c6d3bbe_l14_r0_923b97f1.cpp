// Tessera kernel tessera_stencil2d_1c6d3bbe_l14_r0_923b97f1
// Region: tests/programs/stencil2d.c:14:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_stencil2d_1c6d3bbe_l14_r0_923b97f1(tessera::maxi<const float> A, int m, int n, tessera::maxi<float> X, float fac) {
#pragma HLS INTERFACE mode=m_axi port=A offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=X offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=m
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=fac
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < n - 1; i += 1) {
    for (int j = 1; j < m - 1; j += 1) {
      X[(long)i * m + j] = fac * (A[(long)(i - 1) * m + j] + A[(long)(i + 1) * m + j] + A[(long)i * m + (j - 1)] + A[(long)i * m + (j + 1)]);
    }
  }
}
