// The emulated DATAFLOW region (host/include/tessera_dataflow.h) on its own: the
// coroutine schedule with bounded streams, the sequential (C simulation) schedule,
// deadlock reports, the stream statistics the runtime takes after a launch, and the
// native wide words against the ap_uint they stand for. Driven by
// runtime/tests/dataflow_emu.rs: `dataflow_test <case>` prints "ok" or aborts.
#include "tessera_dataflow.h"

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) {                                                           \
            std::fprintf(stderr, "check failed at line %d: %s\n", __LINE__, #c); \
            return 1;                                                         \
        }                                                                     \
    } while (0)

static const long N = 10000;

// produce → square → sum, over streams of depth 4.
static void produce(hls::stream<long> &out) {
    for (long i = 0; i < N; i++) out.write(i);
}
static void square(hls::stream<long> &in, hls::stream<long> &out) {
    for (long i = 0; i < N; i++) {
        const long v = in.read();
        out.write(v * v);
    }
}
static void sum(hls::stream<long> &in, long &s) {
    for (long i = 0; i < N; i++) s += in.read();
}

static long pipeline() {
    hls::stream<long, 4> a("a");
    hls::stream<long, 4> b("b");
    long s = 0;
    tessera::emu::dataflow region("pipeline");
    region.process("produce", [&] { produce(a); });
    region.process("square", [&] { square(a, b); });
    region.process("sum", [&] { sum(b, s); });
    region.run();
    return s;
}

// Writes all of `a` before `b`; the consumer reads `b` first: with streams shorter
// than N the processes wait for each other.
static void two_streams(bool consumer_reads_b_first) {
    hls::stream<int, 2> a("a");
    hls::stream<int, 2> b("b");
    tessera::emu::dataflow region("crossed");
    region.process("writer", [&] {
        for (int i = 0; i < 8; i++) a.write(i);
        for (int i = 0; i < 8; i++) b.write(i);
    });
    region.process("reader", [&] {
        int x = 0;
        if (consumer_reads_b_first)
            for (int i = 0; i < 8; i++) x += b.read();
        for (int i = 0; i < 8; i++) x += a.read();
        if (!consumer_reads_b_first)
            for (int i = 0; i < 8; i++) x += b.read();
        if (x != (consumer_reads_b_first ? 28 + 28 : 56)) std::abort();
    });
    region.run();
}

static int taken(tessera_stream_stats *out, std::size_t cap) { return static_cast<int>(tessera_emu_streams_take(out, cap)); }

// The row helpers of the load and store processes: the emulation's burst-at-a-time
// tessera_df_read_row / tessera_df_write_row against the beat-wise ones Vitis compiles
// (…_beats), on random rows (start, length, alignment, burst segment, port width):
// the same stream words, the same memory, the same counters (every field of
// tessera_port_stats), the same responses awaited.
struct Buf {
    tessera_port_stats stats;
    tessera_port_desc desc;
    std::vector<float> mem;
    explicit Buf(long elems) : stats(), desc(), mem(static_cast<std::size_t>(elems)) {
        desc.abi_version = TESSERA_EMU_ABI_VERSION;
        desc.base = mem.data();
        desc.elems = static_cast<std::uint64_t>(elems);
        desc.elem_size = sizeof(float);
        desc.capacity = static_cast<std::uint64_t>(elems) * sizeof(float);
        desc.name = "row";
        desc.stats = &stats;
    }
};

static std::uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static long rnd(long n) {  // uniform in [0, n)
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<long>((rng_state >> 33) % static_cast<std::uint64_t>(n));
}

