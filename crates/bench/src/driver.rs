//! The bench driver: builds each stencil with `tessera cc`, runs it on the emulated
//! device, reads the runtime report and feeds the model. The only module that does I/O.
//!
//! Every child process writes its stdout and stderr into the stencil's work directory
//! (no pipes to drain) and is killed after [`Env::timeout`].

use crate::analysis::{self, Facts};
use crate::runreport::{self, RunRecord};
use crate::{dims, shape, Bench, Config, Exact, Modelled, Mode, ResourceFigures, RunMode, Status, StencilConfig, StencilResult, STENCILS};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};
use tessera_ir::Region;
use tessera_model::{
    estimate, host_transfer_s, BaselineLoop, BlockedRows, Dataflow, Estimate, OverlappedRows, Params, ResourceParams, Structure,
    Traffic,
};
use tessera_poly::{optimize, Plan, PolyOptions};

/// Where things are.
#[derive(Clone, Debug)]
pub struct Env {
    /// The `tessera` executable (with `tessera_plugin.so` and `libtessera_rt.so` next to it).
    pub tessera: PathBuf,
    /// `bench/stencils`.
    pub stencil_dir: PathBuf,
    /// Scratch directory: one subdirectory per stencil (binaries, IR dumps, reports, logs).
    pub work_dir: PathBuf,
    /// Limit for each compile and each run.
    pub timeout: Duration,
}

/// `bench/stencils` for a `tessera` executable in `<repo>/target/release/`, else below
/// the current directory or one of its ancestors.
pub fn default_stencil_dir(exe: &Path) -> Option<PathBuf> {
    let mut candidates = Vec::new();
    if let Some(d) = exe.canonicalize().ok().and_then(|e| e.parent().map(Path::to_path_buf)) {
        candidates.extend(d.ancestors().map(|a| a.join("bench/stencils")));
    }
    if let Ok(cwd) = std::env::current_dir() {
        candidates.extend(cwd.ancestors().map(|a| a.join("bench/stencils")));
    }
    candidates.into_iter().find(|c| c.join("2D-jacobi.c").is_file())
}

/// Runs the bench over `only` (all of [`STENCILS`] when empty), calling `progress` with
/// one line before and one after each stencil.
pub fn run(cfg: &Config, env: &Env, only: &[String], progress: &mut dyn FnMut(&str)) -> Bench {
    let p = Params::VCU118;
    let clock_mhz = cfg.clock.clock_mhz(&p);
    let names: Vec<&str> = STENCILS.iter().copied().filter(|n| only.is_empty() || only.iter().any(|o| o == n)).collect();
    let start = Instant::now();
    let mut stencils = Vec::new();
    for (k, name) in names.iter().enumerate() {
        progress(&format!("[{}/{}] {name} …", k + 1, names.len()));
        let t = Instant::now();
        let r = stencil(cfg, env, name, &p, clock_mhz);
        progress(&format!("[{}/{}] {name}: {} ({:.1} s)", k + 1, names.len(), summary(&r), t.elapsed().as_secs_f64()));
        stencils.push(r);
    }
    Bench { config: cfg.clone(), clock_mhz, clock_rule: cfg.clock.describe(&p), stencils, total_s: start.elapsed().as_secs_f64() }
}

/// The progress line's verdict.
pub(crate) fn summary(r: &StencilResult) -> String {
    let what = match r.status {
        Status::Ok => "bit-exact".to_string(),
        Status::ModeUnavailable => format!("mode {} unavailable, baseline bit-exact", r.config.mode),
        Status::Mismatch => "NOT BIT-EXACT".to_string(),
        Status::Failed => format!("FAILED: {}", r.error.as_deref().unwrap_or("").lines().next().unwrap_or("")),
    };
    match &r.modelled {
        Some(m) => format!("{what}, modelled speedup {:.1}x", m.speedup),
        None => what,
    }
}

/// A built stencil.
struct Built {
    bin: PathBuf,
    ir_dir: PathBuf,
    compile_s: f64,
}

/// Why a build failed.
enum BuildError {
    /// The compiler does not generate this mode.
    UnknownMode(String),
    /// Anything else.
    Failed(String),
}

/// One run on the emulated device.
struct Ran {
    record: RunRecord,
    bit_exact: bool,
    run_s: f64,
    /// The program's own timing of its CPU reference loop (`<name>: host loop <s> s`).
    host_loop_s: Option<f64>,
}

