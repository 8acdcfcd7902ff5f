// Tessera HLS shim: memory-port types for generated kernels.
//
// One source, two compilers:
//   - Vitis (synthesis: __SYNTHESIS__ defined; or any `v++ -c` of `tessera bitstream`,
//     which passes -D TESSERA_VITIS=1 — needed for sw_emu, where v++ compiles the kernel
//     natively without __SYNTHESIS__): tessera::maxi<T> is exactly `T *` and
//     hls::burst_maxi<T> is Vitis' own class from <hls_burst_maxi.h>, so the kernel's
//     `#pragma HLS INTERFACE mode=m_axi port=p` applies unchanged. TESSERA_HLS_VITIS is
//     defined then.
//   - The emulated device (plain C++17, g++/clang++, `-Wall -Wextra -Werror` clean,
//     pragmas ignored with -Wno-unknown-pragmas): both are classes bound to a device
//     buffer through a tessera_port_desc (tessera_emu_abi.h). Every transaction is
//     bounds-checked and counted exactly into the buffer's tessera_port_stats; AXI
//     rule violations abort with a message on stderr ("tessera emu: ..."); bytes a
//     burst read and a burst write of the same buffer leave unordered are delivered
//     poisoned (burst_port).
//
// Ports:
//   tessera::maxi<T>        plain element-wise m_axi pointer (Vitis' default `T *p`);
//                           p[i] reads/writes one element = one single-beat burst.
//                           maxi<const T> is read-only. Emulation supports p[i],
//                           copies, and maxi<T> -> maxi<const T>; nothing else.
//   hls::burst_maxi<T>      manual bursts, Vitis API: read_request(offset, len),
//                           read(), write_request(offset, len), write(v[, strobe]),
//                           write_response(). Offsets and lengths in units of T.
//   Wide beats (ap_uint<128/256/512>): include tessera_wide.h (needs Xilinx's ap_int.h).
#ifndef TESSERA_HLS_H
#define TESSERA_HLS_H

#if defined(__SYNTHESIS__) || defined(TESSERA_VITIS)
#define TESSERA_HLS_VITIS 1
#endif

#ifdef TESSERA_HLS_VITIS

// Kernels round `a * b + c` twice, as the source says (a fused multiply-add only where
// it calls fma): the emulated device compiles with -ffp-contract=off, and for Vitis'
// clang-based front end this pragma, in effect from here to the end of the kernel's
// translation unit, forbids contraction (not checked against a Vitis installation).
#pragma STDC FP_CONTRACT OFF

#include <hls_burst_maxi.h>

namespace tessera {
/// A plain m_axi pointer port: exactly `T *` for Vitis.
template <typename T>
using maxi = T *;
}  // namespace tessera

#else  // emulation

#include <cstdarg>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <deque>
#include <memory>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tessera_emu_abi.h"

