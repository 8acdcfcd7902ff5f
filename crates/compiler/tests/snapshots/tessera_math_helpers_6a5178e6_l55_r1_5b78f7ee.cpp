// Tessera kernel tessera_math_helpers_6a5178e6_l55_r1_5b78f7ee
// Region: tests/programs/math_helpers.c:55:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"
#include "tessera_math.h"

extern "C" void tessera_math_helpers_6a5178e6_l55_r1_5b78f7ee(tessera::maxi<double> w, int m) {
#pragma HLS INTERFACE mode=m_axi port=w offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=s_axilite port=m
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i < m; i += 1) {
    for (int j = 0; j < m; j += 1) {
      w[(long)i * 29L + j] = 1.0 / hls::sqrt((double)(i - m / 2) * (double)(i - m / 2) + ((double)j - 14.5) * ((double)j - 14.5) + 1e-12);
    }
  }
}
