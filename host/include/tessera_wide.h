// Tessera HLS shim: wide memory beats (ap_uint<128/256/512>) and bit-exact packing.
//
// Include this (instead of, or after, tessera_hls.h) in kernels whose ports carry
// wide words. It needs Xilinx's arbitrary-precision headers (<ap_int.h>): Vitis' own
// under synthesis; in emulation the copy shipped by the PyPI package hls4ml, which the
// runtime puts on the include path (-isystem) for every kernel that mentions this
// header. Kernels that do not include it compile without the vendor headers.
//
//   tessera::wide_t<N, T>             ap_uint<N * 8 * sizeof(T)>, e.g. wide_t<16, float> = ap_uint<512>
//   tessera::get_lane<T>(w, i)        lane i (bits [L*i, L*i+L), L = 8*sizeof(T)) of w as a T
//   tessera::set_lane(w, i, v)        stores v's bits into lane i of w
//   tessera::pack(v)                  T v[N] -> ap_uint<N*8*sizeof(T)>, lane i = v[i]
//   tessera::unpack(w, v)             the inverse, into T v[N]
//   tessera::pack_from<N>(p)          same from N elements at p
//   tessera::unpack_to(w, p)          same into W / (8*sizeof(T)) elements at p
//
// Lane 0 is the least significant: on the little-endian AXI bus (and the host) lane i
// of a beat is the element at byte offset i*sizeof(T), so a packed beat holds the
// array's elements in memory order. Every conversion is a bit copy (no value
// conversion): NaN payloads, -0.0 and denormals survive.
#ifndef TESSERA_WIDE_H
#define TESSERA_WIDE_H

// The vendor headers read uninitialised words on purpose (ap_private's default
// constructor masks whatever is there); g++ reports that from inlined code even under
// -isystem, so those two warnings are off for the vendor headers' lines only.
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <ap_int.h>
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

#include <cstdint>
#include <cstring>

#include "tessera_hls.h"

