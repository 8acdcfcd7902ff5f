// Tessera kernel tessera_loop_forms_55bca3ba_l67_r7_481eb1b6
// Region: tests/programs/loop_forms.c:67:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_loop_forms_55bca3ba_l67_r7_481eb1b6(tessera::maxi<float> d, int nx, int ny) {
#pragma HLS INTERFACE mode=m_axi port=d offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=s_axilite port=nx
#pragma HLS INTERFACE mode=s_axilite port=ny
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i < nx; i += 1) {
    for (int j = ny - 1; j > 0; j -= 1) {
      d[(long)i * 11L + j] = d[(long)i * 11L + j] + 0.5f * d[(long)i * 11L + (j - 1)];
    }
  }
}
