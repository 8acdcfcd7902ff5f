// Tessera kernel tessera_loop_forms_55bca3ba_l50_r4_c60afcc1
// Region: tests/programs/loop_forms.c:50:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_loop_forms_55bca3ba_l50_r4_c60afcc1(tessera::maxi<const float> a, tessera::maxi<float> b, unsigned int un) {
#pragma HLS INTERFACE mode=m_axi port=a offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=b offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=un
#pragma HLS INTERFACE mode=s_axilite port=return
  for (unsigned int i = un; i > 0U; i -= 1) {
    b[i - (unsigned int)1] = 2.0f * a[i - (unsigned int)1] - b[i - (unsigned int)1] + (float)i;
  }
}
