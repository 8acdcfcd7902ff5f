// Tessera kernel tessera_flat_index_locals_c88b1b86_l38_r1_eece3497
// Region: tests/programs/flat_index_locals.c:38:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: baseline — the original loop nest as a Vitis HLS top function with
// default settings (one m_axi bundle per array, no on-chip buffers).
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.
// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.

#include "tessera_hls.h"

extern "C" void tessera_flat_index_locals_c88b1b86_l38_r1_eece3497(tessera::maxi<const double> u, int nx, int ny, int nz, tessera::maxi<double> v) {
#pragma HLS INTERFACE mode=m_axi port=u offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=v offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=nx
#pragma HLS INTERFACE mode=s_axilite port=ny
#pragma HLS INTERFACE mode=s_axilite port=nz
#pragma HLS INTERFACE mode=s_axilite port=return
  for (int i = 1; i < nx - 1; i += 1) {
    for (int j = 1; j < ny - 1; j += 1) {
      for (int k = 1; k < nz - 1; k += 1) {
        v[((long)i * (long)ny + (long)j) * (long)nz + (long)k] = u[((long)i * (long)ny + (long)j) * (long)nz + (long)k] - (u[((long)i * (long)ny + (long)j) * (long)nz + (long)k - (long)1] + u[((long)i * (long)ny + (long)j) * (long)nz + (long)k + (long)1] + u[((long)i * (long)ny + (long)j) * (long)nz + (long)k - (long)nz] + u[((long)i * (long)ny + (long)j) * (long)nz + (long)k + (long)nz] + u[((long)i * (long)ny + (long)j) * (long)nz + (long)k - (long)ny * (long)nz] + u[((long)i * (long)ny + (long)j) * (long)nz + (long)k + (long)ny * (long)nz]) / 6.0;
      }
    }
  }
}
