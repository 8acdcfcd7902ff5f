// Unit test of the HLS emulation shim (host/include/tessera_hls.h, tessera_wide.h),
// built and run by runtime/tests/shim.rs:
//
//   shim_test counters        every counter, strobe and data check; prints "ok", exits 0
//   shim_test <abort case>    performs one illegal transaction; the shim must print
//                             its message and abort (the Rust test checks both)
//
// Compiled with -std=c++17 -Wall -Wextra -Werror -Wno-unknown-pragmas, once without
// the vendor headers and once with -DTESSERA_TEST_WIDE and -isystem <ap_types dir>.
#ifdef TESSERA_TEST_WIDE
#include "tessera_wide.h"
#else
#include "tessera_hls.h"
#endif

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(c)                                                               \
    do {                                                                       \
        if (!(c)) {                                                            \
            std::fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
            std::exit(1);                                                      \
        }                                                                      \
    } while (0)

// A device buffer as the runtime makes it: 4 KiB aligned, capacity rounded up to
// 4 KiB, zeroed, with its descriptor and counters.
struct Buffer {
    tessera_port_stats stats;
    tessera_port_desc desc;
    unsigned char *mem;

    Buffer(const char *name, std::uint64_t elems, std::uint64_t elem_size, std::uint32_t index = 0) : stats(), desc() {
        std::uint64_t cap = (elems * elem_size + 4095) / 4096 * 4096;
        if (cap == 0) cap = 4096;
        mem = static_cast<unsigned char *>(std::aligned_alloc(4096, cap));
        std::memset(mem, 0, cap);
        desc.abi_version = TESSERA_EMU_ABI_VERSION;
        desc.index = index;
        desc.base = mem;
        desc.elems = elems;
        desc.elem_size = elem_size;
        desc.capacity = cap;
        desc.name = name;
        desc.stats = &stats;
    }
    ~Buffer() { std::free(mem); }
    Buffer(const Buffer &) = delete;
    Buffer &operator=(const Buffer &) = delete;
    template <typename T>
    T *as() {
        return reinterpret_cast<T *>(mem);
    }
};

struct TraceLine {
    std::uint32_t port, is_write;
    std::uint64_t off, bytes;
};

static void record(void *ctx, std::uint32_t port, std::uint32_t is_write, std::uint64_t off, std::uint64_t bytes) {
    static_cast<std::vector<TraceLine> *>(ctx)->push_back(TraceLine{port, is_write, off, bytes});
}

// A baseline-style kernel: b[i] = 2 * a[i] for 1 <= i < n - 1.
static void scale(tessera::maxi<const float> a, tessera::maxi<float> b, int n) {
    for (int i = 1; i < n - 1; i++) {
#pragma HLS PIPELINE II = 1
        b[i] = 2.0f * a[i];
    }
}

static void test_maxi() {
    Buffer a("a", 100, 4), b("b", 100, 4, 1);
    for (int i = 0; i < 100; i++) a.as<float>()[i] = static_cast<float>(i) + 0.5f;
    std::vector<TraceLine> trace;
    b.desc.trace = record;
    b.desc.trace_ctx = &trace;
    scale(tessera::maxi<const float>(a.desc), tessera::maxi<float>(b.desc), 100);
    for (int i = 1; i < 99; i++) CHECK(b.as<float>()[i] == 2.0f * (static_cast<float>(i) + 0.5f));
    CHECK(b.as<float>()[0] == 0.0f && b.as<float>()[99] == 0.0f);
    CHECK(a.stats.bound == 1 && b.stats.bound == 1);
    CHECK(a.stats.read_bytes == 98 * 4 && a.stats.read_bursts == 98 && a.stats.read_beats == 98);
    CHECK(a.stats.read_burst_len[1] == 98 && a.stats.write_bursts == 0 && a.stats.write_bytes == 0);
    CHECK(b.stats.write_bytes == 98 * 4 && b.stats.write_enabled_bytes == 98 * 4 && b.stats.write_bursts == 98);
    CHECK(b.stats.write_beats == 98 && b.stats.write_burst_len[1] == 98 && b.stats.read_bursts == 0);
    // The trace: one line per write of b, in order, byte offsets.
    CHECK(trace.size() == 98);
    CHECK(trace[0].port == 1 && trace[0].is_write == 1 && trace[0].off == 4 && trace[0].bytes == 4);
    CHECK(trace[97].off == 98 * 4);

    // p[i] = p[j] reads j then writes i; maxi<T> converts to maxi<const T>.
    Buffer c("c", 8, 8);
    tessera::maxi<double> cp(c.desc);
    cp[3] = 1.25;
    cp[5] = cp[3];
    tessera::maxi<const double> cr = cp;
    CHECK(cr[5] == 1.25 && static_cast<double>(cp[5]) == 1.25);
    CHECK(c.stats.read_bursts == 3 && c.stats.write_bursts == 2 && c.stats.read_bytes == 24);
    // Reads inside expressions, integer conversions and casts.
    Buffer d("d", 4, 4);
    tessera::maxi<int> dp(d.desc);
    dp[0] = 7;
    dp[1] = dp[0] + dp[0] * 2;
    CHECK(static_cast<long>(dp[1]) == 21 && (dp[1] > 20 ? dp[0] : 0) == 7);
    CHECK(d.stats.read_bursts == 5 && d.stats.write_bursts == 2);
}