/// The seconds of the line `<name>: host loop <s> s` a stencil program prints: its CPU
/// reference loop (the region's loop nest, sequential, compiled with the program).
pub fn host_loop_seconds(stdout: &str, name: &str) -> Option<f64> {
    let prefix = format!("{name}: host loop ");
    stdout.lines().find_map(|l| l.strip_prefix(&prefix)?.strip_suffix(" s")?.trim().parse().ok())
}

/// Runs `cmd` with stdout/stderr in `<log>.out` / `<log>.err`; returns (success,
/// stdout, stderr, seconds).
pub(crate) fn run_logged(mut cmd: Command, log: &Path, timeout: Duration) -> Result<(bool, String, String, f64), String> {
    let out_path = log.with_extension("out");
    let err_path = log.with_extension("err");
    let out = std::fs::File::create(&out_path).map_err(|e| format!("{}: {e}", out_path.display()))?;
    let err = std::fs::File::create(&err_path).map_err(|e| format!("{}: {e}", err_path.display()))?;
    let t = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot run {:?}: {e}", cmd.get_program()))?;
    let status = loop {
        match child.try_wait().map_err(|e| e.to_string())? {
            Some(s) => break s,
            None if t.elapsed() > timeout => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{:?} did not finish within {} s (killed)", cmd.get_program(), timeout.as_secs()));
            }
            None => std::thread::sleep(Duration::from_millis(20)),
        }
    };
    let secs = t.elapsed().as_secs_f64();
    let read = |p: &Path| std::fs::read_to_string(p).unwrap_or_default();
    Ok((status.success(), read(&out_path), read(&err_path), secs))
}

/// The first lines of a log, for messages.
pub(crate) fn excerpt(s: &str) -> String {
    let lines: Vec<&str> = s.lines().filter(|l| !l.trim().is_empty()).take(6).collect();
    lines.join("\n")
}

fn build(cfg: &Config, env: &Env, name: &str, mode: Mode, dir: &Path) -> Result<Built, BuildError> {
    let src = env.stencil_dir.join(format!("{name}.c"));
    let bin = dir.join(format!("{name}.{mode}"));
    let ir_dir = dir.join(format!("ir-{mode}"));
    let _ = std::fs::remove_dir_all(&ir_dir);
    std::fs::create_dir_all(&ir_dir).map_err(|e| BuildError::Failed(format!("{}: {e}", ir_dir.display())))?;
    let tile: Vec<String> = cfg.tiles.sizes(dims(name)).iter().map(i64::to_string).collect();
    let mut cmd = Command::new(&env.tessera);
    cmd.arg("cc")
        .arg("-O2")
        .args(cfg.size.defines(dims(name)))
        .arg(format!("-fplugin-arg-tessera-mode={mode}"))
        .arg(format!("-fplugin-arg-tessera-tile={}", tile.join(",")))
        .arg(format!("-fplugin-arg-tessera-port-width={}", cfg.port_width))
        .arg(format!("-fplugin-arg-tessera-banks={}", cfg.banks))
        .arg(format!("-fplugin-arg-tessera-dump-ir={}", ir_dir.display()))
        .arg(&src)
        .arg("-o")
        .arg(&bin);
    let (ok, _, err, secs) = run_logged(cmd, &dir.join(format!("compile-{mode}")), env.timeout).map_err(BuildError::Failed)?;
    if !ok {
        if err.contains("unknown mode") {
            let line = err.lines().find(|l| l.contains("unknown mode")).unwrap_or("unknown mode");
            let msg = line.split("error: ").last().unwrap_or(line).trim().to_string();
            return Err(BuildError::UnknownMode(msg));
        }
        return Err(BuildError::Failed(format!("tessera cc ({mode}) failed:\n{}", excerpt(&err))));
    }
    Ok(Built { bin, ir_dir, compile_s: secs })
}

fn run_on_emu(env: &Env, name: &str, mode: Mode, built: &Built, dir: &Path) -> Result<Ran, String> {
    let report = dir.join(format!("report-{mode}.jsonl"));
    let _ = std::fs::remove_file(&report);
    let mut cmd = Command::new(&built.bin);
    cmd.current_dir(dir)
        .env("TESSERA_DEVICE", "emu")
        .env("TESSERA_REPORT", &report)
        .env("OMP_TARGET_OFFLOAD", "MANDATORY")
        .env_remove("TESSERA_VERBOSE")
        .env_remove("TESSERA_EMU_TRACE");
    let (ok, out, err, secs) = run_logged(cmd, &dir.join(format!("run-{mode}")), env.timeout)?;
    let text = std::fs::read_to_string(&report).unwrap_or_default();
    let records = runreport::parse(&text)?;
    let record = match records.as_slice() {
        [r] => r.clone(),
        [] => return Err(format!("the {mode} run wrote no report line:\n{}", excerpt(&err))),
        _ => return Err(format!("the {mode} run wrote {} report lines, expected one region execution", records.len())),
    };
    if record.device != "emu" {
        return Err(format!(
            "the region ran on the {} instead of the emulated device: {}",
            record.device,
            record.reason.as_deref().unwrap_or("no reason")
        ));
    }
    let bit_exact = ok && out.contains(&format!("{name}: bit-exact"));
    if !ok && !out.contains("MISMATCH") {
        return Err(format!("the {mode} run failed:\n{}", excerpt(&format!("{out}{err}"))));
    }
    Ok(Ran { record, bit_exact, run_s: secs, host_loop_s: host_loop_seconds(&out, name) })
}

