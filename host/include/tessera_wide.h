// Tessera HLS shim: wide memory beats (ap_uint<128/256/512>) and bit-exact packing.
//
// Include this (instead of, or after, tessera_hls.h) in kernels whose ports carry
// wide words. It needs Xilinx's arbitrary-precision headers (<ap_int.h>): Vitis' own
// under synthesis; in emulation the copy shipped by the PyPI package hls4ml, which the
// runtime puts on the include path (-isystem) for every kernel that mentions this
// header. Kernels that do not include it compile without the vendor headers.
//
//   tessera::wide_t<N, T>             ap_uint<N * 8 * sizeof(T)>, e.g. wide_t<16, float> = ap_uint<512>
//                                     (in emulation a native word of the same bytes, below)
//   tessera::get_lane<T>(w, i)        lane i (bits [L*i, L*i+L), L = 8*sizeof(T)) of w as a T
//   tessera::window_lane<T>(win, p)   lane p of an array of words win: lane p % L of word p / L
//   tessera::set_lane(w, i, v)        stores v's bits into lane i of w
//   tessera::strobe_t<N, T>           a byte-enable mask of a wide_t<N, T> beat (ap_uint<N*sizeof(T)>)
//   tessera::enable_lane<T>(m, i)     enables lane i's bytes in m
//   tessera::pack(v)                  T v[N] -> ap_uint<N*8*sizeof(T)>, lane i = v[i]
//   tessera::unpack(w, v)             the inverse, into T v[N]
//   tessera::pack_from<N>(p)          same from N elements at p
//   tessera::unpack_to(w, p)          same into W / (8*sizeof(T)) elements at p
//
// Lane 0 is the least significant: on the little-endian AXI bus (and the host) lane i
// of a beat is the element at byte offset i*sizeof(T), so a packed beat holds the
// array's elements in memory order. Every conversion is a bit copy (no value
// conversion): NaN payloads, -0.0 and denormals survive.
//
// Emulation speed: ap_uint<512>'s arbitrary-precision shifts and range assignments
// cost about a hundred instructions per lane access, which made the emulated device
// tens of times slower than the loop on the host. In emulation (not under Vitis)
// wide_t<N, T> and strobe_t<N, T> are therefore native types holding the same bytes
// (tessera::emu::word, tessera::emu::byte_mask): lane i is still the bytes at offset
// i*sizeof(T), every lane access is a memcpy the compiler turns into one load or
// store, and a word converts to and from the ap_uint of its width bit for bit. The
// ap_uint overloads stay for code that uses ap_uint beats directly.
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

/// Enables the bytes of lane `i` (of T) in an ap_uint mask (Vitis' strobe_t; in
/// emulation for code that uses ap_uint masks directly).
template <typename T, int B>
inline void enable_lane(ap_uint<B> &m, int i) {
#pragma HLS INLINE
    constexpr int S = static_cast<int>(sizeof(T));
    m.range(S * i + S - 1, S * i) = (1u << S) - 1;
}

#ifdef TESSERA_HLS_VITIS
/// A beat of N lanes of T.
template <int N, typename T>
using wide_t = ap_uint<N * 8 * static_cast<int>(sizeof(T))>;

/// A byte-enable mask of a wide_t<N, T> beat (Vitis' burst_maxi::write mask).
template <int N, typename T>
using strobe_t = ap_uint<N * static_cast<int>(sizeof(T))>;

