// Tessera kernel tessera_math_image_d5ed1e3a_l26_r1_bb66c5c1
// Region: tests/programs/math_image.c:26:1 in clamp_quantise(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"
#include "tessera_math.h"

extern "C" void tessera_math_image_d5ed1e3a_l26_r1_bb66c5c1(tessera::maxi<const float> img, int w, int h, tessera::maxi<float> c, tessera::maxi<unsigned char> q, tessera::maxi<unsigned char> f, float lo, float hi) {
#pragma HLS INTERFACE mode=m_axi port=img offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=c offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=m_axi port=q offset=slave bundle=gmem2
#pragma HLS INTERFACE mode=m_axi port=f offset=slave bundle=gmem3
#pragma HLS INTERFACE mode=s_axilite port=w
#pragma HLS INTERFACE mode=s_axilite port=h
#pragma HLS INTERFACE mode=s_axilite port=lo
#pragma HLS INTERFACE mode=s_axilite port=hi
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i < h; i += 1) {
    for (int j = 0; j < w; j += 1) {
      c[(long)i * w + j] = tessera::fmin(tessera::fmax(img[(long)i * w + j], lo), hi);
      q[(long)i * w + j] = (unsigned char)tessera::fmin(255.0f, tessera::fmax(0.0f, hls::round(img[(long)i * w + j] * 127.5f + 127.5f)));
      f[(long)i * w + j] = (unsigned char)tessera::fmax(0.0f, hls::floor(tessera::fmin(img[(long)i * w + j] * 128.0f + 128.0f, 255.0f)));
    }
  }
}
