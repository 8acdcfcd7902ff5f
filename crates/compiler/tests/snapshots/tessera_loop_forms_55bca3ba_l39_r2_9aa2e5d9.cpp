// Tessera kernel tessera_loop_forms_55bca3ba_l39_r2_9aa2e5d9
// Region: tests/programs/loop_forms.c:39:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_loop_forms_55bca3ba_l39_r2_9aa2e5d9(tessera::maxi<const float> c, tessera::maxi<float> d, int nx, int ny) {
#pragma HLS INTERFACE mode=m_axi port=c offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=d offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=nx
#pragma HLS INTERFACE mode=s_axilite port=ny
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i != nx; i += 1) {
    for (int j = ny - 1; j > -1; j -= 1) {
      d[(long)i * 11L + j] = d[(long)i * 11L + j] - 0.25f * c[(long)i * 11L + j] * (float)(i - j);
    }
  }
}
