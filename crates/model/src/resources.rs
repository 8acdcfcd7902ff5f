//! A *modelled* estimate of the FPGA resources of one kernel — BRAM36, URAM, DSP, LUT
//! and FF — from its static structure, and a check against the XCVU9P's budget.
//!
//! Nothing here is synthesised: every figure is a sum of per-element costs, each a
//! [`ResourceParams`] entry with its source, and is reported as *modelled*. The
//! estimate answers "does this kernel plausibly fit the device, and what dominates
//! it", not "what will Vivado report".
//!
//! ```text
//! buffers    completely partitioned (Storage::Registers, what the tiled kernels use):
//!              FF  = bits,  LUT = bits · partitioned_lut_per_bit   (input multiplexer)
//!            in block memory (Storage::Bram / Uram): one memory of `elements` words of
//!              `elem_bits`; BRAM36 = min over the RAMB36E2 aspect ratios
//!              ⌈depth / d⌉ · ⌈width / w⌉ (32K×1 … 512×72, UG573); URAM = ⌈depth / 4096⌉ · ⌈width / 72⌉
//! datapath   Σ_op count_per_lane(op) · lanes · cost(op)   (floating-point operators,
//!              per precision: PG060 cores as Vitis HLS binds them by default; integer
//!              adders/comparators: one LUT and one FF per bit; integer multipliers on
//!              DSPs; selects: one LUT per bit)
//! index      per loop one counter and bound compare (2 · 32 LUT, 32 FF); per address
//!              generator `address_adders` 64-bit adders (row · length + column, with
//!              constant lengths folded into shifts and adds)
//! AXI        per m_axi port: LUT/FF base + per data bit; one BRAM FIFO of
//!              ⌈data_bits / 72⌉ BRAM36 (512 × 72) per direction it is used in
//! control    s_axilite: a base plus one 64-bit register per argument
//! ```
//!
//! What it does not cover: operator sharing (HLS never shares across unrolled lanes,
//! but it may share within a lane of a non-pipelined loop), Vivado's optimisations
//! (constant propagation into operators, retiming, LUT packing), library-dependent math
//! functions (`exp`, `sin`, …: counted in [`ResourceEstimate::unmodelled_ops`], charged
//! nothing), the platform shell (the static region of a Vitis platform takes a share of
//! the device this budget does not subtract), and routing congestion.

use serde::Serialize;
use std::fmt;

pub use crate::params::Param;

