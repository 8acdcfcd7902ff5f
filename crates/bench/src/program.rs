//! One user program evaluated like a bench stencil (`tessera dse <program.c>`): built
//! with `tessera cc` in the configuration's mode, tile preset, port width and banks,
//! run on the emulated device, its output compared with the same program run with
//! `OMP_TARGET_OFFLOAD=DISABLED` (every region on the host: the CPU's results), and
//! every kernel launch of the runtime's report modelled like a stencil's. The only I/O
//! is the driver's (builds, runs, files).
//!
//! ```text
//! tessera cc (mode baseline) ─► run DISABLED      → reference output
//!                             └► run on emu        → baseline launches (speedup reference)
//! tessera cc (configured)     ─► run on emu        → output == reference? launches
//! per launch k (same region as baseline launch k): exact traffic, kernel structure from
//!     the dumped region IR (its plan at the preset's sizes), modelled time at the clock
//!     and the target clock; summed over the launches
//! resources: the program's kernels share one xclbin (`tessera bitstream`), so their
//!     estimates add up (one device budget)
//! ```
//!
//! A region with run-time sizes is modelled at each launch's sizes: the report gives
//! the launch's integer scalars (`scalars`), which are substituted into the region's IR
//! (`tessera_poly::normalize::specialize`) before its facts, plan and structure are
//! derived; a dataflow kernel keeps the strips it was compiled with. A region that
//! runs on the host (rejected at compile time, or a runtime fallback) is not modelled
//! and is named in the result's notes.

use crate::analysis::{self, Facts};
use crate::driver::{baseline_structure, describe, excerpt, run_logged, structure};
use crate::runreport::{self, RunRecord};
use crate::{shape, BaselineFigures, Config, Env, Exact, Modelled, Mode, ResourceFigures, RunMode, Status, StencilConfig, StencilResult};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use tessera_ir::Region;
use tessera_model::{estimate, host_transfer_s, Bound, Params, ResourceParams, Resources};
use tessera_poly::{optimize, Plan, PolyOptions};

/// A program to evaluate.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Program {
    /// The C or C++ source.
    pub source: PathBuf,
    /// More `tessera cc` arguments (`-DN=4096`, `-lm`), after the source.
    pub cflags: Vec<String>,
}

impl Program {
    /// `program p.c (tessera cc … -DN=64)`: headings.
    pub fn describe(&self) -> String {
        let args = if self.cflags.is_empty() { String::new() } else { format!(" {}", self.cflags.join(" ")) };
        format!("program {} (tessera cc …{args})", self.name())
    }

    /// The name results carry: the source's file name.
    pub fn name(&self) -> String {
        self.source.file_name().map_or_else(|| self.source.display().to_string(), |n| n.to_string_lossy().into_owned())
    }
}

/// A build of the program.
struct Built {
    bin: PathBuf,
    ir_dir: PathBuf,
    compile_s: f64,
}

/// One run: whether it exited 0, its output, its report's kernel launches.
struct Ran {
    ok: bool,
    stdout: String,
    launches: Vec<RunRecord>,
    run_s: f64,
}

fn build(cfg: &Config, env: &Env, prog: &Program, mode: Mode, dir: &Path) -> Result<Built, String> {
    let bin = dir.join(format!("program.{mode}"));
    let ir_dir = dir.join(format!("ir-{mode}"));
    let _ = std::fs::remove_dir_all(&ir_dir);
    std::fs::create_dir_all(&ir_dir).map_err(|e| format!("{}: {e}", ir_dir.display()))?;
    let mut cmd = Command::new(&env.tessera);
    cmd.arg("cc")
        .arg("-O2")
        .arg(format!("-fplugin-arg-tessera-mode={mode}"))
        .arg(format!("-fplugin-arg-tessera-tile={}", cfg.tiles.name()))
        .arg(format!("-fplugin-arg-tessera-port-width={}", cfg.port_width))
        .arg(format!("-fplugin-arg-tessera-banks={}", cfg.banks))
        .arg(format!("-fplugin-arg-tessera-dump-ir={}", ir_dir.display()))
        .arg(&prog.source)
        .arg("-o")
        .arg(&bin)
        .args(&prog.cflags);
    let (ok, _, err, secs) = run_logged(cmd, &dir.join(format!("compile-{mode}")), env.timeout)?;
    if !ok {
        return Err(format!("tessera cc ({mode}) failed:\n{}", excerpt(&err)));
    }
    Ok(Built { bin, ir_dir, compile_s: secs })
}