static void test_burst() {
    Buffer in("in", 1024, 4), out("out", 1024, 4, 1);
    for (int i = 0; i < 1024; i++) in.as<float>()[i] = static_cast<float>(i);
    hls::burst_maxi<float> ip(in.desc), op(out.desc);
    // Two outstanding reads (Vitis allows it), consumed in order.
    ip.read_request(0, 16);
    ip.read_request(256, 256);
    for (int i = 0; i < 16; i++) CHECK(ip.read() == static_cast<float>(i));
    for (int i = 0; i < 256; i++) CHECK(ip.read() == static_cast<float>(256 + i));
    // A burst ending exactly on a 4 KiB boundary is legal: elements 1000..1023.
    ip.read_request(1000, 24);
    for (int i = 0; i < 24; i++) CHECK(ip.read() == static_cast<float>(1000 + i));
    CHECK(in.stats.read_bursts == 3 && in.stats.read_beats == 296 && in.stats.read_bytes == 296 * 4);
    CHECK(in.stats.read_burst_len[16] == 1 && in.stats.read_burst_len[256] == 1 && in.stats.read_burst_len[24] == 1);

    // Copies share the queues: request through one copy, write through another.
    hls::burst_maxi<float> op2 = op;
    op.write_request(0, 4);
    op.write_request(4, 2);
    for (int i = 0; i < 6; i++) op2.write(static_cast<float>(10 + i));
    op2.write_response();
    op.write_response();
    for (int i = 0; i < 6; i++) CHECK(out.as<float>()[i] == static_cast<float>(10 + i));
    CHECK(out.stats.write_bursts == 2 && out.stats.write_beats == 6 && out.stats.write_bytes == 24);
    CHECK(out.stats.write_enabled_bytes == 24 && out.stats.write_burst_len[4] == 1 && out.stats.write_burst_len[2] == 1);
    CHECK(out.stats.read_bursts == 0);
}

static void test_strobes() {
    Buffer m("m", 16, 4);
    std::memset(m.mem, 0xAA, 64);
    hls::burst_maxi<std::uint32_t> p(m.desc);
    p.write_request(0, 3);
    p.write(0x11223344u, 0x5);         // bytes 0 and 2
    p.write(0x55667788u, 0);           // nothing
    p.write(0x99AABBCCu, -1);          // all four
    p.write_response();
    const unsigned char *b = m.mem;
    CHECK(b[0] == 0x44 && b[1] == 0xAA && b[2] == 0x22 && b[3] == 0xAA);
    for (int i = 4; i < 8; i++) CHECK(b[i] == 0xAA);
    CHECK(m.as<std::uint32_t>()[2] == 0x99AABBCCu);
    CHECK(b[12] == 0xAA);
    CHECK(m.stats.write_bytes == 12 && m.stats.write_enabled_bytes == 6 && m.stats.write_beats == 3);
}