template <int W, int SEG>
static int rows_agree(int cases) {
    typedef tessera::wide_t<W, float> word;
    for (int k = 0; k < cases; k++) {
        // Two rows (the second requested ahead by the first, as the load processes do),
        // inside a buffer of whole words.
        const long n = 1 + rnd(k % 4 == 0 ? 3 * SEG * W : 4 * W), n2 = 1 + rnd(3 * W);
        const long e = rnd(3 * W), e2 = e + n + rnd(2 * W);
        const long elems = ((e2 + n2) / W + 2) * W;
        // Read: both versions from the same memory.
        word got[2][1024];
        long words[2] = {0, 0};
        Buf rb[2] = {Buf(elems), Buf(elems)};
        for (int v = 0; v < 2; v++) {
            for (long i = 0; i < elems; i++) rb[v].mem[static_cast<std::size_t>(i)] = static_cast<float>(i) + 0.5f;
            hls::burst_maxi<word> port(rb[v].desc);
            hls::stream<word> s("row");
            tessera_df_request_first<W, SEG>(port, e, n);
            if (v == 0) {
                tessera_df_read_row_beats<W, SEG, float>(port, e, n, s, e2, n2);
                tessera_df_read_row_beats<W, SEG, float>(port, e2, n2, s, 0, 0);
            } else {
                tessera_df_read_row<W, SEG, float>(port, e, n, s, e2, n2);
                tessera_df_read_row<W, SEG, float>(port, e2, n2, s, 0, 0);
            }
            while (!s.empty()) got[v][words[v]++] = s.read();
        }
        CHECK(words[0] == words[1] && words[0] == (n + W - 1) / W + (n2 + W - 1) / W);
        for (long i = 0; i < words[0]; i++) CHECK(got[0][i] == got[1][i]);
        CHECK(std::memcmp(&rb[0].stats, &rb[1].stats, sizeof(tessera_port_stats)) == 0);
        // Write: the words read back out, over memory holding other values, both rows
        // with one count of bursts awaiting their responses.
        Buf wb[2] = {Buf(elems), Buf(elems)};
        int pending[2] = {0, 0};
        for (int v = 0; v < 2; v++) {
            for (long i = 0; i < elems; i++) wb[v].mem[static_cast<std::size_t>(i)] = -1.0f;
            hls::burst_maxi<word> port(wb[v].desc);
            hls::stream<word> s("row");
            for (long i = 0; i < words[0]; i++) s.write(got[0][i]);
            if (v == 0) {
                tessera_df_write_row_beats<W, SEG, 3, float>(port, e, n, s, pending[v]);
                tessera_df_write_row_beats<W, SEG, 3, float>(port, e2, n2, s, pending[v]);
            } else {
                tessera_df_write_row<W, SEG, 3, float>(port, e, n, s, pending[v]);
                tessera_df_write_row<W, SEG, 3, float>(port, e2, n2, s, pending[v]);
            }
            CHECK(s.empty());
            tessera_df_write_drain(port, pending[v]);
        }
        CHECK(wb[0].mem == wb[1].mem);
        CHECK(std::memcmp(&wb[0].stats, &wb[1].stats, sizeof(tessera_port_stats)) == 0);
        for (long i = 0; i < elems; i++) {  // the rows' elements, and nothing else
            const bool in = (i >= e && i < e + n) || (i >= e2 && i < e2 + n2);
            CHECK(wb[1].mem[static_cast<std::size_t>(i)] == (in ? static_cast<float>(i) + 0.5f : -1.0f));
        }
    }
    return 0;
}