macro_rules! resource_params {
    ($( $(#[doc = $doc:expr])* $field:ident = $value:expr, unit $unit:expr, source $source:expr; )*) => {
        /// The resource model's costs and the device's budget (see the module docs;
        /// [`ResourceParams::XCVU9P`] is the only set the project uses).
        #[derive(Clone, Debug, PartialEq, Serialize)]
        pub struct ResourceParams {
            $( $(#[doc = $doc])* pub $field: f64, )*
        }

        impl ResourceParams {
            /// The VCU118's XCVU9P, with Vitis HLS's default operator bindings.
            pub const XCVU9P: ResourceParams = ResourceParams { $( $field: $value, )* };

            /// Every parameter with its value, unit and source, in declaration order.
            pub fn table(&self) -> Vec<Param> {
                vec![ $( Param { name: stringify!($field), value: self.$field, unit: $unit, source: $source }, )* ]
            }
        }
    };
}

const DS890: &str = "Xilinx DS890 UltraScale+ FPGA product tables, XCVU9P (the VCU118's device): 6,840 DSP slices, 2,160 BRAM36 (75.9 Mb), 960 URAM (270 Mb), 1,182,240 CLB LUTs, 2,364,480 CLB flip-flops. The whole device; a Vitis platform's static region would take a share of it (docs/performance-model.md, \"Target platform facts\").";
const PG060: &str = "modelled: typical Xilinx Floating-Point Operator (PG060) figures on UltraScale+ for the implementation Vitis HLS binds by default (add/sub 'full DSP usage', multiply 'max DSP usage', divide and square root without DSPs), rounded; not taken from a synthesis of Tessera's kernels. Quoted DSP counts: single add/sub 2, single multiply 3, double add/sub 3, double multiply 11 (docs/performance-model.md, \"Tessera's own estimates\").";
const TESSERA: &str = "modelled: Tessera's estimate, not calibrated against a synthesis report (docs/performance-model.md, \"Tessera's own estimates\").";

resource_params! {
    /// DSP slices of the device.
    device_dsp = 6840.0, unit "DSP48E2", source DS890;
    /// 36 Kb block RAMs of the device.
    device_bram36 = 2160.0, unit "RAMB36", source DS890;
    /// UltraRAM blocks of the device.
    device_uram = 960.0, unit "URAM288", source DS890;
    /// CLB LUTs of the device.
    device_lut = 1_182_240.0, unit "LUT6", source DS890;
    /// CLB flip-flops of the device.
    device_ff = 2_364_480.0, unit "FF", source DS890;

    /// Single-precision add/subtract: DSPs.
    sp_addsub_dsp = 2.0, unit "DSP", source PG060;
    /// Single-precision add/subtract: LUTs.
    sp_addsub_lut = 220.0, unit "LUT", source PG060;
    /// Single-precision add/subtract: flip-flops.
    sp_addsub_ff = 300.0, unit "FF", source PG060;
    /// Single-precision multiply: DSPs.
    sp_mul_dsp = 3.0, unit "DSP", source PG060;
    /// Single-precision multiply: LUTs.
    sp_mul_lut = 80.0, unit "LUT", source PG060;
    /// Single-precision multiply: flip-flops.
    sp_mul_ff = 150.0, unit "FF", source PG060;
    /// Single-precision divide (no DSPs): LUTs.
    sp_div_lut = 800.0, unit "LUT", source PG060;
    /// Single-precision divide (no DSPs): flip-flops.
    sp_div_ff = 1400.0, unit "FF", source PG060;
    /// Single-precision square root (no DSPs): LUTs.
    sp_sqrt_lut = 500.0, unit "LUT", source PG060;
    /// Single-precision square root (no DSPs): flip-flops.
    sp_sqrt_ff = 800.0, unit "FF", source PG060;
    /// Double-precision add/subtract: DSPs.
    dp_addsub_dsp = 3.0, unit "DSP", source PG060;
    /// Double-precision add/subtract: LUTs.
    dp_addsub_lut = 700.0, unit "LUT", source PG060;
    /// Double-precision add/subtract: flip-flops.
    dp_addsub_ff = 1000.0, unit "FF", source PG060;
    /// Double-precision multiply: DSPs.
    dp_mul_dsp = 11.0, unit "DSP", source PG060;
    /// Double-precision multiply: LUTs.
    dp_mul_lut = 200.0, unit "LUT", source PG060;
    /// Double-precision multiply: flip-flops.
    dp_mul_ff = 450.0, unit "FF", source PG060;
    /// Double-precision divide (no DSPs): LUTs.
    dp_div_lut = 3200.0, unit "LUT", source PG060;
    /// Double-precision divide (no DSPs): flip-flops.
    dp_div_ff = 3200.0, unit "FF", source PG060;
    /// Double-precision square root (no DSPs): LUTs.
    dp_sqrt_lut = 1800.0, unit "LUT", source PG060;
    /// Double-precision square root (no DSPs): flip-flops.
    dp_sqrt_ff = 2900.0, unit "FF", source PG060;
    /// Floating-point compare (`<`, `fmin`, `fmax`; either precision, the double
    /// figure): LUTs.
    fp_compare_lut = 70.0, unit "LUT", source PG060;
    /// Floating-point compare: flip-flops.
    fp_compare_ff = 10.0, unit "FF", source PG060;
    /// Conversion (float <-> double, integer <-> floating, floor/ceil/trunc/round; the
    /// double figure): LUTs.
    fp_convert_lut = 150.0, unit "LUT", source PG060;
    /// Conversion: flip-flops.
    fp_convert_ff = 200.0, unit "FF", source PG060;

    /// DSPs of an integer multiplier of up to 32 bits (a 64-bit one counts 3 times).
    int_mul_dsp = 3.0, unit "DSP", source "modelled: a 32 x 32-bit product on the 27 x 18 multipliers of DSP48E2 slices (UG579) as Vitis HLS reports it for mul_32s_32s_32 (3 DSPs); a 64-bit product is charged as three such.";
    /// LUTs of an integer divider or remainder of up to 32 bits (pipelined; a 64-bit
    /// one counts 4 times).
    int_div_lut = 1100.0, unit "LUT", source TESSERA;
    /// Flip-flops of an integer divider or remainder of up to 32 bits.
    int_div_ff = 2300.0, unit "FF", source TESSERA;
    /// LUTs per bit of an integer adder, subtractor, comparator or logic operation.
    int_lut_per_bit = 1.0, unit "LUT/bit", source "modelled: one LUT6 per bit of a carry-chain adder or comparator (UltraScale+ CLB: a LUT and a CARRY8 position per bit, UG574).";
    /// Flip-flops per bit of such an operation's pipeline register.
    int_ff_per_bit = 1.0, unit "FF/bit", source "modelled: one pipeline register per result bit.";
    /// Width of a loop counter (bits).
    counter_bits = 32.0, unit "bit", source "Tessera's generated loops count in int (crates/hls).";
    /// Width of an address computation (bits).
    address_bits = 64.0, unit "bit", source "Tessera's generated subscripts are linearised in long (crates/hls/src/cpp.rs).";
    /// Adders per address generator (row · row length + column, the constant row
    /// length folded into shifts and adds).
    address_adders = 2.0, unit "adders", source TESSERA;
    /// LUTs per register bit of a completely partitioned buffer (the multiplexer that
    /// selects what the register loads: a beat lane, its neighbour when a chunk
    /// shifts, or the datapath's result).
    partitioned_lut_per_bit = 1.0, unit "LUT/bit", source "modelled: a register with 2-4 sources needs one LUT6 per bit in front of it (UG574: a LUT6 is a 4:1 multiplexer).";
    /// LUTs of an m_axi adapter, fixed part.
    axi_port_lut = 600.0, unit "LUT", source "modelled: Vitis HLS m_axi adapter (address channel logic, burst counters, write strobes); typical HLS reports are 1-2 k LUT and FF for a 512-bit port, about 1 k for a 32-bit one. Tessera's estimate.";
    /// LUTs of an m_axi adapter per data bit.
    axi_port_lut_per_bit = 2.0, unit "LUT/bit", source "modelled: data path of the adapter (read and write alignment multiplexers). Tessera's estimate.";
    /// Flip-flops of an m_axi adapter, fixed part.
    axi_port_ff = 900.0, unit "FF", source "modelled: see axi_port_lut. Tessera's estimate.";
    /// Flip-flops of an m_axi adapter per data bit.
    axi_port_ff_per_bit = 3.0, unit "FF/bit", source "modelled: registered read data, write data and strobes. Tessera's estimate.";
    /// Depth of an m_axi adapter's burst FIFO (beats), one per direction used.
    axi_fifo_depth = 512.0, unit "beats", source "modelled: a FIFO deep enough for the 256-beat bursts the kernels declare (max_read/write_burst_length=256), in the 512 x 72 aspect of a RAMB36 (UG573).";
    /// LUTs of the s_axilite control adapter, fixed part.
    control_lut = 200.0, unit "LUT", source TESSERA;
    /// Flip-flops of the s_axilite control adapter, fixed part.
    control_ff = 250.0, unit "FF", source TESSERA;
    /// Register bits per kernel argument in the control adapter.
    control_bits_per_arg = 64.0, unit "bit", source "Vitis HLS: a 64-bit offset register per m_axi argument; scalars are charged the same.";
}

/// Floating-point precision of an operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Precision {
    /// `float`.
    Single,
    /// `double`.
    Double,
}

/// A floating-point operator kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FpOp {
    /// `+`, `-`.
    AddSub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `sqrt`.
    Sqrt,
    /// Comparisons, `fmin`, `fmax`.
    Compare,
    /// Conversions between the precisions or with integers; rounding to integral
    /// values.
    Convert,
}

impl FpOp {
    /// Short name for the dump.
    pub fn name(self) -> &'static str {
        match self {
            FpOp::AddSub => "add/sub",
            FpOp::Mul => "mul",
            FpOp::Div => "div",
            FpOp::Sqrt => "sqrt",
            FpOp::Compare => "cmp",
            FpOp::Convert => "cvt",
        }
    }
}

/// Operators of one lane of the datapath (one execution of the statements).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct LaneOps {
    /// Floating-point operators: (kind, precision, count), one entry per kind and
    /// precision, sorted.
    pub fp: Vec<(FpOp, Precision, u64)>,
    /// Bits of integer adders, subtractors, comparators and logic operations.
    pub int_bits: u64,
    /// Integer multipliers, in units of a 32-bit one.
    pub int_muls: u64,
    /// Integer dividers and remainders, in units of a 32-bit one.
    pub int_divs: u64,
    /// Bits selected by `?:` (one LUT each).
    pub select_bits: u64,
    /// Library-dependent math functions (`exp`, `sin`, …): not charged.
    pub unmodelled: u64,
}

