// Tessera kernel tessera_red
// Region: checksum2d.c:8:1 in checksum2d(), `#pragma omp target teams distribute parallel for`.
// Mode: tessera — the optimized kernel of Mayer, Brandner, Philippsen (IMPACT 2024)
// with overlapped shipment (rows of read-only arrays prefetched one iteration ahead,
// rows of write-only arrays posted, their responses awaited one row later);
// steps 1-4 planned by tessera-poly, step 5 printed here:
//   step 1: tile sizes SZ = (5, 8)
//   step 2: intra-tile loop order (i, j); cache buffers img_c (chunk)
//   step 3: δ = (0, -ti, 0, -tj); loop j padded to 8 iterations
//   step 4: subscripts redirected into the buffers (alignment halo included)
//   step 5: buffers, pragmas and data shipment in bursts of 4-element beats (128 bit)
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.

#include "tessera_wide.h"
#include "tessera_ship.h"

extern "C" void tessera_red(tessera::maxi<long> t_port, tessera::maxi<unsigned int> h_port, tessera::maxi<int> p_port, hls::burst_maxi<tessera::wide_t<4, int>> img, int n, int m) {
#pragma HLS INTERFACE mode=m_axi port=img offset=slave bundle=gmem0 max_read_burst_length=256 max_write_burst_length=256
#pragma HLS INTERFACE mode=m_axi port=t_port offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=m_axi port=h_port offset=slave bundle=gmem2
#pragma HLS INTERFACE mode=m_axi port=p_port offset=slave bundle=gmem3
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=m
#pragma HLS INTERFACE mode=s_axilite port=return
  // Array sizes in beats: reads never go beyond an array's last beat.
  const long img_words = ((long)n * m + 3) / 4;
  // reduction(+: t): the private copy starts at the identity, accumulated in the tiles' order (exact in any order).
  long t = 0L;
  // reduction(^: h): the private copy starts at the identity, accumulated in the tiles' order (exact in any order).
  unsigned int h = 0U;
  // reduction(max: p): the private copy starts at the identity, accumulated in the tiles' order (exact in any order).
  int p = (-2147483647 - 1);
  // Steps 1 and 3: inter-tile loops (δ^o = -lb: the first tile starts at the lower bound).
  for (int ti = 0; ti < n; ti += 5) {
    for (int tj = 0; tj < m; tj += 8) {
      // Step 3: real iterations per intra-tile loop in this tile (the last tile may be partial or padded).
      const int i_n = n - ti < 5 ? n - ti : 5;
      const int j_n = m - tj < 8 ? m - tj : 8;
      // Step 2: chunk buffer of img, box (1, 8) at (ti + i, tj); 3 + 1 alignment halo lanes (step 5).
      int img_c[1][12];
#pragma HLS ARRAY_PARTITION variable=img_c type=complete dim=0
      // Step 5 (ship, tessera): request slice 0 of img_c for the first sub-tile (prefetch).
      tessera_request_in<4, 256, 12>(img, img_words, (long)ti * m + tj, 8);
      for (int i = 0; i < i_n; i++) {
#pragma HLS PIPELINE II=1
        // Step 5 (ship, tessera): request slice 0 of img_c for the next sub-tile, then read this sub-tile's (requested one iteration earlier).
        if (i + 1 < i_n) {
          tessera_request_in<4, 256, 12>(img, img_words, (long)(ti + i + 1) * m + tj, 8);
        }
        tessera_receive_in<4>(img, img_words, (long)(ti + i) * m + tj, 8, img_c[0], 3);
        // Step 3: the innermost intra-tile loop runs a constant 8 iterations (padded), fully unrolled.
        for (int j = 0; j < 8; j++) {
          // Step 4: subscripts redirected into the cache buffers.
          // Step 3: padded iterations never accumulate (guard).
          if (j < j_n) {
            t = t + (long)img_c[0][j + 3];
          }
          // Step 3: padded iterations never accumulate (guard).
          if (j < j_n) {
            h = h ^ ((unsigned int)img_c[0][j + 3] * 2654435761U);
          }
          // Step 3: padded iterations never accumulate (guard).
          if (j < j_n) {
            if (img_c[0][j + 3] > p) {
              p = img_c[0][j + 3];
            }
          }
        }
      }
    }
  }
  // reduction(+: t): the original value combined with the private copy.
  long t_orig = t_port[0];
  t_port[0] = (long)(t_orig + t);
  // reduction(^: h): the original value combined with the private copy.
  unsigned int h_orig = h_port[0];
  h_port[0] = (unsigned int)(h_orig ^ h);
  // reduction(max: p): the original value combined with the private copy.
  int p_orig = p_port[0];
  p_port[0] = p_orig > p ? p_orig : p;
}

// ---- emulation entry ----
// Emulation entry for tessera_red: builds the kernel's arguments from the runtime's
// vectors (arrays: memory ports bound to the port descriptors, which carry the
// device buffer and its traffic counters; scalars: value pointers in args).
#include "kernel.cpp"

extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports) {
  tessera_red(tessera::maxi<long>(ports[0]),
    tessera::maxi<unsigned int>(ports[1]),
    tessera::maxi<int>(ports[2]),
    hls::burst_maxi<tessera::wide_t<4, int>>(ports[3]),
    *static_cast<const int *>(args[4]),
    *static_cast<const int *>(args[5]));
}