// The same for an interleaved array (two ports; segment k of SEG words in half k % 2
// at word (k / 2) * SEG): the beat-wise and burst-at-a-time two-port helpers agree with
// each other (stream words, both halves' memory and counters), and with the one-port
// helpers on the array laid out contiguously (the same words; the halves' counters add
// up to the one port's bytes and bursts).
template <int W, int SEG>
static int rows2_agree(int cases) {
    typedef tessera::wide_t<W, float> word;
    const long seg = static_cast<long>(SEG) * W;  // elements per segment
    for (int k = 0; k < cases; k++) {
        const long n = 1 + rnd(k % 3 == 0 ? 5 * seg : 4 * W), n2 = 1 + rnd(3 * W);
        const long e = rnd(k % 2 == 0 ? 3 * seg : 3 * W), e2 = e + n + rnd(2 * W);
        const long elems = ((e2 + n2) / seg + 2) * seg;  // whole segments
        const long half = (elems / seg / 2 + 1) * seg;
        const auto at = [&](long i, int &h) {  // element i's half and index in it
            const long g = i / seg;
            h = static_cast<int>(g % 2);
            return (g / 2) * seg + i % seg;
        };
        // Read: the one-port helper on contiguous memory, both two-port ones on halves.
        word got[3][2048];
        long words[3] = {0, 0, 0};
        Buf one(elems);
        for (long i = 0; i < elems; i++) one.mem[static_cast<std::size_t>(i)] = static_cast<float>(i) + 0.5f;
        {
            hls::burst_maxi<word> port(one.desc);
            hls::stream<word> s("row");
            tessera_df_request_first<W, SEG>(port, e, n);
            tessera_df_read_row<W, SEG, float>(port, e, n, s, e2, n2);
            tessera_df_read_row<W, SEG, float>(port, e2, n2, s, 0, 0);
            while (!s.empty()) got[2][words[2]++] = s.read();
        }
        Buf rb[2][2] = {{Buf(half), Buf(half)}, {Buf(half), Buf(half)}};
        for (int v = 0; v < 2; v++) {
            for (long i = 0; i < elems; i++) {
                int h;
                const long j = at(i, h);
                rb[v][h].mem[static_cast<std::size_t>(j)] = static_cast<float>(i) + 0.5f;
            }
            hls::burst_maxi<word> p0(rb[v][0].desc), p1(rb[v][1].desc);
            hls::stream<word> s("row");
            tessera_df_request_first2<W, SEG>(p0, p1, e, n);
            if (v == 0) {
                tessera_df_read_row2_beats<W, SEG, float>(p0, p1, e, n, s, e2, n2);
                tessera_df_read_row2_beats<W, SEG, float>(p0, p1, e2, n2, s, 0, 0);
            } else {
                tessera_df_read_row2<W, SEG, float>(p0, p1, e, n, s, e2, n2);
                tessera_df_read_row2<W, SEG, float>(p0, p1, e2, n2, s, 0, 0);
            }
            while (!s.empty()) got[v][words[v]++] = s.read();
        }
        CHECK(words[0] == words[1] && words[0] == words[2]);
        for (long i = 0; i < words[0]; i++) CHECK(got[0][i] == got[1][i] && got[0][i] == got[2][i]);
        for (int h = 0; h < 2; h++) CHECK(std::memcmp(&rb[0][h].stats, &rb[1][h].stats, sizeof(tessera_port_stats)) == 0);
        CHECK(rb[1][0].stats.read_bytes + rb[1][1].stats.read_bytes == one.stats.read_bytes);
        CHECK(rb[1][0].stats.read_bursts + rb[1][1].stats.read_bursts == one.stats.read_bursts);
        // Write: the words back out, over memory holding other values.
        Buf wone(elems);
        int pend1 = 0;
        for (long i = 0; i < elems; i++) wone.mem[static_cast<std::size_t>(i)] = -1.0f;
        {
            hls::burst_maxi<word> port(wone.desc);
            hls::stream<word> s("row");
            for (long i = 0; i < words[0]; i++) s.write(got[0][i]);
            tessera_df_write_row<W, SEG, 3, float>(port, e, n, s, pend1);
            tessera_df_write_row<W, SEG, 3, float>(port, e2, n2, s, pend1);
            tessera_df_write_drain(port, pend1);
        }
        Buf wb[2][2] = {{Buf(half), Buf(half)}, {Buf(half), Buf(half)}};
        for (int v = 0; v < 2; v++) {
            int pending0 = 0, pending1 = 0;
            for (int h = 0; h < 2; h++)
                for (long i = 0; i < half; i++) wb[v][h].mem[static_cast<std::size_t>(i)] = -1.0f;
            hls::burst_maxi<word> p0(wb[v][0].desc), p1(wb[v][1].desc);
            hls::stream<word> s("row");
            for (long i = 0; i < words[0]; i++) s.write(got[0][i]);
            if (v == 0) {
                tessera_df_write_row2_beats<W, SEG, 3, float>(p0, p1, e, n, s, pending0, pending1);
                tessera_df_write_row2_beats<W, SEG, 3, float>(p0, p1, e2, n2, s, pending0, pending1);
            } else {
                tessera_df_write_row2<W, SEG, 3, float>(p0, p1, e, n, s, pending0, pending1);
                tessera_df_write_row2<W, SEG, 3, float>(p0, p1, e2, n2, s, pending0, pending1);
            }
            CHECK(s.empty());
            CHECK(pending0 <= 3 && pending1 <= 3);
            tessera_df_write_drain(p0, pending0);
            tessera_df_write_drain(p1, pending1);
        }
        for (int h = 0; h < 2; h++) {
            CHECK(wb[0][h].mem == wb[1][h].mem);
            CHECK(std::memcmp(&wb[0][h].stats, &wb[1][h].stats, sizeof(tessera_port_stats)) == 0);
        }
        CHECK(wb[1][0].stats.write_bytes + wb[1][1].stats.write_bytes == wone.stats.write_bytes);
        CHECK(wb[1][0].stats.write_bursts + wb[1][1].stats.write_bursts == wone.stats.write_bursts);
        for (long i = 0; i < elems; i++) {  // the halves hold the contiguous result
            int h;
            const long j = at(i, h);
            CHECK(wb[1][h].mem[static_cast<std::size_t>(j)] == wone.mem[static_cast<std::size_t>(i)]);
        }
    }
    return 0;
}