#else
namespace emu {

/// The alignment of a B-byte word: the largest power of two dividing B, at most 64.
constexpr int word_align(int b) { return (b % 64 == 0) ? 64 : (b & -b); }

/// B bytes of a memory beat, little-endian (emulation's wide_t): the bytes of the
/// ap_uint<8 * B> it stands for, in memory order. Zero when default-constructed.
template <int B>
struct alignas(word_align(B)) word {
    static_assert(B > 0, "tessera::emu::word: a beat has at least one byte");
    unsigned char b[B];
    word() { std::memset(b, 0, B); }
    /// Only 0 (the generated code's `wide_t<N, T> w = 0`).
    word(int zero) {
        if (zero != 0) fail("tessera::wide_t constructed from %d (only 0 is meaningful)", zero);
        std::memset(b, 0, B);
    }
    /// The same bits as an ap_uint (bit 8*k + j = bit j of byte k).
    template <int W>
    word(const ap_uint<W> &v) {
        static_assert(W == 8 * B, "tessera::emu::word: converted from an ap_uint of another width");
        for (int k = 0; k < B; k++) b[k] = static_cast<unsigned char>(v.range(8 * k + 7, 8 * k).to_uint64());
    }
    template <int W>
    operator ap_uint<W>() const {
        static_assert(W == 8 * B, "tessera::emu::word: converted to an ap_uint of another width");
        ap_uint<W> v = 0;
        for (int k = 0; k < B; k++) v.range(8 * k + 7, 8 * k) = ap_uint<8>(b[k]);
        return v;
    }
    bool operator==(const word &o) const { return std::memcmp(b, o.b, B) == 0; }
    bool operator!=(const word &o) const { return !(*this == o); }
};
static_assert(sizeof(word<4>) == 4 && sizeof(word<64>) == 64 && sizeof(word<128>) == 128 && sizeof(word<24>) == 24,
              "tessera::emu::word: exactly its bytes, no padding");

/// A byte-enable mask of B bytes (emulation's strobe_t): bit i enables byte i.
template <int B>
struct byte_mask {
    std::uint64_t bits[(B + 63) / 64];
    byte_mask() { std::memset(bits, 0, sizeof bits); }
    /// 0 (nothing enabled) or -1 (everything), as with an ap_int mask.
    byte_mask(int v) {
        if (v != 0 && v != -1) fail("tessera::strobe_t constructed from %d (only 0 or -1 are meaningful)", v);
        std::memset(bits, v == 0 ? 0 : 0xff, sizeof bits);
    }
    bool bit(std::size_t i) const { return i < static_cast<std::size_t>(B) && ((bits[i / 64] >> (i % 64)) & 1u) != 0; }
};

}  // namespace emu

/// A beat of N lanes of T (emulation: the same bytes as Vitis' ap_uint<N * 8 * sizeof(T)>).
template <int N, typename T>
using wide_t = emu::word<N * static_cast<int>(sizeof(T))>;

/// A byte-enable mask of a wide_t<N, T> beat.
template <int N, typename T>
using strobe_t = emu::byte_mask<N * static_cast<int>(sizeof(T))>;

/// Enables the bytes of lane `i` (of T) in `m`.
template <typename T, int B>
inline void enable_lane(emu::byte_mask<B> &m, int i) {
    constexpr std::size_t S = sizeof(T);
    static_assert(S == 1 || S == 2 || S == 4 || S == 8, "tessera::enable_lane: lanes of 1, 2, 4 or 8 bytes");
    // Bits S*i .. S*i+S-1, one per byte of the lane; they never straddle two 64-bit words.
    const std::size_t k = S * static_cast<std::size_t>(i);
    m.bits[k / 64] |= ((std::uint64_t(1) << S) - 1) << (k % 64);
}

/// Lane `i` of `w` as a T (bit copy).
template <typename T, int B>
inline T get_lane(const emu::word<B> &w, int i) {
    static_assert(B % static_cast<int>(sizeof(T)) == 0, "tessera::get_lane: the word is not a whole number of lanes");
    T v;
    std::memcpy(static_cast<void *>(&v), w.b + static_cast<std::size_t>(i) * sizeof(T), sizeof(T));
    return v;
}

