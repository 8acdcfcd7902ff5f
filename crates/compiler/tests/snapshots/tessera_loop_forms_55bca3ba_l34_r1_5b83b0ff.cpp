// Tessera kernel tessera_loop_forms_55bca3ba_l34_r1_5b83b0ff
// Region: tests/programs/loop_forms.c:34:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_loop_forms_55bca3ba_l34_r1_5b83b0ff(tessera::maxi<const float> a, tessera::maxi<float> b, int n) {
#pragma HLS INTERFACE mode=m_axi port=a offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=b offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i < n - 1 + 1; i += 1) {
    b[i] = b[i] * a[i] + 1.0f;
  }
}
