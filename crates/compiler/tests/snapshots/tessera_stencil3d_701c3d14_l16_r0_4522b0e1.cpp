// Tessera kernel tessera_stencil3d_701c3d14_l16_r0_4522b0e1
// Region: tests/programs/stencil3d.c:16:1 in main(), `#pragma omp target`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_stencil3d_701c3d14_l16_r0_4522b0e1(tessera::maxi<double> B, tessera::maxi<const double> A) {
#pragma HLS INTERFACE mode=m_axi port=B offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=A offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < 11 - 1; i += 1) {
    for (int j = 1; j < 13 - 1; j += 1) {
      for (int k = 1; k < 17 - 1; k += 1) {
        B[((long)i * 13L + j) * 17L + k] = 0.125 * (A[((long)(i + 1) * 13L + j) * 17L + k] - 2.0 * A[((long)i * 13L + j) * 17L + k] + A[((long)(i - 1) * 13L + j) * 17L + k]) + 0.125 * (A[((long)i * 13L + (j + 1)) * 17L + k] - 2.0 * A[((long)i * 13L + j) * 17L + k] + A[((long)i * 13L + (j - 1)) * 17L + k]) + 0.125 * (A[((long)i * 13L + j) * 17L + (k + 1)] - 2.0 * A[((long)i * 13L + j) * 17L + k] + A[((long)i * 13L + j) * 17L + (k - 1)]) + A[((long)i * 13L + j) * 17L + k];
      }
    }
  }
}
