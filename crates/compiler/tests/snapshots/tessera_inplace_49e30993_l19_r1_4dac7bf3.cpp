// Tessera kernel tessera_inplace_49e30993_l19_r1_4dac7bf3
// Region: tests/programs/inplace.c:19:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_inplace_49e30993_l19_r1_4dac7bf3(tessera::maxi<const float> ex, int ny, int nx, tessera::maxi<const float> ey, tessera::maxi<float> hz) {
#pragma HLS INTERFACE mode=m_axi port=ex offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=ey offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=m_axi port=hz offset=slave bundle=gmem2
#pragma HLS INTERFACE mode=s_axilite port=ny
#pragma HLS INTERFACE mode=s_axilite port=nx
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i < nx - 1; i += 1) {
    for (int j = 0; j < ny - 1; j += 1) {
      hz[(long)i * ny + j] = (float)((double)hz[(long)i * ny + j] - 0.7 * (double)(ex[(long)i * ny + (j + 1)] - ex[(long)i * ny + j] + ey[(long)(i + 1) * ny + j] - ey[(long)i * ny + j]));
    }
  }
}
