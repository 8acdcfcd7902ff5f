//! `tessera bench`: the paper's ten stencils (`bench/stencils/*.c`,
//! `docs/benchmarks.md`) built with Tessera, run on the emulated device,
//! checked bit for bit, and modelled on the VCU118.
//!
//! ```text
//! per stencil:
//!   tessera cc -O2 -D<size> -fplugin-arg-tessera-{mode,tile,port-width,dump-ir}=…   measured: compile_s
//!   ./stencil  (TESSERA_DEVICE=emu, TESSERA_REPORT, OMP_TARGET_OFFLOAD=MANDATORY)
//!       "<name>: bit-exact", exit 0                                        bit_exact
//!       report line: exact DDR bytes, bursts per length                    exact
//!   the dumped region IR ─ analysis::facts ─► iterations, accesses, depth, compulsory bytes
//!                        ─ tessera_poly::optimize ─► plan: buffer elements, rows   measured: optimizer_s
//!   tessera_model::estimate(structure, exact traffic, clock) ─► seconds   modelled
//!                                          (and at the target clock: not timing-closed)
//!   shape::{tiled, baseline}(IR, plan) ─ tessera_model::estimate_resources ─►
//!       BRAM36, URAM, DSP, LUT, FF and the XCVU9P budget used               modelled
//! ```
//!
//! The baseline kernel is always built and run too: it is the reference of the
//! speedup, and its counts feed the modelled baseline time. A mode the compiler does
//! not know yet (`unknown mode`) is reported per stencil, never fatal.
//!
//! Modules: [`analysis`] (pure facts from the IR and plan), [`shape`] (the structure
//! the resource model needs), [`runreport`] (the runtime
//! report), [`driver`] (builds and runs: the only I/O), [`output`] (table, JSON, SVG).
//! Figures are labelled by kind (docs/performance-model.md): *exact* counts, *modelled* FPGA
//! time, *measured here* compile and emulation times.

#![warn(missing_docs)]

pub mod analysis;
pub mod driver;
pub mod dse;
pub mod output;
pub mod program;
pub mod runreport;
/// The structure the resource model needs (it lives with the compiler, which chooses
/// tile sizes with it).
pub use tessera_compiler::shape;

pub use driver::{run, Env};
use serde::{Deserialize, Serialize};
pub use tessera_ir::{Mode, RunMode};
use tessera_model::ClockRule;

/// The ten stencils of the paper's Table 1, in its order.
pub const STENCILS: [&str; 10] =
    ["1D-jacobi", "2D-5p", "2D-9p", "2D-jacobi", "2D-fdtd0", "2D-fdtd1", "2D-fdtd2", "3D-19p", "3D-27p", "3D-heat"];

/// Dimensionality of a stencil, from its name (`1D-…`, `2D-…`, `3D-…`).
pub fn dims(name: &str) -> usize {
    match name.as_bytes().first() {
        Some(b'1') => 1,
        Some(b'3') => 3,
        _ => 2,
    }
}

/// Problem size.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Size {
    /// The paper's: 64 MiB per array (1D N = 2^24, 2D 4096², 3D 256³).
    Paper,
    /// The sources' defaults: small, odd sizes (tests).
    Small,
}

impl Size {
    /// Parses `paper` / `small`.
    pub fn parse(s: &str) -> Result<Size, String> {
        match s {
            "paper" => Ok(Size::Paper),
            "small" => Ok(Size::Small),
            _ => Err(format!("--size {s}: expected paper or small")),
        }
    }

    /// The spelling.
    pub fn name(self) -> &'static str {
        match self {
            Size::Paper => "paper",
            Size::Small => "small",
        }
    }

    /// The `-D` flags for a stencil of `d` dimensions.
    pub fn defines(self, d: usize) -> Vec<String> {
        match (self, d) {
            (Size::Small, _) => Vec::new(),
            (Size::Paper, 1) => vec!["-DN=16777216".into()],
            (Size::Paper, 2) => vec!["-DNI=4096".into(), "-DNJ=4096".into()],
            (Size::Paper, _) => vec!["-DNI=256".into(), "-DNJ=256".into(), "-DNK=256".into()],
        }
    }
}

