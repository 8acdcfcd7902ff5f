// Tessera kernel tessera_math_image_d5ed1e3a_l17_r0_32386d6b
// Region: tests/programs/math_image.c:17:1 in gradient(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"
#include "tessera_math.h"

extern "C" void tessera_math_image_d5ed1e3a_l17_r0_32386d6b(tessera::maxi<const float> img, int w, int h, tessera::maxi<float> mag) {
#pragma HLS INTERFACE mode=m_axi port=img offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=mag offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=w
#pragma HLS INTERFACE mode=s_axilite port=h
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < h - 1; i += 1) {
    for (int j = 1; j < w - 1; j += 1) {
      mag[(long)i * w + j] = hls::sqrt((img[(long)i * w + (j + 1)] - img[(long)i * w + (j - 1)]) * (img[(long)i * w + (j + 1)] - img[(long)i * w + (j - 1)]) + (img[(long)(i + 1) * w + j] - img[(long)(i - 1) * w + j]) * (img[(long)(i + 1) * w + j] - img[(long)(i - 1) * w + j]));
    }
  }
}
