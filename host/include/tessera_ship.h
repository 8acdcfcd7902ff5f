// Tessera HLS shim: step 5's data shipment (paper Sec. 4, step 5, and Fig. 6: the
// `ship` macro) between DDR and the kernels' on-chip cache buffers, as wide bursts
// through hls::burst_maxi ports. The optimized kernels (`paper` and `tessera` modes,
// crates/hls/src/tiled/shipping.rs) call these helpers; the code is the same under Vitis and in
// emulation (plain Vitis HLS API, no emulation hooks).
//
// Rules (docs/performance-model.md, "AXI and Vitis HLS rules"):
// - a port beat carries W lanes; lane l of word k is array element k*W + l, so every
//   DDR-side offset and length is a whole number of beats;
// - a burst has at most SEG beats and never crosses a multiple of SEG words, where
//   SEG = min(256, 4096 / beat bytes): at most 256 beats, never across a 4 KiB page
//   (device buffers are 4 KiB aligned);
// - reads skip words outside [0, words) (rows of boundary tiles are clipped); lanes
//   outside the requested elements are dropped (the buffer's alignment halo);
// - writes carry one byte-enable bit per byte, set only for the elements real
//   iterations wrote: halo and padded lanes never reach DDR.
// Every loop has a compile-time trip count (from template arguments), so a ship can sit
// inside a pipelined loop, which unrolls it.
//
//   blocking (paper mode: each burst a full round trip)
//     tessera_ship_in<W, SEG>(port, words, e, n, row, at)   DDR -> row, request and read
//     tessera_ship_out<W, SEG>(port, e, n, row, at)         row -> DDR, each burst waits for its response
//   overlapped (tessera mode)
//     tessera_request_in<W, SEG, LEN>(port, words, e, n)    only the read requests of a row ...
//     tessera_receive_in<W>(port, words, e, n, row, at)     ... and, later, its beats
//     tessera_ship_out_posted<W, SEG, PEND>(port, e, n, row, at, pending)
//                                                           row -> DDR, then the responses of the
//                                                           previous posted row of this port
//     tessera_write_drain<PEND>(port, pending)              the last posted row's responses
//   uncached
//     tessera_nc_read<W>(port, e), tessera_nc_write<W>(port, e, v)
#ifndef TESSERA_SHIP_H
#define TESSERA_SHIP_H

#include "tessera_wide.h"

