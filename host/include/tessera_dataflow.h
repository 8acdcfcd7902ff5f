// Tessera HLS shim: the streaming (dataflow) kernels of mode `dataflow`
// (crates/hls/src/dataflow.rs): hls::stream and the row helpers of their load and
// store processes.
//
// hls::stream<T>: under Vitis (__SYNTHESIS__ / TESSERA_VITIS) Vitis' own from
// <hls_stream.h>; in emulation a minimal one, an unbounded FIFO as Vitis' C simulation
// has (read, write, empty, full, size, >> and <<). The DATAFLOW processes of an
// emulated kernel run one after the other in program order (csim semantics), so a
// FIFO holds everything its producer wrote until its consumer runs. Reading an empty
// stream, or a stream destroyed with data left in it, aborts ("tessera emu: ..."):
// both are generator bugs (Vitis' csim warns about leftover data).
//
// Rows (the innermost dimension of an array, `n` elements from element `e`):
//   tessera_df_request_first<W, SEG>(port, e, n)      the first read burst of a row
//   tessera_df_read_row<W, SEG>(port, e, n, s, e2, n2) the row's DDR words, each read
//        once, in bursts of at most SEG words that never cross a multiple of SEG words
//        (one burst requested ahead: the next of this row, or the first of the next
//        row e2, n2 when n2 > 0); pushes ceil(n / W) stream words, stream word k lane l
//        = element e + k*W + l (lanes beyond n are 0): the row realigned to its first
//        element, whatever its DDR alignment.
//   tessera_df_write_row<W, SEG, PEND>(port, e, n, s, pending)
//        pops ceil(n / W) stream words (same layout) and writes elements e .. e+n-1 as
//        whole DDR words with byte strobes for exactly those elements, bursts as above;
//        at most PEND bursts await their responses (older ones are taken first).
//   tessera_df_write_drain(port, pending)              the remaining responses.
#ifndef TESSERA_DATAFLOW_H
#define TESSERA_DATAFLOW_H

#include "tessera_wide.h"

// TESSERA_PROCESS_STATE: the storage class of the buffers a process keeps over its
// loop (line and plane buffers, rings). Under Vitis `static`: on-chip memory the
// process owns. In emulation `static thread_local`: the emulated device runs a launch
// in the thread that made it, and host threads may launch the same kernel at the same
// time (target regions inside `omp parallel`); with plain `static` they would share
// one buffer and read each other's rows. Generated kernels declare no other static
// data (crates/hls/tests/dataflow.rs checks this for every mode).
#ifdef TESSERA_HLS_VITIS
#define TESSERA_PROCESS_STATE static
#else
#define TESSERA_PROCESS_STATE static thread_local
#endif

#ifdef TESSERA_HLS_VITIS
#include <hls_stream.h>
#else
#include <deque>

namespace hls {

/// An unbounded FIFO (emulation of Vitis' hls::stream, as in C simulation).
template <typename T>
class stream {
  public:
    stream() : name_("stream") {}
    explicit stream(const char *name) : name_(name) {}
    stream(const stream &) = delete;
    stream &operator=(const stream &) = delete;
    ~stream() {
        if (!q_.empty()) tessera::emu::fail("hls::stream %s destroyed with %zu values left in it", name_, q_.size());
    }
    T read() {
        if (q_.empty()) tessera::emu::fail("read from the empty hls::stream %s", name_);
        T v = q_.front();
        q_.pop_front();
        return v;
    }
    void read(T &v) { v = read(); }
    void write(const T &v) { q_.push_back(v); }
    bool empty() const { return q_.empty(); }
    bool full() const { return false; }
    std::size_t size() const { return q_.size(); }
    void operator>>(T &v) { v = read(); }
    void operator<<(const T &v) { write(v); }

  private:
    const char *name_;
    std::deque<T> q_;
};

}  // namespace hls
#endif  // TESSERA_HLS_VITIS

