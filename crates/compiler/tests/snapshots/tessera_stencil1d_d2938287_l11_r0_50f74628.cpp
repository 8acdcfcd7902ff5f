// Tessera kernel tessera_stencil1d_d2938287_l11_r0_50f74628
// Region: tests/programs/stencil1d.c:11:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_stencil1d_d2938287_l11_r0_50f74628(tessera::maxi<const float> A, int n, tessera::maxi<float> B) {
#pragma HLS INTERFACE mode=m_axi port=A offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=B offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < n - 1; i += 1) {
    B[i] = (float)(0.33333 * (double)(A[i - 1] + A[i] + A[i + 1]));
  }
}
