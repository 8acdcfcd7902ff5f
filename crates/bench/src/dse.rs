//! Design-space exploration (`tessera dse`): the cartesian product of tile presets,
//! port widths, kernel modes and DDR bank counts, each configuration evaluated on a
//! stencil set by the bench driver ([`driver::run`]: emulation for the *exact* counts,
//! the VCU118 model for the *modelled* time, the resource model for the *modelled*
//! resources), summarised per configuration ([`Point`]), and the Pareto front of
//! modelled time against modelled resources.
//!
//! ```text
//! Space ─ configs() ─► [PointConfig]          (tiles × port width × mode × banks)
//! evaluate(configs, stencils, env, jobs) ─►  one Bench per configuration
//!     (configuration, stencil) pairs on `jobs` threads, each one driver::run in its own
//!     work directory <work>/config-<i>/
//! Point::of(index, bench) ─► totals over the set: exact DDR bytes and bursts, modelled
//!     kernel time (sum), speedup, roofline fraction, the largest kernel's share of the
//!     XCVU9P and whether every kernel fits
//! Dse { points } ─ front() ─► Pareto front (correct, fitting points; both measures minimised)
//!     ─ table(), to_json(), svg()
//! ```
//!
//! A [`Point`] is also the record an array task of `tessera dse --slurm` writes
//! (`results/<i>.json`): the gathered sweep is built from the same records as a local
//! one. [`evaluate`] is the only I/O (through the driver); the rest is pure.

use crate::output::{esc, fmt_bytes, fmt_s};
use crate::{driver, output, Bench, Config, Env, Mode, Size, Status, StencilResult, Tiles};
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tessera_model::{ClockRule, Params, ResourceParams};

/// The lists whose cartesian product is the configuration space.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Space {
    /// Tile presets.
    pub tiles: Vec<Tiles>,
    /// Port widths (elements per beat).
    pub port_widths: Vec<u32>,
    /// Kernel modes.
    pub modes: Vec<Mode>,
    /// DDR bank counts.
    pub banks: Vec<u32>,
}

impl Space {
    /// Checks every list: not empty, no repeated value, port widths 4/8/16, banks 1/2.
    pub fn check(&self) -> Result<(), String> {
        fn distinct<T: PartialEq + std::fmt::Debug>(what: &str, v: &[T]) -> Result<(), String> {
            if v.is_empty() {
                return Err(format!("{what}: the list is empty"));
            }
            for (i, x) in v.iter().enumerate() {
                if v[..i].contains(x) {
                    return Err(format!("{what}: {x:?} is given twice"));
                }
            }
            Ok(())
        }
        distinct("--tiles", &self.tiles)?;
        distinct("--port-width", &self.port_widths)?;
        distinct("--modes", &self.modes)?;
        distinct("--banks", &self.banks)?;
        if let Some(w) = self.port_widths.iter().find(|w| ![4, 8, 16].contains(*w)) {
            return Err(format!("--port-width {w}: expected 4, 8 or 16"));
        }
        if let Some(b) = self.banks.iter().find(|b| ![1, 2].contains(*b)) {
            return Err(format!("--banks {b}: expected 1 or 2"));
        }
        Ok(())
    }

    /// Every configuration, tiles outermost, then port width, mode, banks.
    pub fn configs(&self) -> Vec<PointConfig> {
        let mut out = Vec::new();
        for &tiles in &self.tiles {
            for &port_width in &self.port_widths {
                for &mode in &self.modes {
                    for &banks in &self.banks {
                        out.push(PointConfig { tiles, port_width, mode, banks });
                    }
                }
            }
        }
        out
    }
}

/// One configuration of the space.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PointConfig {
    /// Tile preset.
    pub tiles: Tiles,
    /// Elements per DDR beat.
    pub port_width: u32,
    /// Kernel mode.
    pub mode: Mode,
    /// DDR banks.
    pub banks: u32,
}

impl PointConfig {
    /// The bench configuration at `size`, modelled under `clock`.
    pub fn config(&self, size: Size, clock: ClockRule) -> Config {
        Config { size, tiles: self.tiles, port_width: self.port_width, mode: self.mode, banks: self.banks, clock }
    }

    /// `tiles default, W 16, dataflow, 1 bank`.
    pub fn label(&self) -> String {
        format!(
            "tiles {}, W {}, {}, {} bank{}",
            self.tiles.name(),
            self.port_width,
            self.mode,
            self.banks,
            if self.banks == 1 { "" } else { "s" }
        )
    }
}

/// One finished (configuration, stencil) pair, for progress reports.
pub struct Done<'a> {
    /// Index of the configuration in the list given to [`evaluate`].
    pub config: usize,
    /// The stencil.
    pub stencil: &'a str,
    /// The driver's verdict line (`[1/1] 2D-jacobi: bit-exact, modelled speedup …`).
    pub line: &'a str,
    /// Pairs finished so far, this one included.
    pub finished: usize,
    /// Pairs in all.
    pub total: usize,
}