/// How many times `tessera bench` runs the configured kernel's program: the exact
/// counts must be the same every time, and the measured times are the fastest run's
/// (`emulation_s`, and `host_loop_s`, the program's CPU loop, separately): single
/// runs on a shared or virtual machine vary by up to 2× when it reclaims memory or
/// another process runs, and the minimum is the least disturbed measurement.
pub const TIMING_RUNS: usize = 3;

/// [`run_on_emu`] [`TIMING_RUNS`] times: the first run's record, with the fastest
/// kernel and CPU-loop times of all runs; bit-exact only when every run was.
fn run_timed(env: &Env, name: &str, mode: Mode, built: &Built, dir: &Path) -> Result<Ran, String> {
    let mut best = run_on_emu(env, name, mode, built, dir)?;
    let counts = best.record.traffic().ok();
    for run in 1..TIMING_RUNS {
        if !best.bit_exact {
            break;
        }
        let again = run_on_emu(env, name, mode, built, dir)?;
        if again.record.traffic().ok() != counts {
            return Err(format!("the {mode} kernel's exact counts differ between run 1 and run {}", run + 1));
        }
        best.bit_exact &= again.bit_exact;
        let min = |a: Option<f64>, b: Option<f64>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        best.record.0.kernel_wall_s = min(best.record.kernel_wall_s, again.record.kernel_wall_s);
        best.host_loop_s = min(best.host_loop_s, again.host_loop_s);
        best.run_s = best.run_s.min(again.run_s);
    }
    Ok(best)
}

/// The one region IR the plugin dumped.
fn load_ir(dir: &Path) -> Result<Region, String> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.to_string_lossy().ends_with(".ir.json"))
        .collect();
    files.sort();
    match files.as_slice() {
        [f] => Region::from_json(&std::fs::read_to_string(f).map_err(|e| format!("{}: {e}", f.display()))?)
            .map_err(|e| format!("{}: {e}", f.display())),
        _ => Err(format!("{}: expected one dumped region IR, found {}", dir.display(), files.len())),
    }
}

/// The baseline kernel's structure, with the iteration count derived from the exact
/// counts (every iteration issues `accesses_per_iteration` single-beat bursts) and
/// checked against the domain.
pub(crate) fn baseline_structure(facts: &Facts, traffic: &Traffic) -> Result<Structure, String> {
    let a = facts.accesses_per_iteration.max(1);
    let bursts = traffic.bursts();
    if !bursts.is_multiple_of(a) {
        return Err(format!("{bursts} baseline bursts are not a multiple of {a} accesses per iteration"));
    }
    let iterations = bursts / a;
    if let Some(i) = facts.iterations.filter(|&i| i != iterations) {
        return Err(format!("the baseline kernel issued {bursts} bursts = {iterations} iterations, the domain has {i}"));
    }
    Ok(Structure::Baseline(BaselineLoop {
        iterations,
        accesses_per_iteration: facts.distinct_accesses_per_iteration,
        in_place: facts.in_place,
        depth_ops: facts.depth_ops,
        accumulation_ops: facts.accumulation_ops,
    }))
}

/// The structure of the kernel that ran in `mode` (`region` at port width `w`).
pub(crate) fn structure(mode: Mode, facts: &Facts, plan: Option<&Plan>, traffic: &Traffic, region: &Region, w: u32) -> Result<Structure, String> {
    match mode {
        Mode::Baseline => baseline_structure(facts, traffic),
        Mode::Dataflow => dataflow_structure(&dataflow_analysis(region, w)?, None, facts, w),
        Mode::Paper | Mode::Tessera => {
            let plan = plan.ok_or_else(|| format!("a {mode} kernel ran but the optimizer has no plan for the region"))?;
            let rows = analysis::rows(plan).ok_or("the row count needs constant loop bounds")?;
            let accumulation_ops = analysis::row_accumulation_ops(plan, facts.accumulation_ops);
            Ok(match mode {
                Mode::Paper => Structure::BlockedRows(BlockedRows { rows, depth_ops: facts.depth_ops, accumulation_ops }),
                _ => Structure::OverlappedRows(OverlappedRows { rows, depth_ops: facts.depth_ops, accumulation_ops }),
            })
        }
    }
}

