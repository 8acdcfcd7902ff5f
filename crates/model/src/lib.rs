//! Tessera's performance model: modelled FPGA seconds for one kernel execution on the
//! VCU118, from the exact DDR counts of the emulated run and the kernel's static
//! structure (docs/performance-model.md, kind 2 "modelled"). Pure functions; every parameter is in
//! [`params`], once, with its source.
//!
//! Cycles and clock are kept apart: a structure is turned into **cycles** at a given
//! clock (memory latencies are nanoseconds, converted with the clock and rounded up to
//! whole cycles), then into seconds by dividing by the clock. The clock of a real design
//! is only known after synthesis, so it comes from a documented rule ([`ClockRule`]:
//! the paper's comparison clock of 50 MHz) that `--clock-mhz` overrides.
//!
//! With `f` the clock, `cyc(t) = ⌈t · f⌉` (t in ns, f in GHz), `β` beats per cycle,
//! `D` the operation depth of the statement (floating-point operations on its longest
//! path) and `t_op` the latency of one operation. A call of a math function
//! (`tessera_ir::Expr::Call`: `sqrt`, `fmin`, `floor`, …) counts as one operation of
//! `t_op` after its deepest argument: the model has no per-function latencies and
//! charges no DSPs, so a kernel calling `sqrt`, `fma` or (`math=relaxed`) `exp`, whose
//! Vitis cores take several times `t_op`, is modelled optimistically; the benchmark
//! stencils call none.
//!
//! `k_ip` is the in-place factor ([`Params::in_place_factor`]): a read ordered behind
//! a write of its port costs k_ip read round trips. AXI orders nothing between a
//! port's read and write channels, so a read that may alias an earlier write of the
//! same `m_axi` bundle is held until that write's response (HLS does so for pointer
//! accesses; the tiled kernels ship such arrays blocking, and the emulated ports
//! refuse a read of bytes whose write still awaits its response). `N_raw` is the
//! number of such reads the emulated ports counted ([`Port::read_after_write`]: the
//! first read burst a port object requested after one or more writes), and
//! `Δ_raw = cyc(k_ip · t_rd) − cyc(t_rd)`, about (k_ip − 1) · cyc(t_rd), what an ordered
//! read adds to a read round trip (rounded as a whole transaction, as the baseline's
//! `cyc(t_acc · k_ip)`).
//!
//! ```text
//! Baseline   (plain HLS kernel: every access a serialized single-beat round trip)
//!   C = I · A · cyc(t_acc · (k_ip if in place else 1)) + cyc(D · t_op)
//!       + I · max(0, cyc(S · t_op) − A · cyc(t_acc · (k_ip if in place else 1)))
//!       I iterations, A distinct accesses per iteration (duplicate reads of one element
//!       in one statement merged), k_ip per access of an in-place kernel (its single
//!       accesses are not counted in N_raw: the calibrated factor covers them), S the floating-point
//!       operations per iteration on the loop-carried chain of a sequentially
//!       accumulated scalar (a floating `+`/`*` reduction in the loop's order): the
//!       pipelined loop's II is at least the adder's latency, and the last term
//!       charges what that adds to the serialized accesses
//! BlockedRows (the paper's kernel: per row a blocking read, compute, write, wait)
//!   C = Σ_read bursts (cyc(t_rd) + ⌈b/β⌉) + Σ_write bursts (⌈b/β⌉ + cyc(t_wr))
//!       + Σ_ports N_raw · Δ_raw
//!       + R · max(1, cyc(D · t_op), cyc(S_r · t_op))  b beats per burst, R rows
//!       N_raw: an in-place array's row read after the previous row's write waits
//!       k_ip round trips instead of one
//!       S_r the floating-point operations per row on the loop-carried chain of a
//!       scalar accumulated in the loop's order (a tiled floating `+`/`*` reduction:
//!       the row's unrolled accumulations run one after another, and the next row's
//!       wait for them), 0 without one
//! OverlappedRows (Tessera's kernel: the same rows, round trips overlapped)
//!   C = Σ_ports (E_rd · cyc(t_rd) + E_wr · cyc(t_wr) + N_raw · Δ_raw) + Σ_bursts ⌈b/β⌉
//!       + R · max(1, cyc(D · t_op), cyc(S_r · t_op))
//!       E_rd, E_wr: the exposed bursts the emulated ports counted — a read requested
//!       while no earlier read of its port was in flight, a write whose response was
//!       awaited with no later write of its port in flight. Every other round trip
//!       overlaps work the kernel does meanwhile. N_raw · Δ_raw is charged whether or
//!       not the port counted the ordered read exposed: the extra wait is for the
//!       write's response, which no read in flight on the read channel covers (the
//!       kernel cannot issue the read before it); only its own round trip may overlap.
//!       (Tessera ships arrays it reads and writes blocking, so their reads are all
//!       exposed anyway.) In a paper kernel every burst is exposed, and the formula is
//!       BlockedRows'.
//!
//! Dataflow (mode dataflow: load, compute, store processes concurrently; see [`dataflow`])
//!   C = cyc(t_rd) + cyc(D · t_op) + cyc(t_wr) + max(load beats + N_raw · cyc(k_ip · t_rd)
//!       per port, compute iterations, store beats per port)
//!       a load process's round trips are hidden by its request ahead, except a read
//!       ordered behind a write of its port: it stalls the process for all k_ip of them
//!
//! roofline_s = max over banks (bytes read + written in the bank) / BW_ddr
//! ddr_s      = max over banks (bytes read + written in the bank) / (BW_ddr · e)
//!       e = e_read, e_write or e_mixed: the efficiency of the bank's traffic mix
//! kernel_s   = max(C / f, ddr_s)                      no kernel beats its DDR banks
//! host_s     = (bytes to device + bytes from device) / BW_pcie
//! ```
//!
//! The bursts of `BlockedRows` are the exact histogram of the run (every burst is
//! counted, including chunk pre-loads and boundary splits), so only the row count and
//! the statement's depth come from the static structure.
//!
//! [`resources`] is the other half of the model: a modelled estimate of a kernel's
//! BRAM36, URAM, DSP, LUT and FF from its structure, checked against the XCVU9P's
//! budget. It does not feed the time model (a kernel is timed as if it fits).