/// Evaluates every configuration on the stencils `names` (in [`crate::STENCILS`]
/// order): the (configuration, stencil) pairs run on `jobs` threads, configuration
/// after configuration, each through [`driver::run`] with the work directory
/// `<env.work_dir>/config-<i>`. `done` is called after each pair. One [`Bench`] per
/// configuration, its `total_s` the sum of its pairs' wall times.
///
/// With `program`, `names` is its one name ([`crate::program::Program::name`]) and
/// each configuration evaluates the program ([`crate::program::evaluate`]) instead of
/// bench stencils.
pub fn evaluate(
    configs: &[Config],
    names: &[String],
    program: Option<&crate::program::Program>,
    env: &Env,
    jobs: usize,
    done: &(dyn Fn(Done<'_>) + Sync),
) -> Vec<Bench> {
    let items: Vec<(usize, &str)> =
        (0..configs.len()).flat_map(|c| names.iter().map(move |n| (c, n.as_str()))).collect();
    let next = AtomicUsize::new(0);
    let finished = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<(StencilResult, f64)>>> = Mutex::new(vec![None; items.len()]);
    std::thread::scope(|scope| {
        for _ in 0..jobs.clamp(1, items.len().max(1)) {
            scope.spawn(|| loop {
                let k = next.fetch_add(1, Ordering::SeqCst);
                let Some(&(c, name)) = items.get(k) else { break };
                let env = Env { work_dir: env.work_dir.join(format!("config-{c}")), ..env.clone() };
                let mut last = String::new();
                let (r, total_s) = match program {
                    Some(prog) => {
                        let t = std::time::Instant::now();
                        let r = crate::program::evaluate(&configs[c], &env, prog);
                        last = format!("{name}: {} ({:.1} s)", driver::summary(&r), t.elapsed().as_secs_f64());
                        (r, t.elapsed().as_secs_f64())
                    }
                    None => {
                        let b = driver::run(&configs[c], &env, &[name.to_string()], &mut |l: &str| last = l.to_string());
                        (b.stencils.into_iter().next().expect("the driver ran the one stencil it was given"), b.total_s)
                    }
                };
                let n = finished.fetch_add(1, Ordering::SeqCst) + 1;
                done(Done { config: c, stencil: name, line: &last, finished: n, total: items.len() });
                results.lock().expect("no worker panics")[k] = Some((r, total_s));
            });
        }
    });
    let mut results = results.into_inner().expect("no worker panics").into_iter();
    let p = Params::VCU118;
    configs
        .iter()
        .map(|cfg| {
            let mut stencils = Vec::new();
            let mut total_s = 0.0;
            for _ in names {
                let (r, s) = results.next().flatten().expect("every pair was evaluated");
                stencils.push(r);
                total_s += s;
            }
            Bench { config: cfg.clone(), clock_mhz: cfg.clock.clock_mhz(&p), clock_rule: cfg.clock.describe(&p), stencils, total_s }
        })
        .collect()
}

/// Exact counts summed over the set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExactTotals {
    /// DDR bytes read.
    pub ddr_read_bytes: u64,
    /// DDR bytes written.
    pub ddr_write_bytes: u64,
    /// AXI transactions.
    pub bursts: u64,
    /// Each element read once plus each written once (`None`: a stencil's is not a box).
    pub compulsory_bytes: Option<u64>,
}

/// Modelled times over the set.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ModelledTotals {
    /// The configured kernels' times, summed: the time measure of the Pareto front.
    pub kernel_s: f64,
    /// The baseline kernels' times, summed.
    pub baseline_s: f64,
    /// `baseline_s / kernel_s`.
    pub speedup: f64,
    /// Geometric mean of the stencils' speedups.
    pub geomean_speedup: f64,
    /// DDR bytes ÷ 19.2 GB/s, summed.
    pub roofline_s: f64,
    /// `roofline_s / kernel_s`.
    pub roofline_fraction: f64,
    /// PCIe transfers plus kernel, summed.
    pub end_to_end_s: f64,
}

/// Modelled resources over the set: each stencil is its own kernel, so the measure is
/// the largest kernel's.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResourceTotals {
    /// The largest share of the XCVU9P any kernel of the set uses, over BRAM36, URAM,
    /// DSP, LUT and FF: the resource measure of the Pareto front.
    pub max_fraction: f64,
    /// Its resource.
    pub binding: String,
    /// Its stencil.
    pub binding_stencil: String,
    /// Whether every kernel of the set fits.
    pub fits: bool,
    /// The largest kernel count of each resource: BRAM36.
    pub bram36: u64,
    /// URAM.
    pub uram: u64,
    /// DSP.
    pub dsp: u64,
    /// LUT.
    pub lut: u64,
    /// FF.
    pub ff: u64,
}

/// One evaluated configuration (also the result file of a Slurm array task).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Point {
    /// Index in the space ([`Space::configs`] order).
    pub index: usize,
    /// The configuration.
    pub config: PointConfig,
    /// Problem size.
    pub size: Size,
    /// The clock every design was modelled at.
    pub clock_mhz: f64,
    /// The stencils evaluated.
    pub stencils: Vec<String>,
    /// Stencils that failed, mismatched or lack the mode, one line each; the totals
    /// exist only when this is empty.
    pub failed: Vec<String>,
    /// Other notes (a kernel that fell back to a simpler mode).
    pub notes: Vec<String>,
    /// Exact counts over the set.
    pub exact: Option<ExactTotals>,
    /// Modelled times over the set.
    pub modelled: Option<ModelledTotals>,
    /// Modelled resources over the set.
    pub resources: Option<ResourceTotals>,
    /// Wall time of the evaluation (measured here; parallel pairs overlap).
    pub measured_s: f64,
    /// The bench's per-stencil records (`tessera bench --json`'s `stencils`).
    pub stencil_results: Value,
}

