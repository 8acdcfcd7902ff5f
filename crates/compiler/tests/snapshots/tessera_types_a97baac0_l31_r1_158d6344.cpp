// Tessera kernel tessera_types_a97baac0_l31_r1_158d6344
// Region: tests/programs/types.c:31:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_types_a97baac0_l31_r1_158d6344(tessera::maxi<const float> fa, tessera::maxi<float> fb) {
#pragma HLS INTERFACE mode=m_axi port=fa offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=fb offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < 97 - 1; i += 1) {
    fb[i] = fa[i - 1] * 0.1f + fa[i] / 3.0f - fa[i + 1];
  }
}