namespace tessera {
namespace emu {

/// Prints "tessera emu: <message>" to stderr and aborts (the emulated device has no
/// way to continue after an illegal memory transaction).
[[noreturn]] inline void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
[[noreturn]] inline void fail(const char *fmt, ...) {
    std::va_list ap;
    va_start(ap, fmt);
    std::fputs("tessera emu: ", stderr);
    std::vfprintf(stderr, fmt, ap);
    std::fputc('\n', stderr);
    va_end(ap);
    std::fflush(stderr);
    std::abort();
}

/// How a beat of type T is stored in memory: `bytes` bytes, little-endian, loaded and
/// stored bit-exactly. The primary template covers trivially copyable types;
/// tessera_wide.h specialises it for ap_uint<W> / ap_int<W> (W / 8 bytes).
template <typename T, typename Enable = void>
struct beat_traits {
    static_assert(std::is_trivially_copyable<T>::value,
                  "tessera: a memory port's element type must be trivially copyable; "
                  "for ap_uint/ap_int beats include tessera_wide.h");
    static constexpr std::size_t bytes = sizeof(T);
    static T load(const unsigned char *p) {
        T v;
        std::memcpy(static_cast<void *>(&v), p, sizeof(T));
        return v;
    }
    static void store(unsigned char *p, const T &v) { std::memcpy(p, static_cast<const void *>(&v), sizeof(T)); }
};

/// Byte-enable masks of hls::burst_maxi::write: bit i enables byte i of the beat.
/// Integers: bit i for i < 64; bytes 64 and up follow bit 63 (so -1 enables all).
/// tessera_wide.h adds ap_int<N> / ap_uint<N> masks (Vitis' type is ap_int<sizeof(T)>).
template <typename M, typename Enable = void>
struct strobe_traits;

template <typename M>
struct strobe_traits<M, typename std::enable_if<std::is_integral<M>::value>::type> {
    static bool bit(const M &m, std::size_t i) {
        const unsigned long long u = static_cast<unsigned long long>(m);
        return ((u >> (i < 64 ? i : 63)) & 1u) != 0;
    }
    /// Whether bytes 0 .. n-1 are all enabled (a shortcut; `bit` decides).
    static bool all(const M &m, std::size_t n) {
        const unsigned long long u = static_cast<unsigned long long>(m);
        if (n >= 64) return ~u == 0;  // bytes 64 and up follow bit 63
        const unsigned long long low = (1ull << n) - 1;
        return (u & low) == low;
    }
};

/// A port object's view of its buffer, checked once when it binds.
struct binding {
    const tessera_port_desc *desc;
    unsigned char *base;
    tessera_port_stats *stats;
    std::size_t beat;   // bytes per element of the port's type
    std::uint64_t n;    // elements of the port's type that overlap the array

    binding(const tessera_port_desc &d, std::size_t beat_bytes, const char *what) : desc(&d), beat(beat_bytes) {
        if (d.abi_version != TESSERA_EMU_ABI_VERSION)
            fail("%s bound to a port descriptor of ABI version %u, this shim is version %u", what, d.abi_version,
                 TESSERA_EMU_ABI_VERSION);
        if (d.base == nullptr || d.stats == nullptr)
            fail("%s bound to argument %u (%s), which is not an array", what, d.index, d.name ? d.name : "?");
        base = static_cast<unsigned char *>(d.base);
        stats = d.stats;
        stats->bound = 1;
        // Element i is addressable when it starts inside the array and ends inside the
        // allocation (a wide beat may cover the array's last elements plus padding).
        const std::uint64_t array_bytes = d.elems * d.elem_size;
        const std::uint64_t whole = array_bytes / beat, fits = d.capacity / beat;
        const std::uint64_t overlap = whole + (array_bytes % beat != 0 ? 1 : 0);
        n = overlap < fits ? overlap : fits;
    }
    const char *name() const { return desc->name ? desc->name : "?"; }
    void trace(std::uint32_t is_write, std::uint64_t off, std::uint64_t bytes) const {
        if (desc->trace) desc->trace(desc->trace_ctx, desc->index, is_write, off, bytes);
    }
};

/// One single-beat read of `beat` bytes at element `i` (bounds-checked, counted).
/// Single accesses (tessera::maxi, the baseline kernels) complete one after the other
/// (Vitis orders a pointer port's accesses itself), so they take no part in
/// burst_port's ordering check and do not count read_after_write: the model charges
/// an in-place baseline its calibrated per-access factor instead.
inline const unsigned char *single_read(const binding &b, long i) {
    if (i < 0 || static_cast<std::uint64_t>(i) >= b.n)
        fail("out-of-bounds read of %s[%ld] (buffer has %llu elements)", b.name(), i,
             static_cast<unsigned long long>(b.n));
    const std::uint64_t off = static_cast<std::uint64_t>(i) * b.beat;
    tessera_port_stats *s = b.stats;
    s->read_bytes += b.beat;
    s->read_bursts += 1;
    s->read_beats += 1;
    s->read_burst_len[1] += 1;
    s->read_exposed += 1;
    b.trace(0, off, b.beat);
    return b.base + off;
}

/// One single-beat write of `beat` bytes at element `i` (bounds-checked, counted).
inline unsigned char *single_write(const binding &b, long i) {
    if (i < 0 || static_cast<std::uint64_t>(i) >= b.n)
        fail("out-of-bounds write of %s[%ld] (buffer has %llu elements)", b.name(), i,
             static_cast<unsigned long long>(b.n));
    const std::uint64_t off = static_cast<std::uint64_t>(i) * b.beat;
    tessera_port_stats *s = b.stats;
    s->write_bytes += b.beat;
    s->write_enabled_bytes += b.beat;
    s->write_bursts += 1;
    s->write_beats += 1;
    s->write_burst_len[1] += 1;
    s->write_exposed += 1;
    b.trace(1, off, b.beat);
    return b.base + off;
}

class burst_port;

/// The hls::burst_maxi port objects bound to one buffer (one descriptor's counters),
/// for the ordering check of burst_port: reads and writes of one buffer, through one
/// port object or several, are not ordered by AXI.
struct buffer_ports {
    std::vector<burst_port *> ports;
};

/// The buffers the calling thread's port objects are bound to, by their counters. A
/// launch runs on one thread (a dataflow kernel's processes are coroutines of it), so
/// every port object of a launch is here; entries go when their last port object does.
inline std::unordered_map<const tessera_port_stats *, buffer_ports> &buffer_registry() {
    static thread_local std::unordered_map<const tessera_port_stats *, buffer_ports> registry;
    return registry;
}

/// The request queues of one hls::burst_maxi port (shared by all copies of it).
///
/// Ordering check (a sanitizer: a kernel correct in emulation must be correct on a
/// board). AXI orders nothing between the read and the write channel of a port, nor
/// between two ports: a read requested while a write of the same bytes awaits its
/// response may return the old or the new data, and a write requested while a read of
/// the same bytes still has beats to deliver may change them. Both are legal AXI, but
/// what the read returns for those bytes is undefined. So, per buffer (every port object
/// bound to it), such bytes are *poisoned*: the bytes a write stored (as far as its
/// strobes enable them) whose response was not taken when a read_request covers them,
/// and the bytes a write stores while a read request has not delivered their beat yet
/// (read() not called for it; a delivered beat cannot change any more), are delivered
/// by that read as 0xA5 bytes — neither the old nor the new data. A kernel that uses
/// them computes a wrong result and fails its bit-exact check; one that discards them
/// (the other row's lanes of a word shared by two rows) is unaffected.
class burst_port {
  public:
    burst_port(const tessera_port_desc &d, std::size_t beat) : b_(d, beat, "hls::burst_maxi") {
        buffer_ = &buffer_registry()[b_.stats];
        buffer_->ports.push_back(this);
    }
    burst_port(const burst_port &) = delete;
    burst_port &operator=(const burst_port &) = delete;