// read_after_write: the first read burst a port object (and its copies) requests
// after one or more of its own write requests; other port objects on the same buffer
// and single accesses do not count. And the ordering check's legal neighbours: bytes
// next to a pending write or an unread read, and the same bytes once the response was
// taken or the beats were read.
static void test_read_after_write() {
    Buffer x("x", 1024, 4), y("y", 1024, 4, 1);
    for (int i = 0; i < 1024; i++) x.as<float>()[i] = static_cast<float>(i);
    {
        hls::burst_maxi<float> p(x.desc), r(x.desc), other(y.desc);
        hls::burst_maxi<float> q = p;  // a copy: the same port object
        p.read_request(0, 16);
        for (int i = 0; i < 16; i++) CHECK(p.read() == static_cast<float>(i));
        p.read_request(16, 16);  // no write before it
        for (int i = 0; i < 16; i++) (void)p.read();
        CHECK(x.stats.read_after_write == 0);
        p.write_request(0, 16);
        for (int i = 0; i < 16; i++) q.write(-1.0f);
        q.write_response();
        q.read_request(0, 16);  // after the copy's write, its response taken: legal, ordered
        for (int i = 0; i < 16; i++) CHECK(q.read() == -1.0f);
        CHECK(x.stats.read_after_write == 1);
        // Two writes, then two reads: only the first read counts.
        p.write_request(16, 16);
        for (int i = 0; i < 16; i++) p.write(-2.0f);
        p.write_request(32, 16);
        for (int i = 0; i < 16; i++) p.write(-3.0f);
        p.write_response();
        p.write_response();
        p.read_request(48, 16);
        p.read_request(64, 16);
        for (int i = 0; i < 32; i++) (void)p.read();
        CHECK(x.stats.read_after_write == 2);
        // Another port object's write does not order p's reads (r is a separate port).
        r.write_request(512, 16);
        for (int i = 0; i < 16; i++) r.write(5.0f);
        // Bytes next to r's pending write, and a write next to p's unread beats: legal.
        p.read_request(496, 16);
        r.write_request(528, 16);
        p.read_request(544, 16);
        for (int i = 0; i < 16; i++) r.write(6.0f);
        for (int i = 0; i < 32; i++) (void)p.read();
        CHECK(x.stats.read_after_write == 2);
        // The same offsets on another buffer do not interact.
        other.write_request(600, 16);
        p.read_request(600, 16);
        for (int i = 0; i < 16; i++) other.write(7.0f);
        for (int i = 0; i < 16; i++) CHECK(p.read() == 600.0f + static_cast<float>(i));
        other.write_response();
        r.write_response();
        r.write_response();
        r.read_request(512, 16);  // r's own first read after its writes
        for (int i = 0; i < 16; i++) CHECK(r.read() == 5.0f);
        CHECK(x.stats.read_after_write == 3);
        // A write over beats a read request has already delivered is legal (they cannot
        // change any more), though the request is still open.
        p.read_request(700, 8);
        for (int i = 0; i < 4; i++) CHECK(p.read() == 700.0f + static_cast<float>(i));
        r.write_request(700, 4);
        for (int i = 0; i < 4; i++) r.write(8.0f);
        r.write_response();
        for (int i = 4; i < 8; i++) CHECK(p.read() == 700.0f + static_cast<float>(i));
        CHECK(x.stats.read_after_write == 3);
        // Single accesses are not counted.
        tessera::maxi<float> m(x.desc);
        m[1000] = 1.0f;
        CHECK(static_cast<float>(m[1000]) == 1.0f);
        CHECK(x.stats.read_after_write == 3 && y.stats.read_after_write == 0);
        CHECK(x.stats.read_bursts == 11 && x.stats.write_bursts == 7);  // the single accesses included
        CHECK(tessera::emu::buffer_registry().size() == 2);
    }
    // The port objects are gone, and so are their buffers' entries.
    CHECK(tessera::emu::buffer_registry().empty());
}

#ifdef TESSERA_TEST_WIDE
typedef ap_uint<512> u512;

