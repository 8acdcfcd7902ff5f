// Tessera kernel tessera_math_helpers_6a5178e6_l49_r0_d2259f5c
// Region: tests/programs/math_helpers.c:49:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"
#include "tessera_math.h"

extern "C" void tessera_math_helpers_6a5178e6_l49_r0_d2259f5c(tessera::maxi<const float> a, int n, tessera::maxi<float> b, tessera::maxi<int> k) {
#pragma HLS INTERFACE mode=m_axi port=a offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=b offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=m_axi port=k offset=slave bundle=gmem2
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < n - 1; i += 1) {
    b[i] = ((a[i] - -0.5f) / (0.5f - -0.5f) < 0.0f ? 0.0f : (a[i] - -0.5f) / (0.5f - -0.5f) > 1.0f ? 1.0f : (a[i] - -0.5f) / (0.5f - -0.5f) * ((a[i] - -0.5f) / (0.5f - -0.5f)) * (3.0f - 2.0f * ((a[i] - -0.5f) / (0.5f - -0.5f)))) + (a[i + 1] - a[i - 1]) * (a[i + 1] - a[i - 1]);
    k[i] = ((int)(a[i] * 100.0f) < -50 ? -50 : (int)(a[i] * 100.0f) > 50 ? 50 : (int)(a[i] * 100.0f)) + (i < 3 ? 3 : i > n - 3 ? n - 3 : i) + (int)hls::fabs(4.0f * a[i]);
  }
}