    // At the end of the kernel (the last copy of the port goes away) every request
    // must be complete: on the device an unfinished one would hang or leave the
    // adapter's FIFOs dirty.
    ~burst_port() {
        std::uint64_t unread = 0;
        for (const req &r : reads_) unread += r.len - r.done;
        if (unread != 0)
            fail("the kernel ended with %llu requested beats of %s never read", static_cast<unsigned long long>(unread),
                 b_.name());
        if (!writes_.empty())
            fail("the kernel ended with %zu write bursts on %s without write_response()", writes_.size(), b_.name());
        std::vector<burst_port *> &ps = buffer_->ports;
        ps.erase(std::find(ps.begin(), ps.end(), this));
        if (ps.empty()) buffer_registry().erase(b_.stats);
    }

    void read_request(std::size_t offset, std::size_t len) {
        const std::uint64_t off = check("read_request", offset, len);
        const std::uint64_t end = off + len * b_.beat;
        // Bytes stored by writes whose response was not taken yet: undefined for this read.
        for (burst_port *p : buffer_->ports) {
            for (req &w : p->writes_) {
                // Its later beats may store bytes this read has not delivered yet.
                if (w.off < end && off < w.end(p->b_.beat)) w.race = true;
                w.stored.each([&](std::uint64_t a, std::uint64_t b) {
                    const std::uint64_t lo = std::max(a, off), hi = std::min(b, end);
                    if (lo < hi) poison_.emplace_back(lo, hi);
                });
            }
        }
        tessera_port_stats *s = b_.stats;
        s->read_bursts += 1;
        s->read_beats += len;
        s->read_bytes += len * b_.beat;
        s->read_burst_len[len] += 1;
        if (reads_.empty()) s->read_exposed += 1;  // nothing in flight covers its latency
        if (wrote_) s->read_after_write += 1;      // ordered behind this port's write
        wrote_ = false;
        b_.trace(0, off, len * b_.beat);
        reads_.push_back(req{off, len, 0, {}});
        // The burst's bytes are on their way, as on the device: prefetched into the
        // caches now (a load process requests a burst ahead of the one it reads), so
        // its read() calls do not each wait for memory. Performance only.
        for (std::uint64_t a = off; a < end; a += 64) __builtin_prefetch(b_.base + a, 0, 1);
    }