#![warn(missing_docs)]

pub mod axi;
pub mod dataflow;
pub mod params;
pub mod resources;
pub mod traffic;

pub use dataflow::Dataflow;
pub use params::{Param, Params};
pub use resources::{estimate_resources, usage, KernelShape, ResourceEstimate, ResourceParams, Resources, Usage};
pub use traffic::{port_of, Bursts, Port, Traffic};

use serde::Serialize;
use std::fmt;

/// `ns` nanoseconds in whole cycles of a `clock_mhz` clock, rounded up (a transaction
/// completes on a clock edge). A tiny tolerance keeps exact products exact.
pub fn ns_to_cycles(ns: f64, clock_mhz: f64) -> u64 {
    let c = ns * clock_mhz / 1000.0;
    (c - 1e-9).ceil().max(0.0) as u64
}

/// Seconds the DDR bank needs to move `bytes` at its peak bandwidth.
pub fn roofline_s(bytes: u64, p: &Params) -> f64 {
    bytes as f64 / p.ddr_bytes_per_s
}

/// Seconds the busiest DDR bank of `traffic` needs: at the theoretical bandwidth
/// (`achievable = false`: the roofline), or at the bandwidth its traffic mix achieves
/// (reads only, writes only, or both on one bus; [`Params::ddr_efficiency_read`] …).
pub fn bank_s(traffic: &Traffic, achievable: bool, p: &Params) -> f64 {
    traffic
        .per_bank()
        .into_iter()
        .map(|(_, r, w)| {
            let e = match (r > 0, w > 0) {
                _ if !achievable => 1.0,
                (true, true) => p.ddr_efficiency_mixed,
                (false, true) => p.ddr_efficiency_write,
                _ => p.ddr_efficiency_read,
            };
            (r + w) as f64 / (p.ddr_bytes_per_s * e)
        })
        .fold(0.0, f64::max)
}

/// Seconds of host ↔ board transfers of `bytes` bytes over PCIe.
pub fn host_transfer_s(bytes: u64, p: &Params) -> f64 {
    bytes as f64 / p.pcie_bytes_per_s
}

/// How the clock of a design is chosen.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub enum ClockRule {
    /// Every design (baseline and optimized) at the paper's comparison clock,
    /// [`Params::paper_clock_mhz`] (50 MHz): the paper measured its speedups there.
    Paper,
    /// A clock given by the user (`--clock-mhz`), for every design.
    Fixed(f64),
}

impl ClockRule {
    /// The clock (MHz) of a design under this rule.
    pub fn clock_mhz(self, p: &Params) -> f64 {
        match self {
            ClockRule::Paper => p.paper_clock_mhz,
            ClockRule::Fixed(mhz) => mhz,
        }
    }

    /// One sentence for reports.
    pub fn describe(self, p: &Params) -> String {
        match self {
            ClockRule::Paper => format!(
                "{} MHz for every design: the paper's comparison clock (its speedups were measured at {} MHz; real clocks are known only after synthesis)",
                p.paper_clock_mhz, p.paper_clock_mhz
            ),
            ClockRule::Fixed(mhz) => format!("{mhz} MHz for every design (--clock-mhz)"),
        }
    }
}