impl Point {
    /// The summary of configuration `index` evaluated as `b`.
    pub fn of(index: usize, b: &Bench) -> Point {
        let c = &b.config;
        let mut failed = Vec::new();
        let mut notes = Vec::new();
        for s in &b.stencils {
            let first = s.error.as_deref().and_then(|e| e.lines().next()).unwrap_or("").to_string();
            match s.status {
                Status::Ok if s.exact.is_some() && s.modelled.is_some() && s.resources.is_some() => {
                    if !first.is_empty() {
                        notes.push(format!("{}: {first}", s.name));
                    }
                }
                Status::Ok => failed.push(format!("{}: not modelled", s.name)),
                Status::ModeUnavailable => failed.push(format!("{}: mode {} unavailable: {first}", s.name, c.mode)),
                Status::Mismatch => failed.push(format!("{}: NOT BIT-EXACT: {first}", s.name)),
                Status::Failed => failed.push(format!("{}: FAILED: {first}", s.name)),
            }
        }
        let ok = failed.is_empty() && !b.stencils.is_empty();
        let exact = ok.then(|| {
            let e: Vec<_> = b.stencils.iter().filter_map(|s| s.exact.as_ref()).collect();
            ExactTotals {
                ddr_read_bytes: e.iter().map(|e| e.ddr_read_bytes).sum(),
                ddr_write_bytes: e.iter().map(|e| e.ddr_write_bytes).sum(),
                bursts: e.iter().map(|e| e.bursts).sum(),
                compulsory_bytes: e.iter().map(|e| e.compulsory_bytes).sum(),
            }
        });
        let modelled = ok.then(|| {
            let m: Vec<_> = b.stencils.iter().filter_map(|s| s.modelled.as_ref()).collect();
            let kernel_s: f64 = m.iter().map(|m| m.kernel_s).sum();
            let baseline_s: f64 = m.iter().map(|m| m.baseline_s).sum();
            let roofline_s: f64 = m.iter().map(|m| m.roofline_s).sum();
            let log_mean = m.iter().map(|m| m.speedup.ln()).sum::<f64>() / m.len() as f64;
            ModelledTotals {
                kernel_s,
                baseline_s,
                speedup: baseline_s / kernel_s,
                geomean_speedup: log_mean.exp(),
                roofline_s,
                roofline_fraction: roofline_s / kernel_s,
                end_to_end_s: m.iter().map(|m| m.end_to_end_s).sum(),
            }
        });
        let resources = if ok {
            let r: Vec<(&str, &crate::ResourceFigures)> =
                b.stencils.iter().filter_map(|s| s.resources.as_ref().map(|r| (s.name.as_str(), r))).collect();
            r.iter().copied().max_by(|a, b| a.1.usage.max().total_cmp(&b.1.usage.max())).map(|(name, top)| ResourceTotals {
                max_fraction: top.usage.max(),
                binding: top.usage.binding.to_string(),
                binding_stencil: name.to_string(),
                fits: r.iter().all(|(_, x)| x.usage.fits),
                bram36: r.iter().map(|(_, x)| x.total.bram36).max().unwrap_or(0),
                uram: r.iter().map(|(_, x)| x.total.uram).max().unwrap_or(0),
                dsp: r.iter().map(|(_, x)| x.total.dsp).max().unwrap_or(0),
                lut: r.iter().map(|(_, x)| x.total.lut).max().unwrap_or(0),
                ff: r.iter().map(|(_, x)| x.total.ff).max().unwrap_or(0),
            })
        } else {
            None
        };
        Point {
            index,
            config: PointConfig { tiles: c.tiles, port_width: c.port_width, mode: c.mode, banks: c.banks },
            size: c.size,
            clock_mhz: b.clock_mhz,
            stencils: b.stencils.iter().map(|s| s.name.clone()).collect(),
            failed,
            notes,
            exact,
            modelled,
            resources,
            measured_s: b.total_s,
            stencil_results: output::to_json(b)["stencils"].clone(),
        }
    }

    /// Whether every stencil ran bit-exact and was modelled.
    pub fn ok(&self) -> bool {
        self.failed.is_empty() && self.exact.is_some() && self.modelled.is_some() && self.resources.is_some()
    }

    /// (modelled resources, modelled time) of a correct point whose kernels all fit.
    pub fn measures(&self) -> Option<(f64, f64)> {
        match (&self.resources, &self.modelled) {
            (Some(r), Some(m)) if self.ok() && r.fits => Some((r.max_fraction, m.kernel_s)),
            _ => None,
        }
    }

    /// The same results as `other`, measured times aside: configuration, verdicts,
    /// exact counts, modelled times and resources (what a Slurm sweep must reproduce).
    pub fn same_results(&self, other: &Point) -> bool {
        self.index == other.index
            && self.config == other.config
            && self.size == other.size
            && self.clock_mhz == other.clock_mhz
            && self.stencils == other.stencils
            && self.failed == other.failed
            && self.exact == other.exact
            && self.modelled == other.modelled
            && self.resources == other.resources
    }
}

/// Which of `points` (x, y) are Pareto-optimal when both coordinates are minimised:
/// no other point is at most as large in both and smaller in one. Equal points are
/// all on the front; NaN points never are.
pub fn pareto_front(points: &[(f64, f64)]) -> Vec<bool> {
    points
        .iter()
        .map(|&(x, y)| {
            !x.is_nan()
                && !y.is_nan()
                && !points.iter().any(|&(a, b)| a <= x && b <= y && (a < x || b < y))
        })
        .collect()
}