    const unsigned char *next_read() {
        if (reads_.empty()) fail("read() on %s without an outstanding read_request (or beyond its length)", b_.name());
        req &r = reads_.front();
        const std::uint64_t at = r.next(b_.beat);
        const unsigned char *p = b_.base + at;
        if (++r.done == r.len) reads_.pop_front();
        if (poison_.empty()) return p;
        // Bytes a write changed before this beat was delivered: undefined, delivered
        // as 0xA5 (the beat in a scratch copy); the poison of this beat is consumed.
        bool copied = false;
        const std::uint64_t end = at + b_.beat;
        for (std::size_t k = 0; k < poison_.size();) {
            std::pair<std::uint64_t, std::uint64_t> &q = poison_[k];
            const std::uint64_t lo = std::max(q.first, at), hi = std::min(q.second, end);
            if (lo < hi) {
                if (!copied) {
                    scratch_.assign(p, p + b_.beat);
                    copied = true;
                }
                std::memset(scratch_.data() + (lo - at), 0xA5, hi - lo);
            }
            if (q.second <= end && q.first < end) {
                poison_.erase(poison_.begin() + static_cast<std::ptrdiff_t>(k));
            } else {
                if (q.first < end) q.first = end;
                k++;
            }
        }
        return copied ? scratch_.data() : p;
    }

    /// Before a beat is stored at byte offset `off` (`n` bytes, byte i stored when
    /// `enabled(i)`): poisons those bytes for every read request on the buffer whose
    /// beats covering them were not delivered yet (see the class comment).
    /// `all`: every byte is enabled (the common whole beat; `enabled` is not called).
    template <typename F>
    void guard_write(std::uint64_t off, std::size_t n, bool all, F enabled) {
        // The bytes this beat stores, kept with its request (the one next_write() just
        // served) until the response is taken.
        req *w = last_write_;
        if (w != nullptr && w->off <= off && off < w->end(b_.beat)) {
            enabled_runs(off, off, off + n, all, enabled, [&](std::uint64_t i, std::uint64_t j) { w->stored.add(i, j); });
            // No read of the buffer pending over the burst's bytes when it was requested,
            // and none requested since: nothing to poison (the common case, O(1)).
            if (!w->race) return;
        }
        for (burst_port *p : buffer_->ports) {
            for (const req &r : p->reads_) {
                enabled_runs(off, std::max(r.next(p->b_.beat), off), std::min(r.end(p->b_.beat), off + n), all, enabled,
                             [&](std::uint64_t i, std::uint64_t j) { p->poison_.emplace_back(i, j); });
            }
        }
    }

    void write_request(std::size_t offset, std::size_t len) {
        const std::uint64_t off = check("write_request", offset, len);
        wrote_ = true;
        tessera_port_stats *s = b_.stats;
        s->write_bursts += 1;
        s->write_beats += len;
        s->write_bytes += len * b_.beat;
        s->write_burst_len[len] += 1;
        b_.trace(1, off, len * b_.beat);
        req w{off, len, 0, {}};
        // A read of the buffer with beats still to deliver over this burst's bytes.
        const std::uint64_t end = off + len * b_.beat;
        for (const burst_port *p : buffer_->ports) {
            for (const req &r : p->reads_) {
                if (r.next(p->b_.beat) < end && off < r.end(p->b_.beat)) w.race = true;
            }
        }
        writes_.push_back(std::move(w));
    }

