//! Mode `dataflow`'s streaming kernel (`tessera_hls::dataflow`): load, compute and
//! store processes run concurrently under `#pragma HLS DATAFLOW`, connected by FIFOs.
//! In steady state each process moves one word per cycle, so the slowest sets the
//! pace; the pipeline's fill and drain add one read round trip, the datapath's depth
//! and one write response.
//!
//! ```text
//! C = cyc(t_rd) + cyc(D · t_op) + cyc(t_wr)
//!     + max( max_arrays (Σ_read bursts ⌈b/β⌉     load processes (exact, from the run;
//!                                                  an array's ports together)
//!                       + N_raw · cyc(k_ip · t_rd)),
//!            I_compute · W/V,                      compute iterations (static, its buffer
//!                                                  fill included) at II = W / V: a word of
//!                                                  W lanes per cycle when V = W, else every
//!                                                  W / V cycles (operators of V lanes)
//!            max_arrays Σ_write bursts ⌈b/β⌉ )    store processes (exact)
//! kernel_s = max(C / f, (bytes read + written) / BW_ddr)
//! ```
//!
//! `N_raw` is the port's read bursts ordered behind a write ([`crate::Port::read_after_write`],
//! counted by the emulated port: the first read a port object requested after one or
//! more writes), `k_ip` the in-place factor ([`crate::Params::in_place_factor`]). Such a read
//! cannot be requested ahead: AXI does not order it after the write it may alias, so
//! it waits for that write's response, and the load process stalls for the whole
//! ordered round trip, k_ip read round trips, on top of its beats. The term is added to
//! the time of the port's load process (the process that issues the read), not to the
//! kernel's cycles directly: it costs time only where that process sets the pace.
//! When it does, its stalls are reported as latency and its beats as transfer. A
//! point-wise in-place array read and written through one port object (its load and
//! store process share the port) counts such reads; a separate read and write port
//! on one buffer do not order each other and count none.
//!
//! Known optimism: every other round trip but the first read and the last write is
//! assumed hidden by the requests in flight (the load process requests one burst
//! ahead, the store process leaves 8 bursts awaiting their responses); ports of one DDR
//! bank share its bandwidth only through the roofline term.

use crate::traffic::Traffic;
use crate::{check_ordered_reads, depth_cycles, ns_to_cycles, ordered_read_cycles, Cycles, ModelError, Params};
use serde::Serialize;

/// The static structure of a dataflow kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Dataflow {
    /// Iterations of the compute process's pipelined loops (one output word of W
    /// lanes per iteration, plus the line buffers' fill).
    pub compute_iterations: u64,
    /// Cycles per iteration: W / V (1 when the kernel evaluates a word's W lanes per
    /// cycle; more when it has the operators of only V lanes).
    pub compute_ii: u64,
    /// Floating-point operations on the statement's longest path.
    pub depth_ops: u32,
}

/// Cycles of a dataflow kernel moving `traffic` (equations in the module docs).
pub(crate) fn cycles(d: &Dataflow, traffic: &Traffic, clock_mhz: f64, p: &Params) -> Result<Cycles, ModelError> {
    traffic.check(p).map_err(ModelError::IllegalBurst)?;
    check_ordered_reads(traffic)?;
    let rd = ns_to_cycles(p.read_round_trip_ns, clock_mhz);
    let wr = ns_to_cycles(p.write_response_ns, clock_mhz);
    let ordered = ordered_read_cycles(clock_mhz, p);
    // Per array (its ports together: an interleaved array's load process reads both
    // halves, a word per cycle, and its store process writes both): (read beats,
    // stalls on reads ordered behind writes, write beats).
    let mut arrays: std::collections::BTreeMap<&str, (u64, u64, u64)> = std::collections::BTreeMap::new();
    for x in &traffic.ports {
        let e = arrays.entry(x.array()).or_default();
        e.0 += x.read.beat_cycles(p);
        e.1 += x.read_after_write * ordered;
        e.2 += x.write.beat_cycles(p);
    }
    // The slowest load process: (its beats, its stalls).
    let (beats, stalls) = arrays.values().map(|&(b, s, _)| (b, s)).max_by_key(|&(b, s)| (b + s, s)).unwrap_or((0, 0));
    let load = beats + stalls;
    let store = arrays.values().map(|&(_, _, w)| w).max().unwrap_or(0);
    let fill = depth_cycles(d.depth_ops, clock_mhz, p);
    let compute_cycles = d.compute_iterations * d.compute_ii.max(1);
    let steady = load.max(store).max(compute_cycles);
    // The pace-setter's cycles by cause: compute, a load process (beats and stalls), or
    // a store process (beats).
    let (stall, transfer, compute) = if compute_cycles >= load.max(store) {
        (0, 0, steady)
    } else if load >= store {
        (stalls, beats, 0)
    } else {
        (0, store, 0)
    };
    Ok(Cycles { total: 0, latency: rd + wr + stall, transfer, compute: compute + fill })
}

