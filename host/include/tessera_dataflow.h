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
// An array interleaved over two DDR banks (tessera_ir::manifest::Interleave) has two
// ports, p0 and p1: segment k of SEG words (words [k*SEG, (k+1)*SEG) of the array)
// is reached through port k % 2 at word (k / 2) * SEG + word % SEG. Every burst lies in
// one segment, so in one port; the `2` helpers (request_first2, read_row2, write_row2)
// move the same rows as the ones above, each burst through its segment's port, and
// count the write responses each port awaits separately (pending0, pending1).
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
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>
#if defined(__linux__)
#include <sys/mman.h>
#endif
#if !defined(__x86_64__) || defined(TESSERA_EMU_UCONTEXT)
#define TESSERA_EMU_USE_UCONTEXT 1
#include <ucontext.h>
#endif

// ---------------------------------------------------------------------------------
// Emulation of a DATAFLOW region (tessera::emu::dataflow). Two schedules, both
// bit-exact (every process computes the same values in the same order):
//   - concurrent (default): the processes run as coroutines of the launching thread,
//     each on its own stack; a process that reads an empty stream, or writes a stream
//     holding its declared depth (hls::stream<T, DEPTH>), yields to the next one, as
//     the hardware processes stall on their FIFOs. Streams never hold more than their
//     depth, so the data stays in the CPU's caches, and a depth too small for the
//     processes' order is found as a deadlock (every process waiting), reported with
//     what each one waits for.
//   - sequential (TESSERA_EMU_DATAFLOW=sequential): Vitis' C simulation: the
//     processes run one after the other, streams unbounded.
// Every stream's peak occupancy is recorded; the runtime reads them after a launch
// (tessera_emu_streams_take, tessera_emu_abi.h) and puts them in its report.
// Context switches: a few instructions of assembly on x86-64 (callee-saved registers
// and the stack pointer); elsewhere, or with TESSERA_EMU_UCONTEXT, POSIX ucontext.
// ---------------------------------------------------------------------------------

#ifndef TESSERA_EMU_USE_UCONTEXT
// void tessera_emu_switch(void **save_sp, void *load_sp): saves the callee-saved
// registers on the current stack and its pointer in *save_sp, then resumes the
// context whose stack pointer is load_sp. tessera_emu_start: the first code a new
// process runs (r12: its argument, r13: the function to call; never returns).
// In a COMDAT group, so several translation units may include this header.
__asm__(
    ".pushsection .text.tessera_emu_switch,\"axG\",@progbits,tessera_emu_switch,comdat\n"
    ".weak tessera_emu_switch\n"
    ".hidden tessera_emu_switch\n"
    ".type tessera_emu_switch,@function\n"
    "tessera_emu_switch:\n"
    "  pushq %rbp\n"
    "  pushq %rbx\n"
    "  pushq %r12\n"
    "  pushq %r13\n"
    "  pushq %r14\n"
    "  pushq %r15\n"
    "  movq %rsp, (%rdi)\n"
    "  movq %rsi, %rsp\n"
    "  popq %r15\n"
    "  popq %r14\n"
    "  popq %r13\n"
    "  popq %r12\n"
    "  popq %rbx\n"
    "  popq %rbp\n"
    "  ret\n"
    ".size tessera_emu_switch, .-tessera_emu_switch\n"
    ".weak tessera_emu_start\n"
    ".hidden tessera_emu_start\n"
    ".type tessera_emu_start,@function\n"
    "tessera_emu_start:\n"
    "  movq %r12, %rdi\n"
    "  andq $-16, %rsp\n"
    "  callq *%r13\n"
    "  ud2\n"
    ".size tessera_emu_start, .-tessera_emu_start\n"
    ".popsection\n");
extern "C" void tessera_emu_switch(void **save_sp, void *load_sp);
extern "C" void tessera_emu_start();
#endif

namespace tessera {
namespace emu {

/// Streams of the calling thread destroyed since the runtime last took them.
inline std::vector<tessera_stream_stats> &stream_log() {
    static thread_local std::vector<tessera_stream_stats> log;
    return log;
}

class dataflow;

/// The dataflow region running on this thread (concurrent schedule), else null.
inline dataflow *&running_dataflow() {
    static thread_local dataflow *d = nullptr;
    return d;
}

/// A DATAFLOW region's processes (see above).
class dataflow {
  public:
    explicit dataflow(const char *region) : region_(region) {}
    dataflow(const dataflow &) = delete;
    dataflow &operator=(const dataflow &) = delete;
    ~dataflow() {
        for (proc &p : procs_) release(p);
    }