namespace tessera {
namespace detail {

template <std::size_t B>
struct uint_of;
template <>
struct uint_of<1> {
    typedef std::uint8_t type;
};
template <>
struct uint_of<2> {
    typedef std::uint16_t type;
};
template <>
struct uint_of<4> {
    typedef std::uint32_t type;
};
template <>
struct uint_of<8> {
    typedef std::uint64_t type;
};

/// The bits of `f` as a `To` of the same size.
template <typename To, typename From>
inline To bit_cast(const From &f) {
    static_assert(sizeof(To) == sizeof(From), "tessera::detail::bit_cast: sizes differ");
#ifdef __SYNTHESIS__
    union {
        From from;
        To to;
    } u;
    u.from = f;
    return u.to;
#else
    To t;
    std::memcpy(static_cast<void *>(&t), static_cast<const void *>(&f), sizeof(To));
    return t;
#endif
}

}  // namespace detail

/// A beat of N lanes of T.
template <int N, typename T>
using wide_t = ap_uint<N * 8 * static_cast<int>(sizeof(T))>;

/// Lane `i` of `w` as a T (bit copy).
template <typename T, int W>
inline T get_lane(const ap_uint<W> &w, int i) {
#pragma HLS INLINE
    constexpr int L = 8 * static_cast<int>(sizeof(T));
    static_assert(W % L == 0, "tessera::get_lane: the word is not a whole number of lanes");
    typedef typename detail::uint_of<sizeof(T)>::type U;
    const ap_uint<L> bits = w.range(L * i + L - 1, L * i);
    return detail::bit_cast<T>(static_cast<U>(bits.to_uint64()));
}

/// Stores the bits of `v` into lane `i` of `w`.
template <typename T, int W>
inline void set_lane(ap_uint<W> &w, int i, T v) {
#pragma HLS INLINE
    constexpr int L = 8 * static_cast<int>(sizeof(T));
    static_assert(W % L == 0, "tessera::set_lane: the word is not a whole number of lanes");
    typedef typename detail::uint_of<sizeof(T)>::type U;
    const ap_uint<L> bits = detail::bit_cast<U>(v);
    w.range(L * i + L - 1, L * i) = bits;
}

/// N elements at `v` as one word, element 0 in lane 0.
template <int N, typename T>
inline wide_t<N, T> pack_from(const T *v) {
#pragma HLS INLINE
    wide_t<N, T> w = 0;
    for (int i = 0; i < N; i++) {
#pragma HLS UNROLL
        set_lane<T>(w, i, v[i]);
    }
    return w;
}

/// `T v[N]` as one word, v[0] in lane 0.
template <typename T, int N>
inline wide_t<N, T> pack(const T (&v)[N]) {
#pragma HLS INLINE
    return pack_from<N, T>(v);
}

/// The lanes of `w` into W / (8 * sizeof(T)) elements at `v`.
template <typename T, int W>
inline void unpack_to(const ap_uint<W> &w, T *v) {
#pragma HLS INLINE
    constexpr int N = W / (8 * static_cast<int>(sizeof(T)));
    static_assert(W % (8 * static_cast<int>(sizeof(T))) == 0, "tessera::unpack_to: not a whole number of lanes");
    for (int i = 0; i < N; i++) {
#pragma HLS UNROLL
        v[i] = get_lane<T>(w, i);
    }
}

/// The lanes of `w` into `T v[N]`; W must be N * 8 * sizeof(T).
template <typename T, int N, int W>
inline void unpack(const ap_uint<W> &w, T (&v)[N]) {
#pragma HLS INLINE
    static_assert(W == N * 8 * static_cast<int>(sizeof(T)), "tessera::unpack: word and array sizes differ");
    unpack_to<T, W>(w, v);
}

#ifndef TESSERA_HLS_VITIS  // the emulated device's beat and strobe traits
namespace emu {

/// ap_uint<W> / ap_int<W> beats: W / 8 bytes, little-endian, 64 bits at a time.
template <typename A, int W>
struct ap_beat_traits {
    static_assert(W % 8 == 0, "tessera: a memory beat must be a whole number of bytes");
    static constexpr std::size_t bytes = W / 8;
    static A load(const unsigned char *p) {
        A v = 0;
        for (int lo = 0; lo < W; lo += 64) {
            const int n = (W - lo) >= 64 ? 8 : (W - lo) / 8;
            std::uint64_t chunk = 0;
            std::memcpy(&chunk, p + lo / 8, static_cast<std::size_t>(n));
            v.range(lo + 8 * n - 1, lo) = ap_uint<64>(chunk);
        }
        return v;
    }
    static void store(unsigned char *p, const A &v) {
        for (int lo = 0; lo < W; lo += 64) {
            const int n = (W - lo) >= 64 ? 8 : (W - lo) / 8;
            const std::uint64_t chunk = v.range(lo + 8 * n - 1, lo).to_uint64();
            std::memcpy(p + lo / 8, &chunk, static_cast<std::size_t>(n));
        }
    }
};

template <int W>
struct beat_traits<ap_uint<W>> : ap_beat_traits<ap_uint<W>, W> {};
template <int W>
struct beat_traits<ap_int<W>> : ap_beat_traits<ap_int<W>, W> {};

/// ap_int<N> masks (Vitis' `ap_int<sizeof(T)> byteenable_mask`): bit i; bytes beyond
/// N follow the sign bit. ap_uint<N> masks: bytes beyond N are disabled.
template <int N>
struct strobe_traits<ap_int<N>> {
    static bool bit(const ap_int<N> &m, std::size_t i) {
        return m[static_cast<int>(i < static_cast<std::size_t>(N) ? i : static_cast<std::size_t>(N - 1))] != 0;
    }
};
template <int N>
struct strobe_traits<ap_uint<N>> {
    static bool bit(const ap_uint<N> &m, std::size_t i) {
        return i < static_cast<std::size_t>(N) && m[static_cast<int>(i)] != 0;
    }
};

}  // namespace emu
#endif  // TESSERA_HLS_VITIS

}  // namespace tessera

#endif  // TESSERA_WIDE_H