/// The dataflow kernel of analysis `compiled` ([`dataflow_analysis`] of the region as
/// compiled: its strips, possibly for run-time extents, and its lanes), timed for the
/// launch of `launched` (the same region with the launch's sizes substituted,
/// `tessera_poly::normalize::specialize`; `None` when the compiled sizes are constants).
pub(crate) fn dataflow_structure(
    compiled: &tessera_hls::dataflow::Analysis,
    launched: Option<&Region>,
    facts: &Facts,
    w: u32,
) -> Result<Structure, String> {
    let mut an = compiled.clone();
    if let Some(launched) = launched {
        let sizes = tessera_hls::dataflow::analyze(launched, w).map_err(not_in_class)?;
        for (l, s) in an.loops.iter_mut().zip(&sizes.loops) {
            l.trip = s.trip;
        }
    }
    let n0 = an.loops[0].trip.ok_or("the compute iterations need constant loop bounds")?;
    Ok(Structure::Dataflow(Dataflow {
        compute_iterations: an.compute_iterations(n0) as u64,
        compute_ii: an.ii() as u64,
        depth_ops: facts.depth_ops,
    }))
}

/// The dataflow kernel's analysis of `region` as the compiler made it (lane count
/// chosen by the resource model, the default `lanes` option), for a launch that ran it.
pub(crate) fn dataflow_analysis(region: &Region, w: u32) -> Result<tessera_hls::dataflow::Analysis, String> {
    tessera_compiler::tiles::dataflow_analysis(region, w, None).map(|(an, _)| an).map_err(not_in_class)
}

fn not_in_class(e: tessera_ir::reject::Reason) -> String {
    format!("a dataflow kernel ran but the region is not in its class: {}", e.remark())
}

/// `, 128 accumulation ops per row` (a reduction kept in the loop's order), or nothing.
fn chain(ops: u32) -> String {
    if ops == 0 {
        String::new()
    } else {
        format!(", {ops} accumulation ops per row")
    }
}

pub(crate) fn describe(s: &Structure) -> String {
    match s {
        Structure::Baseline(b) => format!(
            "baseline: {} iterations x {} serialized single-beat accesses{}",
            b.iterations,
            b.accesses_per_iteration,
            if b.in_place { " (in place)" } else { "" }
        ),
        Structure::BlockedRows(r) => format!(
            "blocked rows: {} rows, depth {} ops{}, every burst a blocking round trip",
            r.rows,
            r.depth_ops,
            chain(r.accumulation_ops)
        ),
        Structure::OverlappedRows(r) => format!(
            "overlapped rows: {} rows, depth {} ops{}, only the exposed round trips counted by the emulated ports wait",
            r.rows,
            r.depth_ops,
            chain(r.accumulation_ops)
        ),
        Structure::Dataflow(d) => format!(
            "dataflow: load, compute ({} iterations at II=1), store processes concurrent, depth {} ops",
            d.compute_iterations, d.depth_ops
        ),
    }
}

fn stencil(cfg: &Config, env: &Env, name: &str, p: &Params, clock_mhz: f64) -> StencilResult {
    let d = dims(name);
    let tile = cfg.tiles.sizes(d);
    let mut r = StencilResult::pending(
        name.to_string(),
        StencilConfig {
            tiles: cfg.tiles.name().into(),
            tile_sizes: tile.clone(),
            port_width: cfg.port_width,
            mode: cfg.mode,
            banks: cfg.banks,
        },
    );
    if let Err(e) = stencil_into(cfg, env, name, p, clock_mhz, &tile, &mut r) {
        r.status = if r.bit_exact == Some(false) { Status::Mismatch } else { Status::Failed };
        r.error = Some(e);
    }
    r
}