    /// Adds a process (in the region's program order).
    void process(const char *name, std::function<void()> body) {
        proc p;
        p.name = name;
        p.body = std::move(body);
        procs_.push_back(std::move(p));
    }

    /// Whether TESSERA_EMU_DATAFLOW=sequential asks for C simulation's schedule.
    static bool sequential() {
        const char *v = std::getenv("TESSERA_EMU_DATAFLOW");
        if (v == nullptr || *v == '\0' || std::strcmp(v, "concurrent") == 0) return false;
        if (std::strcmp(v, "sequential") == 0) return true;
        fail("TESSERA_EMU_DATAFLOW=%s: expected concurrent or sequential", v);
    }

    /// Runs every process to its end.
    void run() {
        if (sequential()) {
            for (proc &p : procs_) p.body();
            return;
        }
        if (running_dataflow() != nullptr) fail("dataflow region %s started inside another one", region_);
        running_dataflow() = this;
        for (proc &p : procs_) start(p);
        for (;;) {
            // A process that is resumed and at once waits again for the same stream in
            // the same state did nothing; when none did anything, none ever will.
            bool all_done = true, moved = false;
            for (std::size_t i = 0; i < procs_.size(); i++) {
                proc &p = procs_[i];
                if (p.done) continue;
                const void *stream = p.wait_stream;
                const unsigned long long ops = p.wait_ops;
                current_ = i;
                resume(p);
                if (!p.done) all_done = false;
                if (p.done || stream == nullptr || p.wait_stream != stream || p.wait_ops != ops) moved = true;
            }
            if (all_done) break;
            if (!moved) deadlock();
        }
        running_dataflow() = nullptr;
    }

    /// Called by a stream operation that cannot go on: records why (the stream, its
    /// name, the operation, the values it holds, its depth and how many reads and
    /// writes it has seen) and lets the other processes run; returns when this process
    /// is resumed.
    void wait(const void *stream, const char *name, const char *what, std::size_t held, std::size_t depth,
              unsigned long long ops) {
        proc &p = procs_[current_];
        p.wait_stream = stream;
        p.wait_name = name;
        p.wait_what = what;
        p.wait_held = held;
        p.wait_depth = depth;
        p.wait_ops = ops;
        suspend(p);
    }

  private:
    static constexpr std::size_t STACK_BYTES = std::size_t(8) << 20;  // reserved, touched lazily

    struct proc {
        const char *name = nullptr;
        std::function<void()> body;
        void *stack = nullptr;
        bool done = false;
        const void *wait_stream = nullptr;  // what it last waited for (null: never waited)
        const char *wait_name = nullptr, *wait_what = nullptr;
        std::size_t wait_held = 0, wait_depth = 0;
        unsigned long long wait_ops = 0;
#ifdef TESSERA_EMU_USE_UCONTEXT
        ucontext_t ctx;
#else
        void *sp = nullptr;
#endif
    };

    static void main_of(void *arg) {
        dataflow *d = running_dataflow();
        proc &p = *static_cast<proc *>(arg);
        p.body();
        p.done = true;
        d->suspend(p);  // never resumed
        fail("dataflow process %s resumed after its end", p.name);
    }

#ifdef TESSERA_EMU_USE_UCONTEXT
    static void main_of_ucontext(unsigned hi, unsigned lo) {
        main_of(reinterpret_cast<void *>((static_cast<std::uintptr_t>(hi) << 32) | static_cast<std::uintptr_t>(lo)));
    }
#endif