impl LaneOps {
    /// Adds `n` operators of a kind.
    pub fn add_fp(&mut self, op: FpOp, p: Precision, n: u64) {
        match self.fp.iter_mut().find(|(o, q, _)| *o == op && *q == p) {
            Some(e) => e.2 += n,
            None => {
                self.fp.push((op, p, n));
                self.fp.sort();
            }
        }
    }

    /// How many operators of a kind.
    pub fn fp_count(&self, op: FpOp, p: Precision) -> u64 {
        self.fp.iter().find(|(o, q, _)| *o == op && *q == p).map_or(0, |e| e.2)
    }
}

/// Where a buffer lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Storage {
    /// Completely partitioned into registers (`ARRAY_PARTITION complete`): what the
    /// tiled kernels declare for every cache buffer.
    Registers,
    /// One block RAM memory (Vitis HLS's default for an unpartitioned array).
    Bram,
    /// One UltraRAM memory (`BIND_STORAGE impl=uram`).
    Uram,
}

/// One on-chip buffer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BufferShape {
    /// Name in the kernel.
    pub name: String,
    /// Declared shape (alignment halo included).
    pub shape: Vec<u64>,
    /// Bits per element.
    pub elem_bits: u64,
    /// Where it lives.
    pub storage: Storage,
}