fn stencil_into(cfg: &Config, env: &Env, name: &str, p: &Params, clock_mhz: f64, tile: &[i64], r: &mut StencilResult) -> Result<(), String> {
    let dir = env.work_dir.join(name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;

    // The baseline: reference of the speedup, and the source of the region IR.
    let base_built = build(cfg, env, name, Mode::Baseline, &dir).map_err(|e| match e {
        BuildError::UnknownMode(m) | BuildError::Failed(m) => m,
    })?;
    let base = run_on_emu(env, name, Mode::Baseline, &base_built, &dir)?;
    if !base.bit_exact {
        r.bit_exact = Some(false);
        return Err("the baseline kernel's results differ from the CPU's".into());
    }
    let region = load_ir(&base_built.ir_dir)?;
    let facts = analysis::facts(&region)?;
    let t = Instant::now();
    let plan = optimize(&region, &PolyOptions { tile: Some(tile.to_vec()), port_width: cfg.port_width, ..Default::default() });
    r.measured.optimizer_s = Some(t.elapsed().as_secs_f64());
    let base_traffic = base.record.traffic()?;
    let base_structure = baseline_structure(&facts, &base_traffic)?;
    let base_est = estimate(&base_structure, &base_traffic, clock_mhz, p).map_err(|e| e.to_string())?;
    r.baseline = Some(crate::BaselineFigures {
        ddr_read_bytes: base_traffic.read_bytes(),
        ddr_write_bytes: base_traffic.write_bytes(),
        bursts: base_traffic.bursts(),
        modelled_s: base_est.kernel_s,
        modelled_cycles: base_est.cycles.total,
        roofline_fraction: base_est.roofline_fraction(),
        emulation_s: base.record.kernel_wall_s,
        compile_s: base_built.compile_s,
        resources: Some(ResourceFigures::new("baseline", &shape::baseline(&region), &ResourceParams::XCVU9P)),
    });

    // The configured kernel.
    let (built, ran) = if cfg.mode == Mode::Baseline {
        (base_built, base)
    } else {
        match build(cfg, env, name, cfg.mode, &dir) {
            Ok(b) => {
                let ran = run_timed(env, name, cfg.mode, &b, &dir)?;
                (b, ran)
            }
            Err(BuildError::UnknownMode(m)) => {
                r.status = Status::ModeUnavailable;
                r.error = Some(m);
                return Ok(());
            }
            Err(BuildError::Failed(m)) => return Err(m),
        }
    };
    r.measured.compile_s = Some(built.compile_s);
    r.measured.emulation_s = ran.record.kernel_wall_s;
    r.measured.host_loop_s = ran.host_loop_s;
    r.measured.run_s = Some(ran.run_s);
    r.bit_exact = Some(ran.bit_exact);
    r.ran_mode = Some(ran.record.mode);
    // What ran: a kernel (a region outside a mode's class runs a simpler one), never the host.
    let ran_mode = match ran.record.mode {
        RunMode::Kernel(m) => m,
        m => return Err(format!("the {} run did not run a kernel: {m} ({})", cfg.mode, ran.record.reason.as_deref().unwrap_or("no reason"))),
    };
    let mut traffic = ran.record.traffic()?;
    // Each port in the bank the compiler put its array in (the manifest's rule).
    place_ports(&mut traffic, &region, cfg.banks);
    let plan_ok = plan.as_ref().ok();
    // The dataflow kernel's analysis, once for its buffers, resources and structure.
    let dataflow = (ran_mode == Mode::Dataflow).then(|| dataflow_analysis(&region, cfg.port_width));
    let dataflow_ok = dataflow.as_ref().and_then(|r| r.as_ref().ok());
    let buffer_elements = match ran_mode {
        Mode::Baseline => 0,
        Mode::Dataflow => dataflow_ok.map_or(0, |a| a.buffer_elements() as u64),
        _ => plan_ok.map_or(0, |p| p.buffers.total_elements),
    };
    let moved = traffic.bytes();
    let compulsory = facts.compulsory_bytes();
    r.exact = Some(Exact {
        ddr_read_bytes: ran.record.ddr_read_bytes.unwrap_or(traffic.read_bytes()),
        ddr_write_bytes: ran.record.ddr_write_bytes.unwrap_or(traffic.write_bytes()),
        compulsory_bytes: compulsory,
        bursts: ran.record.bursts.unwrap_or(traffic.bursts()),
        exposed_round_trips: traffic.ports.iter().map(|p| p.read_exposed + p.write_exposed).sum(),
        read_after_write: traffic.ports.iter().map(|p| p.read_after_write).sum(),
        buffer_elements,
        traffic_ratio: compulsory.filter(|&c| c > 0).map(|c| moved as f64 / c as f64),
        bytes_to_device: ran.record.bytes_to_device,
        bytes_from_device: ran.record.bytes_from_device,
    });
    r.resources = match (ran_mode, plan_ok) {
        (Mode::Baseline, _) => r.baseline.as_ref().and_then(|b| b.resources.clone()),
        (Mode::Dataflow, _) => dataflow_ok
            .map(|an| ResourceFigures::new(Mode::Dataflow.name(), &shape::dataflow(&region, an), &ResourceParams::XCVU9P)),
        (mode, Some(plan)) => Some(ResourceFigures::new(mode.name(), &shape::tiled(&region, plan), &ResourceParams::XCVU9P)),
        (_, None) => None,
    };
    if !ran.bit_exact {
        return Err(format!("the {} kernel's results differ from the CPU's", cfg.mode));
    }
    let interleaving = cfg.banks == 1
        && ran_mode == Mode::Dataflow
        && dataflow_ok.is_some_and(|an| {
            let [b0, b1] = an.whole_array_streams(&region);
            b0 != b1 && an.segment_bytes().is_some()
        });
    let s = match dataflow {
        Some(an) => dataflow_structure(&an?, None, &facts, cfg.port_width)?,
        None => structure(ran_mode, &facts, plan_ok, &traffic, &region, cfg.port_width)?,
    };
    let est: Estimate = estimate(&s, &traffic, clock_mhz, p).map_err(|e| e.to_string())?;
    let at_target: Estimate = estimate(&s, &traffic, p.target_clock_mhz, p).map_err(|e| e.to_string())?;
    let host = host_transfer_s(ran.record.bytes_to_device + ran.record.bytes_from_device, p);
    // One bank, a dataflow kernel whose arrays the banks=2 rule interleaves: that is
    // another kernel (two ports per array), so its two-bank figure comes from its own
    // run and exact counts.

    let two_bank_traffic = match interleaving {
        true => Some(two_bank_run(cfg, env, name, &dir, &region)?),
        false => None,
    };
    let fig = PortAndBanks::of(&s, &traffic, &region, cfg.banks, &at_target, p, two_bank_traffic.as_ref())?;
    r.modelled = Some(Modelled {
        baseline_s: base_est.kernel_s,
        kernel_s: est.kernel_s,
        kernel_cycles: est.cycles.total,
        roofline_s: est.roofline_s,
        host_transfer_s: host,
        clock_mhz,
        speedup: base_est.kernel_s / est.kernel_s,
        roofline_fraction: est.roofline_fraction(),
        baseline_roofline_fraction: base_est.roofline_fraction(),
        end_to_end_s: host + est.kernel_s,
        bound: match est.bound {
            tessera_model::Bound::Cycles => "cycles".into(),
            tessera_model::Bound::Bandwidth => "bandwidth".into(),
        },
        structure: describe(&s),
        target_clock_mhz: p.target_clock_mhz,
        target_kernel_s: at_target.kernel_s,
        target_roofline_fraction: at_target.roofline_fraction(),
        port_floor_cycles: fig.floor_cycles,
        target_cycles_over_floor: fig.cycles_over_floor(),
        two_banks_target_kernel_s: fig.two_banks_s,
        two_banks_over_one_bank_roofline: fig.two_banks_gain(),
        two_banks_whole_array_bound: fig.two_banks_bound(),
    });
    if ran.record.mode != cfg.mode {
        r.error = Some(format!("the compiler generated a {} kernel instead of {}", ran.record.mode, cfg.mode));
    }
    r.status = Status::Ok;
    Ok(())
}

/// Puts each port of `traffic` in its bank with `banks` banks
/// ([`tessera_compiler::port_bank`]; the kernel's arrays are interleaved when the
/// runtime reported second halves).
pub(crate) fn place_ports(traffic: &mut Traffic, region: &Region, banks: u32) {
    let interleaved = traffic.ports.iter().any(|p| tessera_model::port_of(&p.name).1);
    for port in &mut traffic.ports {
        port.bank = tessera_compiler::port_bank(region, &port.name, interleaved, banks);
    }
}

/// The dataflow kernel compiled with `banks=2` (its arrays interleaved) run once on
/// the emulated device, in `<dir>/banks2`: its exact traffic, ports in their banks.
fn two_bank_run(cfg: &Config, env: &Env, name: &str, dir: &Path, region: &Region) -> Result<Traffic, String> {
    let cfg2 = Config { banks: 2, ..cfg.clone() };
    let dir2 = dir.join("banks2");
    std::fs::create_dir_all(&dir2).map_err(|e| format!("{}: {e}", dir2.display()))?;
    let built = build(&cfg2, env, name, Mode::Dataflow, &dir2).map_err(|e| match e {
        BuildError::UnknownMode(m) | BuildError::Failed(m) => m,
    })?;
    let ran = run_on_emu(env, name, Mode::Dataflow, &built, &dir2)?;
    if !ran.bit_exact {
        return Err("the two-bank (interleaved) dataflow kernel's results differ from the CPU's".into());
    }
    if ran.record.mode != RunMode::Kernel(Mode::Dataflow) {
        return Err(format!("the two-bank build ran a {} kernel instead of dataflow", ran.record.mode));
    }
    let mut t = ran.record.traffic()?;
    if !t.ports.iter().any(|p| tessera_model::port_of(&p.name).1) {
        return Err("the two-bank dataflow kernel did not interleave its arrays".into());
    }
    place_ports(&mut t, region, 2);
    Ok(t)
}

/// The bytes of the busiest bank under the best placement of whole arrays on two banks:
/// each array's bytes (its port's and its write port's, `tdf_w_<array>`) in one bank,
/// every split of the arrays tried (the regions have a handful).
fn best_two_bank_bytes(traffic: &Traffic) -> u64 {
    let mut per_array: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
    for port in &traffic.ports {
        *per_array.entry(port.array()).or_insert(0) += port.read_bytes() + port.write_bytes();
    }
    let bytes: Vec<u64> = per_array.into_values().collect();
    let total: u64 = bytes.iter().sum();
    if bytes.len() > 20 {
        return total.div_ceil(2); // not enumerated: the even split, a lower bound
    }
    (0u32..1 << bytes.len())
        .map(|m| {
            let first: u64 = bytes.iter().enumerate().filter(|(i, _)| m & (1 << i) != 0).map(|(_, b)| b).sum();
            first.max(total - first)
        })
        .min()
        .unwrap_or(0)
}

/// The most beats one array moves in one direction (exact): a port's read and write
/// channels are independent, one beat per cycle each, and the halves of an interleaved
/// array are one stream (its load and store processes move a word per cycle).
fn port_floor(traffic: &Traffic) -> u64 {
    let mut per_array: std::collections::BTreeMap<&str, (u64, u64)> = std::collections::BTreeMap::new();
    for port in &traffic.ports {
        let e = per_array.entry(port.array()).or_default();
        e.0 += port.read.beats();
        e.1 += port.write.beats();
    }
    per_array.values().map(|&(r, w)| r.max(w)).max().unwrap_or(0)
}

/// A launch's figures against the port-bound floor and the one-bank roofline.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PortAndBanks {
    /// The most beats one port moves in one direction (exact): a port's read and
    /// write channels are independent, one beat per cycle each.
    pub floor_cycles: u64,
    /// The kernel's cycles at the target clock.
    pub target_cycles: u64,
    /// The kernel's time at the target clock with its arrays on two banks.
    pub two_banks_s: f64,
    /// All its bytes at one bank's theoretical bandwidth.
    pub one_bank_roofline_s: f64,
    /// Its busiest bank's bytes at the theoretical bandwidth under the best placement
    /// of whole arrays on two banks (an array's read and write ports in one bank).
    pub best_two_bank_roofline_s: f64,
}