/// The plain HLS kernel: the original loop nest, pipelined innermost loop, every
/// array access a single-beat `m_axi` transaction (docs/performance-model.md, "Calibration").
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BaselineLoop {
    /// Executions of the statement(s).
    pub iterations: u64,
    /// DDR accesses per iteration after HLS merges duplicate reads of one element in
    /// one statement.
    pub accesses_per_iteration: u64,
    /// Whether an array is read and written through its one port.
    pub in_place: bool,
    /// Floating-point operations on the statement's longest path.
    pub depth_ops: u32,
    /// Floating-point operations per iteration on the loop-carried chain of a scalar
    /// accumulated in the loop's order (a floating `+` or `*` reduction: `s = s + x`
    /// is 1): an iteration cannot finish its accumulation before the previous one's,
    /// so the pipelined loop's II is at least this many operation latencies
    /// (`fp_op_ns`). 0 without such a chain.
    pub accumulation_ops: u32,
}

/// The paper's optimized kernel: per pipelined row one read request and burst per
/// buffer to fill, the unrolled computation, one write request and burst with strobes,
/// then the wait for the write response, nothing overlapped.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BlockedRows {
    /// Rows computed: executions of the unrolled innermost intra-tile loop, all tiles.
    pub rows: u64,
    /// Floating-point operations on the statement's longest path.
    pub depth_ops: u32,
    /// Floating-point operations per row on the loop-carried chain of a scalar
    /// accumulated in the loop's order (a floating `+` or `*` reduction the tiled
    /// kernel keeps in order: `s = s + x` over a row of 128 unrolled iterations is
    /// 128): no row can finish before the previous one's accumulations, so a row takes
    /// at least this many operation latencies (`fp_op_ns`). 0 without such a chain.
    pub accumulation_ops: u32,
}

/// Tessera's kernel (mode `tessera`): the paper's rows and bursts, with prefetched
/// reads, batched row requests and posted writes. Only the exposed round trips the
/// emulated ports counted ([`Port::read_exposed`], [`Port::write_exposed`]) cost
/// latency; beats and compute as in [`BlockedRows`].
///
/// Known optimism: a hidden round trip is assumed to be covered by the work between
/// its request and its use (the rest of the row, or the other rows of a batch); a row
/// shorter than a round trip (a few beats at a fast clock) would stall for the
/// difference, which the model does not charge.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct OverlappedRows {
    /// Rows computed: executions of the unrolled innermost intra-tile loop, all tiles.
    pub rows: u64,
    /// Floating-point operations on the statement's longest path.
    pub depth_ops: u32,
    /// As [`BlockedRows::accumulation_ops`].
    pub accumulation_ops: u32,
}

/// The static structure of a kernel, the model's input next to the traffic.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Structure {
    /// `baseline` mode.
    Baseline(BaselineLoop),
    /// `paper` mode.
    BlockedRows(BlockedRows),
    /// `tessera` mode.
    OverlappedRows(OverlappedRows),
    /// `dataflow` mode ([`dataflow`]).
    Dataflow(Dataflow),
}

/// Cycles of one kernel execution, by cause (they add up to `total`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Cycles {
    /// All cycles.
    pub total: u64,
    /// Waiting for DDR: round trips, write responses, serialized single accesses.
    pub latency: u64,
    /// Moving beats.
    pub transfer: u64,
    /// The datapath.
    pub compute: u64,
}

/// Which bound sets the modelled kernel time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Bound {
    /// The kernel's own cycles (latency, beats, compute).
    Cycles,
    /// The DDR bank's bandwidth.
    Bandwidth,
}

/// The model's answer for one kernel execution.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Estimate {
    /// Kernel cycles at `clock_mhz`.
    pub cycles: Cycles,
    /// The clock the cycles are counted at.
    pub clock_mhz: f64,
    /// `cycles / clock`.
    pub cycles_s: f64,
    /// The busiest bank's bytes ÷ its theoretical bandwidth.
    pub roofline_s: f64,
    /// The busiest bank's bytes ÷ the bandwidth its traffic mix achieves (≥ `roofline_s`).
    pub ddr_s: f64,
    /// `max(cycles_s, ddr_s)`.
    pub kernel_s: f64,
    /// Which of the two it is.
    pub bound: Bound,
}

impl Estimate {
    /// Fraction of the DDR roofline the kernel reaches (`roofline_s / kernel_s`, ≤ 1).
    pub fn roofline_fraction(&self) -> f64 {
        if self.kernel_s > 0.0 {
            self.roofline_s / self.kernel_s
        } else {
            0.0
        }
    }
}

/// Why the model cannot answer.
#[derive(Clone, Debug, PartialEq)]
pub enum ModelError {
    /// The clock is not a positive number.
    BadClock(f64),
    /// The traffic holds a burst no AXI master can issue.
    IllegalBurst(String),
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::BadClock(c) => write!(f, "clock of {c} MHz: expected a positive number"),
            ModelError::IllegalBurst(e) => write!(f, "illegal burst in the traffic: {e}"),
        }
    }
}