static void test_wide() {
    // 100 floats through 512-bit beats: 7 beats, the last covering 96..99 plus padding.
    Buffer a("a", 100, 4), b("b", 100, 4, 1);
    float *af = a.as<float>();
    for (int i = 0; i < 100; i++) af[i] = static_cast<float>(i) * 0.25f - 3.0f;
    // Bit patterns a value conversion would lose.
    std::uint32_t nan_payload = 0x7fa12345u, neg_zero = 0x80000000u, denorm = 0x00000001u;
    std::memcpy(&af[1], &nan_payload, 4);
    std::memcpy(&af[2], &neg_zero, 4);
    std::memcpy(&af[3], &denorm, 4);

    hls::burst_maxi<u512> ip(a.desc), op(b.desc);
    ip.read_request(0, 7);
    op.write_request(0, 7);
    for (int k = 0; k < 7; k++) {
        u512 w = ip.read();
        float lanes[16];
        tessera::unpack(w, lanes);
        for (int l = 0; l < 16; l++) {
            if (16 * k + l < 100) CHECK(std::memcmp(&lanes[l], &af[16 * k + l], 4) == 0);
        }
        CHECK(tessera::get_lane<float>(w, 0) == lanes[0] || std::isnan(lanes[0]));
        u512 back = tessera::pack(lanes);
        CHECK(back == w);
        // The last beat: only the 4 real lanes are enabled (16 strobe bits).
        ap_int<64> strobe = -1;
        if (k == 6) strobe = 0xFFFF;
        op.write(back, strobe);
    }
    op.write_response();
    CHECK(std::memcmp(a.mem, b.mem, 400) == 0);
    for (int i = 400; i < 448; i++) CHECK(b.mem[i] == 0);  // padding lanes never written
    CHECK(a.stats.read_bursts == 1 && a.stats.read_beats == 7 && a.stats.read_bytes == 7 * 64);
    CHECK(a.stats.read_burst_len[7] == 1);
    CHECK(b.stats.write_bytes == 7 * 64 && b.stats.write_enabled_bytes == 400 && b.stats.write_beats == 7);

    // set_lane / pack_from / unpack_to / wide_t, doubles.
    tessera::wide_t<4, double> w = 0;
    tessera::set_lane<double>(w, 2, -1.5);
    CHECK(tessera::get_lane<double>(w, 2) == -1.5 && tessera::get_lane<double>(w, 0) == 0.0);
    double src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, dst[4] = {0, 0, 0, 0};
    ap_uint<256> x = tessera::pack_from<4>(src + 4);
    tessera::unpack_to(x, dst);
    CHECK(dst[0] == 5 && dst[3] == 8);
    // Lane order is memory order: lane 0 is the lowest bits.
    ap_uint<128> y = 0;
    tessera::set_lane<std::uint32_t>(y, 0, 0x01020304u);
    CHECK(y.range(31, 0).to_uint64() == 0x01020304u && y.range(127, 32).to_uint64() == 0);

    // Element-wise wide pointer: one 64-byte beat per access.
    Buffer c("c", 32, 4);
    tessera::maxi<u512> cp(c.desc);
    float l16[16];
    for (int i = 0; i < 16; i++) l16[i] = static_cast<float>(i);
    cp[1] = tessera::pack(l16);
    CHECK(c.as<float>()[16] == 0.0f && c.as<float>()[17] == 1.0f && c.as<float>()[31] == 15.0f);
    CHECK(c.stats.write_bytes == 64 && c.stats.write_bursts == 1);
}

#endif

static int abort_case(const std::string &c) {
    Buffer a("a", 100, 4), big("big", 2048, 4);
    if (c == "oob_read") {
        tessera::maxi<const float> p(a.desc);
        volatile float x = p[100];
        (void)x;
    } else if (c == "oob_write") {
        tessera::maxi<float> p(a.desc);
        p[-1] = 1.0f;
    } else if (c == "burst_oob") {
        hls::burst_maxi<float> p(a.desc);
        p.read_request(90, 16);
    } else if (c == "cross_4k") {
        hls::burst_maxi<float> p(big.desc);
        p.read_request(1000, 48);
    } else if (c == "too_long") {
        hls::burst_maxi<float> p(big.desc);
        p.write_request(0, 257);
    } else if (c == "read_without_request") {
        hls::burst_maxi<float> p(a.desc);
        p.read_request(0, 2);
        p.read();
        p.read();
        p.read();
    } else if (c == "write_beyond") {
        hls::burst_maxi<float> p(a.desc);
        p.write_request(0, 2);
        p.write(1.0f);
        p.write(2.0f);
        p.write(3.0f);
    } else if (c == "response_without_request") {
        hls::burst_maxi<float> p(a.desc);
        p.write_response();
    } else if (c == "response_early") {
        hls::burst_maxi<float> p(a.desc);
        p.write_request(0, 4);
        p.write(1.0f);
        p.write(2.0f);
        p.write_response();
    } else if (c == "unread_at_end") {
        hls::burst_maxi<float> p(a.desc);
        p.read_request(0, 4);
        p.read();
    } else if (c == "no_response_at_end") {
        hls::burst_maxi<float> p(a.desc);
        p.write_request(0, 1);
        p.write(1.0f);
    } else if (c == "scalar_port") {
        tessera_port_desc s = tessera_port_desc();
        s.abi_version = TESSERA_EMU_ABI_VERSION;
        s.index = 2;
        s.name = "n";
        tessera::maxi<int> p(s);
        (void)p;
    } else {
        std::fprintf(stderr, "unknown case %s\n", c.c_str());
        return 2;
    }
    std::fprintf(stderr, "case %s did not abort\n", c.c_str());
    return 3;
}