/// A configuration that has no result (a Slurm array task that wrote none).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Missing {
    /// Index in the space.
    pub index: usize,
    /// The configuration.
    pub config: PointConfig,
    /// Why (the task's state, where its log is).
    pub reason: String,
}

/// A whole sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Dse {
    /// The stencils of every configuration.
    pub stencils: Vec<String>,
    /// Problem size.
    pub size: Size,
    /// The clock rule, in words.
    pub clock_rule: String,
    /// The space.
    pub space: Space,
    /// The evaluated configurations, by index.
    pub points: Vec<Point>,
    /// The configurations without a result.
    pub missing: Vec<Missing>,
    /// How the sweep ran (`local, 2 threads`, `slurm job 17`).
    pub ran: String,
    /// The program swept instead of stencils (then `stencils` is its name and `size`
    /// does not apply: the program's own sizes, its `tessera cc` arguments).
    pub program: Option<crate::program::Program>,
}

impl Dse {
    /// What was swept, for headings: `2 stencil(s) (1D-jacobi, 2D-jacobi), size small`
    /// or `program p.c (tessera cc … -DN=64)`.
    pub fn what(&self) -> String {
        match &self.program {
            Some(p) => p.describe(),
            None => format!("{} stencil(s) ({}), size {}", self.stencils.len(), self.stencils.join(", "), self.size.name()),
        }
    }

    /// Per point (same order), whether it is on the Pareto front of modelled time
    /// against modelled resources, among the correct points whose kernels fit.
    pub fn front(&self) -> Vec<bool> {
        let m: Vec<Option<(f64, f64)>> = self.points.iter().map(Point::measures).collect();
        let eligible: Vec<(f64, f64)> = m.iter().flatten().copied().collect();
        let mut on = pareto_front(&eligible).into_iter();
        m.iter().map(|x| x.is_some() && on.next().expect("one verdict per eligible point")).collect()
    }

    /// Whether a configuration failed or has no result.
    pub fn failed(&self) -> bool {
        !self.missing.is_empty() || self.points.iter().any(|p| !p.ok())
    }
}

fn pct(f: f64) -> String {
    let v = 100.0 * f;
    if v >= 10.0 {
        format!("{v:.0}%")
    } else {
        format!("{v:.1}%")
    }
}

/// The table of a sweep: one row per configuration.
pub fn table(d: &Dse) -> String {
    let mut o = String::new();
    let front = d.front();
    let _ = writeln!(
        o,
        "tessera dse: {} configuration(s) x {}; {}",
        d.points.len() + d.missing.len(),
        d.what(),
        d.ran
    );
    let _ = writeln!(o, "clock: {}", d.clock_rule);
    let (over, dev) = match d.program {
        Some(_) => ("the program's kernel launches", "of the program's kernels together (one xclbin holds them all)"),
        None => ("the set", "of the set's largest kernel"),
    };
    let _ = writeln!(o, "exact = counted in emulation, summed over {over}; modelled = VCU118 model (docs/performance.md), time summed over {over}");
    let _ = writeln!(
        o,
        "%dev = modelled share of the XCVU9P {dev} (max over BRAM36, URAM, DSP, LUT, FF); ! = a kernel does not fit; P = on the Pareto front (modelled time vs %dev)"
    );
    let _ = writeln!(
        o,
        "{:>3} {:<7} {:>2} {:<8} {:>5} | {:<6} | {:>9} {:>10} | {:>9} {:>9} {:>8} {:>6} | {:>6} {:>6} {:<18} |",
        "#", "tiles", "W", "mode", "banks", "result", "exact", "", "modelled", "", "", "", "modelled", "", ""
    );
    let _ = writeln!(
        o,
        "{:>3} {:<7} {:>2} {:<8} {:>5} | {:<6} | {:>9} {:>10} | {:>9} {:>9} {:>8} {:>6} | {:>6} {:>6} {:<18} | P",
        "", "", "", "", "", "", "DDR R+W", "bursts", "kernel", "baseline", "speedup", "%roof", "%dev", "DSP", "binding"
    );
    let mut rows: Vec<(usize, String)> = Vec::new();
    for (p, on) in d.points.iter().zip(&front) {
        let c = &p.config;
        let e = p.exact.as_ref();
        let m = p.modelled.as_ref();
        let r = p.resources.as_ref();
        let dash = || "-".to_string();
        let row = format!(
            "{:>3} {:<7} {:>2} {:<8} {:>5} | {:<6} | {:>9} {:>10} | {:>9} {:>9} {:>8} {:>6} | {:>6} {:>6} {:<18} | {}",
            p.index,
            c.tiles.name(),
            c.port_width,
            c.mode.name(),
            c.banks,
            if p.ok() { "ok" } else { "FAILED" },
            e.map_or_else(dash, |e| fmt_bytes(e.ddr_read_bytes + e.ddr_write_bytes)),
            e.map_or_else(dash, |e| e.bursts.to_string()),
            m.map_or_else(dash, |m| fmt_s(m.kernel_s)),
            m.map_or_else(dash, |m| fmt_s(m.baseline_s)),
            m.map_or_else(dash, |m| format!("{:.1}x", m.speedup)),
            m.map_or_else(dash, |m| format!("{:.1}", 100.0 * m.roofline_fraction)),
            r.map_or_else(dash, |r| format!("{}{}", pct(r.max_fraction), if r.fits { "" } else { "!" })),
            r.map_or_else(dash, |r| r.dsp.to_string()),
            r.map_or_else(dash, |r| format!("{} {}", r.binding, r.binding_stencil)),
            if *on { "P" } else { "" }
        );
        rows.push((p.index, row.trim_end().to_string()));
    }
    for m in &d.missing {
        let c = &m.config;
        rows.push((
            m.index,
            format!("{:>3} {:<7} {:>2} {:<8} {:>5} | {:<6} | no result", m.index, c.tiles.name(), c.port_width, c.mode.name(), c.banks, "NONE"),
        ));
    }
    rows.sort_by_key(|(i, _)| *i);
    for (_, r) in rows {
        let _ = writeln!(o, "{r}");
    }
    let on: Vec<String> = d.points.iter().zip(&front).filter(|(_, f)| **f).map(|(p, _)| format!("#{}", p.index)).collect();
    let _ = writeln!(
        o,
        "Pareto front (modelled time vs modelled resources, correct and fitting configurations): {}",
        if on.is_empty() { "none".to_string() } else { on.join(", ") }
    );
    for p in &d.points {
        for f in &p.failed {
            let _ = writeln!(o, "failed: #{} ({}): {f}", p.index, p.config.label());
        }
        for n in &p.notes {
            let _ = writeln!(o, "note: #{} ({}): {n}", p.index, p.config.label());
        }
    }
    for m in &d.missing {
        let _ = writeln!(o, "missing: #{} ({}): {}", m.index, m.config.label(), m.reason);
    }
    let _ = writeln!(o, "evaluation: {} (measured, summed over the configurations)", fmt_s(d.points.iter().map(|p| p.measured_s).sum()));
    o
}