impl BufferShape {
    /// Elements.
    pub fn elements(&self) -> u64 {
        self.shape.iter().product()
    }

    /// Bits.
    pub fn bits(&self) -> u64 {
        self.elements() * self.elem_bits
    }
}

/// One m_axi port.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AxiPort {
    /// The array.
    pub name: String,
    /// Data bus width (bits): a beat.
    pub data_bits: u64,
    /// Whether the kernel reads through it.
    pub reads: bool,
    /// Whether the kernel writes through it.
    pub writes: bool,
}

/// The structure the estimate is computed from.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct KernelShape {
    /// On-chip buffers.
    pub buffers: Vec<BufferShape>,
    /// Copies of the datapath (the unrolled innermost loop's trip count; 1 for a
    /// kernel that computes one iteration at a time).
    pub lanes: u64,
    /// Operators of one lane.
    pub ops: LaneOps,
    /// Loops of the kernel (each a counter and a bound compare).
    pub loops: u64,
    /// Address generators (one per shipped buffer or per uncached access).
    pub address_generators: u64,
    /// m_axi ports.
    pub ports: Vec<AxiPort>,
    /// Kernel arguments (registers of the control adapter).
    pub args: u64,
}

/// FPGA resources (modelled).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct Resources {
    /// 36 Kb block RAMs.
    pub bram36: u64,
    /// UltraRAM blocks.
    pub uram: u64,
    /// DSP slices.
    pub dsp: u64,
    /// LUTs.
    pub lut: u64,
    /// Flip-flops.
    pub ff: u64,
}

impl std::ops::Add for Resources {
    type Output = Resources;
    fn add(self, o: Resources) -> Resources {
        Resources { bram36: self.bram36 + o.bram36, uram: self.uram + o.uram, dsp: self.dsp + o.dsp, lut: self.lut + o.lut, ff: self.ff + o.ff }
    }
}

impl fmt::Display for Resources {
    /// `BRAM36 0  URAM 0  DSP 1216  LUT 41000  FF 52000`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BRAM36 {}  URAM {}  DSP {}  LUT {}  FF {}", self.bram36, self.uram, self.dsp, self.lut, self.ff)
    }
}

