/* Tessera emulated device: the C ABI between the runtime and an emulation kernel.
 *
 * The runtime (runtime/src/abi.rs mirrors these structs with #[repr(C)] and asserts
 * the same sizes and offsets) calls
 *
 *     extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports);
 *
 * with one entry per kernel argument in both arrays, in manifest order:
 *   - args[i]  : the device buffer (arrays) or a pointer to the value (scalars);
 *   - ports[i] : for arrays, the buffer's shape and the counters its memory ports add
 *                to; for scalars, a descriptor with base == NULL and stats == NULL.
 *
 * The kernel's memory-port objects (tessera::maxi, hls::burst_maxi in tessera_hls.h)
 * are constructed from ports[i] and count every transaction into *ports[i].stats. The
 * runtime zeroes the counters before the launch and reads them after it.
 *
 * Plain C (C99 and C++), no padding, 64-bit pointers (x86-64, aarch64).
 */
#ifndef TESSERA_EMU_ABI_H
#define TESSERA_EMU_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change of the structs below; checked when a port object binds. */
#define TESSERA_EMU_ABI_VERSION 3u

/* AXI4: an incrementing burst has 1..256 beats and never crosses a 4 KiB boundary. */
#define TESSERA_AXI_MAX_BURST 256u
#define TESSERA_AXI_BOUNDARY 4096u

/* Exact traffic of one array (all port objects bound to its buffer add here).
 * A single element access through tessera::maxi is one burst of one beat. A burst
 * through hls::burst_maxi is counted when it is requested (the AXI burst is committed
 * then): its beats, its bytes (beats x beat width) and its length. */
typedef struct tessera_port_stats {
    uint64_t read_bytes;          /* beats read x beat bytes */
    uint64_t write_bytes;         /* beats written x beat bytes (whole beats, whatever the strobes) */
    uint64_t write_enabled_bytes; /* bytes actually stored (strobe bit set) */
    uint64_t read_bursts;         /* read transactions (AR) */
    uint64_t write_bursts;        /* write transactions (AW) */
    uint64_t read_beats;          /* R beats */
    uint64_t write_beats;         /* W beats */
    uint64_t bound;               /* nonzero once a port object was constructed on this buffer */
    uint64_t read_burst_len[TESSERA_AXI_MAX_BURST + 1];  /* [n]: read bursts of n beats */
    uint64_t write_burst_len[TESSERA_AXI_MAX_BURST + 1]; /* [n]: write bursts of n beats */
    /* Round trips on the kernel's critical path (hls::burst_maxi; every tessera::maxi
     * access is one of each kind it makes). A read burst is exposed when it is requested
     * while no earlier read burst of the port has beats left to read (nothing else is
     * in flight to cover its latency); a write burst is exposed when its response is
     * awaited while no later write burst of the port has been requested. */
    uint64_t read_exposed;
    uint64_t write_exposed;
    /* Read bursts ordered behind a write (ABI version 3): read bursts an hls::burst_maxi
     * port object (shared by its copies) requested after it had requested a write burst
     * since its own previous read request, i.e. the first read after one or more writes
     * on that port object. AXI orders nothing between a port's read and write channels,
     * so such a read, which may alias the write, waits for the write's response.
     * Counted per port object: two port objects on one buffer (a separate read and write
     * port) do not order each other. Single accesses through tessera::maxi (baseline
     * kernels) are not counted here; the model charges them its calibrated per-access
     * in-place factor instead. */
    uint64_t read_after_write;
} tessera_port_stats;

/* Optional transaction trace (TESSERA_EMU_TRACE): called once per transaction with the
 * argument index, 0 for a read or 1 for a write, and the byte offset (from element 0)
 * and byte length of the transaction. NULL when tracing is off. */
typedef void (*tessera_trace_fn)(void *ctx, uint32_t port, uint32_t is_write, uint64_t byte_offset,
                                 uint64_t bytes);

/* One kernel argument as the memory ports see it. */
typedef struct tessera_port_desc {
    uint32_t abi_version;       /* TESSERA_EMU_ABI_VERSION */
    uint32_t index;             /* argument index (the trace's port number) */
    void *base;                 /* element 0 of the device buffer (4 KiB aligned); NULL for scalars */
    uint64_t elems;             /* elements of the array (its whole index space) */
    uint64_t elem_size;         /* bytes per element */
    uint64_t capacity;          /* bytes allocated at base: elems x elem_size rounded up to 4 KiB */
    const char *name;           /* the array's name (NUL-terminated) */
    tessera_port_stats *stats;  /* counters; NULL for scalars */
    tessera_trace_fn trace;     /* NULL unless tracing */
    void *trace_ctx;            /* first argument of trace */
} tessera_port_desc;

/* One hls::stream of a dataflow kernel's launch (tessera_dataflow.h): its name, its
 * declared depth (0: unbounded), the most values it held at once and the values that
 * went through it. A kernel library with streams exports
 *
 *     size_t tessera_emu_streams_take(tessera_stream_stats *out, size_t cap);
 *
 * which copies (at most cap of) the streams the calling thread's launches destroyed
 * since the last call, oldest first, forgets them and returns how many there were.
 * The runtime calls it after every launch; names point into the kernel library. */
typedef struct tessera_stream_stats {
    const char *name;
    uint64_t depth;
    uint64_t peak;
    uint64_t values;
} tessera_stream_stats;

#ifdef __cplusplus
}
#define TESSERA_EMU_ABI_ASSERT_(c, m) static_assert(c, m)
#else
#define TESSERA_EMU_ABI_ASSERT_(c, m) _Static_assert(c, m)
#endif

/* The runtime asserts the same numbers (runtime/src/abi.rs). */
TESSERA_EMU_ABI_ASSERT_(sizeof(tessera_port_stats) == 64 + 2 * 257 * 8 + 24, "tessera_port_stats layout");
TESSERA_EMU_ABI_ASSERT_(offsetof(tessera_port_stats, read_exposed) == 64 + 2 * 257 * 8, "tessera_port_stats layout");
TESSERA_EMU_ABI_ASSERT_(offsetof(tessera_port_stats, read_after_write) == 64 + 2 * 257 * 8 + 16, "tessera_port_stats layout");
TESSERA_EMU_ABI_ASSERT_(offsetof(tessera_port_stats, bound) == 56, "tessera_port_stats layout");
TESSERA_EMU_ABI_ASSERT_(offsetof(tessera_port_stats, read_burst_len) == 64, "tessera_port_stats layout");
TESSERA_EMU_ABI_ASSERT_(offsetof(tessera_port_stats, write_burst_len) == 64 + 257 * 8, "tessera_port_stats layout");
TESSERA_EMU_ABI_ASSERT_(sizeof(tessera_port_desc) == 72, "tessera_port_desc layout");
TESSERA_EMU_ABI_ASSERT_(offsetof(tessera_port_desc, base) == 8, "tessera_port_desc layout");
TESSERA_EMU_ABI_ASSERT_(offsetof(tessera_port_desc, capacity) == 32, "tessera_port_desc layout");
TESSERA_EMU_ABI_ASSERT_(offsetof(tessera_port_desc, stats) == 48, "tessera_port_desc layout");
TESSERA_EMU_ABI_ASSERT_(offsetof(tessera_port_desc, trace_ctx) == 64, "tessera_port_desc layout");
TESSERA_EMU_ABI_ASSERT_(sizeof(tessera_stream_stats) == 32, "tessera_stream_stats layout");

#endif /* TESSERA_EMU_ABI_H */
