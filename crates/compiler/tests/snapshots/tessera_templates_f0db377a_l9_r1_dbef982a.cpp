// Tessera kernel tessera_templates_f0db377a_l9_r1_dbef982a
// Region: tests/programs/templates.cpp:9:1 in axpy<float>(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_templates_f0db377a_l9_r1_dbef982a(tessera::maxi<const float> x, int n, tessera::maxi<float> y, float a) {
#pragma HLS INTERFACE mode=m_axi port=x offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=y offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=a
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i < n; i += 1) {
    y[i] = a * x[i] + y[i];
  }
}
