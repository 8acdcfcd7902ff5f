// Tessera kernel tessera_red
// Region: sum1d.c:6:1 in sum1d(), `#pragma omp target teams distribute parallel for`.
// Mode: tessera — the optimized kernel of Mayer, Brandner, Philippsen (IMPACT 2024)
// with overlapped shipment (rows of read-only arrays prefetched one iteration ahead,
// rows of write-only arrays posted, their responses awaited one row later);
// steps 1-4 planned by tessera-poly, step 5 printed here:
//   step 1: tile sizes SZ = (8)
//   step 2: intra-tile loop order (i); cache buffers x_f (full)
//   step 3: δ = (0, -ti); loop i padded to 8 iterations
//   step 4: subscripts redirected into the buffers (alignment halo included)
//   step 5: buffers, pragmas and data shipment in bursts of 4-element beats (128 bit)
// Multi-dimensional arrays are flat, row-major; every implicit conversion of the
// source is an explicit cast, so results match the host bit for bit.

#include "tessera_wide.h"
#include "tessera_ship.h"

extern "C" void tessera_red(tessera::maxi<float> s_port, hls::burst_maxi<tessera::wide_t<4, float>> x, int n) {
#pragma HLS INTERFACE mode=m_axi port=x offset=slave bundle=gmem0 max_read_burst_length=256 max_write_burst_length=256
#pragma HLS INTERFACE mode=m_axi port=s_port offset=slave bundle=gmem1
#pragma HLS INTERFACE mode=s_axilite port=n
#pragma HLS INTERFACE mode=s_axilite port=return
  // Array sizes in beats: reads never go beyond an array's last beat.
  const long x_words = ((long)n + 3) / 4;
  // reduction(+: s): the private copy starts at the identity, accumulated in the loop's order (the tiling keeps it).
  float s = 0.0f;
  // Steps 1 and 3: inter-tile loops (δ^o = -lb: the first tile starts at the lower bound).
  for (int ti = 0; ti < n; ti += 8) {
#pragma HLS PIPELINE II=1
    // Step 3: real iterations per intra-tile loop in this tile (the last tile may be partial or padded).
    const int i_n = n - ti < 8 ? n - ti : 8;
    // Step 2: full buffer of x, box (8) at (ti); 0 + 0 alignment halo lanes (step 5).
    float x_f[8];
#pragma HLS ARRAY_PARTITION variable=x_f type=complete dim=0
    // Step 5 (ship): fill x_f before the tile.
    // (every row requested first, then the beats read: the round trips overlap)
    tessera_request_in<4, 256, 8>(x, x_words, (long)ti, 8);
    tessera_receive_in<4>(x, x_words, (long)ti, 8, x_f, 0);
    // Step 3: the innermost intra-tile loop runs a constant 8 iterations (padded), fully unrolled.
    for (int i = 0; i < 8; i++) {
      // Step 4: subscripts redirected into the cache buffers.
      // Step 3: padded iterations never accumulate (guard).
      if (i < i_n) {
        s = s + x_f[i];
      }
    }
  }
  // reduction(+: s): the original value combined with the private copy.
  float s_orig = s_port[0];
  s_port[0] = (float)(s_orig + s);
}

// ---- emulation entry ----
// Emulation entry for tessera_red: builds the kernel's arguments from the runtime's
// vectors (arrays: memory ports bound to the port descriptors, which carry the
// device buffer and its traffic counters; scalars: value pointers in args).
#include "kernel.cpp"

extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports) {
  tessera_red(tessera::maxi<float>(ports[0]),
    hls::burst_maxi<tessera::wide_t<4, float>>(ports[1]),
    *static_cast<const int *>(args[2]));
}