impl std::error::Error for ModelError {}

/// Cycles of the datapath for a statement of `depth_ops` operations.
pub(crate) fn depth_cycles(depth_ops: u32, clock_mhz: f64, p: &Params) -> u64 {
    ns_to_cycles(depth_ops as f64 * p.fp_op_ns, clock_mhz)
}

/// Compute cycles of one row of a tiled kernel: its statement's depth, or the
/// accumulation chain through it when that is longer (at least one cycle).
fn row_cycles(depth_ops: u32, accumulation_ops: u32, clock_mhz: f64, p: &Params) -> u64 {
    depth_cycles(depth_ops, clock_mhz, p).max(depth_cycles(accumulation_ops, clock_mhz, p)).max(1)
}

/// Cycles of the round trip of a read ordered behind a write of its port:
/// `cyc(k_ip · t_rd)` ([`Params::in_place_factor`] read round trips, rounded up as one
/// transaction).
pub(crate) fn ordered_read_cycles(clock_mhz: f64, p: &Params) -> u64 {
    ns_to_cycles(p.in_place_factor * p.read_round_trip_ns, clock_mhz)
}

/// What an ordered read adds to a read round trip: `Δ_raw = cyc(k_ip · t_rd) −
/// cyc(t_rd)`, about `(k_ip − 1) · cyc(t_rd)`.
fn ordered_read_extra(clock_mhz: f64, p: &Params) -> u64 {
    ordered_read_cycles(clock_mhz, p).saturating_sub(ns_to_cycles(p.read_round_trip_ns, clock_mhz))
}

/// No port orders more reads behind writes than it issued reads.
pub(crate) fn check_ordered_reads(traffic: &Traffic) -> Result<(), ModelError> {
    match traffic.ports.iter().find(|x| x.read_after_write > x.read.count()) {
        Some(x) => Err(ModelError::IllegalBurst(format!(
            "port {}: {} reads ordered behind writes for {} read bursts",
            x.name,
            x.read_after_write,
            x.read.count()
        ))),
        None => Ok(()),
    }
}

/// Kernel cycles of `structure` moving `traffic` at `clock_mhz` (equations in the
/// crate docs).
pub fn kernel_cycles(structure: &Structure, traffic: &Traffic, clock_mhz: f64, p: &Params) -> Result<Cycles, ModelError> {
    if !(clock_mhz.is_finite() && clock_mhz > 0.0) {
        return Err(ModelError::BadClock(clock_mhz));
    }
    let c = match structure {
        Structure::Baseline(b) => {
            let factor = if b.in_place { p.in_place_factor } else { 1.0 };
            let per_access = ns_to_cycles(p.baseline_access_ns * factor, clock_mhz);
            let memory_ii = b.accesses_per_iteration * per_access;
            // The accumulation's II, where it is longer than the iteration's accesses.
            let accumulation_ii = if b.accumulation_ops == 0 { 0 } else { depth_cycles(b.accumulation_ops, clock_mhz, p) };
            Cycles {
                total: 0,
                latency: b.iterations * memory_ii,
                transfer: 0,
                compute: depth_cycles(b.depth_ops, clock_mhz, p) + b.iterations * accumulation_ii.saturating_sub(memory_ii),
            }
        }
        Structure::BlockedRows(r) => {
            traffic.check(p).map_err(ModelError::IllegalBurst)?;
            check_ordered_reads(traffic)?;
            let rd = ns_to_cycles(p.read_round_trip_ns, clock_mhz);
            let wr = ns_to_cycles(p.write_response_ns, clock_mhz);
            let reads: u64 = traffic.ports.iter().map(|x| x.read.count()).sum();
            let writes: u64 = traffic.ports.iter().map(|x| x.write.count()).sum();
            let ordered: u64 = traffic.ports.iter().map(|x| x.read_after_write).sum();
            Cycles {
                total: 0,
                latency: reads * rd + writes * wr + ordered * ordered_read_extra(clock_mhz, p),
                transfer: traffic.ports.iter().map(|x| x.read.beat_cycles(p) + x.write.beat_cycles(p)).sum(),
                compute: r.rows * row_cycles(r.depth_ops, r.accumulation_ops, clock_mhz, p),
            }
        }
        Structure::OverlappedRows(r) => {
            traffic.check(p).map_err(ModelError::IllegalBurst)?;
            check_ordered_reads(traffic)?;
            let rd = ns_to_cycles(p.read_round_trip_ns, clock_mhz);
            let wr = ns_to_cycles(p.write_response_ns, clock_mhz);
            let extra = ordered_read_extra(clock_mhz, p);
            for x in &traffic.ports {
                if x.read_exposed > x.read.count() || x.write_exposed > x.write.count() {
                    return Err(ModelError::IllegalBurst(format!(
                        "port {}: {} + {} exposed round trips for {} + {} bursts",
                        x.name,
                        x.read_exposed,
                        x.write_exposed,
                        x.read.count(),
                        x.write.count()
                    )));
                }
            }
            Cycles {
                total: 0,
                // An ordered read's extra wait counts whether or not its own round
                // trip was exposed (crate docs).
                latency: traffic.ports.iter().map(|x| x.read_exposed * rd + x.write_exposed * wr + x.read_after_write * extra).sum(),
                transfer: traffic.ports.iter().map(|x| x.read.beat_cycles(p) + x.write.beat_cycles(p)).sum(),
                compute: r.rows * row_cycles(r.depth_ops, r.accumulation_ops, clock_mhz, p),
            }
        }
        Structure::Dataflow(d) => dataflow::cycles(d, traffic, clock_mhz, p)?,
    };
    Ok(Cycles { total: c.latency + c.transfer + c.compute, ..c })
}