// ⌊a / b⌋ for b > 0 (row starts left of element 0 have negative words).
inline long tessera_floor_div(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// The most words n <= LEN elements touch, wherever they start.
template <int W, int LEN>
struct tessera_row_beats {
  static constexpr int value = (LEN + 2 * W - 2) / W;
};

// The most bursts one row of n <= LEN elements is split into (4 KiB pages / 256 beats).
template <int W, int SEG, int LEN>
struct tessera_row_bursts {
  static constexpr int value = (tessera_row_beats<W, LEN>::value + SEG - 2) / SEG + 1;
};

// The words (beats) a row of elements e .. e + n - 1 touches, from `first`, and those
// a read may fetch: lo .. hi, clipped to [0, words) (rows of boundary tiles stop at
// the array's ends).
struct tessera_read_words {
  long first, lo, hi;
};

template <int W>
tessera_read_words tessera_read_span(long words, long e, int n) {
#pragma HLS INLINE
  const long first = tessera_floor_div(e, W);
  const long last = tessera_floor_div(e + n - 1, W);
  return {first, first > 0 ? first : 0, last < words - 1 ? last : words - 1};
}

// Beats of the burst that starts at `word` and runs to `hi` (inclusive) or to the
// next multiple of SEG words, whichever comes first.
template <int SEG>
long tessera_burst_beats(long word, long hi) {
#pragma HLS INLINE
  const long end = (word / SEG + 1) * SEG;
  return (hi + 1 < end ? hi + 1 : end) - word;
}

// The lanes of `beat` (word `word`) that hold elements e .. e + n - 1 go to row[at + x]
// for element e + x; the others are dropped.
template <int W, typename T, int LEN>
void tessera_unpack_beat(const tessera::wide_t<W, T> &beat, long word, long e, int n, T (&row)[LEN], int at) {
#pragma HLS INLINE
  for (int l = 0; l < W; l++) {
    const long x = word * W + l - e;
    if (x >= 0 && x < n) row[at + x] = tessera::get_lane<T>(beat, l);
  }
}

// Issues the read requests for array elements e .. e + n - 1: whole beats from word
// floor(e / W), clipped to [0, words), one burst per SEG-word segment. LEN: the
// buffer row's length (bounds n); P: the port, hls::burst_maxi<wide_t<W, T>>.
template <int W, int SEG, int LEN, typename P>
void tessera_request_in(P port, long words, long e, int n) {
#pragma HLS INLINE
  constexpr int BURSTS = tessera_row_bursts<W, SEG, LEN>::value;
  const tessera_read_words r = tessera_read_span<W>(words, e, n);
  long word = r.lo;
  for (int b = 0; b < BURSTS; b++) {
    if (word <= r.hi) {
      const long len = tessera_burst_beats<SEG>(word, r.hi);
      port.read_request(word, len);
      word += len;
    }
  }
}

// Reads the beats tessera_request_in requested for elements e .. e + n - 1 into
// row[at] .. row[at + n - 1] (lanes outside the n elements are dropped).
template <int W, typename T, int LEN>
void tessera_receive_in(hls::burst_maxi<tessera::wide_t<W, T>> port, long words, long e, int n, T (&row)[LEN], int at) {
#pragma HLS INLINE
  constexpr int BEATS = tessera_row_beats<W, LEN>::value;
  const tessera_read_words r = tessera_read_span<W>(words, e, n);
  for (int b = 0; b < BEATS; b++) {
    const long word = r.first + b;
    if (word < r.lo || word > r.hi) continue;
    tessera_unpack_beat<W>(port.read(), word, e, n, row, at);
  }
}

// DDR -> cache buffer row, blocking: array elements e .. e + n - 1 go to row[at] ..
// row[at + n - 1]; each burst is requested when the previous one has been read.
template <int W, int SEG, typename T, int LEN>
void tessera_ship_in(hls::burst_maxi<tessera::wide_t<W, T>> port, long words, long e, int n, T (&row)[LEN], int at) {
#pragma HLS INLINE
  constexpr int BEATS = tessera_row_beats<W, LEN>::value;
  const tessera_read_words r = tessera_read_span<W>(words, e, n);
  for (int b = 0; b < BEATS; b++) {
    const long word = r.first + b;
    if (word < r.lo || word > r.hi) continue;
    if (word == r.lo || word % SEG == 0) port.read_request(word, tessera_burst_beats<SEG>(word, r.hi));
    tessera_unpack_beat<W>(port.read(), word, e, n, row, at);
  }
}

// Writes row[at] .. row[at + n - 1] to array elements e .. e + n - 1 as whole beats
// from word floor(e / W) whose strobes cover exactly those elements; `respond`: wait
// for each burst's response right after its last beat. Returns the bursts issued.
template <int W, int SEG, typename T, int LEN>
int tessera_write_row(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, int n, const T (&row)[LEN], int at, bool respond) {
#pragma HLS INLINE
  constexpr int BEATS = tessera_row_beats<W, LEN>::value;
  const long first = tessera_floor_div(e, W);
  const long last = tessera_floor_div(e + n - 1, W);
  int bursts = 0;
  for (int b = 0; b < BEATS; b++) {
    const long word = first + b;
    if (word > last) continue;
    if (word == first || word % SEG == 0) {
      port.write_request(word, tessera_burst_beats<SEG>(word, last));
      bursts++;
    }
    tessera::wide_t<W, T> beat = 0;
    tessera::strobe_t<W, T> strobe = 0;
    for (int l = 0; l < W; l++) {
      const long x = word * W + l - e;
      if (x >= 0 && x < n) {
        tessera::set_lane<T>(beat, l, row[at + x]);
        tessera::enable_lane<T>(strobe, l);
      }
    }
    port.write(beat, strobe);
    if (respond && (word == last || word + 1 == (word / SEG + 1) * SEG)) port.write_response();
  }
  return bursts;
}

// Cache buffer row -> DDR, blocking (the paper's row structure): each burst waits for
// its write response, so later reads of the same array see the data.
template <int W, int SEG, typename T, int LEN>
void tessera_ship_out(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, int n, const T (&row)[LEN], int at) {
#pragma HLS INLINE
  (void)tessera_write_row<W, SEG>(port, e, n, row, at, true);
}

// Cache buffer row -> DDR, posted: the row's bursts go out, then the kernel waits for
// the responses of this port's previous posted row (`pending` of them, oldest first),
// so a write round trip overlaps the next row's work. Only for arrays the kernel never
// reads (nothing can observe a write before its response). `pending` becomes this
// row's burst count; tessera_write_drain waits for the last ones. PEND bounds the
// bursts of any posted row of the port (so at most 2 * PEND writes are outstanding).
template <int W, int SEG, int PEND, typename T, int LEN>
void tessera_ship_out_posted(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, int n, const T (&row)[LEN], int at,
                             int &pending) {
#pragma HLS INLINE
  static_assert(tessera_row_bursts<W, SEG, LEN>::value <= PEND, "PEND must bound the bursts of every posted row");
  const int older = pending;
  pending = tessera_write_row<W, SEG>(port, e, n, row, at, false);
  for (int r = 0; r < PEND; r++) {
    if (r < older) port.write_response();
  }
}

// The responses of the last posted row of a port (at most PEND of them).
template <int PEND, typename P>
void tessera_write_drain(P port, int &pending) {
#pragma HLS INLINE
  for (int r = 0; r < PEND; r++) {
    if (r < pending) port.write_response();
  }
  pending = 0;
}

// An uncached (nc) read of array element e: one single-beat burst.
template <int W, typename T>
T tessera_nc_read(hls::burst_maxi<tessera::wide_t<W, T>> port, long e) {
#pragma HLS INLINE
  port.read_request(e / W, 1);
  return tessera::get_lane<T>(port.read(), static_cast<int>(e % W));
}

// An uncached (nc) write of array element e: one single-beat burst whose strobe enables
// that element's bytes only, then its write response.
template <int W, typename T>
void tessera_nc_write(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, T v) {
#pragma HLS INLINE
  const int lane = static_cast<int>(e % W);
  tessera::wide_t<W, T> beat = 0;
  tessera::set_lane<T>(beat, lane, v);
  tessera::strobe_t<W, T> strobe = 0;
  tessera::enable_lane<T>(strobe, lane);
  port.write_request(e / W, 1);
  port.write(beat, strobe);
  port.write_response();
}

#endif  // TESSERA_SHIP_H
