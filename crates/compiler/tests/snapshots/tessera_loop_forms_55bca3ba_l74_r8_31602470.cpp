// Tessera kernel tessera_loop_forms_55bca3ba_l74_r8_31602470
// Region: tests/programs/loop_forms.c:74:1 in main(), `#pragma omp target`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_loop_forms_55bca3ba_l74_r8_31602470(tessera::maxi<float> e, int n) {
#pragma HLS INTERFACE mode=m_axi port=e offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = n - 2; i > 0 - 1; i -= 1) {
    e[i] = e[i] + 0.5f * e[i + 1];
  }
}
