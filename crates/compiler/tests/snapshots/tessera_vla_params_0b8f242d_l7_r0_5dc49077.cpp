// Tessera kernel tessera_vla_params_0b8f242d_l7_r0_5dc49077
// Region: tests/programs/vla_params.c:7:1 in smooth(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_vla_params_0b8f242d_l7_r0_5dc49077(tessera::maxi<const float> A, int n, int m, tessera::maxi<float> X, float fac) {
#pragma HLS INTERFACE mode=m_axi port=A offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=X offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=m
#pragma HLS INTERFACE mode=s_axilite port=fac
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < n - 1; i += 1) {
    for (int j = 1; j < m - 1; j += 1) {
      X[(long)i * m + j] = fac * (A[(long)(i - 1) * m + (j - 1)] + A[(long)(i - 1) * m + j] + A[(long)(i - 1) * m + (j + 1)] + A[(long)i * m + (j - 1)] + A[(long)i * m + (j + 1)] + A[(long)(i + 1) * m + (j - 1)] + A[(long)(i + 1) * m + j] + A[(long)(i + 1) * m + (j + 1)]);
    }
  }
}