/// Runs `built` in `dir` with `vars`; `tag` names its logs and report.
fn run(env: &Env, built: &Built, dir: &Path, tag: &str, vars: &[(&str, &str)]) -> Result<Ran, String> {
    let report = dir.join(format!("report-{tag}.jsonl"));
    let _ = std::fs::remove_file(&report);
    let mut cmd = Command::new(&built.bin);
    cmd.current_dir(dir).env("TESSERA_REPORT", &report).env_remove("TESSERA_VERBOSE").env_remove("TESSERA_EMU_TRACE");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let (ok, stdout, _, run_s) = run_logged(cmd, &dir.join(format!("run-{tag}")), env.timeout)?;
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    // Kernel launches only (data directives have an `op`).
    let launches = runreport::parse(&text)?.into_iter().filter(|r| r.op.is_none()).collect();
    Ok(Ran { ok, stdout, launches, run_s })
}

/// Every region IR the plugin dumped, by `file:line` (the report's region key).
fn regions(dir: &Path) -> Result<BTreeMap<String, Region>, String> {
    let mut out = BTreeMap::new();
    for e in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.to_string_lossy().ends_with(".ir.json") {
            let text = std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}", p.display()))?;
            let r = Region::from_json(&text).map_err(|e| format!("{}: {e}", p.display()))?;
            out.insert(r.location.file_line(), r);
        }
    }
    Ok(out)
}

/// One region at one launch's sizes, computed once per (region, sizes).
struct RegionModel {
    /// The region with the launch's integer scalars substituted.
    launched: Region,
    facts: Facts,
    plan: Option<Plan>,
    /// The dataflow kernel's structure at these sizes (a launch that ran one).
    dataflow: Option<tessera_model::Structure>,
}

/// Evaluates `prog` in configuration `cfg`: one result for the whole program (its
/// launches summed, its kernels' resources added).
pub fn evaluate(cfg: &Config, env: &Env, prog: &Program) -> StencilResult {
    let mut r = StencilResult::pending(
        prog.name(),
        StencilConfig {
            tiles: cfg.tiles.name().into(),
            tile_sizes: Vec::new(),
            port_width: cfg.port_width,
            mode: cfg.mode,
            banks: cfg.banks,
        },
    );
    if let Err(e) = evaluate_into(cfg, env, prog, &mut r) {
        r.status = if r.bit_exact == Some(false) { Status::Mismatch } else { Status::Failed };
        r.error = Some(e);
    }
    r
}

/// The same output and exit status as the host-only run.
fn same(a: &Ran, b: &Ran) -> bool {
    a.ok == b.ok && a.stdout == b.stdout
}