/// The estimate, by part (the parts add up to `total`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ResourceEstimate {
    /// Everything.
    pub total: Resources,
    /// On-chip buffers.
    pub buffers: Resources,
    /// Floating-point and integer operators of all lanes.
    pub datapath: Resources,
    /// Loop counters and address generators.
    pub index: Resources,
    /// m_axi adapters.
    pub axi: Resources,
    /// s_axilite control.
    pub control: Resources,
    /// Library-dependent math calls of all lanes, charged nothing.
    pub unmodelled_ops: u64,
}

/// The share of the device's budget an estimate uses.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Usage {
    /// BRAM36 used ÷ available.
    pub bram36: f64,
    /// URAM used ÷ available.
    pub uram: f64,
    /// DSP used ÷ available.
    pub dsp: f64,
    /// LUT used ÷ available.
    pub lut: f64,
    /// FF used ÷ available.
    pub ff: f64,
    /// The resource with the largest fraction.
    pub binding: &'static str,
    /// Every fraction at most 1.
    pub fits: bool,
}

impl Usage {
    /// The largest fraction.
    pub fn max(&self) -> f64 {
        self.bram36.max(self.uram).max(self.dsp).max(self.lut).max(self.ff)
    }
}

/// The fewest RAMB36E2 blocks holding `depth` words of `width` bits, over the block's
/// aspect ratios (UG573: 32K×1, 16K×2, 8K×4, 4K×9, 2K×18, 1K×36, 512×72).
pub fn bram36_blocks(depth: u64, width: u64) -> u64 {
    if depth == 0 || width == 0 {
        return 0;
    }
    const ASPECTS: [(u64, u64); 7] = [(32768, 1), (16384, 2), (8192, 4), (4096, 9), (2048, 18), (1024, 36), (512, 72)];
    ASPECTS.iter().map(|&(d, w)| depth.div_ceil(d) * width.div_ceil(w)).min().expect("aspects")
}

/// URAM288 blocks holding `depth` words of `width` bits (4K×72 only, UG573).
pub fn uram_blocks(depth: u64, width: u64) -> u64 {
    if depth == 0 || width == 0 {
        return 0;
    }
    depth.div_ceil(4096) * width.div_ceil(72)
}

fn round(x: f64) -> u64 {
    x.max(0.0).round() as u64
}

/// Resources of `n` floating-point operators of one kind.
pub fn fp_op_cost(op: FpOp, prec: Precision, n: u64, p: &ResourceParams) -> Resources {
    let (dsp, lut, ff) = match (op, prec) {
        (FpOp::AddSub, Precision::Single) => (p.sp_addsub_dsp, p.sp_addsub_lut, p.sp_addsub_ff),
        (FpOp::AddSub, Precision::Double) => (p.dp_addsub_dsp, p.dp_addsub_lut, p.dp_addsub_ff),
        (FpOp::Mul, Precision::Single) => (p.sp_mul_dsp, p.sp_mul_lut, p.sp_mul_ff),
        (FpOp::Mul, Precision::Double) => (p.dp_mul_dsp, p.dp_mul_lut, p.dp_mul_ff),
        (FpOp::Div, Precision::Single) => (0.0, p.sp_div_lut, p.sp_div_ff),
        (FpOp::Div, Precision::Double) => (0.0, p.dp_div_lut, p.dp_div_ff),
        (FpOp::Sqrt, Precision::Single) => (0.0, p.sp_sqrt_lut, p.sp_sqrt_ff),
        (FpOp::Sqrt, Precision::Double) => (0.0, p.dp_sqrt_lut, p.dp_sqrt_ff),
        (FpOp::Compare, _) => (0.0, p.fp_compare_lut, p.fp_compare_ff),
        (FpOp::Convert, _) => (0.0, p.fp_convert_lut, p.fp_convert_ff),
    };
    let n = n as f64;
    Resources { bram36: 0, uram: 0, dsp: round(dsp * n), lut: round(lut * n), ff: round(ff * n) }
}

/// Resources of one buffer.
pub fn buffer_cost(b: &BufferShape, p: &ResourceParams) -> Resources {
    match b.storage {
        Storage::Registers => Resources { ff: b.bits(), lut: round(b.bits() as f64 * p.partitioned_lut_per_bit), ..Resources::default() },
        Storage::Bram => Resources { bram36: bram36_blocks(b.elements(), b.elem_bits), ..Resources::default() },
        Storage::Uram => Resources { uram: uram_blocks(b.elements(), b.elem_bits), ..Resources::default() },
    }
}

