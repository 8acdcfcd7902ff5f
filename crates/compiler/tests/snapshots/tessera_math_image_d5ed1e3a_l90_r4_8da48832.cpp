// Tessera kernel tessera_math_image_d5ed1e3a_l90_r4_8da48832
// Region: tests/programs/math_image.c:90:1 in main(), `#pragma omp target`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_math_image_d5ed1e3a_l90_r4_8da48832(tessera::maxi<int> ids) {
#pragma HLS INTERFACE mode=m_axi port=ids offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int j = 0; j < 45; j += 1) {
    ids[j] = 0 + j;
    ids[45 + j] = 1 * j;
    ids[2 * 45 + j] = 0 - j;
    ids[3 * 45 + j] = 1 + 2 * j;
  }
}