    void start(proc &p) {
#if defined(__linux__)
        void *m = mmap(nullptr, STACK_BYTES, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (m == MAP_FAILED) fail("dataflow region %s: no stack for process %s", region_, p.name);
        mprotect(m, 4096, PROT_NONE);  // guard page: an overflow faults instead of corrupting
        p.stack = m;
#else
        p.stack = std::malloc(STACK_BYTES);
        if (p.stack == nullptr) fail("dataflow region %s: no stack for process %s", region_, p.name);
#endif
#ifdef TESSERA_EMU_USE_UCONTEXT
        if (getcontext(&p.ctx) != 0) fail("getcontext failed");
        p.ctx.uc_stack.ss_sp = p.stack;
        p.ctx.uc_stack.ss_size = STACK_BYTES;
        p.ctx.uc_link = nullptr;
        const std::uintptr_t a = reinterpret_cast<std::uintptr_t>(&p);
        makecontext(&p.ctx, reinterpret_cast<void (*)()>(&main_of_ucontext), 2, static_cast<unsigned>(a >> 32),
                    static_cast<unsigned>(a & 0xffffffffu));
#else
        // The frame tessera_emu_switch pops: r15 r14 r13 r12 rbx rbp, then the return
        // address (tessera_emu_start), below a 16-byte aligned top.
        std::uintptr_t top = (reinterpret_cast<std::uintptr_t>(p.stack) + STACK_BYTES) & ~std::uintptr_t(15);
        void **f = reinterpret_cast<void **>(top) - 8;
        f[0] = nullptr;                                           // r15
        f[1] = nullptr;                                           // r14
        f[2] = reinterpret_cast<void *>(&main_of);                // r13: the function
        f[3] = static_cast<void *>(&p);                           // r12: its argument
        f[4] = nullptr;                                           // rbx
        f[5] = nullptr;                                           // rbp
        f[6] = reinterpret_cast<void *>(&tessera_emu_start);      // return address
        f[7] = nullptr;
        p.sp = f;
#endif
    }

    void resume(proc &p) {
#ifdef TESSERA_EMU_USE_UCONTEXT
        if (swapcontext(&sched_, &p.ctx) != 0) fail("swapcontext failed");
#else
        tessera_emu_switch(&sched_sp_, p.sp);
#endif
    }

    void suspend(proc &p) {
#ifdef TESSERA_EMU_USE_UCONTEXT
        if (swapcontext(&p.ctx, &sched_) != 0) fail("swapcontext failed");
#else
        tessera_emu_switch(&p.sp, sched_sp_);
#endif
    }

    void release(proc &p) {
        if (p.stack == nullptr) return;
#if defined(__linux__)
        munmap(p.stack, STACK_BYTES);
#else
        std::free(p.stack);
#endif
        p.stack = nullptr;
    }

    [[noreturn]] void deadlock() {
        std::string why;
        for (const proc &p : procs_) {
            if (p.done || p.wait_stream == nullptr) continue;
            char line[256];
            std::snprintf(line, sizeof line, "; %s waits to %s %s (%zu of depth %zu)", p.name, p.wait_what, p.wait_name,
                          p.wait_held, p.wait_depth);
            why += line;
        }
        fail("dataflow region %s deadlocked: no process can go on%s", region_, why.c_str());
    }

    const char *region_;
    std::vector<proc> procs_;
    std::size_t current_ = 0;
#ifdef TESSERA_EMU_USE_UCONTEXT
    ucontext_t sched_;
#else
    void *sched_sp_ = nullptr;
#endif
};

}  // namespace emu
}  // namespace tessera

/* The streams of the calling thread's launches since the last call, oldest first:
   copies at most `cap` into `out`, forgets them, and returns how many there were. */
extern "C" __attribute__((weak, visibility("default"))) std::size_t tessera_emu_streams_take(tessera_stream_stats *out,
                                                                                              std::size_t cap) {
    std::vector<tessera_stream_stats> &log = tessera::emu::stream_log();
    const std::size_t n = log.size();
    for (std::size_t i = 0; i < n && i < cap; i++) out[i] = log[i];
    log.clear();
    return n;
}

namespace hls {

/// A FIFO (emulation of Vitis' hls::stream). hls::stream<T, DEPTH> declares its depth
/// (as the STREAM pragma does); hls::stream<T> is unbounded. Under the concurrent
/// schedule a read of an empty stream or a write to a full one lets the other
/// processes run first; under the sequential one (and outside a dataflow region) the
/// stream is unbounded and reading it empty is an error. The values live in blocks
/// that double from 32 values, while the stream holds at least half a block, up to 2
/// MiB (transparent huge pages where the kernel allows): a stream that holds a whole
/// array under the sequential schedule costs one allocation and one page fault per 2
/// MiB, and a stream bounded by its depth cycles through a few small blocks that stay
/// in the CPU's caches.
template <typename T, int DEPTH = 0>
class stream;

template <typename T>
class stream<T, 0> {
    static_assert(std::is_trivially_copyable<T>::value, "hls::stream (emulation): values must be trivially copyable");