/// The modelled resources of a kernel (formulas in the module docs).
pub fn estimate_resources(k: &KernelShape, p: &ResourceParams) -> ResourceEstimate {
    let buffers = k.buffers.iter().map(|b| buffer_cost(b, p)).fold(Resources::default(), |a, x| a + x);

    let lane = {
        let fp = k.ops.fp.iter().map(|&(op, prec, n)| fp_op_cost(op, prec, n, p)).fold(Resources::default(), |a, x| a + x);
        let int_bits = k.ops.int_bits as f64;
        let divs = k.ops.int_divs as f64;
        fp + Resources {
            bram36: 0,
            uram: 0,
            dsp: round(k.ops.int_muls as f64 * p.int_mul_dsp),
            lut: round(int_bits * p.int_lut_per_bit + divs * p.int_div_lut + k.ops.select_bits as f64),
            ff: round(int_bits * p.int_ff_per_bit + divs * p.int_div_ff),
        }
    };
    let lanes = k.lanes.max(1);
    let datapath = Resources { bram36: 0, uram: 0, dsp: lane.dsp * lanes, lut: lane.lut * lanes, ff: lane.ff * lanes };

    // A counter (adder) and its bound compare per loop; `address_adders` adders per
    // address generator.
    let counter_bits = k.loops as f64 * p.counter_bits;
    let address_bits = k.address_generators as f64 * p.address_adders * p.address_bits;
    let index = Resources {
        bram36: 0,
        uram: 0,
        dsp: 0,
        lut: round((2.0 * counter_bits + address_bits) * p.int_lut_per_bit),
        ff: round((counter_bits + address_bits) * p.int_ff_per_bit),
    };

    let axi = k
        .ports
        .iter()
        .map(|x| {
            let bits = x.data_bits as f64;
            let fifos = u64::from(x.reads) + u64::from(x.writes);
            Resources {
                bram36: fifos * bram36_blocks(p.axi_fifo_depth as u64, x.data_bits),
                uram: 0,
                dsp: 0,
                lut: round(p.axi_port_lut + bits * p.axi_port_lut_per_bit),
                ff: round(p.axi_port_ff + bits * p.axi_port_ff_per_bit),
            }
        })
        .fold(Resources::default(), |a, x| a + x);

    let reg_bits = k.args as f64 * p.control_bits_per_arg;
    let control = Resources { bram36: 0, uram: 0, dsp: 0, lut: round(p.control_lut + reg_bits * p.int_lut_per_bit), ff: round(p.control_ff + reg_bits) };

    ResourceEstimate {
        total: buffers + datapath + index + axi + control,
        buffers,
        datapath,
        index,
        axi,
        control,
        unmodelled_ops: k.ops.unmodelled * lanes,
    }
}

/// The share of the device's budget `r` uses, and whether it fits.
pub fn usage(r: &Resources, p: &ResourceParams) -> Usage {
    let f = |used: u64, avail: f64| used as f64 / avail;
    let parts = [
        ("BRAM36", f(r.bram36, p.device_bram36)),
        ("URAM", f(r.uram, p.device_uram)),
        ("DSP", f(r.dsp, p.device_dsp)),
        ("LUT", f(r.lut, p.device_lut)),
        ("FF", f(r.ff, p.device_ff)),
    ];
    let binding = parts.iter().fold(parts[0], |a, &x| if x.1 > a.1 { x } else { a }).0;
    Usage {
        bram36: parts[0].1,
        uram: parts[1].1,
        dsp: parts[2].1,
        lut: parts[3].1,
        ff: parts[4].1,
        binding,
        fits: parts.iter().all(|x| x.1 <= 1.0),
    }
}