// ⌊a / b⌋ for b > 0.
inline long tessera_df_floor_div(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

// Beats of the burst that starts at `word` and runs to `last` (inclusive) or to the
// next multiple of SEG words, whichever comes first.
template <int SEG>
long tessera_df_burst(long word, long last) {
#pragma HLS INLINE
    const long end = (word / SEG + 1) * SEG;
    return (last + 1 < end ? last + 1 : end) - word;
}

// The first read burst of the row of elements e .. e + n - 1 (n > 0).
template <int W, int SEG, typename P>
void tessera_df_request_first(P port, long e, long n) {
#pragma HLS INLINE
    const long first = tessera_df_floor_div(e, W), last = tessera_df_floor_div(e + n - 1, W);
    port.read_request(first, tessera_df_burst<SEG>(first, last));
}

// Reads the row of elements e .. e + n - 1 (n > 0; its first burst requested) and
// pushes it realigned: ceil(n / W) words, word k lane l = element e + k*W + l. Each
// burst requests the next one first (this row's, or the first of row e2, n2 > 0).
template <int W, int SEG, typename T>
void tessera_df_read_row(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, long n,
                         hls::stream<tessera::wide_t<W, T>> &s, long e2, long n2) {
#pragma HLS INLINE off
    const long first = tessera_df_floor_div(e, W), last = tessera_df_floor_div(e + n - 1, W);
    const int a = static_cast<int>(e - first * W);  // lane of element e in its DDR word
    const long words = (n + W - 1) / W;              // stream words
    tessera::wide_t<W, T> prev = 0;
    for (long b = 0; b <= words; b++) {
#pragma HLS PIPELINE II=1
        const long word = first + b;
        tessera::wide_t<W, T> cur = 0;
        if (word <= last) {
            if (b == 0 || word % SEG == 0) {
                const long next = (word / SEG + 1) * SEG;
                if (next <= last) {
                    port.read_request(next, tessera_df_burst<SEG>(next, last));
                } else if (n2 > 0) {
                    const long f2 = tessera_df_floor_div(e2, W), l2 = tessera_df_floor_div(e2 + n2 - 1, W);
                    port.read_request(f2, tessera_df_burst<SEG>(f2, l2));
                }
            }
            cur = port.read();
        }
        if (b > 0) {
            tessera::wide_t<W, T> out = 0;
            for (int l = 0; l < W; l++) {
#pragma HLS UNROLL
                const long x = (b - 1) * W + l;  // element e + x
                const int from = l + a;
                if (x < n) tessera::set_lane<T>(out, l, from < W ? tessera::get_lane<T>(prev, from) : tessera::get_lane<T>(cur, from - W));
            }
            s.write(out);
        }
        prev = cur;
    }
}

// Pops ceil(n / W) words (word k lane l = element e + k*W + l) and writes elements
// e .. e + n - 1 (n > 0) as whole DDR words with strobes for exactly them; `pending`
// counts the bursts awaiting their responses, at most PEND after each burst.
template <int W, int SEG, int PEND, typename T>
void tessera_df_write_row(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, long n,
                          hls::stream<tessera::wide_t<W, T>> &s, int &pending) {
#pragma HLS INLINE off
    constexpr int S = static_cast<int>(sizeof(T));
    const long first = tessera_df_floor_div(e, W), last = tessera_df_floor_div(e + n - 1, W);
    const int a = static_cast<int>(e - first * W);
    const long words = (n + W - 1) / W;
    tessera::wide_t<W, T> prev = 0;
    for (long b = 0; b <= words; b++) {
#pragma HLS PIPELINE II=1
        const long word = first + b;
        tessera::wide_t<W, T> cur = 0;
        if (b < words) cur = s.read();
        if (word <= last) {
            if (b == 0 || word % SEG == 0) port.write_request(word, tessera_df_burst<SEG>(word, last));
            tessera::wide_t<W, T> beat = 0;
            ap_uint<W * S> strobe = 0;
            for (int m = 0; m < W; m++) {
#pragma HLS UNROLL
                const long x = b * W + m - a;  // element e + x
                if (x >= 0 && x < n) {
                    tessera::set_lane<T>(beat, m, m < a ? tessera::get_lane<T>(prev, W - a + m) : tessera::get_lane<T>(cur, m - a));
                    strobe.range(S * m + S - 1, S * m) = (1u << S) - 1;
                }
            }
            port.write(beat, strobe);
            if (word == last || word % SEG == SEG - 1) {
                pending++;
                if (pending > PEND) {
                    port.write_response();
                    pending--;
                }
            }
        }
        prev = cur;
    }
}

// The responses of the bursts a store process still awaits.
template <typename P>
void tessera_df_write_drain(P port, int &pending) {
#pragma HLS INLINE
    for (; pending > 0; pending--) port.write_response();
}

#endif  // TESSERA_DATAFLOW_H