  public:
    stream() : name_("stream") {}
    explicit stream(const char *name) : name_(name) {}
    stream(const stream &) = delete;
    stream &operator=(const stream &) = delete;
    ~stream() {
        if (size_ != 0) tessera::emu::fail("hls::stream %s destroyed with %zu values left in it", name_, size_);
        tessera::emu::stream_log().push_back(tessera_stream_stats{name_, static_cast<std::uint64_t>(depth_),
                                                                  static_cast<std::uint64_t>(peak_),
                                                                  static_cast<std::uint64_t>(values_)});
        for (block &b : blocks_) std::free(b.p);
        if (spare_.p != nullptr) std::free(spare_.p);
    }
    // read() and write() are a few instructions when the value is there (the space
    // is free) and no block boundary is crossed; the rest is out of line.
    T read() {
        if (__builtin_expect(size_ == 0 || head_ + 1 >= head_cap_, 0)) return read_slow();
        size_--;
        reads_++;
        return head_p_[head_++];
    }
    void read(T &v) { v = read(); }
    void write(const T &v) {
        if (__builtin_expect((depth_ > 0 && size_ >= depth_) || tail_ >= tail_cap_, 0)) return write_slow(v);
        tail_p_[tail_++] = v;
        size_++;
        values_++;
        if (size_ > peak_) peak_ = size_;
    }
    bool empty() const { return size_ == 0; }
    bool full() const { return depth_ > 0 && size_ >= depth_ && tessera::emu::running_dataflow() != nullptr; }
    std::size_t size() const { return size_; }
    /// The most values the stream held at once (emulation only).
    std::size_t peak() const { return peak_; }
    void operator>>(T &v) { v = read(); }
    void operator<<(const T &v) { write(v); }

  protected:
    std::size_t depth_ = 0;  // 0: unbounded

  private:
    struct block {
        T *p = nullptr;
        std::size_t cap = 0;
    };
    static constexpr std::size_t MAX_BLOCK_BYTES = std::size_t(2) << 20;

    __attribute__((noinline)) T read_slow() {
        while (size_ == 0) {
            tessera::emu::dataflow *d = tessera::emu::running_dataflow();
            if (d == nullptr) tessera::emu::fail("read from the empty hls::stream %s", name_);
            d->wait(this, name_, "read", size_, depth_, values_ + reads_);
        }
        block &b = blocks_[first_];
        T v = b.p[head_];
        size_--;
        if (++head_ == b.cap) {  // the oldest block is drained: keep the larger as a spare
            if (spare_.p == nullptr || spare_.cap < b.cap) std::swap(spare_, b);
            std::free(b.p);
            b.p = nullptr;
            first_++;
            head_ = 0;
        }
        reads_++;
        cache();
        return v;
    }

    __attribute__((noinline)) void write_slow(const T &v) {
        if (depth_ > 0) {
            while (size_ >= depth_) {
                tessera::emu::dataflow *d = tessera::emu::running_dataflow();
                if (d == nullptr) break;  // sequential: unbounded
                d->wait(this, name_, "write", size_, depth_, values_ + reads_);
            }
        }
        if (blocks_.size() == first_ || tail_ == blocks_.back().cap) {
            blocks_.push_back(new_block());
            tail_ = 0;
        }
        blocks_.back().p[tail_++] = v;
        size_++;
        values_++;
        if (size_ > peak_) peak_ = size_;
        cache();
    }

    // The fast paths' view of the oldest and the newest block: read() takes from
    // head_p_ while head_ + 1 < head_cap_ (the read that drains a block is a slow
    // one), write() stores at tail_p_ while tail_ < tail_cap_.
    void cache() {
        if (first_ < blocks_.size()) {
            head_p_ = blocks_[first_].p;
            head_cap_ = blocks_[first_].cap;
            tail_p_ = blocks_.back().p;
            tail_cap_ = blocks_.back().cap;
        } else {
            head_p_ = tail_p_ = nullptr;
            head_cap_ = tail_cap_ = 0;
        }
    }

    block new_block() {
        if (spare_.p != nullptr) {
            block b = spare_;
            spare_ = block();
            return b;
        }
        const std::size_t last = blocks_.empty() ? 32 : blocks_.back().cap;
        block b;
        // Double while the stream holds at least half a block: a bounded stream's blocks
        // stay a few times its depth (cache-resident, reused through spare_), an
        // unbounded one's grow to MAX_BLOCK_BYTES.
        b.cap = last * sizeof(T) >= MAX_BLOCK_BYTES || 2 * size_ < last ? last : 2 * last;
        const std::size_t bytes = b.cap * sizeof(T);
        const std::size_t align = bytes >= MAX_BLOCK_BYTES ? MAX_BLOCK_BYTES : 64;
        b.p = static_cast<T *>(std::aligned_alloc(align, (bytes + align - 1) / align * align));
        if (b.p == nullptr) tessera::emu::fail("hls::stream %s: out of memory after %zu values", name_, size_);
#ifdef MADV_HUGEPAGE
        if (bytes >= MAX_BLOCK_BYTES) madvise(b.p, bytes, MADV_HUGEPAGE);
#endif
        return b;
    }

