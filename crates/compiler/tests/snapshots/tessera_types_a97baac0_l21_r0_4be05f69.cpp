// Tessera kernel tessera_types_a97baac0_l21_r0_4be05f69
// Region: tests/programs/types.c:21:1 in main(), `#pragma omp target`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_types_a97baac0_l21_r0_4be05f69(tessera::maxi<const int> ia, tessera::maxi<const unsigned int> ua, tessera::maxi<int> ib, int k) {
#pragma HLS INTERFACE mode=m_axi port=ia offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=ua offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=m_axi port=ib offset=slave bundle=gmem2
#pragma HLS INTERFACE mode=s_axilite port=k
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < 97 - 2 + 1; i += 1) {
    int t = ia[i - 1] * k + ia[i + 1] / 7 - ia[i] % 5;
    if (t > 0) {
      ib[i] = (t << 2) ^ (int)(ua[i] >> 3);
    } else {
      ib[i] = t < -100 ? -t : t + (int)(ua[i] & 15U);
    }
  }
}