fn evaluate_into(cfg: &Config, env: &Env, prog: &Program, r: &mut StencilResult) -> Result<(), String> {
    let p = Params::VCU118;
    let clock_mhz = cfg.clock.clock_mhz(&p);
    let dir = env.work_dir.join(prog.name());
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let base_built = build(cfg, env, prog, Mode::Baseline, &dir)?;
    let reference = run(env, &base_built, &dir, "host", &[("OMP_TARGET_OFFLOAD", "DISABLED")])?;
    let base = run(env, &base_built, &dir, "baseline", &[("TESSERA_DEVICE", "emu")])?;
    if !same(&base, &reference) {
        r.bit_exact = Some(false);
        return Err("with the baseline kernels the program's output differs from its host-only run".into());
    }
    let regions = regions(&base_built.ir_dir)?;
    // The configured kernels (in mode baseline, the baseline run itself).
    let configured;
    let (compile_s, ran) = if cfg.mode == Mode::Baseline {
        (base_built.compile_s, &base)
    } else {
        let b = build(cfg, env, prog, cfg.mode, &dir)?;
        configured = run(env, &b, &dir, "configured", &[("TESSERA_DEVICE", "emu")])?;
        (b.compile_s, &configured)
    };
    r.measured.compile_s = Some(compile_s);
    r.measured.run_s = Some(ran.run_s);
    r.bit_exact = Some(same(ran, &reference));
    if ran.launches.len() != base.launches.len() {
        return Err(format!(
            "the configured run launched {} regions, the baseline run {}: the program does not run the same way twice",
            ran.launches.len(),
            base.launches.len()
        ));
    }

    let mut models: BTreeMap<String, RegionModel> = BTreeMap::new();
    // Per region, the analysis of its dataflow kernel as compiled (its strips and lanes).
    let mut compiled: BTreeMap<String, tessera_hls::dataflow::Analysis> = BTreeMap::new();
    let mut resources: BTreeMap<String, ResourceFigures> = BTreeMap::new();
    let mut host = Vec::new();
    let (mut kernel_s, mut kernel_cycles, mut roofline_s, mut target_s, mut base_s, mut base_cycles) = (0.0, 0, 0.0, 0.0, 0.0, 0);
    let (mut base_roofline_s, mut host_s) = (0.0, 0.0);
    let mut exact = Exact { compulsory_bytes: Some(0), ..Exact::default() };
    let (mut base_read, mut base_write, mut base_bursts, mut emulation_s, mut base_emulation_s) = (0, 0, 0, 0.0, 0.0);
    let mut structures: BTreeMap<String, String> = BTreeMap::new();
    let mut slowest: Option<(f64, Bound)> = None;
    let mut ran_modes = Vec::new();
    let mut ports_banks = crate::driver::PortAndBanks::default();
    for (k, (rec, brec)) in ran.launches.iter().zip(&base.launches).enumerate() {
        if rec.region != brec.region {
            return Err(format!(
                "launch {k} is of region {} in the configured run and of {} in the baseline run",
                rec.region, brec.region
            ));
        }
        let (RunMode::Kernel(mode), RunMode::Kernel(_)) = (rec.mode, brec.mode) else {
            host.push(format!("{} ({})", rec.region, rec.reason.as_deref().or(brec.reason.as_deref()).unwrap_or("host")));
            continue;
        };
        ran_modes.push(rec.mode);
        let region = regions.get(&rec.region).ok_or_else(|| format!("no dumped IR for region {}", rec.region))?;
        // The region at this launch's sizes (its integer scalars from the report).
        let values: Vec<(String, i64)> = rec.scalars.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let key = format!("{} {values:?}", rec.region);
        if !models.contains_key(&key) {
            let launched = tessera_poly::normalize::specialize(region, &values);
            let facts = analysis::facts(&launched).map_err(|e| format!("{}: {e}", rec.region))?;
            let tile = tessera_poly::scop::extract(&launched).ok().and_then(|s| tessera_poly::preset_tile_sizes(cfg.tiles.name(), s.depth()));
            let plan = optimize(&launched, &PolyOptions { tile, port_width: cfg.port_width, ..Default::default() }).ok();
            models.insert(key.clone(), RegionModel { launched, facts, plan, dataflow: None });
        }
        let m = models.get_mut(&key).expect("inserted above");
        if mode == Mode::Dataflow && m.dataflow.is_none() {
            let an = match compiled.entry(rec.region.clone()) {
                std::collections::btree_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::btree_map::Entry::Vacant(e) => {
                    e.insert(crate::driver::dataflow_analysis(region, cfg.port_width).map_err(|e| format!("{}: {e}", rec.region))?)
                }
            };
            // The kernel as compiled (its strips), at this launch's sizes.
            let s = crate::driver::dataflow_structure(an, Some(&m.launched), &m.facts, cfg.port_width).map_err(|e| format!("{}: {e}", rec.region))?;
            m.dataflow = Some(s);
        }
        let m = &*m;
        let mut traffic = rec.traffic().map_err(|e| format!("{}: {e}", rec.region))?;
        crate::driver::place_ports(&mut traffic, region, cfg.banks);
        let s = match (mode, &m.dataflow) {
            (Mode::Dataflow, Some(s)) => s.clone(),
            _ => structure(mode, &m.facts, m.plan.as_ref(), &traffic, &m.launched, cfg.port_width).map_err(|e| format!("{}: {e}", rec.region))?,
        };
        let est = estimate(&s, &traffic, clock_mhz, &p).map_err(|e| format!("{}: {e}", rec.region))?;
        let at_target = estimate(&s, &traffic, p.target_clock_mhz, &p).map_err(|e| format!("{}: {e}", rec.region))?;
        let btraffic = brec.traffic().map_err(|e| format!("{} (baseline): {e}", rec.region))?;
        let bs = baseline_structure(&m.facts, &btraffic).map_err(|e| format!("{}: {e}", rec.region))?;
        let best = estimate(&bs, &btraffic, clock_mhz, &p).map_err(|e| format!("{}: {e}", rec.region))?;
        ports_banks.add(&crate::driver::PortAndBanks::of(&s, &traffic, region, cfg.banks, &at_target, &p, None).map_err(|e| format!("{}: {e}", rec.region))?);
        kernel_s += est.kernel_s;
        kernel_cycles += est.cycles.total;
        roofline_s += est.roofline_s;
        target_s += at_target.kernel_s;
        base_s += best.kernel_s;
        base_cycles += best.cycles.total;
        base_roofline_s += best.roofline_s;
        host_s += host_transfer_s(rec.bytes_to_device + rec.bytes_from_device, &p);
        if slowest.is_none_or(|(t, _)| est.kernel_s > t) {
            slowest = Some((est.kernel_s, est.bound));
        }
        structures.entry(rec.region.clone()).or_insert_with(|| describe(&s));
        exact.ddr_read_bytes += rec.ddr_read_bytes.unwrap_or(traffic.read_bytes());
        exact.ddr_write_bytes += rec.ddr_write_bytes.unwrap_or(traffic.write_bytes());
        exact.bursts += rec.bursts.unwrap_or(traffic.bursts());
        exact.exposed_round_trips += traffic.ports.iter().map(|p| p.read_exposed + p.write_exposed).sum::<u64>();
        exact.read_after_write += traffic.ports.iter().map(|p| p.read_after_write).sum::<u64>();
        exact.compulsory_bytes = exact.compulsory_bytes.zip(m.facts.compulsory_bytes()).map(|(a, b)| a + b);
        exact.bytes_to_device += rec.bytes_to_device;
        exact.bytes_from_device += rec.bytes_from_device;
        base_read += btraffic.read_bytes();
        base_write += btraffic.write_bytes();
        base_bursts += btraffic.bursts();
        emulation_s += rec.kernel_wall_s.unwrap_or(0.0);
        base_emulation_s += brec.kernel_wall_s.unwrap_or(0.0);
        let key = format!("{}#{mode}", rec.region);
        if let std::collections::btree_map::Entry::Vacant(slot) = resources.entry(key) {
            let figures = match (mode, m.plan.as_ref()) {
                (Mode::Baseline, _) => ResourceFigures::new("baseline", &shape::baseline(&m.launched), &ResourceParams::XCVU9P),
                (Mode::Dataflow, _) => {
                    let an = &compiled[&rec.region];
                    exact.buffer_elements += an.buffer_elements() as u64;
                    ResourceFigures::new(Mode::Dataflow.name(), &shape::dataflow(region, an), &ResourceParams::XCVU9P)
                }
                (mode, Some(plan)) => {
                    exact.buffer_elements += plan.buffers.total_elements;
                    ResourceFigures::new(mode.name(), &shape::tiled(&m.launched, plan), &ResourceParams::XCVU9P)
                }
                (mode, None) => return Err(format!("{}: a {mode} kernel ran but the optimizer has no plan for it", rec.region)),
            };
            slot.insert(figures);
        }
    }
    if ran_modes.is_empty() {
        return Err(format!("no region of the program ran on the emulated device: {}", host.join("; ")));
    }
    let moved = exact.ddr_read_bytes + exact.ddr_write_bytes;
    exact.traffic_ratio = exact.compulsory_bytes.filter(|&c| c > 0).map(|c| moved as f64 / c as f64);
    r.ran_mode = ran_modes.iter().all(|m| *m == ran_modes[0]).then(|| ran_modes[0]);
    r.measured.emulation_s = Some(emulation_s);
    r.baseline = Some(BaselineFigures {
        ddr_read_bytes: base_read,
        ddr_write_bytes: base_write,
        bursts: base_bursts,
        modelled_s: base_s,
        modelled_cycles: base_cycles,
        roofline_fraction: base_roofline_s / base_s,
        emulation_s: Some(base_emulation_s),
        compile_s: 0.0,
        resources: None,
    });
    r.exact = Some(exact);
    // One xclbin holds every kernel of the program: their resources add up.
    let mut total = Resources::default();
    for f in resources.values() {
        total.bram36 += f.total.bram36;
        total.uram += f.total.uram;
        total.dsp += f.total.dsp;
        total.lut += f.total.lut;
        total.ff += f.total.ff;
    }
    let rp = ResourceParams::XCVU9P;
    r.resources = Some(ResourceFigures {
        kernel: format!("{} kernel(s)", resources.len()),
        lanes: resources.values().map(|f| f.lanes).max().unwrap_or(0),
        total,
        usage: tessera_model::usage(&total, &rp),
        unmodelled_ops: resources.values().map(|f| f.unmodelled_ops).sum(),
    });
    r.modelled = Some(Modelled {
        baseline_s: base_s,
        kernel_s,
        kernel_cycles,
        roofline_s,
        host_transfer_s: host_s,
        clock_mhz,
        speedup: base_s / kernel_s,
        roofline_fraction: roofline_s / kernel_s,
        baseline_roofline_fraction: base_roofline_s / base_s,
        end_to_end_s: host_s + kernel_s,
        bound: match slowest.map(|s| s.1) {
            Some(Bound::Bandwidth) => "bandwidth".into(),
            _ => "cycles".into(),
        },
        structure: structures.iter().map(|(k, v)| format!("{k}: {v}")).collect::<Vec<_>>().join("; "),
        target_clock_mhz: p.target_clock_mhz,
        target_kernel_s: target_s,
        target_roofline_fraction: roofline_s / target_s,
        port_floor_cycles: ports_banks.floor_cycles,
        target_cycles_over_floor: ports_banks.cycles_over_floor(),
        two_banks_target_kernel_s: ports_banks.two_banks_s,
        two_banks_over_one_bank_roofline: ports_banks.two_banks_gain(),
        two_banks_whole_array_bound: ports_banks.two_banks_bound(),
    });
    if r.bit_exact != Some(true) {
        return Err(format!("the {} kernels' output differs from the program's host-only run", cfg.mode));
    }
    if !host.is_empty() {
        r.error = Some(format!("{} launch(es) ran on the host, not modelled: {}", host.len(), host.join("; ")));
    }
    r.status = Status::Ok;
    Ok(())
}