/// Lane `pos` of a window of consecutive words starting at `win` (lane pos % L of word
/// pos / L, L the lanes per word): the words' bytes are contiguous, so one copy from
/// byte pos * sizeof(T), which the compiler vectorises across consecutive lanes. The
/// window is an array of words or, emulation only, a run of words in a line buffer.
template <typename T, int B>
inline T window_lane(const emu::word<B> *win, int pos) {
    static_assert(B % static_cast<int>(sizeof(T)) == 0, "tessera::window_lane: the word is not a whole number of lanes");
    T v;
    std::memcpy(static_cast<void *>(&v), reinterpret_cast<const unsigned char *>(win) + static_cast<std::size_t>(pos) * sizeof(T),
                sizeof(T));
    return v;
}

/// Stores the bits of `v` into lane `i` of `w`.
template <typename T, int B>
inline void set_lane(emu::word<B> &w, int i, T v) {
    static_assert(B % static_cast<int>(sizeof(T)) == 0, "tessera::set_lane: the word is not a whole number of lanes");
    std::memcpy(w.b + static_cast<std::size_t>(i) * sizeof(T), static_cast<const void *>(&v), sizeof(T));
}

/// The lanes of `w` into B / sizeof(T) elements at `v`.
template <typename T, int B>
inline void unpack_to(const emu::word<B> &w, T *v) {
    static_assert(B % static_cast<int>(sizeof(T)) == 0, "tessera::unpack_to: not a whole number of lanes");
    std::memcpy(static_cast<void *>(v), w.b, B);
}

/// The lanes of `w` into `T v[N]`; B must be N * sizeof(T).
template <typename T, int N, int B>
inline void unpack(const emu::word<B> &w, T (&v)[N]) {
    static_assert(B == N * static_cast<int>(sizeof(T)), "tessera::unpack: word and array sizes differ");
    unpack_to<T, B>(w, v);
}
#endif  // TESSERA_HLS_VITIS

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

/// Lane `pos` of a window of N consecutive words: lane pos % L of word pos / L, L the
/// lanes per word.
template <typename T, int N, int W>
inline T window_lane(const ap_uint<W> (&win)[N], int pos) {
#pragma HLS INLINE
    constexpr int L = W / (8 * static_cast<int>(sizeof(T)));
    return get_lane<T>(win[pos / L], pos % L);
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

/// Native words: their bytes.
template <int B>
struct beat_traits<word<B>> {
    static constexpr std::size_t bytes = B;
    static word<B> load(const unsigned char *p) {
        word<B> v;
        std::memcpy(v.b, p, B);
        return v;
    }
    static void store(unsigned char *p, const word<B> &v) { std::memcpy(p, v.b, B); }
};

template <int B>
struct strobe_traits<byte_mask<B>> {
    static bool bit(const byte_mask<B> &m, std::size_t i) { return m.bit(i); }
    static bool all(const byte_mask<B> &m, std::size_t n) {
        if (n > static_cast<std::size_t>(B)) return false;
        for (std::size_t k = 0; k < n / 64; k++)
            if (~m.bits[k] != 0) return false;
        const std::size_t rest = n % 64;
        const std::uint64_t low = rest == 0 ? 0 : (std::uint64_t(1) << rest) - 1;
        return (m.bits[n / 64 < (B + 63) / 64 ? n / 64 : 0] & low) == low;
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
    static bool all(const ap_int<N> &m, std::size_t n) {
        for (std::size_t i = 0; i < n; i++)
            if (!bit(m, i)) return false;
        return true;
    }
};
template <int N>
struct strobe_traits<ap_uint<N>> {
    static bool bit(const ap_uint<N> &m, std::size_t i) {
        return i < static_cast<std::size_t>(N) && m[static_cast<int>(i)] != 0;
    }
    static bool all(const ap_uint<N> &m, std::size_t n) {
        for (std::size_t i = 0; i < n; i++)
            if (!bit(m, i)) return false;
        return true;
    }
};

}  // namespace emu
#endif  // TESSERA_HLS_VITIS

}  // namespace tessera

#endif  // TESSERA_WIDE_H