/// The JSON record of a sweep: the space, the model parameters, every configuration
/// with its totals and per-stencil records, the Pareto front (field names are an
/// interface).
pub fn to_json(d: &Dse) -> Value {
    let front = d.front();
    let configs: Vec<Value> = d
        .points
        .iter()
        .zip(&front)
        .map(|(p, on)| {
            let mut v = serde_json::to_value(p).expect("a point serialises");
            v["ok"] = json!(p.ok());
            v["pareto"] = json!(on);
            v
        })
        .collect();
    let pareto: Vec<usize> = d.points.iter().zip(&front).filter(|(_, f)| **f).map(|(p, _)| p.index).collect();
    json!({
        "tool": "tessera dse",
        "kinds": {
            "exact": "counted in emulation through the kernels' memory ports (totals: summed over the stencil set)",
            "modelled": "FPGA time from the VCU118 model fed by the exact counts (totals: summed over the set), and FPGA resources estimated from each kernel's structure (totals: the set's largest kernel) (docs/performance.md)",
            "measured": "wall time on the machine that ran the evaluation",
        },
        "pareto_measures": {
            "time": "modelled.kernel_s: modelled FPGA kernel time summed over the stencil set",
            "resources": "resources.max_fraction: the largest modelled share of the XCVU9P (BRAM36, URAM, DSP, LUT, FF) of any kernel of the set",
            "eligible": "configurations whose stencils all ran bit-exact, were modelled, and whose kernels all fit",
        },
        "stencils": d.stencils,
        "size": d.size.name(),
        "program": d.program,
        "clock_rule": d.clock_rule,
        "space": d.space,
        "ran": d.ran,
        "model_parameters": Params::VCU118.table(),
        "resource_parameters": ResourceParams::XCVU9P.table(),
        "configs": configs,
        "pareto": pareto,
        "missing": d.missing,
    })
}

/// Round `v` up to 1, 2 or 5 times a power of ten.
fn nice_ceil(v: f64) -> f64 {
    let e = v.log10().floor();
    let base = 10f64.powf(e);
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * base).find(|c| *c >= v * (1.0 - 1e-12)).unwrap_or(10.0 * base)
}