    unsigned char *next_write() {
        // The oldest request that still takes data: requests fill in order, so the
        // filled ones (awaiting their response) are the first `filled_` of writes_.
        if (filled_ < writes_.size()) {
            req &r = writes_[filled_];
            unsigned char *p = b_.base + r.next(b_.beat);
            if (++r.done == r.len) filled_++;
            last_write_ = &r;
            return p;
        }
        fail("write() on %s beyond the requested length (or without a write_request)", b_.name());
    }

    void count_enabled(std::uint64_t bytes) { b_.stats->write_enabled_bytes += bytes; }

    /// The next `len` beats of the read requests into `dst`: exactly `len` calls of
    /// next_read(), in one copy when they lie in the oldest request and nothing is
    /// poisoned (the common case).
    void read_run(unsigned char *dst, std::size_t len) {
        if (poison_.empty() && !reads_.empty() && reads_.front().len - reads_.front().done >= len) {
            req &r = reads_.front();
            std::memcpy(dst, b_.base + r.next(b_.beat), len * b_.beat);
            r.done += len;
            if (r.done == r.len) reads_.pop_front();
            return;
        }
        for (std::size_t i = 0; i < len; i++) std::memcpy(dst + i * b_.beat, next_read(), b_.beat);
    }

    /// `len` whole beats from `src`, every byte enabled, into the oldest requests that
    /// still take data: exactly `len` writes of one beat each, one copy per request
    /// they fall in (one, in the common case). Every whole-beat write goes here.
    void write_run(const unsigned char *src, std::size_t len) {
        const auto all = [](std::size_t) { return true; };
        while (len > 0) {
            if (filled_ == writes_.size())
                fail("write() on %s beyond the requested length (or without a write_request)", b_.name());
            req &r = writes_[filled_];
            const std::size_t k = std::min<std::size_t>(len, r.len - r.done);
            unsigned char *dst = b_.base + r.next(b_.beat);
            const std::size_t n = k * b_.beat;
            r.done += k;
            if (r.done == r.len) filled_++;
            last_write_ = &r;
            guard_write(offset_of(dst), n, true, all);
            std::memcpy(dst, src, n);
            count_enabled(n);
            src += n;
            len -= k;
        }
    }

    void write_response() {
        if (writes_.empty()) fail("write_response() on %s without a write_request", b_.name());
        const req &r = writes_.front();
        if (r.done != r.len)
            fail("write_response() on %s before the burst's %llu beats were written (%llu written)", b_.name(),
                 static_cast<unsigned long long>(r.len), static_cast<unsigned long long>(r.done));
        if (writes_.size() == 1) b_.stats->write_exposed += 1;  // no later write in flight
        if (last_write_ == &writes_.front()) last_write_ = nullptr;
        writes_.pop_front();
        filled_--;
    }

    std::size_t beat() const { return b_.beat; }
    /// The byte offset of `p` (a pointer into the buffer) from its element 0.
    std::uint64_t offset_of(const unsigned char *p) const { return static_cast<std::uint64_t>(p - b_.base); }

  private:
    // Byte ranges [lo, hi), the first kept inline: a write burst's stored bytes are
    // almost always one run, and a heap allocation per burst would dominate the
    // emulation of kernels that write in short bursts.
    struct byte_ranges {
        std::uint64_t lo = 0, hi = 0;                                 // the first run (empty: lo == hi)
        std::vector<std::pair<std::uint64_t, std::uint64_t>> rest;  // the others, in order
        void add(std::uint64_t i, std::uint64_t j) {
            if (rest.empty()) {
                if (lo == hi) {
                    lo = i;
                    hi = j;
                    return;
                }
                if (hi == i) {
                    hi = j;
                    return;
                }
            } else if (rest.back().second == i) {
                rest.back().second = j;
                return;
            }
            rest.emplace_back(i, j);
        }
        template <typename F>
        void each(F f) const {
            if (lo < hi) f(lo, hi);
            for (const std::pair<std::uint64_t, std::uint64_t> &e : rest) f(e.first, e.second);
        }
    };
    struct req {
        std::uint64_t off;   // byte offset of the first beat
        std::uint64_t len;   // beats
        std::uint64_t done;  // beats read / written so far
        byte_ranges stored = {};  // a write's stored byte ranges
        bool race = false;   // a write: a read of the buffer pending over its bytes since its request
        // The byte after its last beat, and its first beat not yet read / written.
        std::uint64_t end(std::uint64_t beat) const { return off + len * beat; }
        std::uint64_t next(std::uint64_t beat) const { return off + done * beat; }
    };