#[cfg(test)]
mod tests {
    use crate::{estimate, Bound, Port, Structure, Traffic};

    const P: crate::Params = crate::Params::VCU118;

    /// 4096 rows of 256 words streamed in and 4094 rows out on separate ports (64 MiB
    /// each way): the compute process's 1 050 000 iterations set the pace at 50 MHz;
    /// at 400 MHz the DDR bank is the bound.
    #[test]
    fn the_slowest_process_sets_the_pace() {
        let mut a = Port::new("A", 64);
        a.read.add(64, 4096 * 4);
        let mut x = Port::new("X", 64);
        x.write.add(64, 4094 * 4);
        let t = Traffic { ports: vec![a, x] };
        let s = Structure::Dataflow(super::Dataflow { compute_iterations: 1_050_000, compute_ii: 1, depth_ops: 5 });
        let e = estimate(&s, &t, 50.0, &P).unwrap();
        // 5 + 5 round trips, ⌈75 ns / 20 ns⌉ = 4 pipeline cycles, 1 050 000 iterations.
        assert_eq!(e.cycles.total, 10 + 4 + 1_050_000);
        assert_eq!((e.cycles.latency, e.cycles.compute, e.cycles.transfer), (10, 1_050_004, 0));
        assert_eq!(e.bound, Bound::Cycles);
        // Loads dominate when compute is cheap.
        let s = Structure::Dataflow(super::Dataflow { compute_iterations: 1000, compute_ii: 1, depth_ops: 5 });
        let e = estimate(&s, &t, 50.0, &P).unwrap();
        assert_eq!(e.cycles.total, 10 + 4 + 4096 * 4 * 64);
        assert_eq!(e.cycles.transfer, 4096 * 4 * 64);
        // At 400 MHz both ports move 2^20 beats in 2.6 ms; the bank needs 2^27 B / 19.2 GB/s = 7 ms.
        let e = estimate(&s, &t, 400.0, &P).unwrap();
        assert_eq!(e.bound, Bound::Bandwidth);
        // One bank serves reads and writes: 87 % of its bandwidth (turnarounds).
        assert!((e.roofline_fraction() - 0.87).abs() < 1e-12);
        // Two banks: each carries one direction; the writes' bank (90 %) is the slower.
        let mut t2 = t.clone();
        t2.ports[1].bank = 1;
        let e2 = estimate(&s, &t2, 400.0, &P).unwrap();
        let (reads, writes) = (4096.0 * 4.0 * 64.0 * 64.0, 4094.0 * 4.0 * 64.0 * 64.0);
        assert!((e2.ddr_s - f64::max(reads / (19.2e9 * 0.97), writes / (19.2e9 * 0.90))).abs() < 1e-15);
        assert!((e2.roofline_s - reads / 19.2e9).abs() < 1e-15);
        assert!(e2.kernel_s < e.kernel_s);
    }