impl PortAndBanks {
    /// The figures of the kernel of structure `s` that moved `traffic` (its ports in
    /// the banks of the configured `banks`), `at_target` its estimate at the target
    /// clock. The two-bank time: with `banks` 2 the kernel's own; with one bank, of
    /// `interleaved` (the traffic of the kernel `banks=2` builds when it interleaves
    /// the arrays, ports in their banks) when given, else of the same kernel's ports
    /// re-placed by the manifest's rule (written arrays in the second bank): that
    /// kernel does not change with the placement.
    #[allow(clippy::too_many_arguments)]
    pub fn of(
        s: &Structure,
        traffic: &Traffic,
        region: &Region,
        banks: u32,
        at_target: &Estimate,
        p: &Params,
        interleaved: Option<&Traffic>,
    ) -> Result<PortAndBanks, String> {
        let two_banks_s = if banks == 2 {
            at_target.kernel_s
        } else if let Some(t2) = interleaved {
            estimate(s, t2, p.target_clock_mhz, p).map_err(|e| e.to_string())?.kernel_s
        } else {
            let mut t2 = traffic.clone();
            for port in &mut t2.ports {
                port.bank = tessera_compiler::port_bank(region, &port.name, false, 2);
            }
            estimate(s, &t2, p.target_clock_mhz, p).map_err(|e| e.to_string())?.kernel_s
        };
        Ok(PortAndBanks {
            floor_cycles: port_floor(traffic),
            target_cycles: at_target.cycles.total,
            two_banks_s,
            one_bank_roofline_s: tessera_model::roofline_s(traffic.bytes(), p),
            best_two_bank_roofline_s: tessera_model::roofline_s(best_two_bank_bytes(traffic), p),
        })
    }

