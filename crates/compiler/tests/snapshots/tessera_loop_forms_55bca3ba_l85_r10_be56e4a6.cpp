// Tessera kernel tessera_loop_forms_55bca3ba_l85_r10_be56e4a6
// Region: tests/programs/loop_forms.c:85:1 in main(), `#pragma omp target`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_loop_forms_55bca3ba_l85_r10_be56e4a6(tessera::maxi<float> h, tessera::maxi<float> s, int n, int m) {
#pragma HLS INTERFACE mode=m_axi port=h offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=s offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=m
#pragma HLS INTERFACE mode=s_axilite port=return
  for (unsigned char u = (unsigned char)250; u != 4; u += 1) {
    h[u] = h[u] + 1.0f;
  }
  for (int i = 1; i < n; i += 2) {
    s[i] = s[i] * 2.0f;
  }
  for (short k = (short)9; k > 0 - 1; k -= 4) {
    s[k] = s[k] + 1.0f;
  }
  for (int i_1 = m; i_1 > m; i_1 -= 1) {
    s[i_1] = 0.0f;
  }
  for (int i_2 = m; i_2 < m - 1 + 1; i_2 += 1) {
    s[i_2] = 0.0f;
  }
  for (int i_3 = m; i_3 != m; i_3 -= 1) {
    s[i_3] = 0.0f;
  }
}