/// Tile-size preset (docs/benchmarks.md, "Configurations used by the paper").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Tiles {
    /// The paper's "half" tiles: 256, 32², 16³.
    Small,
    /// The paper's "default" tiles: 512, 64², 32³.
    Default,
    /// The large tiles of the paper's headline figures: 1024, 128², 32³ (also
    /// `tessera_poly::default_tile_sizes`).
    Large,
}

impl Tiles {
    /// Parses `small` / `default` / `large`.
    pub fn parse(s: &str) -> Result<Tiles, String> {
        match s {
            "small" => Ok(Tiles::Small),
            "default" => Ok(Tiles::Default),
            "large" => Ok(Tiles::Large),
            _ => Err(format!("--tiles {s}: expected small, default or large")),
        }
    }

    /// The spelling.
    pub fn name(self) -> &'static str {
        match self {
            Tiles::Small => "small",
            Tiles::Default => "default",
            Tiles::Large => "large",
        }
    }

    /// Tile sizes for a nest of depth `d`, outermost first
    /// (`tessera_poly::preset_tile_sizes`, the plugin's `tile=<preset>`).
    pub fn sizes(self, d: usize) -> Vec<i64> {
        tessera_poly::preset_tile_sizes(self.name(), d).expect("every preset has sizes")
    }
}

/// Kernel modes the bench knows how to model.
pub const MODES: [Mode; 4] = Mode::ALL;

/// One benchmark configuration.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Config {
    /// Problem size.
    pub size: Size,
    /// Tile sizes.
    pub tiles: Tiles,
    /// Port width in elements per beat (4, 8, 16).
    pub port_width: u32,
    /// Kernel mode.
    pub mode: Mode,
    /// DDR banks the kernels use (`-fplugin-arg-tessera-banks`): 1 or 2.
    pub banks: u32,
    /// How the modelled clock is chosen.
    #[serde(skip)]
    pub clock: ClockRule,
}

impl Default for Config {
    fn default() -> Self {
        Config { size: Size::Paper, tiles: Tiles::Default, port_width: 16, mode: Mode::Paper, banks: 1, clock: ClockRule::Paper }
    }
}

/// Exact counts of the configured kernel's run (docs/performance-model.md, kind 1).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Exact {
    /// DDR bytes read.
    pub ddr_read_bytes: u64,
    /// DDR bytes written.
    pub ddr_write_bytes: u64,
    /// Each element read once plus each element written once (`None`: not a box).
    pub compulsory_bytes: Option<u64>,
    /// AXI transactions, both directions.
    pub bursts: u64,
    /// Of those, the round trips on the kernel's critical path (the emulated ports'
    /// `read_exposed` + `write_exposed`); the rest overlapped other work.
    pub exposed_round_trips: u64,
    /// Read bursts the ports ordered behind their own writes (the emulated ports'
    /// `read_after_write`, all arrays): each waits for a write response, `in_place_factor`
    /// read round trips in the model.
    pub read_after_write: u64,
    /// On-chip buffer elements of the kernel (0 for the baseline, the plan's total
    /// otherwise).
    pub buffer_elements: u64,
    /// (DDR bytes read + written) ÷ compulsory bytes.
    pub traffic_ratio: Option<f64>,
    /// Host → device bytes (PCIe).
    pub bytes_to_device: u64,
    /// Device → host bytes (PCIe).
    pub bytes_from_device: u64,
}