    // Calls run(i, j) for each maximal run [i, j) of bytes in [lo, hi) whose
    // enabled(byte - off) holds (a beat stored at byte offset off); with `all`, every
    // byte's does: one run, [lo, hi) itself.
    template <typename F, typename R>
    static void enabled_runs(std::uint64_t off, std::uint64_t lo, std::uint64_t hi, bool all, F &enabled, R run) {
        if (all) {
            if (lo < hi) run(lo, hi);
            return;
        }
        for (std::uint64_t i = lo; i < hi;) {
            if (!enabled(static_cast<std::size_t>(i - off))) {
                i++;
                continue;
            }
            std::uint64_t j = i;
            while (j < hi && enabled(static_cast<std::size_t>(j - off))) j++;
            run(i, j);
            i = j;
        }
    }

    // Checks one request; returns its byte offset.
    std::uint64_t check(const char *what, std::size_t offset, std::size_t len) const {
        const char *name = b_.name();
        if (len == 0) fail("%s of 0 beats on %s (an AXI burst has 1 to 256 beats)", what, name);
        if (len > TESSERA_AXI_MAX_BURST)
            fail("%s of %zu beats on %s: an AXI burst has at most %u beats", what, len, name, TESSERA_AXI_MAX_BURST);
        if (offset > b_.n || len > b_.n - offset)
            fail("out-of-bounds %s of %s[%zu..%zu) (buffer has %llu elements)", what, name, offset, offset + len,
                 static_cast<unsigned long long>(b_.n));
        const std::uint64_t first = offset * b_.beat, last = (offset + len) * b_.beat - 1;
        if (first / TESSERA_AXI_BOUNDARY != last / TESSERA_AXI_BOUNDARY)
            fail("%s of %s[%zu..%zu) crosses a 4 KiB boundary (bytes %llu..%llu from the buffer's base); "
                 "an AXI burst must not",
                 what, name, offset, offset + len, static_cast<unsigned long long>(first),
                 static_cast<unsigned long long>(last + 1));
        return first;
    }

    binding b_;
    buffer_ports *buffer_;     // the port objects of b_'s buffer (registry entries are stable)
    std::vector<std::pair<std::uint64_t, std::uint64_t>> poison_;  // byte ranges written before delivery
    std::vector<unsigned char> scratch_;                             // a poisoned beat as delivered
    std::deque<req> reads_;    // requested, beats not all read yet
    std::deque<req> writes_;   // requested, response not taken yet
    bool wrote_ = false;       // a write requested since this port's last read request
    req *last_write_ = nullptr;  // the request next_write() served last (deque elements stay put)
    std::size_t filled_ = 0;     // the first writes_, every beat written, await their response
};

}  // namespace emu

template <typename T>
class maxi;

namespace emu {
/// Shared part of maxi<T> and maxi<const T>.
template <typename V>
class maxi_base {
  public:
    using value_type = V;
    explicit maxi_base(const tessera_port_desc &d) : b_(d, beat_traits<V>::bytes, "tessera::maxi") {}
    V load(long i) const { return beat_traits<V>::load(single_read(b_, i)); }
    void store(long i, const V &v) const { beat_traits<V>::store(single_write(b_, i), v); }
    const binding &bound() const { return b_; }

  protected:
    explicit maxi_base(const binding &b) : b_(b) {}
    binding b_;
};
}  // namespace emu

/// A plain m_axi pointer port (emulation): `p[i]` is a proxy that reads on conversion
/// to T and writes on assignment, one single-beat transaction of sizeof(T) bytes each.
template <typename T>
class maxi : public emu::maxi_base<T> {
  public:
    explicit maxi(const tessera_port_desc &d) : emu::maxi_base<T>(d) {}