    /// An array interleaved over two banks: its load process reads both halves (a
    /// word per cycle), so its beats are the halves' sum, as with one port; the banks
    /// then share the bytes, each carrying half of both streams.
    #[test]
    fn an_interleaved_arrays_halves_are_one_process() {
        let (mut a, mut x) = (Port::new("A", 64), Port::new("X", 64));
        a.read.add(64, 4096 * 4);
        x.write.add(64, 4096 * 4);
        let one = Traffic { ports: vec![a, x] };
        let mut halves = Vec::new();
        for (name, bank) in [("A", 0), ("tdf_b1_A", 1), ("X", 0), ("tdf_b1_X", 1)] {
            let mut p = Port::new(name, 64);
            if name.ends_with('A') {
                p.read.add(64, 4096 * 2);
            } else {
                p.write.add(64, 4096 * 2);
            }
            p.bank = bank;
            halves.push(p);
        }
        let two = Traffic { ports: halves };
        let s = Structure::Dataflow(super::Dataflow { compute_iterations: 1000, compute_ii: 1, depth_ops: 5 });
        let (e1, e2) = (estimate(&s, &one, 50.0, &P).unwrap(), estimate(&s, &two, 50.0, &P).unwrap());
        assert_eq!(e1.cycles.total, e2.cycles.total);
        assert_eq!(e2.cycles.transfer, 4096 * 4 * 64);
        // At 400 MHz: each bank half the reads and half the writes (mixed, 87 %).
        let e = estimate(&s, &two, 400.0, &P).unwrap();
        let bank = 2.0 * 4096.0 * 2.0 * 64.0 * 64.0;
        assert!((e.ddr_s - bank / (19.2e9 * 0.87)).abs() < 1e-15, "{}", e.ddr_s);
    }

    /// V = W / 4 lanes: the compute process takes 4 cycles per word, 4 200 000 cycles
    /// for 1 050 000 iterations, and sets the pace over the ports' 1 048 576 beats.
    #[test]
    fn fewer_lanes_than_the_port_width_make_compute_the_bound() {
        let mut a = Port::new("A", 64);
        a.read.add(64, 4096 * 4);
        let mut x = Port::new("X", 64);
        x.write.add(64, 4094 * 4);
        let t = Traffic { ports: vec![a, x] };
        let s = Structure::Dataflow(super::Dataflow { compute_iterations: 1_050_000, compute_ii: 4, depth_ops: 5 });
        let c = crate::kernel_cycles(&s, &t, 50.0, &P).unwrap();
        assert_eq!((c.total, c.compute, c.transfer), (10 + 4 + 4_200_000, 4_200_004, 0));
    }

    /// The same streams through one port, in place (a load and a store process on one
    /// port object): 4094 of its 16 384 read bursts ordered behind a write each stall
    /// the load process cyc(2.5 · 100 ns) = 13 cycles at 50 MHz, 53 222 in all, so the
    /// load (1 048 576 beats + 53 222) sets the pace instead of the compute process's
    /// 1 050 000 iterations.
    #[test]
    fn reads_ordered_behind_writes_stall_their_load_process() {
        let mut e = Port::new("E", 64);
        e.read.add(64, 4096 * 4);
        e.write.add(64, 4094 * 4);
        let mut t = Traffic { ports: vec![e] };
        let s = Structure::Dataflow(super::Dataflow { compute_iterations: 1_050_000, compute_ii: 1, depth_ops: 5 });
        let c = crate::kernel_cycles(&s, &t, 50.0, &P).unwrap();
        assert_eq!((c.total, c.compute), (10 + 4 + 1_050_000, 1_050_004));
        t.ports[0].read_after_write = 4094;
        let c = crate::kernel_cycles(&s, &t, 50.0, &P).unwrap();
        assert_eq!(c, crate::Cycles { total: 10 + 4 + 1_048_576 + 53_222, latency: 10 + 53_222, transfer: 1_048_576, compute: 4 });
        // A stall hidden behind a slower process costs nothing: with 2 000 000 compute
        // iterations the compute process still sets the pace.
        let slow = Structure::Dataflow(super::Dataflow { compute_iterations: 2_000_000, compute_ii: 1, depth_ops: 5 });
        assert_eq!(crate::kernel_cycles(&slow, &t, 50.0, &P).unwrap().total, 10 + 4 + 2_000_000);
        // At 400 MHz an ordered read is 100 cycles (2.5 round trips of 40).
        let c = crate::kernel_cycles(&s, &t, 400.0, &P).unwrap();
        assert_eq!(c.latency, 40 + 40 + 4094 * 100);
        t.ports[0].read_after_write = 4096 * 4 + 1;
        assert!(crate::kernel_cycles(&s, &t, 50.0, &P).unwrap_err().to_string().contains("port E: 16385 reads ordered"));
    }
}
