// Tessera kernel tessera_types_a97baac0_l35_r2_632160eb
// Region: tests/programs/types.c:35:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_types_a97baac0_l35_r2_632160eb(tessera::maxi<const double> da, tessera::maxi<double> db, int k) {
#pragma HLS INTERFACE mode=m_axi port=da offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=db offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=k
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 2; i < 97; i += 3) {
    db[i] = -da[i - 2] * 0.001 + da[i] * (double)k;
  }
}
