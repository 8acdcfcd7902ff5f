// Tessera kernel tessera_math_stencil_f958355c_l15_r1_e4cc02c0
// Region: tests/programs/math_stencil.cpp:15:1 in smooth<float>(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"
#include "tessera_math.h"

extern "C" void tessera_math_stencil_f958355c_l15_r1_e4cc02c0(tessera::maxi<const float> u, int n, tessera::maxi<float> v) {
#pragma HLS INTERFACE mode=m_axi port=u offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=v offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < n - 1; i += 1) {
    v[i] = (hls::fabs(u[i - 1] - (float)2 * u[i] + u[i + 1]) < hls::sqrt(hls::fabs(u[i])) ? hls::sqrt(hls::fabs(u[i])) : hls::fabs(u[i - 1] - (float)2 * u[i] + u[i + 1])) + tessera::fmin(u[i], (float)0.25) + (float)hls::sqrt((double)i);
  }
}