int main(int argc, char **argv) {
    if (argc != 2) return 2;
    const std::string c = argv[1];
    if (c == "pipeline") {
        // Σ i² for i < N, whatever the schedule.
        long want = 0;
        for (long i = 0; i < N; i++) want += i * i;
        CHECK(pipeline() == want);
        tessera_stream_stats st[8];
        const bool sequential = std::getenv("TESSERA_EMU_DATAFLOW") != nullptr &&
                                std::strcmp(std::getenv("TESSERA_EMU_DATAFLOW"), "sequential") == 0;
        CHECK(taken(st, 8) == 2);
        for (int i = 0; i < 2; i++) {
            CHECK(st[i].depth == 4 && st[i].values == static_cast<std::uint64_t>(N));
            // Concurrent: never more than the depth (and the producer fills it);
            // sequential: the producer's whole output before the consumer runs.
            CHECK(st[i].peak == (sequential ? static_cast<std::uint64_t>(N) : 4u));
        }
        CHECK(std::strcmp(st[0].name, "b") == 0 && std::strcmp(st[1].name, "a") == 0);  // destroyed in reverse order
        CHECK(taken(st, 8) == 0);  // taken: forgotten
        // Two regions one after the other on the same thread.
        CHECK(pipeline() == want);
        CHECK(taken(st, 8) == 2);
        two_streams(false);
        CHECK(taken(st, 8) == 2);
    } else if (c == "rows") {
        CHECK((rows_agree<16, 64>(400) == 0));
        CHECK((rows_agree<16, 4>(400) == 0));
        CHECK((rows_agree<4, 2>(400) == 0));
        CHECK((rows2_agree<16, 64>(200) == 0));
        CHECK((rows2_agree<16, 4>(400) == 0));
        CHECK((rows2_agree<4, 2>(400) == 0));
        CHECK(taken(nullptr, 0) >= 0);  // the test's streams: forgotten
    } else if (c == "deadlock") {
        two_streams(true);  // aborts under the concurrent schedule
    } else if (c == "empty_read") {
        hls::stream<int> s("lonely");
        (void)s.read();
    } else if (c == "nested") {
        tessera::emu::dataflow outer("outer");
        outer.process("p", [] { two_streams(false); });
        outer.run();
    } else if (c == "wide") {
        // Native words carry the bits of the ap_uint they stand for, both ways.
        float lanes[16];
        for (int i = 0; i < 16; i++) lanes[i] = -1.5f * static_cast<float>(i) + 0.25f;
        lanes[3] = -0.0f;
        std::uint32_t nan_bits = 0x7fc01234u;
        std::memcpy(&lanes[7], &nan_bits, 4);
        tessera::wide_t<16, float> w = tessera::pack(lanes);
        const ap_uint<512> u = w;
        for (int i = 0; i < 16; i++) {
            const float a = tessera::get_lane<float>(u, i), b = tessera::get_lane<float>(w, i);
            CHECK(std::memcmp(&a, &lanes[i], 4) == 0 && std::memcmp(&b, &lanes[i], 4) == 0);
        }
        CHECK(static_cast<std::uint32_t>(u.range(31, 0).to_uint64()) == 0x3e800000u);  // lane 0 is the low bits: 0.25f
        const tessera::wide_t<16, float> back = u;
        CHECK(back == w);
        tessera::wide_t<4, double> d = 0;
        tessera::set_lane<double>(d, 2, -2.5);
        double out[4];
        tessera::unpack(d, out);
        CHECK(out[0] == 0.0 && out[2] == -2.5);
        // Narrow words (w = 4 lanes of uint8): 4 bytes, no padding, same bits.
        tessera::wide_t<4, std::uint8_t> n = 0;
        tessera::set_lane<std::uint8_t>(n, 2, 0xab);
        CHECK(sizeof n == 4 && tessera::get_lane<std::uint8_t>(n, 2) == 0xab);
        const ap_uint<32> nu = n;
        CHECK(nu.to_uint64() == 0xab0000u);
        // Strobes: lane masks.
        tessera::strobe_t<16, float> m = 0;
        tessera::enable_lane<float>(m, 15);
        CHECK(!m.bit(59) && m.bit(60) && m.bit(63));
        typedef tessera::emu::strobe_traits<tessera::strobe_t<16, float>> traits16;
        typedef tessera::emu::strobe_traits<tessera::strobe_t<4, double>> traits4;
        CHECK(!traits16::all(m, 64));
        // A double lane is 8 bytes: 8 bits of the byte mask, not 64.
        tessera::strobe_t<4, double> dm = 0;
        tessera::enable_lane<double>(dm, 1);
        for (int b = 0; b < 32; b++) CHECK(dm.bit(static_cast<std::size_t>(b)) == (b >= 8 && b < 16));
        tessera::strobe_t<16, double> wide_m = 0;  // 128 bytes: lane 9 is bytes 72..79, in the second word
        tessera::enable_lane<double>(wide_m, 9);
        for (int b = 0; b < 128; b++) CHECK(wide_m.bit(static_cast<std::size_t>(b)) == (b >= 72 && b < 80));
        tessera::strobe_t<4, double> all = -1;
        CHECK(traits4::all(all, 32));
    } else {
        return 2;
    }
    std::puts("ok");
    return 0;
}