/// The Pareto plot: modelled time (log) against modelled resources (linear, % of the
/// XCVU9P), one marker per configuration, the front highlighted and joined.
pub fn svg(d: &Dse) -> String {
    let (w, h) = (960.0, 600.0);
    let (left, right, top, bottom) = (90.0, 620.0, 60.0, 520.0);
    let front = d.front();
    let pts: Vec<(&Point, f64, f64, bool)> = d
        .points
        .iter()
        .zip(&front)
        .filter_map(|(p, on)| match (&p.resources, &p.modelled) {
            (Some(r), Some(m)) if p.ok() => Some((p, r.max_fraction, m.kernel_s, *on)),
            _ => None,
        })
        .collect();
    let xmax = nice_ceil(pts.iter().map(|p| p.1).fold(0.01, f64::max) * 1.1);
    let ys: Vec<f64> = pts.iter().map(|p| p.2).filter(|v| *v > 0.0).collect();
    let lo = ys.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = ys.iter().copied().fold(0.0, f64::max);
    let (dlo, dhi) = if ys.is_empty() { (-3, 0) } else { (lo.log10().floor() as i32, (hi.log10().ceil() as i32).max(lo.log10().floor() as i32 + 1)) };
    let x = |v: f64| left + v / xmax * (right - left);
    let y = |v: f64| bottom - (v.max(10f64.powi(dlo)).log10() - dlo as f64) / (dhi - dlo) as f64 * (bottom - top);
    let mut o = String::new();
    let _ = writeln!(o, r##"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif">"##);
    let _ = writeln!(o, r##"<rect width="{w}" height="{h}" fill="white"/>"##);
    let _ = writeln!(
        o,
        r##"<text x="{left}" y="24" font-size="15">tessera dse: {} configuration(s), {}</text>"##,
        d.points.len() + d.missing.len(),
        esc(&match &d.program {
            Some(p) => p.describe(),
            None if d.stencils.len() > 4 => format!("{} stencils (size {})", d.stencils.len(), d.size.name()),
            None => format!("{} (size {})", d.stencils.join(", "), d.size.name()),
        })
    );
    let _ = writeln!(o, r##"<text x="{left}" y="42" font-size="11" fill="#555">{}</text>"##, esc(&d.clock_rule));
    // Axes: decades of seconds, 5 ticks of % of the device.
    for e in dlo..=dhi {
        let yy = y(10f64.powi(e));
        let _ = writeln!(o, r##"<line x1="{left}" y1="{yy:.1}" x2="{right}" y2="{yy:.1}" stroke="#ddd"/>"##);
        let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" text-anchor="end" font-size="11">{}</text>"##, left - 6.0, yy + 4.0, esc(&fmt_s(10f64.powi(e))));
    }
    for k in 0..=5 {
        let v = xmax * k as f64 / 5.0;
        let xx = x(v);
        let _ = writeln!(o, r##"<line x1="{xx:.1}" y1="{top}" x2="{xx:.1}" y2="{bottom}" stroke="#eee"/>"##);
        let _ = writeln!(o, r##"<text x="{xx:.1}" y="{:.1}" text-anchor="middle" font-size="11">{}</text>"##, bottom + 16.0, pct(v));
    }
    if xmax >= 1.0 {
        let xx = x(1.0);
        let _ = writeln!(o, r##"<line x1="{xx:.1}" y1="{top}" x2="{xx:.1}" y2="{bottom}" stroke="#c33" stroke-dasharray="4 3"/>"##);
        let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" font-size="10" fill="#c33">device</text>"##, xx + 3.0, top + 10.0);
    }
    let _ = writeln!(o, r##"<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#333"/>"##);
    let _ = writeln!(o, r##"<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#333"/>"##);
    let _ = writeln!(
        o,
        r##"<text x="{:.1}" y="{:.1}" text-anchor="middle" font-size="12">modelled resources: largest share of the XCVU9P (BRAM36, URAM, DSP, LUT, FF) of the set's kernels</text>"##,
        (left + right) / 2.0,
        bottom + 38.0
    );
    let cy = (top + bottom) / 2.0;
    let _ = writeln!(
        o,
        r##"<text x="20" y="{cy:.1}" transform="rotate(-90 20 {cy:.1})" text-anchor="middle" font-size="12">modelled FPGA kernel time, summed over the set (log)</text>"##
    );
    // The front as a staircase, then the markers.
    let mut on: Vec<(f64, f64)> = pts.iter().filter(|p| p.3).map(|p| (p.1, p.2)).collect();
    on.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    if on.len() > 1 {
        let mut path = format!("M{:.1},{:.1}", x(on[0].0), y(on[0].1));
        for q in &on[1..] {
            let _ = write!(path, " H{:.1} V{:.1}", x(q.0), y(q.1));
        }
        let _ = writeln!(o, r##"<path d="{path}" fill="none" stroke="#d0342c" stroke-width="1.5"/>"##);
    }
    for (p, rx, ty, is_front) in &pts {
        let (cx, cy) = (x(*rx), y(*ty));
        let fits = p.resources.as_ref().is_some_and(|r| r.fits);
        let title = esc(&format!(
            "#{} {}: modelled {} , {} of the device{}",
            p.index,
            p.config.label(),
            fmt_s(*ty),
            pct(*rx),
            if fits { "" } else { " (does not fit)" }
        ));
        if !fits {
            let _ = writeln!(
                o,
                r##"<path d="M{:.1},{:.1} l8,8 m0,-8 l-8,8" stroke="#888" stroke-width="1.5"><title>{title}</title></path>"##,
                cx - 4.0,
                cy - 4.0
            );
        } else if *is_front {
            let _ = writeln!(o, r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="5.5" fill="#d0342c"><title>{title}</title></circle>"##);
        } else {
            let _ = writeln!(o, r##"<circle cx="{cx:.1}" cy="{cy:.1}" r="5" fill="white" stroke="#3b6fb6" stroke-width="1.5"><title>{title}</title></circle>"##);
        }
    }
    // Labels: one per position, naming every configuration there.
    let mut labels: Vec<((i64, i64), Vec<usize>)> = Vec::new();
    for (p, rx, ty, _) in &pts {
        let at = ((x(*rx) * 2.0).round() as i64, (y(*ty) * 2.0).round() as i64);
        match labels.iter_mut().find(|(q, _)| *q == at) {
            Some((_, v)) => v.push(p.index),
            None => labels.push((at, vec![p.index])),
        }
    }
    for ((lx2, ly2), v) in &labels {
        let names: Vec<String> = v.iter().map(usize::to_string).collect();
        let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" font-size="10">{}</text>"##, *lx2 as f64 / 2.0 + 7.0, *ly2 as f64 / 2.0 - 5.0, names.join(", "));
    }
    // Legend: every configuration (front first when there are many).
    let lx = right + 24.0;
    let _ = writeln!(o, r##"<circle cx="{lx}" cy="{:.1}" r="5.5" fill="#d0342c"/>"##, top + 4.0);
    let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" font-size="11">Pareto front</text>"##, lx + 10.0, top + 8.0);
    let _ = writeln!(o, r##"<circle cx="{lx}" cy="{:.1}" r="5" fill="white" stroke="#3b6fb6" stroke-width="1.5"/>"##, top + 22.0);
    let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" font-size="11">dominated</text>"##, lx + 10.0, top + 26.0);
    let _ = writeln!(o, r##"<path d="M{:.1},{:.1} l8,8 m0,-8 l-8,8" stroke="#888" stroke-width="1.5"/>"##, lx - 4.0, top + 36.0);
    let _ = writeln!(o, r##"<text x="{:.1}" y="{:.1}" font-size="11">a kernel does not fit</text>"##, lx + 10.0, top + 44.0);
    let mut listed: Vec<(&Point, bool)> = d.points.iter().zip(front.iter().copied()).collect();
    listed.sort_by_key(|(p, on)| (!on, p.index));
    let max_lines = 28;
    for (k, (p, _)) in listed.iter().take(max_lines).enumerate() {
        let status = if p.ok() { String::new() } else { " (failed: not plotted)".to_string() };
        let _ = writeln!(
            o,
            r##"<text x="{:.1}" y="{:.1}" font-size="10">#{} {}{}</text>"##,
            lx - 6.0,
            top + 70.0 + 14.0 * k as f64,
            p.index,
            esc(&p.config.label()),
            status
        );
    }
    if listed.len() + d.missing.len() > max_lines {
        let _ = writeln!(
            o,
            r##"<text x="{:.1}" y="{:.1}" font-size="10" fill="#555">… {} more: see dse.txt</text>"##,
            lx - 6.0,
            top + 70.0 + 14.0 * max_lines as f64,
            listed.len() + d.missing.len() - max_lines.min(listed.len())
        );
    }
    let _ = writeln!(
        o,
        r##"<text x="{left}" y="{:.1}" font-size="10" fill="#555">time and resources are modelled (VCU118, XCVU9P) from counts exact in emulation; failed configurations are listed, not plotted</text>"##,
        h - 12.0
    );
    o.push_str("</svg>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn front_of_a_small_set() {
        // (resources, time): 0 and 2 trade off; 1 is dominated by 0; 3 equals 2; 4 is NaN.
        let pts = [(0.1, 5.0), (0.2, 6.0), (0.4, 1.0), (0.4, 1.0), (f64::NAN, 0.5), (0.5, 1.0), (0.05, 9.0)];
        assert_eq!(pareto_front(&pts), vec![true, false, true, true, false, false, true]);
        assert_eq!(pareto_front(&[]), Vec::<bool>::new());
        assert_eq!(pareto_front(&[(1.0, 1.0)]), vec![true]);
    }

    #[test]
    fn the_space_is_the_cartesian_product_in_order() {
        let s = Space {
            tiles: vec![Tiles::Small, Tiles::Large],
            port_widths: vec![8, 16],
            modes: vec![Mode::Dataflow],
            banks: vec![1, 2],
        };
        s.check().unwrap();
        let c = s.configs();
        assert_eq!(c.len(), 8);
        assert_eq!(c[0], PointConfig { tiles: Tiles::Small, port_width: 8, mode: Mode::Dataflow, banks: 1 });
        assert_eq!(c[1].banks, 2);
        assert_eq!(c[2].port_width, 16);
        assert_eq!(c[4].tiles, Tiles::Large);
        assert!(Space { port_widths: vec![12], ..s.clone() }.check().unwrap_err().contains("12"));
        assert!(Space { banks: vec![1, 1], ..s.clone() }.check().unwrap_err().contains("twice"));
        assert!(Space { modes: vec![], ..s }.check().unwrap_err().contains("empty"));
    }

    fn result(name: &str, status: Status, kernel_s: f64, read: u64, lanes: u64) -> StencilResult {
        use crate::{Exact, Measured, Modelled, StencilConfig};
        let ok = status == Status::Ok;
        let mut k = tessera_model::KernelShape { lanes, ..Default::default() };
        k.ops.add_fp(tessera_model::resources::FpOp::AddSub, tessera_model::resources::Precision::Single, 4);
        StencilResult {
            name: name.into(),
            config: StencilConfig { tiles: "default".into(), tile_sizes: vec![64, 64], port_width: 16, mode: Mode::Tessera, banks: 1 },
            status,
            error: (!ok).then(|| "tessera cc (tessera) failed:\nline 2".to_string()),
            bit_exact: Some(ok),
            ran_mode: None,
            baseline: None,
            exact: ok.then_some(Exact {
                ddr_read_bytes: read,
                ddr_write_bytes: 100,
                compulsory_bytes: Some(150),
                bursts: 7,
                exposed_round_trips: 0,
                read_after_write: 0,
                buffer_elements: 0,
                traffic_ratio: None,
                bytes_to_device: 0,
                bytes_from_device: 0,
            }),
            modelled: ok.then(|| Modelled {
                baseline_s: 4.0 * kernel_s,
                kernel_s,
                kernel_cycles: 1,
                roofline_s: kernel_s / 2.0,
                host_transfer_s: 0.0,
                clock_mhz: 50.0,
                speedup: 4.0,
                roofline_fraction: 0.5,
                baseline_roofline_fraction: 0.1,
                end_to_end_s: kernel_s,
                bound: "cycles".into(),
                structure: String::new(),
                target_clock_mhz: 250.0,
                target_kernel_s: kernel_s / 5.0,
                target_roofline_fraction: 0.5,
                port_floor_cycles: 900,
                target_cycles_over_floor: 1.1,
                two_banks_target_kernel_s: 0.004,
                two_banks_over_one_bank_roofline: 1.75,
                two_banks_whole_array_bound: 2.0,
            }),
            resources: ok.then(|| crate::ResourceFigures::new("tessera", &k, &ResourceParams::XCVU9P)),
            measured: Measured::default(),
        }
    }

    fn bench(stencils: Vec<StencilResult>) -> Bench {
        Bench {
            config: Config { mode: Mode::Tessera, ..Config::default() },
            clock_mhz: 50.0,
            clock_rule: "50 MHz".into(),
            stencils,
            total_s: 2.0,
        }
    }

    #[test]
    fn a_point_sums_times_and_counts_and_takes_the_largest_kernel() {
        let p = Point::of(3, &bench(vec![result("1D-jacobi", Status::Ok, 1.0, 200, 8), result("2D-jacobi", Status::Ok, 3.0, 400, 64)]));
        assert!(p.ok());
        assert_eq!(p.index, 3);
        let e = p.exact.as_ref().unwrap();
        assert_eq!((e.ddr_read_bytes, e.ddr_write_bytes, e.bursts, e.compulsory_bytes), (600, 200, 14, Some(300)));
        let m = p.modelled.as_ref().unwrap();
        assert_eq!((m.kernel_s, m.baseline_s, m.roofline_s), (4.0, 16.0, 2.0));
        assert!((m.speedup - 4.0).abs() < 1e-12 && (m.geomean_speedup - 4.0).abs() < 1e-12);
        assert_eq!(m.roofline_fraction, 0.5);
        let r = p.resources.as_ref().unwrap();
        // 64 lanes of 4 adders use more of the device than 8 lanes.
        assert_eq!(r.binding_stencil, "2D-jacobi");
        let big = crate::ResourceFigures::new("tessera", &{
            let mut k = tessera_model::KernelShape { lanes: 64, ..Default::default() };
            k.ops.add_fp(tessera_model::resources::FpOp::AddSub, tessera_model::resources::Precision::Single, 4);
            k
        }, &ResourceParams::XCVU9P);
        assert_eq!(r.max_fraction, big.usage.max());
        assert_eq!(r.dsp, big.total.dsp);
        // The record survives its JSON (a Slurm task's result file) unchanged.
        let back: Point = serde_json::from_str(&serde_json::to_string(&p).unwrap()).unwrap();
        assert!(back.same_results(&p));
        assert_eq!(back, p);
    }

    #[test]
    fn a_failed_stencil_fails_the_point_and_keeps_it_off_the_front() {
        let bad = Point::of(0, &bench(vec![result("1D-jacobi", Status::Ok, 1.0, 200, 8), result("2D-jacobi", Status::Failed, 0.0, 0, 1)]));
        assert!(!bad.ok());
        assert_eq!(bad.failed, vec!["2D-jacobi: FAILED: tessera cc (tessera) failed:".to_string()]);
        assert!(bad.exact.is_none() && bad.modelled.is_none() && bad.measures().is_none());
        let good = Point::of(1, &bench(vec![result("1D-jacobi", Status::Ok, 9.0, 200, 8)]));
        let faster_bigger = Point::of(2, &bench(vec![result("1D-jacobi", Status::Ok, 1.0, 200, 64)]));
        let dominated = Point::of(3, &bench(vec![result("1D-jacobi", Status::Ok, 9.5, 200, 64)]));
        let d = Dse {
            stencils: vec!["1D-jacobi".into()],
            size: Size::Small,
            clock_rule: String::new(),
            space: Space { tiles: vec![Tiles::Default], port_widths: vec![16], modes: vec![Mode::Tessera], banks: vec![1] },
            points: vec![bad, good, faster_bigger, dominated],
            missing: Vec::new(),
            ran: "test".into(),
            program: None,
        };
        assert_eq!(d.front(), vec![false, true, true, false]);
        assert!(table(&d).starts_with("tessera dse: 4 configuration(s) x 1 stencil(s) (1D-jacobi), size small; test\n"));
        let p = crate::program::Program { source: "/w/heat.c".into(), cflags: vec!["-DN=64".into()] };
        let dp = Dse { program: Some(p), ..d.clone() };
        assert!(table(&dp).starts_with("tessera dse: 4 configuration(s) x program heat.c (tessera cc … -DN=64); test\n"));
        assert!(svg(&dp).contains("program heat.c"));
        assert!(d.failed());
        let t = table(&d);
        assert!(t.contains("Pareto front (modelled time vs modelled resources, correct and fitting configurations): #1, #2"), "{t}");
        assert!(t.contains("failed: #0"), "{t}");
        let j = to_json(&d);
        assert_eq!(j["pareto"], json!([1, 2]));
        assert_eq!(j["configs"][0]["ok"], json!(false));
        let svg = svg(&d);
        assert_eq!(svg.matches(r##"fill="#d0342c""##).count(), 2 + 1, "two front markers and the legend's");
    }

    #[test]
    fn nice_ceilings() {
        assert_eq!(nice_ceil(0.034), 0.05);
        assert_eq!(nice_ceil(0.2), 0.2);
        assert_eq!(nice_ceil(1.1), 2.0);
        assert_eq!(nice_ceil(7.0), 10.0);
    }
}