/// The baseline kernel's figures (exact counts, modelled time, measured times).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct BaselineFigures {
    /// Exact DDR bytes read.
    pub ddr_read_bytes: u64,
    /// Exact DDR bytes written.
    pub ddr_write_bytes: u64,
    /// Exact bursts.
    pub bursts: u64,
    /// Modelled seconds.
    pub modelled_s: f64,
    /// Modelled cycles.
    pub modelled_cycles: u64,
    /// Modelled fraction of the DDR roofline.
    pub roofline_fraction: f64,
    /// Measured emulation time of the kernel.
    pub emulation_s: Option<f64>,
    /// Measured `tessera cc` time.
    pub compile_s: f64,
    /// Modelled resources of the baseline kernel.
    pub resources: Option<ResourceFigures>,
}

/// Modelled FPGA figures (docs/performance-model.md, kind 2).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Modelled {
    /// The baseline kernel's time.
    pub baseline_s: f64,
    /// The configured kernel's time.
    pub kernel_s: f64,
    /// The configured kernel's cycles.
    pub kernel_cycles: u64,
    /// DDR bytes ÷ 19.2 GB/s.
    pub roofline_s: f64,
    /// PCIe transfers.
    pub host_transfer_s: f64,
    /// The clock of both designs.
    pub clock_mhz: f64,
    /// `baseline_s / kernel_s`.
    pub speedup: f64,
    /// `roofline_s / kernel_s`.
    pub roofline_fraction: f64,
    /// The baseline's `roofline_s / baseline_s` (its own traffic).
    pub baseline_roofline_fraction: f64,
    /// `host_transfer_s + kernel_s`.
    pub end_to_end_s: f64,
    /// `cycles` or `bandwidth`.
    pub bound: String,
    /// The structure the kernel was modelled with.
    pub structure: String,
    /// The target clock of a Vitis build ([`tessera_model::Params::target_clock_mhz`]),
    /// for the figures below: a what-if, not timing-closed.
    pub target_clock_mhz: f64,
    /// The configured kernel's time at the target clock.
    pub target_kernel_s: f64,
    /// Its fraction of the DDR roofline at the target clock.
    pub target_roofline_fraction: f64,
    /// The port-bound floor: the most beats one port moves in one direction (exact
    /// count; a port reads and writes at most one beat per cycle each).
    pub port_floor_cycles: u64,
    /// The kernel's cycles at the target clock ÷ `port_floor_cycles`.
    pub target_cycles_over_floor: f64,
    /// The same kernel's time at the target clock with its arrays on two DDR banks
    /// (written arrays in the second; the configured run's when it used two).
    pub two_banks_target_kernel_s: f64,
    /// The one-bank roofline (all bytes ÷ 19.2 GB/s) ÷ `two_banks_target_kernel_s`:
    /// how far past one bank's peak two banks take the kernel.
    pub two_banks_over_one_bank_roofline: f64,
    /// The most any placement of whole arrays on two banks could give (the one-bank
    /// roofline ÷ the best placement's busiest bank, both theoretical): an in-place
    /// array's reads and writes share its bank, so three equal streams (fdtd's) split
    /// two against one, at most 1.5 ×.
    pub two_banks_whole_array_bound: f64,
}

/// Modelled FPGA resources of a kernel and the share of the XCVU9P they use
/// (`tessera_model::resources`; derived by [`shape`] from the IR and the plan).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ResourceFigures {
    /// The kernel the estimate is for (`baseline`, `paper`, `tessera`).
    pub kernel: String,
    /// Copies of the datapath (the unrolled innermost intra-tile loop; 1 for the baseline).
    pub lanes: u64,
    /// BRAM36, URAM, DSP, LUT, FF.
    #[serde(flatten)]
    pub total: tessera_model::Resources,
    /// Fractions of the device's budget, the binding resource, whether it fits.
    pub usage: tessera_model::Usage,
    /// Library-dependent math calls, charged nothing.
    pub unmodelled_ops: u64,
}

impl ResourceFigures {
    /// The estimate of `kernel` with the structure `shape`.
    pub fn new(kernel: &str, shape: &tessera_model::KernelShape, p: &tessera_model::ResourceParams) -> ResourceFigures {
        let e = tessera_model::estimate_resources(shape, p);
        ResourceFigures {
            kernel: kernel.to_string(),
            lanes: shape.lanes,
            total: e.total,
            usage: tessera_model::usage(&e.total, p),
            unmodelled_ops: e.unmodelled_ops,
        }
    }
}