    class reference {
      public:
        reference(const maxi *p, long i) : p_(p), i_(i) {}
        reference(const reference &) = default;
        operator T() const { return p_->load(i_); }
        reference &operator=(const T &v) {
            p_->store(i_, v);
            return *this;
        }
        // `p[i] = p[j]`: read j, then write i.
        reference &operator=(const reference &o) { return *this = static_cast<T>(o); }

      private:
        const maxi *p_;
        long i_;
    };

    reference operator[](long i) const { return reference(this, i); }
};

/// A read-only m_axi pointer port (emulation): `p[i]` reads one element.
template <typename T>
class maxi<const T> : public emu::maxi_base<T> {
  public:
    explicit maxi(const tessera_port_desc &d) : emu::maxi_base<T>(d) {}
    /// `T *` converts to `const T *`.
    maxi(const maxi<T> &o) : emu::maxi_base<T>(o.bound()) {}
    T operator[](long i) const { return this->load(i); }
};

}  // namespace tessera

namespace hls {

/// Manual AXI bursts (emulation of Vitis' hls::burst_maxi). Offsets and lengths are in
/// units of T, relative to the buffer's element 0. Requests queue up in order; read()
/// returns the beats of the oldest read request, write() fills the oldest write
/// request, write_response() completes the oldest (fully written) write request.
/// Copies share one set of queues, as on the device. Construct from the port
/// descriptor (the emulation entry does); Vitis' `burst_maxi(T *)` has no emulation.
template <typename T>
class burst_maxi {
  public:
    explicit burst_maxi(const tessera_port_desc &d)
        : p_(std::make_shared<tessera::emu::burst_port>(d, tessera::emu::beat_traits<T>::bytes)) {}

    void read_request(std::size_t offset, std::size_t len) { p_->read_request(offset, len); }
    T read() { return tessera::emu::beat_traits<T>::load(p_->next_read()); }

    void write_request(std::size_t offset, std::size_t len) { p_->write_request(offset, len); }
    /// Writes one beat, every byte enabled.
    void write(const T &v) {
        unsigned char tmp[tessera::emu::beat_traits<T>::bytes];
        tessera::emu::beat_traits<T>::store(tmp, v);
        p_->write_run(tmp, 1);
    }
    /// Writes one beat; only bytes whose bit is set in `byteenable_mask` are stored
    /// (Vitis: `ap_int<sizeof(T)> byteenable_mask`, default -1 = all).
    template <typename M>
    void write(const T &v, const M &byteenable_mask) {
        constexpr std::size_t n = tessera::emu::beat_traits<T>::bytes;
        unsigned char tmp[n];
        tessera::emu::beat_traits<T>::store(tmp, v);
        if (tessera::emu::strobe_traits<M>::all(byteenable_mask, n)) {  // the common whole beat
            p_->write_run(tmp, 1);
            return;
        }
        unsigned char *dst = p_->next_write();
        p_->guard_write(p_->offset_of(dst), n, false,
                        [&](std::size_t i) { return tessera::emu::strobe_traits<M>::bit(byteenable_mask, i); });
        std::uint64_t enabled = 0;
        for (std::size_t i = 0; i < n; i++) {
            if (tessera::emu::strobe_traits<M>::bit(byteenable_mask, i)) {
                dst[i] = tmp[i];
                enabled++;
            }
        }
        p_->count_enabled(enabled);
    }
    void write_response() { p_->write_response(); }

    /// Emulation only (no Vitis counterpart): the next `len` beats, as `len` read()
    /// calls, into `dst` (raw bytes; T a wide word).
    void read_beats(unsigned char *dst, std::size_t len) { p_->read_run(dst, len); }
    /// Emulation only: `len` whole beats from `src`, as `len` write(v) calls.
    void write_beats(const unsigned char *src, std::size_t len) { p_->write_run(src, len); }

  private:
    std::shared_ptr<tessera::emu::burst_port> p_;
};

}  // namespace hls

#endif  // TESSERA_HLS_VITIS

#endif  // TESSERA_HLS_H