impl ResourceEstimate {
    /// The stable text dump: one line per part, the total, the budget used. Every
    /// line says the figures are modelled.
    pub fn dump(&self, p: &ResourceParams) -> String {
        let u = usage(&self.total, p);
        let mut o = String::new();
        let line = |o: &mut String, what: &str, r: &Resources| o.push_str(&format!("    {what:<9} {r}\n"));
        o.push_str("  resources (modelled, XCVU9P):\n");
        line(&mut o, "buffers", &self.buffers);
        line(&mut o, "datapath", &self.datapath);
        line(&mut o, "index", &self.index);
        line(&mut o, "axi", &self.axi);
        line(&mut o, "control", &self.control);
        line(&mut o, "total", &self.total);
        o.push_str(&format!("    budget    {}\n", u.describe()));
        if self.unmodelled_ops > 0 {
            o.push_str(&format!("    not charged: {} library-dependent math call(s)\n", self.unmodelled_ops));
        }
        o
    }
}

impl Usage {
    /// `BRAM36 0.0%  URAM 0.0%  DSP 17.8%  LUT 3.5%  FF 2.2%  (DSP binding; fits)`.
    pub fn describe(&self) -> String {
        format!(
            "BRAM36 {:.1}%  URAM {:.1}%  DSP {:.1}%  LUT {:.1}%  FF {:.1}%  ({} binding; {})",
            100.0 * self.bram36,
            100.0 * self.uram,
            100.0 * self.dsp,
            100.0 * self.lut,
            100.0 * self.ff,
            self.binding,
            if self.fits { "fits" } else { "DOES NOT FIT" }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: ResourceParams = ResourceParams::XCVU9P;

    #[test]
    fn every_parameter_has_a_unit_and_a_source() {
        let t = P.table();
        for r in &t {
            assert!(!r.unit.is_empty() && r.source.len() > 30, "{}", r.name);
        }
        assert_eq!(t[0].name, "device_dsp");
        assert_eq!((P.device_dsp, P.device_bram36, P.device_uram, P.device_lut, P.device_ff), (6840.0, 2160.0, 960.0, 1_182_240.0, 2_364_480.0));
        assert!(t.iter().all(|r| r.source.contains("modelled") || r.name.starts_with("device_") || r.name.contains("bits")), "every cost says it is modelled");
    }

    /// docs/performance.md lists every resource parameter.
    #[test]
    fn the_documentation_lists_every_parameter() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/performance.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        for row in P.table() {
            assert!(doc.contains(&format!("| `{}` |", row.name)), "{} is not in {}", row.name, path.display());
        }
    }

    /// RAMB36E2 aspect ratios: 1024 floats are one block (1K×36); 1025 need two, or
    /// 2K×18 twice; 4096 × 72 bits is 8 blocks of 512×72; a URAM holds 4K×72.
    #[test]
    fn block_memory_mapping() {
        assert_eq!(bram36_blocks(1024, 32), 1);
        assert_eq!(bram36_blocks(1025, 32), 2);
        assert_eq!(bram36_blocks(512, 512), 8); // 512×72: ⌈512/72⌉ = 8
        assert_eq!(bram36_blocks(4096, 72), 8);
        assert_eq!(bram36_blocks(32768, 1), 1);
        assert_eq!(bram36_blocks(100, 64), 1); // 512×72
        assert_eq!(bram36_blocks(0, 32), 0);
        assert_eq!(uram_blocks(4096, 72), 1);
        assert_eq!(uram_blocks(4097, 32), 2);
        assert_eq!(uram_blocks(16384, 64), 4);
    }

    /// The 2D-jacobi tiled kernel at tiles 64², w = 16: chunk A_c[3][80] and line
    /// B_l[1][80] of floats, completely partitioned: 320 · 32 = 10 240 register bits,
    /// as many FFs and LUTs; the same buffers in BRAM: 240 and 80 words of 32 bits,
    /// one block each (512×72); in URAM one each.
    #[test]
    fn jacobi_2d_buffers() {
        let buf = |name: &str, shape: Vec<u64>, storage| BufferShape { name: name.into(), shape, elem_bits: 32, storage };
        let regs = [buf("A_c", vec![3, 80], Storage::Registers), buf("B_l", vec![1, 80], Storage::Registers)];
        let r = regs.iter().map(|b| buffer_cost(b, &P)).fold(Resources::default(), |a, x| a + x);
        assert_eq!(r, Resources { bram36: 0, uram: 0, dsp: 0, lut: 10_240, ff: 10_240 });
        let bram = buffer_cost(&buf("A_c", vec![3, 80], Storage::Bram), &P);
        assert_eq!(bram, Resources { bram36: 1, ..Resources::default() });
        let uram = buffer_cost(&buf("A_c", vec![3, 80], Storage::Uram), &P);
        assert_eq!(uram, Resources { uram: 1, ..Resources::default() });
    }

    /// A 5-point single-precision stencil (4 add/sub, 1 multiply per output) × 16
    /// lanes: 16 · (4 · 2 + 3) = 176 DSPs, 16 · (4 · 220 + 80) = 15 360 LUTs,
    /// 16 · (4 · 300 + 150) = 21 600 FFs. In double: 16 · (4 · 3 + 11) = 368 DSPs.
    #[test]
    fn five_point_stencil_operators() {
        let mut ops = LaneOps::default();
        ops.add_fp(FpOp::AddSub, Precision::Single, 4);
        ops.add_fp(FpOp::Mul, Precision::Single, 1);
        let k = KernelShape { lanes: 16, ops: ops.clone(), ..KernelShape::default() };
        let e = estimate_resources(&k, &P);
        assert_eq!(e.datapath, Resources { bram36: 0, uram: 0, dsp: 176, lut: 15_360, ff: 21_600 });
        let mut d = LaneOps::default();
        d.add_fp(FpOp::AddSub, Precision::Double, 4);
        d.add_fp(FpOp::Mul, Precision::Double, 1);
        assert_eq!(estimate_resources(&KernelShape { lanes: 16, ops: d, ..KernelShape::default() }, &P).datapath.dsp, 368);
        // add_fp merges entries of one kind.
        ops.add_fp(FpOp::AddSub, Precision::Single, 1);
        assert_eq!(ops.fp_count(FpOp::AddSub, Precision::Single), 5);
        assert_eq!(ops.fp.len(), 2);
    }

    /// Index, AXI and control parts of a small kernel: 4 loops, 2 address
    /// generators, a 512-bit read port and a 512-bit write port, 3 arguments.
    #[test]
    fn index_axi_and_control() {
        let port = |name: &str, reads, writes| AxiPort { name: name.into(), data_bits: 512, reads, writes };
        let k = KernelShape {
            lanes: 1,
            loops: 4,
            address_generators: 2,
            ports: vec![port("A", true, false), port("B", false, true)],
            args: 3,
            ..KernelShape::default()
        };
        let e = estimate_resources(&k, &P);
        // 4 · 32 counter bits (2 LUT, 1 FF each) + 2 · 2 · 64 address bits.
        assert_eq!(e.index, Resources { lut: 2 * 128 + 256, ff: 128 + 256, ..Resources::default() });
        // Per port: 600 + 2 · 512 LUT, 900 + 3 · 512 FF, one 512-bit FIFO = 8 BRAM36.
        assert_eq!(e.axi, Resources { bram36: 16, uram: 0, dsp: 0, lut: 2 * 1624, ff: 2 * 2436 });
        assert_eq!(e.control, Resources { lut: 200 + 192, ff: 250 + 192, ..Resources::default() });
        assert_eq!(e.total, e.index + e.axi + e.control);
    }

    #[test]
    fn budget_check() {
        let r = Resources { bram36: 216, uram: 0, dsp: 3420, lut: 118_224, ff: 236_448 };
        let u = usage(&r, &P);
        assert_eq!((u.bram36, u.dsp, u.lut, u.ff), (0.1, 0.5, 0.1, 0.1));
        assert_eq!(u.binding, "DSP");
        assert!(u.fits);
        let over = usage(&Resources { dsp: 6841, ..r }, &P);
        assert!(!over.fits && over.max() > 1.0);
        assert!(over.describe().ends_with("(DSP binding; DOES NOT FIT)"), "{}", over.describe());
        let k = KernelShape { lanes: 2, ops: LaneOps { unmodelled: 1, ..LaneOps::default() }, ..KernelShape::default() };
        let e = estimate_resources(&k, &P);
        let d = e.dump(&P);
        assert!(d.starts_with("  resources (modelled, XCVU9P):\n    buffers   BRAM36 0  URAM 0  DSP 0  LUT 0  FF 0\n"), "{d}");
        assert!(d.contains("not charged: 2 library-dependent math call(s)"), "{d}");
    }
}