    const char *name_;
    std::vector<block> blocks_;  // [first_, end): live blocks, oldest first
    std::size_t first_ = 0;      // index of the oldest live block
    std::size_t head_ = 0;       // next value to read in blocks_[first_]
    std::size_t tail_ = 0;       // next free slot in blocks_.back()
    std::size_t size_ = 0, peak_ = 0, values_ = 0, reads_ = 0;
    block spare_;                // one drained block kept for the next write
    T *head_p_ = nullptr, *tail_p_ = nullptr;     // cache(): blocks_[first_], blocks_.back()
    std::size_t head_cap_ = 0, tail_cap_ = 0;
};

/// A FIFO of DEPTH values (Vitis: hls::stream<T, DEPTH>, a stream<T> of that depth).
template <typename T, int DEPTH>
class stream : public stream<T, 0> {
    static_assert(DEPTH > 0, "hls::stream<T, DEPTH>: the depth must be positive");

  public:
    stream() : stream<T, 0>() { this->depth_ = DEPTH; }
    explicit stream(const char *name) : stream<T, 0>(name) { this->depth_ = DEPTH; }
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

// At the start of a row's burst whose next burst would start at word `next`: requests
// that burst (the row's words end at `last`), or, past the row, the first burst of the
// next row e2, n2 when n2 > 0.
template <int W, int SEG, typename P>
void tessera_df_request_next(P port, long next, long last, long e2, long n2) {
#pragma HLS INLINE
    if (next <= last) {
        port.read_request(next, tessera_df_burst<SEG>(next, last));
    } else if (n2 > 0) {
        const long f2 = tessera_df_floor_div(e2, W), l2 = tessera_df_floor_div(e2 + n2 - 1, W);
        port.read_request(f2, tessera_df_burst<SEG>(f2, l2));
    }
}

// Interleaved arrays: whether word `word` (>= 0) of the array is in the second bank's
// half, and its word in its half.
template <int SEG>
bool tessera_df_in_b1(long word) {
#pragma HLS INLINE
    return ((word / SEG) & 1) != 0;
}
template <int SEG>
long tessera_df_half_word(long word) {
#pragma HLS INLINE
    return (word / SEG / 2) * SEG + word % SEG;
}

// A read request of `len` words from word `word` of an interleaved array (one segment).
template <int SEG, typename P>
void tessera_df_request2(P p0, P p1, long word, long len) {
#pragma HLS INLINE
    if (tessera_df_in_b1<SEG>(word)) {
        p1.read_request(tessera_df_half_word<SEG>(word), len);
    } else {
        p0.read_request(tessera_df_half_word<SEG>(word), len);
    }
}

// tessera_df_request_first and tessera_df_request_next of an interleaved array.
template <int W, int SEG, typename P>
void tessera_df_request_first2(P p0, P p1, long e, long n) {
#pragma HLS INLINE
    const long first = tessera_df_floor_div(e, W), last = tessera_df_floor_div(e + n - 1, W);
    tessera_df_request2<SEG>(p0, p1, first, tessera_df_burst<SEG>(first, last));
}
template <int W, int SEG, typename P>
void tessera_df_request_next2(P p0, P p1, long next, long last, long e2, long n2) {
#pragma HLS INLINE
    if (next <= last) {
        tessera_df_request2<SEG>(p0, p1, next, tessera_df_burst<SEG>(next, last));
    } else if (n2 > 0) {
        const long f2 = tessera_df_floor_div(e2, W), l2 = tessera_df_floor_div(e2 + n2 - 1, W);
        tessera_df_request2<SEG>(p0, p1, f2, tessera_df_burst<SEG>(f2, l2));
    }
}

// The row helpers as Vitis compiles them (beat by beat; emulated kernels use the
// burst-at-a-time versions below, which runtime/tests/cpp/dataflow_test.cpp checks
// against these).
// Reads the row of elements e .. e + n - 1 (n > 0; its first burst requested) and
// pushes it realigned: ceil(n / W) words, word k lane l = element e + k*W + l. Each
// burst requests the next one first (this row's, or the first of row e2, n2 > 0).
template <int W, int SEG, typename T>
void tessera_df_read_row_beats(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, long n,
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
            if (b == 0 || word % SEG == 0) tessera_df_request_next<W, SEG>(port, (word / SEG + 1) * SEG, last, e2, n2);
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
void tessera_df_write_row_beats(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, long n,
                          hls::stream<tessera::wide_t<W, T>> &s, int &pending) {
#pragma HLS INLINE off
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
            tessera::strobe_t<W, T> strobe = 0;
            for (int m = 0; m < W; m++) {
#pragma HLS UNROLL
                const long x = b * W + m - a;  // element e + x
                if (x >= 0 && x < n) {
                    tessera::set_lane<T>(beat, m, m < a ? tessera::get_lane<T>(prev, W - a + m) : tessera::get_lane<T>(cur, m - a));
                    tessera::enable_lane<T>(strobe, m);
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

// tessera_df_read_row_beats of an interleaved array (ports p0, p1).
template <int W, int SEG, typename T>
void tessera_df_read_row2_beats(hls::burst_maxi<tessera::wide_t<W, T>> p0, hls::burst_maxi<tessera::wide_t<W, T>> p1,
                                long e, long n, hls::stream<tessera::wide_t<W, T>> &s, long e2, long n2) {
#pragma HLS INLINE off
    const long first = tessera_df_floor_div(e, W), last = tessera_df_floor_div(e + n - 1, W);
    const int a = static_cast<int>(e - first * W);
    const long words = (n + W - 1) / W;
    tessera::wide_t<W, T> prev = 0;
    for (long b = 0; b <= words; b++) {
#pragma HLS PIPELINE II=1
        const long word = first + b;
        tessera::wide_t<W, T> cur = 0;
        if (word <= last) {
            if (b == 0 || word % SEG == 0) tessera_df_request_next2<W, SEG>(p0, p1, (word / SEG + 1) * SEG, last, e2, n2);
            cur = tessera_df_in_b1<SEG>(word) ? p1.read() : p0.read();
        }
        if (b > 0) {
            tessera::wide_t<W, T> out = 0;
            for (int l = 0; l < W; l++) {
#pragma HLS UNROLL
                const long x = (b - 1) * W + l;
                const int from = l + a;
                if (x < n) tessera::set_lane<T>(out, l, from < W ? tessera::get_lane<T>(prev, from) : tessera::get_lane<T>(cur, from - W));
            }
            s.write(out);
        }
        prev = cur;
    }
}

// tessera_df_write_row_beats of an interleaved array (ports p0, p1; each port's
// bursts awaiting their responses counted in pending0, pending1, at most PEND each).
template <int W, int SEG, int PEND, typename T>
void tessera_df_write_row2_beats(hls::burst_maxi<tessera::wide_t<W, T>> p0, hls::burst_maxi<tessera::wide_t<W, T>> p1,
                                 long e, long n, hls::stream<tessera::wide_t<W, T>> &s, int &pending0, int &pending1) {
#pragma HLS INLINE off
    const long first = tessera_df_floor_div(e, W), last = tessera_df_floor_div(e + n - 1, W);
    const int a = static_cast<int>(e - first * W);
    const long words = (n + W - 1) / W;
    tessera::wide_t<W, T> prev = 0;
    for (long b = 0; b <= words; b++) {
#pragma HLS PIPELINE II=1
        const long word = first + b;
        const bool hi = tessera_df_in_b1<SEG>(word);
        tessera::wide_t<W, T> cur = 0;
        if (b < words) cur = s.read();
        if (word <= last) {
            if (b == 0 || word % SEG == 0) {
                const long at = tessera_df_half_word<SEG>(word), len = tessera_df_burst<SEG>(word, last);
                if (hi) {
                    p1.write_request(at, len);
                } else {
                    p0.write_request(at, len);
                }
            }
            tessera::wide_t<W, T> beat = 0;
            tessera::strobe_t<W, T> strobe = 0;
            for (int m = 0; m < W; m++) {
#pragma HLS UNROLL
                const long x = b * W + m - a;
                if (x >= 0 && x < n) {
                    tessera::set_lane<T>(beat, m, m < a ? tessera::get_lane<T>(prev, W - a + m) : tessera::get_lane<T>(cur, m - a));
                    tessera::enable_lane<T>(strobe, m);
                }
            }
            if (hi) {
                p1.write(beat, strobe);
            } else {
                p0.write(beat, strobe);
            }
            if (word == last || word % SEG == SEG - 1) {
                if (hi) {
                    pending1++;
                    if (pending1 > PEND) {
                        p1.write_response();
                        pending1--;
                    }
                } else {
                    pending0++;
                    if (pending0 > PEND) {
                        p0.write_response();
                        pending0--;
                    }
                }
            }
        }
        prev = cur;
    }
}

#ifdef TESSERA_HLS_VITIS
template <int W, int SEG, typename T>
void tessera_df_read_row(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, long n,
                         hls::stream<tessera::wide_t<W, T>> &s, long e2, long n2) {
#pragma HLS INLINE
    tessera_df_read_row_beats<W, SEG, T>(port, e, n, s, e2, n2);
}
template <int W, int SEG, int PEND, typename T>
void tessera_df_write_row(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, long n,
                          hls::stream<tessera::wide_t<W, T>> &s, int &pending) {
#pragma HLS INLINE
    tessera_df_write_row_beats<W, SEG, PEND, T>(port, e, n, s, pending);
}
template <int W, int SEG, typename T>
void tessera_df_read_row2(hls::burst_maxi<tessera::wide_t<W, T>> p0, hls::burst_maxi<tessera::wide_t<W, T>> p1, long e,
                          long n, hls::stream<tessera::wide_t<W, T>> &s, long e2, long n2) {
#pragma HLS INLINE
    tessera_df_read_row2_beats<W, SEG, T>(p0, p1, e, n, s, e2, n2);
}
template <int W, int SEG, int PEND, typename T>
void tessera_df_write_row2(hls::burst_maxi<tessera::wide_t<W, T>> p0, hls::burst_maxi<tessera::wide_t<W, T>> p1, long e,
                           long n, hls::stream<tessera::wide_t<W, T>> &s, int &pending0, int &pending1) {
#pragma HLS INLINE
    tessera_df_write_row2_beats<W, SEG, PEND, T>(p0, p1, e, n, s, pending0, pending1);
}
#else
// Emulation: the same port requests in the same order, the same beats read and
// written, the same stream words, but a burst at a time — its beats in one copy
// (hls::burst_maxi::read_beats / write_beats) instead of a call per beat. The process
// runs at most one burst ahead of (read) or behind (write) the beat-wise version, as
// a stream of one burst's depth lets the hardware's. runtime/tests/cpp/dataflow_test.cpp
// checks both against each other: stream words, memory, counters. One implementation
// for one port and for an interleaved array's two: a port set (tessera::emu::one_port,
// tessera::emu::two_ports) routes each burst, by its first word, to its port.
namespace tessera {
namespace emu {
template <typename P>
struct one_port {
    P p;
    int &pending;
    P &at(long) { return p; }
    static long word(long w) { return w; }
    int &pending_of(long) { return pending; }
    void read_request(long w, long len) { p.read_request(w, len); }
};
template <int SEG, typename P>
struct two_ports {
    P p0, p1;
    int &pending0, &pending1;
    P &at(long w) { return tessera_df_in_b1<SEG>(w) ? p1 : p0; }
    static long word(long w) { return tessera_df_half_word<SEG>(w); }
    int &pending_of(long w) { return tessera_df_in_b1<SEG>(w) ? pending1 : pending0; }
    void read_request(long w, long len) { at(w).read_request(word(w), len); }
};
}  // namespace emu
}  // namespace tessera

template <int W, int SEG, typename T, typename Ports>
void tessera_df_read_row_emu(Ports ports, long e, long n, hls::stream<tessera::wide_t<W, T>> &s, long e2, long n2) {
    constexpr std::size_t S = sizeof(T), B = W * sizeof(T);
    const long first = tessera_df_floor_div(e, W), last = tessera_df_floor_div(e + n - 1, W);
    const long full = n / W, words = (n + W - 1) / W;  // stream words: all lanes elements / all
    // buf[lo, hi): the row's bytes read and not pushed yet (the row starts at byte a*S
    // of its first DDR word); at most a word's carry plus one burst.
    unsigned char buf[(SEG + 1) * B];
    std::size_t lo = static_cast<std::size_t>(e - first * W) * S, hi = 0;
    long pushed = 0;
    tessera::wide_t<W, T> out = 0;
    for (long word = first; word <= last;) {
        const long next = (word / SEG + 1) * SEG;
        tessera_df_request_next<W, SEG>(ports, next, last, e2, n2);
        const long len = (last + 1 < next ? last + 1 : next) - word;
        ports.at(word).read_beats(buf + hi, static_cast<std::size_t>(len));
        hi += static_cast<std::size_t>(len) * B;
        word += len;
        for (; pushed < full && hi - lo >= B; pushed++, lo += B) {
            std::memcpy(out.b, buf + lo, B);
            s.write(out);
        }
        std::memmove(buf, buf + lo, hi - lo);  // the carry (less than a word) to the front
        hi -= lo;
        lo = 0;
    }
    if (pushed < words) {  // the last, partial word: lanes beyond the row are 0
        out = 0;
        std::memcpy(out.b, buf + lo, static_cast<std::size_t>(n - full * W) * S);
        s.write(out);
    }
}

template <int W, int SEG, int PEND, typename T, typename Ports>
void tessera_df_write_row_emu(Ports ports, long e, long n, hls::stream<tessera::wide_t<W, T>> &s) {
    constexpr std::size_t S = sizeof(T), B = W * sizeof(T);
    const long first = tessera_df_floor_div(e, W), last = tessera_df_floor_div(e + n - 1, W);
    const long a = e - first * W;        // lane of element e in its DDR word
    const long words = (n + W - 1) / W;  // stream words
    // buf: the DDR words [word - 1, word + len] of a burst; stream word k holds the
    // row's bytes from a*S + k*B (relative to DDR word `first`).
    unsigned char buf[(SEG + 2) * B];
    tessera::wide_t<W, T> cur = 0;
    long popped = 0;
    for (long word = first; word <= last;) {
        const long len = tessera_df_burst<SEG>(word, last);
        ports.at(word).write_request(ports.word(word), len);
        const long base = (word - first - 1) * static_cast<long>(B);  // buf[0]'s row byte
        const long end = (word - first + len) * static_cast<long>(B);
        if (popped > 0) {  // the last word popped may reach into this burst
            const long at = a * static_cast<long>(S) + (popped - 1) * static_cast<long>(B) - base;
            if (at >= 0) std::memcpy(buf + at, cur.b, B);
        }
        for (; popped < words && a * static_cast<long>(S) + popped * static_cast<long>(B) < end; popped++) {
            cur = s.read();
            std::memcpy(buf + (a * static_cast<long>(S) + popped * static_cast<long>(B) - base), cur.b, B);
        }
        // Beats [word, word + len): element x = (byte - a*S) / S of the row.
        long i = 0;
        const auto whole = [&](long k) {  // beat k of the burst holds elements only
            const long x0 = (word - first + k) * W - a;
            return x0 >= 0 && x0 + W <= n;
        };
        while (i < len) {
            if (whole(i)) {
                long j = i + 1;
                while (j < len && whole(j)) j++;
                ports.at(word).write_beats(buf + (i + 1) * B, static_cast<std::size_t>(j - i));
                i = j;
                continue;
            }
            tessera::wide_t<W, T> beat = 0;
            tessera::strobe_t<W, T> strobe = 0;
            std::memcpy(beat.b, buf + (i + 1) * B, B);
            for (int m = 0; m < W; m++) {
                const long x = (word - first + i) * W + m - a;
                if (x >= 0 && x < n) tessera::enable_lane<T>(strobe, m);
            }
            ports.at(word).write(beat, strobe);
            i++;
        }
        int &pending = ports.pending_of(word);
        pending++;
        if (pending > PEND) {
            ports.at(word).write_response();
            pending--;
        }
        word += len;
    }
}

template <int W, int SEG, typename T>
void tessera_df_read_row(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, long n,
                         hls::stream<tessera::wide_t<W, T>> &s, long e2, long n2) {
    int none = 0;
    tessera_df_read_row_emu<W, SEG, T>(tessera::emu::one_port<hls::burst_maxi<tessera::wide_t<W, T>>>{port, none}, e, n, s, e2, n2);
}
template <int W, int SEG, int PEND, typename T>
void tessera_df_write_row(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, long n,
                          hls::stream<tessera::wide_t<W, T>> &s, int &pending) {
    tessera_df_write_row_emu<W, SEG, PEND, T>(tessera::emu::one_port<hls::burst_maxi<tessera::wide_t<W, T>>>{port, pending}, e, n, s);
}
template <int W, int SEG, typename T>
void tessera_df_read_row2(hls::burst_maxi<tessera::wide_t<W, T>> p0, hls::burst_maxi<tessera::wide_t<W, T>> p1, long e,
                          long n, hls::stream<tessera::wide_t<W, T>> &s, long e2, long n2) {
    int none0 = 0, none1 = 0;
    tessera_df_read_row_emu<W, SEG, T>(tessera::emu::two_ports<SEG, hls::burst_maxi<tessera::wide_t<W, T>>>{p0, p1, none0, none1}, e, n, s, e2, n2);
}
template <int W, int SEG, int PEND, typename T>
void tessera_df_write_row2(hls::burst_maxi<tessera::wide_t<W, T>> p0, hls::burst_maxi<tessera::wide_t<W, T>> p1, long e,
                           long n, hls::stream<tessera::wide_t<W, T>> &s, int &pending0, int &pending1) {
    tessera_df_write_row_emu<W, SEG, PEND, T>(tessera::emu::two_ports<SEG, hls::burst_maxi<tessera::wide_t<W, T>>>{p0, p1, pending0, pending1}, e, n, s);
}
#endif

// The responses of the bursts a store process still awaits.
template <typename P>
void tessera_df_write_drain(P port, int &pending) {
#pragma HLS INLINE
    for (; pending > 0; pending--) port.write_response();
}

#endif  // TESSERA_DATAFLOW_H
