// Tessera kernel tessera_templates_f0db377a_l29_r0_9de71d8e
// Region: tests/programs/templates.cpp:29:1 in main::lambda(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_templates_f0db377a_l29_r0_9de71d8e(tessera::maxi<const float> p, int m, tessera::maxi<float> q) {
#pragma HLS INTERFACE mode=m_axi port=p offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=q offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=m
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i < m; i += 1) {
    q[i] = q[i] - 2.0f * p[i];
  }
}
