// Tessera kernel tessera_loop_forms_55bca3ba_l79_r9_05e47b24
// Region: tests/programs/loop_forms.c:79:1 in main(), `#pragma omp target`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_loop_forms_55bca3ba_l79_r9_05e47b24(tessera::maxi<float> g, int nx, int ny) {
#pragma HLS INTERFACE mode=m_axi port=g offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=s_axilite port=nx
#pragma HLS INTERFACE mode=s_axilite port=ny
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = nx - 1; i > 0; i -= 1) {
    for (int j = 0; j != ny; j += 1) {
      g[(long)i * 11L + j] = g[(long)i * 11L + j] * 0.5f + g[(long)(i - 1) * 11L + j];
    }
  }
}
