//! Every parameter of the performance model, once, with its unit and its source.
//!
//! The table is written with one macro so that the value a formula uses, the unit and
//! the source the report prints can never drift apart: [`Params::VCU118`] holds the
//! values, [`Params::table`] lists them with their sources (the JSON report and
//! `docs/performance.md` print that list).
//!
//! Where a source gives a range, the model takes the end that makes Tessera look
//! *worse* (a faster baseline, slower optimized round trips): modelled speedups are
//! then lower bounds with respect to that parameter. The sources, the VCU118 facts and
//! the calibration against the paper's measurements are written up in
//! `docs/performance-model.md`; each `source` names the section it relies on.

use serde::Serialize;

/// One row of the parameter table.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Param {
    /// Field name in [`Params`].
    pub name: &'static str,
    /// Value (in `unit`).
    pub value: f64,
    /// Unit.
    pub unit: &'static str,
    /// Where the value comes from.
    pub source: &'static str,
}

macro_rules! params {
    ($( $(#[doc = $doc:expr])* $field:ident : $ty:ty = $value:expr, unit $unit:expr, source $source:expr; )*) => {
        /// The model's parameters (see the module docs; [`Params::VCU118`] is the only
        /// set the project uses, tests may vary single fields).
        #[derive(Clone, Debug, PartialEq, Serialize)]
        pub struct Params {
            $( $(#[doc = $doc])* pub $field: $ty, )*
        }

        impl Params {
            /// The Xilinx VCU118 (XCVU9P, DDR4 bank C1, PCIe to the host).
            pub const VCU118: Params = Params { $( $field: $value, )* };

            /// Every parameter with its value, unit and source, in declaration order.
            pub fn table(&self) -> Vec<Param> {
                vec![ $( Param { name: stringify!($field), value: self.$field as f64, unit: $unit, source: $source }, )* ]
            }
        }
    };
}

params! {
    /// DDR bandwidth of the one bank a design uses (bytes per second).
    ddr_bytes_per_s: f64 = 19.2e9,
        unit "B/s",
        source "VCU118 DDR4 bank C1: DDR4-2400 on a 64-bit bus, 2400 MT/s x 8 B = 19.2 GB/s theoretical (docs/performance-model.md, \"Target platform facts\"; vendor guidance 17-19 GB/s achievable with 512-bit bursts). The roofline, and a cap no kernel can beat.";
    /// Fraction of a bank's theoretical bandwidth a stream of sequential reads gets.
    ddr_efficiency_read: f64 = 0.97,
        unit "1",
        source "AMD UG585 (Zynq-7000 SoC Technical Reference Manual), 'DDR Efficiency' table: sequential reads 97 % of the controller's theoretical throughput. AMD gives no such table for the UltraScale+ DDR4 MIG (PG150 says to simulate the traffic); Tessera takes the figures of AMD's own DDR controller for the same traffic mixes (docs/performance-model.md, \"DDR efficiency\").";
    /// Fraction of a bank's theoretical bandwidth a stream of sequential writes gets.
    ddr_efficiency_write: f64 = 0.90,
        unit "1",
        source "AMD UG585, 'DDR Efficiency' table: sequential writes 90 % (docs/performance-model.md, \"DDR efficiency\").";
    /// Fraction of a bank's theoretical bandwidth when one bank serves reads and writes
    /// (bus turnarounds between them).
    ddr_efficiency_mixed: f64 = 0.87,
        unit "1",
        source "AMD UG585, 'DDR Efficiency' table: sequential reads and writes together 87 %, the cost of the bus turning around between them; with banks=2 a kernel's reads and writes use separate banks and each gets its one-direction figure (docs/performance-model.md, \"DDR efficiency\").";
    /// Time of one array access of the baseline kernel (ns).
    baseline_access_ns: f64 = 90.0,
        unit "ns",
        source "Calibration against the paper's baseline run times (docs/performance-model.md, \"Calibration\"): a plain HLS kernel behaves as if every array access were its own serialized single-beat round trip of roughly 90-100 ns (about 65 ns in one 1D case); duplicate reads of one element in one statement are merged. Lower end of the range: a slower baseline would inflate the speedups.";
    /// What a read ordered behind a write of its port costs, in read round trips: the
    /// factor on every access of an in-place baseline kernel (an array read and
    /// written through its one port), and the round trips a read burst of a tiled or
    /// dataflow kernel takes when its port requested a write before it
    /// ([`crate::Port::read_after_write`]).
    in_place_factor: f64 = 2.5,
        unit "x",
        source "Calibration against the paper's baseline run times (docs/performance-model.md, \"Calibration\"): in-place kernels (read-modify-write of the same array through one port) were 2.5-6x worse per access, consistent with waiting for write acknowledgements: AXI does not order a port's reads after its writes, so a read that may alias an earlier write is held until the write's response. The baseline charges it on every access; the tiled and dataflow kernels on every read burst their ports requested after a write (counted in emulation: read_after_write), which then takes this many read round trips. Lower end of the range: it keeps the baseline fast, and since the baseline's time grows in proportion to the factor and an optimized kernel's by less, the modelled speedups of in-place kernels are lower bounds with respect to it (their absolute optimized times are not: at 6x they would be slower).";
    /// Read round trip of a burst: read request to first beat (ns).
    read_round_trip_ns: f64 = 100.0,
        unit "ns",
        source "Calibration against the paper's optimized designs (docs/performance-model.md, \"Calibration\"): each round trip (read request -> first beat) roughly 100 ns.";
    /// Write round trip of a burst: last write beat to write response (ns).
    write_response_ns: f64 = 100.0,
        unit "ns",
        source "Calibration against the paper's optimized designs (docs/performance-model.md, \"Calibration\"): each round trip (last write beat -> response) roughly 100 ns.";
    /// Beats one AXI port moves per kernel clock cycle and direction.
    beats_per_cycle: f64 = 1.0,
        unit "beats/cycle",
        source "AXI4 data channels carry one beat per clock (docs/performance-model.md, \"AXI and Vitis HLS rules\"; the calibration counts beats at one per cycle).";
    /// Longest AXI4 incrementing burst (beats).
    axi_max_burst_beats: u64 = 256,
        unit "beats",
        source "AXI4 (ARM IHI 0022): INCR bursts are 1-256 beats (docs/performance-model.md, \"AXI and Vitis HLS rules\").";
    /// Address boundary no AXI burst crosses (bytes).
    axi_boundary_bytes: u64 = 4096,
        unit "B",
        source "AXI4 (ARM IHI 0022): a burst never crosses a 4 KiB boundary; at 64-byte beats a burst is at most 64 beats (docs/performance-model.md, \"AXI and Vitis HLS rules\").";
    /// Host <-> board transfer rate over PCIe, both directions (bytes per second).
    pcie_bytes_per_s: f64 = 1.55e9,
        unit "B/s",
        source "The paper's measured host transfers (docs/performance-model.md, \"Target platform facts\"): PCIe Gen3 x16 in theory, but the paper's measured end-to-end rate is about 1.53 GB/s to the device and 1.58 GB/s back; modelled as 1.55 GB/s, linear in bytes.";
    /// Latency of one floating-point operation (add, subtract, multiply, divide) on
    /// the critical path of the unrolled datapath (ns).
    fp_op_ns: f64 = 15.0,
        unit "ns",
        source "Tessera's estimate, not calibrated (docs/performance-model.md, \"Tessera's own estimates\"): a pipelined floating-point adder or multiplier of about 4-5 stages at about 300 MHz. Only the compute term of a row uses it, which is small next to the DDR round trips; and the II of a loop that accumulates a floating reduction in the loop's order (each iteration waits for the previous addition): a baseline loop's where it exceeds the iteration's accesses, a tiled kernel's row (its unrolled accumulations one after another) where it exceeds the row's depth.";
    /// The clock every design is modelled at unless `--clock-mhz` overrides it (MHz).
    paper_clock_mhz: f64 = 50.0,
        unit "MHz",
        source "The paper's comparison clock (docs/performance-model.md, \"Target platform facts\"): its frequency search found 50-345 MHz per design (3D 50-145, 2D 200-345), but its speedups were measured at 50 MHz 'to ease comparison'. A design's real clock is only known after synthesis.";
    /// The kernel clock a Vitis build for a VU9P board targets, for the bench's second
    /// roofline figure (MHz). Not timing-closed: a modelled what-if beside the paper's
    /// comparison clock, which stays the default of every other figure.
    target_clock_mhz: f64 = 250.0,
        unit "MHz",
        source "Vitis shells drive HLS kernels from the platform's scalable kernel clock (UG1393, 'Identifying Platform Clocks': clock ID 0, set at link time with v++ --kernel_frequency / --freqhz; its platforminfo example reports a 300 MHz default clock, 500 MHz for clock 1). Tessera takes 250 MHz, below that default, as the target of a VU9P kernel (the paper's 2D designs closed at 200-345 MHz, its 3D ones at 50-145). Modelled: not timing-closed (docs/performance-model.md, \"Target platform facts\").";
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_has_a_unit_and_a_source() {
        let t = Params::VCU118.table();
        assert_eq!(t.len(), 15);
        for p in &t {
            assert!(!p.unit.is_empty() && p.source.len() > 30, "{}", p.name);
        }
        assert_eq!(t[0].name, "ddr_bytes_per_s");
        assert_eq!(t[0].value, 19.2e9);
    }

    /// docs/performance.md lists every parameter.
    #[test]
    fn the_documentation_lists_every_parameter() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/performance.md");
        let doc = std::fs::read_to_string(&p).unwrap();
        for row in Params::VCU118.table() {
            assert!(doc.contains(&format!("| `{}` |", row.name)), "{} is not in {}", row.name, p.display());
        }
    }
}
