// Tessera kernel tessera_math_image_d5ed1e3a_l36_r2_2fcfad1c
// Region: tests/programs/math_image.c:36:1 in errors(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"
#include "tessera_math.h"

extern "C" void tessera_math_image_d5ed1e3a_l36_r2_2fcfad1c(tessera::maxi<const double> x, int n, tessera::maxi<const double> ref, tessera::maxi<double> err, tessera::maxi<double> fused, tessera::maxi<double> misc) {
#pragma HLS INTERFACE mode=m_axi port=x offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=ref offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=m_axi port=err offset=slave bundle=gmem2
#pragma HLS INTERFACE mode=m_axi port=fused offset=slave bundle=gmem3
#pragma HLS INTERFACE mode=m_axi port=misc offset=slave bundle=gmem4
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 0; i < n; i += 1) {
    err[i] = hls::fabs(x[i] - ref[i]) / tessera::fmax(hls::fabs(ref[i]), 1e-300);
    fused[i] = hls::fma(x[i], ref[i], -x[i] * ref[i]);
    misc[i] = hls::copysign(hls::trunc(x[i] * 8.0), ref[i]) + hls::ceil(ref[i] * 3.0) + hls::sqrt(hls::fabs(x[i]));
  }
}