/// Times measured on this machine (docs/performance-model.md, kind 3).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Measured {
    /// `tessera cc` of the configured kernel (wall).
    pub compile_s: Option<f64>,
    /// `tessera_poly::optimize` on the region (in this process).
    pub optimizer_s: Option<f64>,
    /// The configured kernel on the emulated device (`kernel_wall_s`).
    pub emulation_s: Option<f64>,
    /// The region's loop nest run sequentially on this machine's CPU, compiled by
    /// `tessera cc -O2` (clang -O2 -fopenmp; the plugin leaves non-target code alone)
    /// in the same program and run just before the region: the yardstick of the
    /// emulation's speed (`emulation_s / host_loop_s`).
    pub host_loop_s: Option<f64>,
    /// The whole program (CPU reference, transfers, kernel).
    pub run_s: Option<f64>,
}

/// How one stencil went.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Built, ran on the emulated device, bit-exact, modelled.
    Ok,
    /// The compiler does not generate the requested mode (yet); the baseline ran.
    ModeUnavailable,
    /// The result differs from the CPU's.
    Mismatch,
    /// A build, run, report or model step failed.
    Failed,
}

impl Status {
    /// Whether this makes the bench fail.
    pub fn is_failure(self) -> bool {
        matches!(self, Status::Mismatch | Status::Failed)
    }
}

/// The result of one stencil (the JSON record; field names are an interface).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StencilResult {
    /// Stencil name.
    pub name: String,
    /// Configuration.
    pub config: StencilConfig,
    /// Outcome.
    pub status: Status,
    /// What went wrong (or the mode message).
    pub error: Option<String>,
    /// Whether the configured kernel's results equal the CPU's (`None`: not run).
    pub bit_exact: Option<bool>,
    /// The mode the runtime reports for the run (a plan the generator refuses runs as
    /// the baseline kernel).
    pub ran_mode: Option<RunMode>,
    /// The baseline kernel (always built and run: the speedup's reference).
    pub baseline: Option<BaselineFigures>,
    /// Exact counts of the configured kernel.
    pub exact: Option<Exact>,
    /// Modelled times.
    pub modelled: Option<Modelled>,
    /// Modelled resources of the kernel that ran.
    pub resources: Option<ResourceFigures>,
    /// Measured times.
    pub measured: Measured,
}

impl StencilResult {
    /// A result not yet evaluated: failed, with nothing measured or modelled.
    pub fn pending(name: String, config: StencilConfig) -> StencilResult {
        StencilResult {
            name,
            config,
            status: Status::Failed,
            error: None,
            bit_exact: None,
            ran_mode: None,
            baseline: None,
            exact: None,
            modelled: None,
            resources: None,
            measured: Measured::default(),
        }
    }
}

/// The configuration of one stencil's run.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct StencilConfig {
    /// Preset name.
    pub tiles: String,
    /// The sizes passed to the compiler.
    pub tile_sizes: Vec<i64>,
    /// Elements per beat.
    pub port_width: u32,
    /// Requested mode.
    pub mode: Mode,
    /// DDR banks.
    pub banks: u32,
}

/// A whole bench run.
#[derive(Clone, Debug, PartialEq)]
pub struct Bench {
    /// The configuration.
    pub config: Config,
    /// The clock every design was modelled at.
    pub clock_mhz: f64,
    /// The rule that chose it, in words.
    pub clock_rule: String,
    /// One result per stencil, in [`STENCILS`] order.
    pub stencils: Vec<StencilResult>,
    /// Wall time of the whole run (measured here).
    pub total_s: f64,
}

impl Bench {
    /// Whether any stencil failed or mismatched.
    pub fn failed(&self) -> bool {
        self.stencils.iter().any(|s| s.status.is_failure())
    }
}