    /// Sums the figures of launches run one after the other.
    pub fn add(&mut self, o: &PortAndBanks) {
        self.best_two_bank_roofline_s += o.best_two_bank_roofline_s;
        self.floor_cycles += o.floor_cycles;
        self.target_cycles += o.target_cycles;
        self.two_banks_s += o.two_banks_s;
        self.one_bank_roofline_s += o.one_bank_roofline_s;
    }

    /// Target-clock cycles ÷ the floor (0 without traffic).
    pub fn cycles_over_floor(&self) -> f64 {
        if self.floor_cycles > 0 {
            self.target_cycles as f64 / self.floor_cycles as f64
        } else {
            0.0
        }
    }

    /// The most two banks can gain over the one-bank roofline with whole arrays per
    /// bank: the one-bank roofline ÷ the best placement's busiest bank (theoretical).
    pub fn two_banks_bound(&self) -> f64 {
        if self.best_two_bank_roofline_s > 0.0 {
            self.one_bank_roofline_s / self.best_two_bank_roofline_s
        } else {
            0.0
        }
    }

    /// The one-bank roofline ÷ the two-bank time.
    pub fn two_banks_gain(&self) -> f64 {
        if self.two_banks_s > 0.0 {
            self.one_bank_roofline_s / self.two_banks_s
        } else {
            0.0
        }
    }
}

