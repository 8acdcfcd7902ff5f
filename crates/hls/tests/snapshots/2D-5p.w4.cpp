// Tessera kernel tessera_snap
// Region: bench/stencils/2D-5p.c:38:1 in main(), `#pragma omp target teams distribute parallel for`.
// Mode: paper — the optimized kernel of Mayer, Brandner, Philippsen (IMPACT 2024),
// steps 1-4 planned by tessera-poly, step 5 printed here:
//   step 1: tile sizes SZ = (8, 16)
//   step 2: intra-tile loop order (i, j); cache buffers A_c (chunk), X_l (line)
//   step 3: δ = (-1, -ti, -1, -tj); loop j padded to 16 iterations
//   step 4: subscripts redirected into the buffers (alignment halo included)
//   step 5: buffers, pragmas and data shipment in bursts of 4-element beats (128 bit)
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.

#include "tessera_wide.h"
#include "tessera_ship.h"

extern "C" void tessera_snap(hls::burst_maxi<tessera::wide_t<4, float>> A, hls::burst_maxi<tessera::wide_t<4, float>> X, float fac) {
#pragma HLS INTERFACE mode=m_axi port=A offset=slave bundle=gmem0 max_read_burst_length=256 max_write_burst_length=256
#pragma HLS INTERFACE mode=m_axi port=X offset=slave bundle=gmem1 max_read_burst_length=256 max_write_burst_length=256
#pragma HLS INTERFACE mode=s_axilite port=fac
#pragma HLS INTERFACE mode=s_axilite port=return
  // Array sizes in beats: reads never go beyond an array's last beat.
  const long A_words = ((long)(0 + 37) * 53L + 3) / 4;
  // Steps 1 and 3: inter-tile loops (δ^o = -lb: the first tile starts at the lower bound).
  for (int ti = 1; ti < 36; ti += 8) {
    for (int tj = 1; tj < 52; tj += 16) {
      // Step 3: real iterations per intra-tile loop in this tile (the last tile may be partial or padded).
      const int i_n = 36 - ti < 8 ? 36 - ti : 8;
      const int j_n = 52 - tj < 16 ? 52 - tj : 16;
      // Step 2: chunk buffer of A, box (3, 18) at (ti + i - 1, tj - 1); 3 + 3 alignment halo lanes (step 5).
      float A_c[3][24];
#pragma HLS ARRAY_PARTITION variable=A_c type=complete dim=0
      // Step 2: line buffer of X, box (1, 16) at (ti + i, tj); 3 + 1 alignment halo lanes (step 5).
      float X_l[1][20];
#pragma HLS ARRAY_PARTITION variable=X_l type=complete dim=0
      // Step 5 (ship): pre-load slices 0..1 of A_c before the tile.
      for (int r0 = 0; r0 < 2; r0++) {
        tessera_ship_in<4, 256>(A, A_words, (long)(ti + r0 - 1) * 53L + (tj - 1), 18, A_c[r0], 3);
      }
      for (int i = 0; i < i_n; i++) {
#pragma HLS PIPELINE II=1
        // Step 5 (ship): load slice 2 of A_c for this sub-tile.
        tessera_ship_in<4, 256>(A, A_words, (long)(ti + i + 1) * 53L + (tj - 1), 18, A_c[2], 3);
        // Step 3: the innermost intra-tile loop runs a constant 16 iterations (padded), fully unrolled.
        for (int j = 0; j < 16; j++) {
          // Step 4: subscripts redirected into the cache buffers.
          X_l[0][j + 3] = fac * (A_c[0][j + 4] + A_c[2][j + 4] + A_c[1][j + 3] + A_c[1][j + 5]);
        }
        // Step 5 (ship): write back line X_l, trimmed to the real iterations (step 3).
        tessera_ship_out<4, 256>(X, (long)(ti + i) * 53L + tj, j_n, X_l[0], 3);
        // Step 5 (ship): shift A_c by 1 slice along dimension 0; the next sub-tile reuses them.
        for (int r0 = 0; r0 < 2; r0++) {
          for (int r1 = 0; r1 < 24; r1++) {
            A_c[r0][r1] = A_c[r0 + 1][r1];
          }
        }
      }
    }
  }
}

// ---- emulation entry ----
// Emulation entry for tessera_snap: builds the kernel's arguments from the runtime's
// vectors (arrays: memory ports bound to the port descriptors, which carry the
// device buffer and its traffic counters; scalars: value pointers in args).
#include "kernel.cpp"

extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports) {
  tessera_snap(hls::burst_maxi<tessera::wide_t<4, float>>(ports[0]),
    hls::burst_maxi<tessera::wide_t<4, float>>(ports[1]),
    *static_cast<const float *>(args[2]));
}