/// The modelled time of one kernel execution.
pub fn estimate(structure: &Structure, traffic: &Traffic, clock_mhz: f64, p: &Params) -> Result<Estimate, ModelError> {
    let cycles = kernel_cycles(structure, traffic, clock_mhz, p)?;
    let cycles_s = cycles.total as f64 / (clock_mhz * 1e6);
    let roofline_s = bank_s(traffic, false, p);
    let ddr_s = bank_s(traffic, true, p);
    let (kernel_s, bound) = if ddr_s > cycles_s { (ddr_s, Bound::Bandwidth) } else { (cycles_s, Bound::Cycles) };
    Ok(Estimate { cycles, clock_mhz, cycles_s, roofline_s, ddr_s, kernel_s, bound })
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Params = Params::VCU118;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1e-12)
    }

    fn port(name: &str, beat_bytes: u64, reads: &[(u64, u64)], writes: &[(u64, u64)]) -> Port {
        let mut p = Port::new(name, beat_bytes);
        for &(b, n) in reads {
            p.read.add(b, n);
        }
        for &(b, n) in writes {
            p.write.add(b, n);
        }
        p
    }

    #[test]
    fn clock_conversion_rounds_up_to_whole_cycles() {
        assert_eq!(ns_to_cycles(100.0, 50.0), 5); // 20 ns cycles
        assert_eq!(ns_to_cycles(90.0, 50.0), 5); // 4.5 -> 5
        assert_eq!(ns_to_cycles(100.0, 300.0), 30);
        assert_eq!(ns_to_cycles(90.0, 300.0), 27);
        assert_eq!(ns_to_cycles(100.0, 345.0), 35); // 34.5 -> 35
        assert_eq!(ns_to_cycles(0.0, 345.0), 0);
        assert_eq!(ClockRule::Paper.clock_mhz(&P), 50.0);
        assert_eq!(ClockRule::Fixed(200.0).clock_mhz(&P), 200.0);
        assert!(ClockRule::Paper.describe(&P).starts_with("50 MHz for every design"));
    }

    /// One read burst of 16 beats of 64 B (1 KiB): one round trip, then 16 beats.
    #[test]
    fn a_single_burst() {
        let t = Traffic { ports: vec![port("A", 64, &[(16, 1)], &[])] };
        let s = Structure::BlockedRows(BlockedRows { rows: 0, depth_ops: 0, accumulation_ops: 0 });
        // 50 MHz: 100 ns = 5 cycles, + 16 beats = 21 cycles = 420 ns.
        let e = estimate(&s, &t, 50.0, &P).unwrap();
        assert_eq!(e.cycles, Cycles { total: 21, latency: 5, transfer: 16, compute: 0 });
        assert!(close(e.kernel_s, 420e-9), "{}", e.kernel_s);
        assert!(close(e.roofline_s, 1024.0 / 19.2e9));
        assert_eq!(e.bound, Bound::Cycles);
        // 300 MHz: 30 + 16 = 46 cycles = 153.3 ns.
        let e = estimate(&s, &t, 300.0, &P).unwrap();
        assert_eq!(e.cycles.total, 46);
        assert!(close(e.kernel_s, 46.0 / 300e6));
        // The same burst written: 16 beats, then the 100 ns response.
        let t = Traffic { ports: vec![port("B", 64, &[], &[(16, 1)])] };
        assert_eq!(kernel_cycles(&s, &t, 50.0, &P).unwrap().total, 21);
    }

    /// 1000 rows, each: read 9 beats (144 floats at w = 16), compute a 5-operation
    /// statement, write 8 beats (128 floats), wait for the response.
    #[test]
    fn a_latency_bound_row_loop() {
        let t = Traffic { ports: vec![port("A", 64, &[(9, 1000)], &[]), port("B", 64, &[], &[(8, 1000)])] };
        let s = Structure::BlockedRows(BlockedRows { rows: 1000, depth_ops: 5, accumulation_ops: 0 });
        let e = estimate(&s, &t, 50.0, &P).unwrap();
        // Per row: 5 (read round trip) + 9 + ⌈5 · 15 ns / 20 ns⌉ = 4 + 8 + 5 (response) = 31.
        assert_eq!(e.cycles, Cycles { total: 31_000, latency: 10_000, transfer: 17_000, compute: 4_000 });
        assert!(close(e.kernel_s, 31_000.0 / 50e6)); // 620 µs
        let bytes = 1000.0 * 17.0 * 64.0;
        assert!(close(e.roofline_s, bytes / 19.2e9)); // 56.7 µs
        assert_eq!(e.bound, Bound::Cycles);
        assert!(close(e.roofline_fraction(), (bytes / 19.2e9) / 620e-6)); // 9.1 %
    }

    /// 1 GiB read on one 512-bit port and 1 GiB written on another in 64-beat bursts,
    /// all but the first read and the last write overlapped, one row: at 400 MHz the
    /// ports move 2^25 beats in 83.9 ms, the DDR bank needs 111.8 ms for 2 GiB.
    #[test]
    fn a_bandwidth_bound_stream() {
        let bursts = (1u64 << 24) / 64; // 2^24 beats in 64-beat bursts
        let mut t = Traffic { ports: vec![port("A", 64, &[(64, bursts)], &[]), port("B", 64, &[], &[(64, bursts)])] };
        t.ports[0].read_exposed = 1;
        t.ports[1].write_exposed = 1;
        let s = Structure::OverlappedRows(OverlappedRows { rows: 1, depth_ops: 1, accumulation_ops: 0 });
        let e = estimate(&s, &t, 400.0, &P).unwrap();
        // 100 ns = 40 cycles per round trip, 2^25 beats, ⌈15 ns · 0.4⌉ = 6.
        assert_eq!(e.cycles, Cycles { total: 80 + (1 << 25) + 6, latency: 80, transfer: 1 << 25, compute: 6 });
        assert!(close(e.cycles_s, 33_554_518.0 / 400e6)); // 83.9 ms
        assert!(close(e.roofline_s, (1u64 << 31) as f64 / 19.2e9)); // 111.8 ms
        assert_eq!(e.bound, Bound::Bandwidth);
        // One bank, reads and writes: 87 % of 19.2 GB/s (UG585's mixed figure).
        assert!(close(e.kernel_s, e.roofline_s / 0.87));
        assert!(close(e.roofline_fraction(), 0.87));
        // More exposed round trips than bursts is not a traffic any kernel makes.
        t.ports[1].write_exposed = bursts + 1;
        assert!(estimate(&s, &t, 400.0, &P).unwrap_err().to_string().contains("port B"));
    }

    /// The latency-bound row loop of `a_latency_bound_row_loop` as Tessera ships it:
    /// A's rows prefetched (only the first read exposed), B's rows posted (only the
    /// last response awaited with nothing after it): 17 beats + 4 compute per row.
    #[test]
    fn an_overlapped_row_loop() {
        let mut t = Traffic { ports: vec![port("A", 64, &[(9, 1000)], &[]), port("B", 64, &[], &[(8, 1000)])] };
        t.ports[0].read_exposed = 1;
        t.ports[1].write_exposed = 1;
        let s = Structure::OverlappedRows(OverlappedRows { rows: 1000, depth_ops: 5, accumulation_ops: 0 });
        let e = estimate(&s, &t, 50.0, &P).unwrap();
        assert_eq!(e.cycles, Cycles { total: 21_010, latency: 10, transfer: 17_000, compute: 4_000 });
        // With every burst exposed it is the paper's blocked row loop.
        t.ports[0].read_exposed = 1000;
        t.ports[1].write_exposed = 1000;
        let blocked = Structure::BlockedRows(BlockedRows { rows: 1000, depth_ops: 5, accumulation_ops: 0 });
        assert_eq!(kernel_cycles(&s, &t, 50.0, &P).unwrap(), kernel_cycles(&blocked, &t, 50.0, &P).unwrap());
    }

    /// The latency-bound row loop of `a_latency_bound_row_loop` done in place: one
    /// port reads each row (9 beats) and writes it back (8 beats). Every row's read but
    /// the first follows the previous row's write on the port: 999 reads ordered behind
    /// writes, each taking k_ip = 2.5 round trips, cyc(250 ns) = 13 cycles at 50 MHz
    /// instead of 5: 8 more (at 400 MHz 100 instead of 40: 60 = 1.5 · 40 more).
    #[test]
    fn reads_ordered_behind_writes_wait_k_round_trips() {
        let mut t = Traffic { ports: vec![port("A", 64, &[(9, 1000)], &[(8, 1000)])] };
        t.ports[0].read_after_write = 999;
        let blocked = Structure::BlockedRows(BlockedRows { rows: 1000, depth_ops: 5, accumulation_ops: 0 });
        let c = kernel_cycles(&blocked, &t, 50.0, &P).unwrap();
        assert_eq!(c, Cycles { total: 31_000 + 999 * 8, latency: 10_000 + 999 * 8, transfer: 17_000, compute: 4_000 });
        // At 400 MHz: 40-cycle round trips, ⌈75 ns · 0.4⌉ = 30 compute cycles per row.
        let c = kernel_cycles(&blocked, &t, 400.0, &P).unwrap();
        assert_eq!(c.latency, 2000 * 40 + 999 * 60);
        // Tessera ships an array it reads and writes blocking: every burst exposed, the
        // paper's cycles.
        t.ports[0].read_exposed = 1000;
        t.ports[0].write_exposed = 1000;
        let overlapped = Structure::OverlappedRows(OverlappedRows { rows: 1000, depth_ops: 5, accumulation_ops: 0 });
        assert_eq!(kernel_cycles(&overlapped, &t, 50.0, &P).unwrap(), kernel_cycles(&blocked, &t, 50.0, &P).unwrap());
        // Were its reads overlapped (one exposed), each ordered read would still wait
        // for the write's response: 8 cycles each, only the round trips themselves hidden.
        t.ports[0].read_exposed = 1;
        let c = kernel_cycles(&overlapped, &t, 50.0, &P).unwrap();
        assert_eq!(c.latency, 5 + 1000 * 5 + 999 * 8);
        // Without ordered reads (a separate read and write port) nothing is added.
        t.ports[0].read_after_write = 0;
        assert_eq!(kernel_cycles(&overlapped, &t, 50.0, &P).unwrap().latency, 5 + 1000 * 5);
        // The baseline keeps its per-access factor and ignores the count.
        let base = |in_place| Structure::Baseline(BaselineLoop { iterations: 10, accesses_per_iteration: 2, in_place, depth_ops: 1, accumulation_ops: 0 });
        t.ports[0].read_after_write = 999;
        assert_eq!(kernel_cycles(&base(true), &t, 50.0, &P).unwrap().latency, 10 * 2 * 12);
        assert_eq!(kernel_cycles(&base(false), &t, 50.0, &P).unwrap().latency, 10 * 2 * 5);
        // More ordered reads than reads is not a traffic any kernel makes.
        t.ports[0].read_after_write = 1001;
        let e = kernel_cycles(&blocked, &t, 50.0, &P).unwrap_err();
        assert_eq!(e.to_string(), "illegal burst in the traffic: port A: 1001 reads ordered behind writes for 1000 read bursts");
        assert!(kernel_cycles(&overlapped, &t, 50.0, &P).is_err());
    }

    /// 2D-jacobi at 4096²: 4094² iterations, 6 accesses (5 reads, 1 write), each a
    /// 90 ns round trip = 5 cycles at 50 MHz.
    #[test]
    fn the_baseline_is_serialized_single_beats() {
        let i = 4094u64 * 4094;
        let t = Traffic { ports: vec![port("A", 4, &[(1, 5 * i)], &[]), port("B", 4, &[], &[(1, i)])] };
        let s = Structure::Baseline(BaselineLoop { iterations: i, accesses_per_iteration: 6, in_place: false, depth_ops: 5, accumulation_ops: 0 });
        let e = estimate(&s, &t, 50.0, &P).unwrap();
        assert_eq!(e.cycles, Cycles { total: 502_825_084, latency: 502_825_080, transfer: 0, compute: 4 });
        assert!(close(e.kernel_s, 10.056_501_68));
        assert!(close(e.roofline_s, 402_260_064.0 / 19.2e9)); // 21 ms
        // 2D-fdtd0 (in place): 4095·4096 iterations, 4 accesses of ⌈2.5 · 90 ns / 20 ns⌉ = 12 cycles.
        let i = 4095u64 * 4096;
        let s = Structure::Baseline(BaselineLoop { iterations: i, accesses_per_iteration: 4, in_place: true, depth_ops: 3, accumulation_ops: 0 });
        let c = kernel_cycles(&s, &Traffic::default(), 50.0, &P).unwrap();
        assert_eq!(c.total, i * 4 * 12 + 3);
    }

    /// A floating sum in the loop's order: one access per iteration (5 cycles at
    /// 50 MHz) hides the adder (15 ns = 1 cycle); at 400 MHz the access is 36 cycles
    /// and the adder 6, still hidden; a loop without accesses waits for the adder
    /// every iteration.
    #[test]
    fn sequential_accumulation_bounds_the_ii() {
        let sum = |accesses, ops| {
            Structure::Baseline(BaselineLoop { iterations: 1000, accesses_per_iteration: accesses, in_place: false, depth_ops: 1, accumulation_ops: ops })
        };
        let none = Traffic::default();
        for mhz in [50.0, 400.0] {
            assert_eq!(kernel_cycles(&sum(1, 1), &none, mhz, &P).unwrap(), kernel_cycles(&sum(1, 0), &none, mhz, &P).unwrap());
        }
        let c = kernel_cycles(&sum(0, 1), &none, 400.0, &P).unwrap();
        assert_eq!(c, Cycles { total: 6 + 6000, latency: 0, transfer: 0, compute: 6 + 6000 });
        // Two additions on the chain (`s = s + x; s = s + y;`): 30 ns = 12 cycles.
        let c = kernel_cycles(&sum(0, 2), &none, 400.0, &P).unwrap();
        assert_eq!(c.compute, 6 + 12_000);
    }

    /// A tiled floating sum in the loop's order: 1000 rows of 128 unrolled additions,
    /// each waiting for the previous one (128 · 15 ns = 1920 ns: 96 cycles per row at
    /// 50 MHz), in both tiled structures; without the chain a row costs its depth.
    #[test]
    fn tiled_accumulation_in_order_bounds_each_row() {
        let none = Traffic::default();
        let blocked = |acc| Structure::BlockedRows(BlockedRows { rows: 1000, depth_ops: 2, accumulation_ops: acc });
        let overlapped = |acc| Structure::OverlappedRows(OverlappedRows { rows: 1000, depth_ops: 2, accumulation_ops: acc });
        for s in [blocked(128), overlapped(128)] {
            assert_eq!(kernel_cycles(&s, &none, 50.0, &P).unwrap().compute, 96_000);
        }
        assert_eq!(kernel_cycles(&blocked(0), &none, 50.0, &P).unwrap().compute, 2_000);
        // At 400 MHz: 128 · 15 ns = 1920 ns = 768 cycles per row.
        assert_eq!(kernel_cycles(&overlapped(128), &none, 400.0, &P).unwrap().compute, 768_000);
    }

    #[test]
    fn host_transfers_and_errors() {
        // 2D-jacobi: A and B to the device, B back: 3 × 64 MiB at 1.55 GB/s.
        assert!(close(host_transfer_s(3 << 26, &P), 201_326_592.0 / 1.55e9)); // 0.130 s
        let t = Traffic { ports: vec![port("A", 64, &[(65, 1)], &[])] };
        let s = Structure::BlockedRows(BlockedRows { rows: 1, depth_ops: 1, accumulation_ops: 0 });
        let e = estimate(&s, &t, 50.0, &P).unwrap_err();
        assert!(e.to_string().contains("port A (read): a burst of 65 beats of 64 B crosses a 4096 B boundary"), "{e}");
        assert_eq!(estimate(&s, &Traffic::default(), 0.0, &P).unwrap_err(), ModelError::BadClock(0.0));
    }

    /// A hand-made paper-mode kernel for 1D-jacobi (N = 2^24, tile 1024, w = 16): per
    /// tile one full buffer of 1040 floats read (65 beats: bursts of 64 + 1 at the
    /// 4 KiB boundary), 1024 outputs computed, one line of 1024 + halo written.
    #[test]
    fn a_hand_made_paper_kernel() {
        let tiles = ((1u64 << 24) - 2).div_ceil(1024); // 16384
        let mut a = Port::new("A", 64);
        a.read.add_repeated(&axi::split(0, 65, 64, &P), tiles);
        let mut b = Port::new("B", 64);
        b.write.add_repeated(&axi::split(0, 65, 64, &P), tiles);
        let t = Traffic { ports: vec![a, b] };
        let s = Structure::BlockedRows(BlockedRows { rows: tiles, depth_ops: 3, accumulation_ops: 0 });
        let e = estimate(&s, &t, 50.0, &P).unwrap();
        // Per tile: 2 reads (5 + 64, 5 + 1), 3 compute (45 ns), 2 writes (64 + 5, 1 + 5).
        assert_eq!(e.cycles.total, tiles * (69 + 6 + 3 + 69 + 6));
        let base = Structure::Baseline(BaselineLoop { iterations: (1 << 24) - 2, accesses_per_iteration: 4, in_place: false, depth_ops: 3, accumulation_ops: 0 });
        let b = estimate(&base, &Traffic::default(), 50.0, &P).unwrap();
        let speedup = b.kernel_s / e.kernel_s;
        // 335 544 283 cycles vs 16384 · 153 = 2 506 752.
        assert!(close(speedup, 335_544_283.0 / 2_506_752.0), "{speedup}"); // 133.9
    }
}