#[cfg(test)]
mod tests {
    /// fdtd0's three equal streams — `hz` read, `ey` read through its port and written
    /// through `tdf_w_ey` — on two banks: `ey`'s two ports share a bank, so the best
    /// placement's busiest bank carries two thirds of the bytes, 1.5 x at most.
    #[test]
    fn whole_arrays_bound_the_two_bank_gain() {
        use tessera_model::Port;
        let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir/bench/2D-fdtd0.ir.json");
        let region = tessera_ir::Region::from_json(&std::fs::read_to_string(p).unwrap()).unwrap();
        let (mut hz, mut ey, mut w) = (Port::new("hz", 64), Port::new("ey", 64), Port::new("tdf_w_ey", 64));
        hz.read.add(64, 1000);
        ey.read.add(64, 1000);
        w.write.add(64, 1000);
        let t = super::Traffic { ports: vec![hz, ey, w] };
        assert_eq!(super::best_two_bank_bytes(&t), 2 * 64 * 64 * 1000);
        // Out of place (ey written through its own port only): the same split.
        let mut t2 = t.clone();
        t2.ports[2].name = "ey".into();
        assert_eq!(super::best_two_bank_bytes(&t2), 2 * 64 * 64 * 1000);
        // Two arrays of one stream each and one of two: {a, b} against {c}.
        let mut a = Port::new("hz", 64);
        a.read.add(64, 500);
        let mut b = Port::new("ey", 64);
        b.read.add(64, 500);
        let mut c = Port::new("X", 64);
        c.write.add(64, 1000);
        assert_eq!(super::best_two_bank_bytes(&super::Traffic { ports: vec![a, b, c] }), 64 * 64 * 1000);
        // Whole arrays by the banks=2 rule: the written ey (both ports) in bank 1.
        let mut placed = t.clone();
        super::place_ports(&mut placed, &region, 2);
        assert_eq!(placed.ports.iter().map(|p| p.bank).collect::<Vec<_>>(), [0, 1, 1]);
        assert_eq!(super::port_floor(&placed), 64 * 1000);
        // Interleaved (the runtime reports second halves): each half's ports in its
        // bank, the halves of an array one stream for the floor.
        let mut halves = Vec::new();
        for name in ["hz", "ey", "tdf_b1_hz", "tdf_b1_ey"] {
            let mut p = Port::new(name, 64);
            p.read.add(64, 500);
            if name.ends_with("ey") {
                p.write.add(64, 500);
            }
            halves.push(p);
        }
        let mut il = super::Traffic { ports: halves };
        super::place_ports(&mut il, &region, 2);
        assert_eq!(il.ports.iter().map(|p| p.bank).collect::<Vec<_>>(), [0, 0, 1, 1]);
        assert_eq!(super::port_floor(&il), 64 * 1000);
        // One bank: everything in bank 0.
        super::place_ports(&mut il, &region, 1);
        assert!(il.ports.iter().all(|p| p.bank == 0));
    }

    #[test]
    fn the_host_loop_line_is_parsed() {
        let out = "2D-5p: bit-exact\n2D-5p: host loop 0.031250000 s\n";
        assert_eq!(super::host_loop_seconds(out, "2D-5p"), Some(0.03125));
        assert_eq!(super::host_loop_seconds(out, "2D-9p"), None);
        assert_eq!(super::host_loop_seconds("2D-5p: host loop fast s\n", "2D-5p"), None);
    }
}