// A write of bytes a read request has not delivered yet (another port object on the
// buffer): those bytes, as far as the strobes enable them, are delivered as 0xA5
// bytes (undefined on a board); the beats before and after are the memory's.
static void test_poison() {
    Buffer x("x", 64, 4);
    for (int i = 0; i < 64; i++) x.as<float>()[i] = static_cast<float>(i);
    float poison;
    std::memset(&poison, 0xA5, sizeof poison);
    {
        hls::burst_maxi<float> p(x.desc), q(x.desc);
        p.read_request(10, 8);
        for (int i = 10; i < 15; i++) CHECK(p.read() == static_cast<float>(i));
        q.write_request(12, 4);  // beats 12..14 delivered already, 15 not yet
        for (int i = 0; i < 4; i++) q.write(-1.0f);
        q.write_response();
        float got;
        const float v15 = p.read();
        std::memcpy(&got, &v15, sizeof got);
        CHECK(std::memcmp(&got, &poison, sizeof got) == 0);
        CHECK(p.read() == 16.0f && p.read() == 17.0f);
        CHECK(x.as<float>()[15] == -1.0f);  // the memory holds the write
    }
    {
        // A read requested while a write of the same bytes awaits its response: the
        // bytes that write stored are undefined for it, the others are the memory's.
        hls::burst_maxi<float> w(x.desc);
        hls::burst_maxi<std::uint64_t> r(x.desc);
        w.write_request(30, 4);
        for (int i = 0; i < 4; i++) w.write(-2.0f);
        r.read_request(16, 2);  // bytes 128..144: floats 32..35, 32 and 33 written by w
        const std::uint64_t a = r.read(), b = r.read();
        float f[4];
        std::memcpy(f, &a, 8);
        std::memcpy(f + 2, &b, 8);
        CHECK(std::memcmp(&f[0], &poison, 4) == 0 && std::memcmp(&f[1], &poison, 4) == 0);
        CHECK(f[2] == 34.0f && f[3] == 35.0f);
        w.write_response();
        r.read_request(16, 1);  // after the response: the new data
        const std::uint64_t c = r.read();
        std::memcpy(f, &c, 8);
        CHECK(f[0] == -2.0f && f[1] == -2.0f);
    }
    {
        // Strobes: bytes the write leaves alone are not poisoned.
        hls::burst_maxi<std::uint64_t> p(x.desc), q(x.desc);
        p.read_request(20, 2);  // bytes 160..176: floats 40..43
        q.write_request(20, 1);
        q.write(0, 0x0Fu);  // bytes 160..163 only (float 40)
        q.write_response();
        const std::uint64_t w = p.read();
        float lo, hi;
        std::memcpy(&lo, &w, 4);
        std::memcpy(&hi, reinterpret_cast<const unsigned char *>(&w) + 4, 4);
        CHECK(std::memcmp(&lo, &poison, 4) == 0 && hi == 41.0f);
        const std::uint64_t w2 = p.read();
        std::memcpy(&lo, &w2, 4);
        CHECK(lo == 42.0f);
    }
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    const std::string c = argv[1];
    if (c != "counters") return abort_case(c);
    test_maxi();
    test_burst();
    test_strobes();
    test_read_after_write();
    test_poison();
#ifdef TESSERA_TEST_WIDE
    test_wide();
#endif
    std::puts("ok");
    return 0;
}
