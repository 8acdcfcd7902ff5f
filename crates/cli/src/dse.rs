//! `tessera dse`: sweeps a configuration space (tile presets × port widths × kernel
//! modes × DDR bank counts) over a stencil set, each configuration evaluated like
//! `tessera bench` (emulation for the exact counts, the models for time and
//! resources; engine in `crates/bench/src/dse.rs`), and writes a table, a JSON record
//! and an SVG Pareto plot (modelled time vs modelled resources) into the output
//! directory.
//!
//! - Locally the (configuration, stencil) pairs run on `-j` threads (default: the
//!   machine's cores).
//! - `--slurm` writes `<out>/slurm/dse.sbatch` and submits it as a job array
//!   (`sbatch --array=0-<N-1>`): task `i` runs `tessera dse --run-config i
//!   <out>/spec.json`, which evaluates configuration `i` and writes
//!   `<out>/results/<i>.json`. Then it waits for the array (`squeue`) and gathers the
//!   results into the same outputs; a configuration without a result is reported by
//!   index with its task's state and log. `--no-wait` only submits; `--gather` gathers
//!   later. `--dry-run` writes the scripts and prints the sbatch command.
//!
//! Every configuration's record is `<out>/results/<i>.json` in both cases
//! (`tessera_bench::dse::Point`), so a gathered sweep is built like a local one.
//!
//! Exit status: 0 when every configuration ran bit-exact and was modelled, 1 when one
//! failed or has no result, 2 for bad arguments.

use crate::slurm::{self, SlurmArgs};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::io::IsTerminal as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use tessera_bench::dse::{self, Dse, Missing, Point, PointConfig, Space};
use tessera_bench::program::Program;
use tessera_bench::{driver, Env, Mode, Size, Tiles, STENCILS};
use tessera_model::ClockRule;

/// Arguments of `tessera dse`.
#[derive(Args, Debug)]
pub struct DseArgs {
    /// What to sweep: `paper` (the paper's ten stencils), stencil names separated by
    /// commas (e.g. 2D-jacobi,3D-heat), or a C/C++ program (a file ending in .c, .cc,
    /// .cpp or .cxx; `tessera cc` arguments for it after `--`, e.g. `-- -DN=4096 -lm`).
    /// With --run-config: the spec file.
    #[arg(default_value = "paper", value_name = "SET|PROGRAM")]
    pub set: String,
    /// More `tessera cc` arguments for a program (after `--`).
    #[arg(last = true, value_name = "CC_ARGS")]
    pub cflags: Vec<String>,
    /// Problem size: paper (64 MiB per array) or small (the sources' small defaults).
    #[arg(long, default_value = "paper")]
    pub size: String,
    /// Tile presets to sweep: small, default, large (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "default")]
    pub tiles: Vec<String>,
    /// Port widths to sweep: 4, 8, 16 (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "16")]
    pub port_width: Vec<u32>,
    /// Kernel modes to sweep: dataflow, tessera, paper, baseline (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "dataflow")]
    pub modes: Vec<Mode>,
    /// DDR bank counts to sweep: 1, 2 (comma-separated).
    #[arg(long, value_delimiter = ',', default_value = "1")]
    pub banks: Vec<u32>,
    /// Model every design at this clock instead of the paper's comparison clock (50 MHz).
    #[arg(long)]
    pub clock_mhz: Option<f64>,
    /// Directory with the stencil sources (default: bench/stencils of this checkout).
    #[arg(long)]
    pub stencils: Option<PathBuf>,
    /// Output directory: dse.txt, dse.json, dse.svg, spec.json, results/, slurm/.
    #[arg(short = 'o', long = "output", default_value = "dse", value_name = "DIR")]
    pub out_dir: PathBuf,
    /// Evaluations at a time (default: the machine's cores; in an array task
    /// $SLURM_CPUS_PER_TASK).
    #[arg(short = 'j', long)]
    pub jobs: Option<usize>,
    /// Limit for each compile and each run, in seconds.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
    /// Keep the binaries, IR dumps, reports and logs in <DIR>/work/config-<i>/.
    #[arg(long)]
    pub keep_work: bool,
    #[command(flatten)]
    pub slurm: SlurmArgs,
    /// With --slurm: write the job script and print the sbatch command; submit nothing.
    #[arg(long, requires = "slurm")]
    pub dry_run: bool,
    /// With --slurm: submit and exit; `tessera dse --gather -o DIR` gathers later.
    #[arg(long, requires = "slurm")]
    pub no_wait: bool,
    /// With --slurm: seconds between two looks at the job array (squeue).
    #[arg(long, default_value_t = 10, requires = "slurm")]
    pub poll: u64,
    /// Gather the results in the output directory (of a `--slurm --no-wait` sweep)
    /// into the table, JSON and SVG.
    #[arg(long, conflicts_with = "slurm")]
    pub gather: bool,
    /// Evaluate configuration I of the spec file SET and write <out>/results/I.json
    /// (what each Slurm array task runs).
    #[arg(long, value_name = "I", conflicts_with_all = ["slurm", "gather"])]
    pub run_config: Option<usize>,
}

/// What an array task needs: written to `<out>/spec.json` by the submitting run.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Spec {
    /// The `tessera` executable (shared file system).
    tessera: PathBuf,
    /// The stencil sources.
    stencil_dir: PathBuf,
    /// The stencil set, in the bench's order (a program: its name).
    stencils: Vec<String>,
    /// The program swept instead of stencils.
    #[serde(default)]
    program: Option<Program>,
    size: Size,
    clock_mhz: Option<f64>,
    timeout_s: u64,
    keep_work: bool,
    /// The output directory, absolute.
    output: PathBuf,
    space: Space,
    /// Every configuration, by index.
    configs: Vec<PointConfig>,
}

impl Spec {
    fn clock(&self) -> ClockRule {
        self.clock_mhz.map_or(ClockRule::Paper, ClockRule::Fixed)
    }

    fn env(&self, work_dir: PathBuf) -> Env {
        Env {
            tessera: self.tessera.clone(),
            stencil_dir: self.stencil_dir.clone(),
            work_dir,
            timeout: Duration::from_secs(self.timeout_s),
        }
    }

    fn results(&self) -> PathBuf {
        self.output.join("results")
    }

    fn clock_rule(&self) -> String {
        self.clock().describe(&tessera_model::Params::VCU118)
    }
}

fn usage(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("tessera dse: error: {msg}");
    ExitCode::from(2)
}

fn fail(msg: impl std::fmt::Display) -> ExitCode {
    eprintln!("tessera dse: error: {msg}");
    ExitCode::FAILURE
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    // Whole files only: written beside, then renamed (a gatherer may be reading).
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: {e}", path.display()))
}

/// The stencils of `set`: `paper` or names from [`STENCILS`], in the bench's order.
fn stencil_set(set: &str) -> Result<Vec<String>, String> {
    if set == "paper" {
        return Ok(STENCILS.iter().map(|s| s.to_string()).collect());
    }
    let names: Vec<&str> = set.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
    if let Some(bad) = names.iter().find(|n| !STENCILS.contains(n)) {
        return Err(format!(
            "`{bad}`: not a stencil of the bench's set (`paper`, or some of: {}) nor a C/C++ source file",
            STENCILS.join(", ")
        ));
    }
    if names.is_empty() {
        return Err(format!("`{set}`: no stencil named"));
    }
    Ok(STENCILS.iter().filter(|s| names.contains(s)).map(|s| s.to_string()).collect())
}

/// The program `a.set` names (a C or C++ source file, made absolute: array tasks run
/// elsewhere), with its `tessera cc` arguments; `None` for a stencil set.
fn program_of(a: &DseArgs) -> Result<Option<Program>, String> {
    let is_source = [".c", ".cc", ".cpp", ".cxx"].iter().any(|e| a.set.ends_with(e));
    if !is_source {
        if !a.cflags.is_empty() {
            return Err(format!("arguments after `--` are for a program, and `{}` is a stencil set", a.set));
        }
        return Ok(None);
    }
    let source = Path::new(&a.set).canonicalize().map_err(|e| format!("{}: {e}", a.set))?;
    Ok(Some(Program { source, cflags: a.cflags.clone() }))
}

/// The spec of a new sweep from the arguments.
fn new_spec(a: &DseArgs) -> Result<Spec, String> {
    let size = Size::parse(&a.size)?;
    let tiles = a.tiles.iter().map(|t| Tiles::parse(t)).collect::<Result<Vec<_>, _>>()?;
    let space = Space { tiles, port_widths: a.port_width.clone(), modes: a.modes.clone(), banks: a.banks.clone() };
    space.check()?;
    if let Some(c) = a.clock_mhz.filter(|c| !(c.is_finite() && *c > 0.0)) {
        return Err(format!("--clock-mhz {c}: expected a positive number"));
    }
    let program = program_of(a)?;
    let stencils = match &program {
        Some(p) => vec![p.name()],
        None => stencil_set(&a.set)?,
    };
    let exe = std::env::current_exe().map_err(|e| format!("cannot find this executable: {e}"))?;
    let exe = exe.canonicalize().unwrap_or(exe);
    let stencil_dir = a
        .stencils
        .clone()
        .or_else(|| driver::default_stencil_dir(&exe))
        .ok_or("cannot find bench/stencils (run from the checkout or pass --stencils DIR)")?;
    let stencil_dir = stencil_dir.canonicalize().map_err(|e| format!("{}: {e}", stencil_dir.display()))?;
    std::fs::create_dir_all(&a.out_dir).map_err(|e| format!("{}: {e}", a.out_dir.display()))?;
    let output = a.out_dir.canonicalize().map_err(|e| format!("{}: {e}", a.out_dir.display()))?;
    Ok(Spec {
        tessera: exe,
        stencil_dir,
        stencils,
        program,
        size,
        clock_mhz: a.clock_mhz,
        timeout_s: a.timeout,
        keep_work: a.keep_work,
        output,
        configs: space.configs(),
        space,
    })
}

fn read_spec(path: &Path) -> Result<Spec, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not a tessera dse spec: {e}", path.display()))
}

/// The result file of configuration `i`.
fn result_path(spec: &Spec, i: usize) -> PathBuf {
    spec.results().join(format!("{i}.json"))
}

/// Removes the results of an earlier sweep in the same directory.
fn clear_results(spec: &Spec) -> Result<(), String> {
    let r = spec.results();
    match std::fs::remove_dir_all(&r) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(format!("{}: {e}", r.display())),
        _ => {}
    }
    std::fs::create_dir_all(&r).map_err(|e| format!("{}: {e}", r.display()))
}

/// Evaluates `indices` of the spec on `jobs` threads, with a progress bar on a
/// terminal (plain lines otherwise); writes each result file; the points.
fn evaluate(spec: &Spec, indices: &[usize], jobs: usize, work_dir: &Path) -> Result<Vec<Point>, String> {
    let configs: Vec<_> = indices.iter().map(|&i| spec.configs[i].config(spec.size, spec.clock())).collect();
    let total = (configs.len() * spec.stencils.len()) as u64;
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::new(total);
        b.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} evaluations [{elapsed_precise}, about {eta} left] {wide_msg}")
                .expect("a valid template"),
        );
        b
    });
    let done = |d: dse::Done<'_>| {
        let i = indices[d.config];
        let line = format!("config #{i} ({}): {}", spec.configs[i].label(), d.line.split_once("] ").map_or(d.line, |x| x.1));
        match &bar {
            Some(b) => {
                // Failures stay on the screen above the bar.
                if line.contains("FAILED") || line.contains("NOT BIT-EXACT") || line.contains("unavailable") {
                    b.println(&line);
                }
                b.inc(1);
                b.set_message(line);
            }
            None => eprintln!("[{}/{}] {line}", d.finished, d.total),
        }
    };
    let env = spec.env(work_dir.to_path_buf());
    let benches = dse::evaluate(&configs, &spec.stencils, spec.program.as_ref(), &env, jobs, &done);
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let mut points = Vec::new();
    for (k, b) in benches.iter().enumerate() {
        let i = indices[k];
        let p = Point::of(i, b);
        let text = serde_json::to_string_pretty(&p).expect("a point serialises") + "\n";
        write_file(&result_path(spec, i), &text)?;
        points.push(p);
    }
    Ok(points)
}

/// Writes dse.txt, dse.json, dse.svg, prints the table; the exit status.
fn finish(spec: &Spec, d: &Dse) -> ExitCode {
    let table = dse::table(d);
    print!("{table}");
    let out = &spec.output;
    let json = serde_json::to_string_pretty(&dse::to_json(d)).expect("json") + "\n";
    for (name, text) in [("dse.txt", table.as_str()), ("dse.json", json.as_str()), ("dse.svg", dse::svg(d).as_str())] {
        if let Err(e) = write_file(&out.join(name), text) {
            return fail(e);
        }
    }
    eprintln!("wrote {0}/dse.txt, {0}/dse.json, {0}/dse.svg", out.display());
    if d.failed() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

fn sweep(spec: &Spec, points: Vec<Point>, missing: Vec<Missing>, ran: String) -> Dse {
    Dse {
        stencils: spec.stencils.clone(),
        size: spec.size,
        clock_rule: spec.clock_rule(),
        space: spec.space.clone(),
        points,
        missing,
        ran,
        program: spec.program.clone(),
    }
}

/// The default number of evaluations at a time.
fn default_jobs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Runs `tessera dse`.
pub fn run(a: &DseArgs) -> ExitCode {
    if let Some(i) = a.run_config {
        return run_config(a, i);
    }
    if a.gather {
        let spec = match read_spec(&a.out_dir.join("spec.json")) {
            Ok(s) => s,
            Err(e) => return usage(e),
        };
        return match gather(&spec, &BTreeMap::new(), None) {
            Ok(d) => finish(&spec, &d),
            Err(e) => fail(e),
        };
    }
    let spec = match new_spec(a) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let spec_path = spec.output.join("spec.json");
    if let Err(e) = clear_results(&spec)
        .and_then(|()| write_file(&spec_path, &(serde_json::to_string_pretty(&spec).expect("json") + "\n")))
    {
        return fail(e);
    }
    eprintln!(
        "tessera dse: {} configuration(s) x {} (spec: {})",
        spec.configs.len(),
        match &spec.program {
            Some(p) => p.describe(),
            None => format!("{} stencil(s), size {}", spec.stencils.len(), spec.size.name()),
        },
        spec_path.display()
    );
    if a.slurm.slurm {
        return submit(a, &spec, &spec_path);
    }
    let jobs = a.jobs.unwrap_or_else(default_jobs).max(1);
    let (work, temporary) = work_dir(&spec, "local");
    let indices: Vec<usize> = (0..spec.configs.len()).collect();
    let points = evaluate(&spec, &indices, jobs, &work);
    if temporary {
        let _ = std::fs::remove_dir_all(&work);
    }
    match points {
        Ok(points) => finish(&spec, &sweep(&spec, points, Vec::new(), format!("local, {jobs} at a time"))),
        Err(e) => fail(e),
    }
}

/// Where the evaluations work: `<out>/work` with --keep-work, else a temporary
/// directory (removed afterwards: the bool).
fn work_dir(spec: &Spec, tag: &str) -> (PathBuf, bool) {
    if spec.keep_work {
        (spec.output.join("work"), false)
    } else {
        (std::env::temp_dir().join(format!("tessera-dse-{tag}-{}", std::process::id())), true)
    }
}

/// One array task: configuration `i` of the spec file.
fn run_config(a: &DseArgs, i: usize) -> ExitCode {
    let spec = match read_spec(Path::new(&a.set)) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    if i >= spec.configs.len() {
        return usage(format!("--run-config {i}: the spec has {} configuration(s)", spec.configs.len()));
    }
    let jobs = a
        .jobs
        .or_else(|| std::env::var("SLURM_CPUS_PER_TASK").ok().and_then(|v| v.parse().ok()))
        .unwrap_or(1)
        .max(1);
    eprintln!("tessera dse: configuration #{i} ({}), {} stencil(s), {jobs} at a time", spec.configs[i].label(), spec.stencils.len());
    let (work, temporary) = if spec.keep_work {
        (spec.output.join("work").join(format!("task-{i}")), false)
    } else {
        work_dir(&spec, &format!("task{i}"))
    };
    let points = evaluate(&spec, &[i], jobs, &work);
    if temporary {
        let _ = std::fs::remove_dir_all(&work);
    }
    match points {
        Ok(points) => {
            let p = &points[0];
            eprintln!("wrote {}", result_path(&spec, i).display());
            for f in &p.failed {
                eprintln!("failed: {f}");
            }
            if p.ok() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Err(e) => fail(e),
    }
}

/// The job array of a sweep.
fn array_job(spec: &Spec, spec_path: &Path) -> slurm::Job {
    let q = |p: &Path| tessera_flow::shell_quote(&p.display().to_string());
    slurm::Job {
        name: "dse".into(),
        commands: vec![format!(
            "exec {} dse --run-config \"$SLURM_ARRAY_TASK_ID\" {}",
            q(&spec.tessera),
            q(spec_path)
        )],
        after: Vec::new(),
        array: Some(format!("0-{}", spec.configs.len() - 1)),
        log: spec.output.join("slurm").join("%A_%a.out"),
    }
}

fn submit(a: &DseArgs, spec: &Spec, spec_path: &Path) -> ExitCode {
    let jobs = [array_job(spec, spec_path)];
    let scripts = match slurm::write_scripts(&jobs, &a.slurm, &spec.output.join("slurm")) {
        Ok(s) => s,
        Err(e) => return fail(e),
    };
    eprintln!("wrote {}", scripts[0].display());
    if a.dry_run {
        for l in slurm::dry_run(&jobs, &scripts) {
            println!("{l}");
        }
        println!("# then, when the array has finished: tessera dse --gather -o {}", tessera_flow::shell_quote(&spec.output.display().to_string()));
        return ExitCode::SUCCESS;
    }
    let ids = match slurm::submit(&jobs, &scripts, &mut |l| eprintln!("{l}")) {
        Ok(ids) => ids,
        Err(e) => return fail(e),
    };
    let id = &ids[0];
    if a.no_wait {
        println!("{id}");
        eprintln!(
            "job array {id} submitted; when it has finished: tessera dse --gather -o {}",
            tessera_flow::shell_quote(&spec.output.display().to_string())
        );
        return ExitCode::SUCCESS;
    }
    let n = spec.configs.len() as u64;
    let bar = std::io::stderr().is_terminal().then(|| {
        let b = ProgressBar::new(n);
        b.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} configurations [{elapsed_precise}] {wide_msg}").expect("a valid template"),
        );
        b
    });
    let mut last_line = String::new();
    let states = slurm::wait(id, Duration::from_secs(a.poll.max(1)), &mut |s| {
        let finished = (0..spec.configs.len()).filter(|&i| result_path(spec, i).is_file()).count() as u64;
        let mut count: BTreeMap<&str, usize> = BTreeMap::new();
        for v in s.values() {
            *count.entry(v.as_str()).or_default() += 1;
        }
        let line = format!(
            "job {id}: {}",
            count.iter().map(|(k, v)| format!("{v} {}", k.to_lowercase())).collect::<Vec<_>>().join(", ")
        );
        match &bar {
            Some(b) => {
                b.set_position(finished);
                b.set_message(line);
            }
            None if line != last_line => {
                eprintln!("{line}; {finished}/{n} results");
                last_line = line;
            }
            None => {}
        }
    });
    if let Some(b) = bar {
        b.finish_and_clear();
    }
    let states = match states {
        Ok(s) => s,
        Err(e) => return fail(format!("{e}\nthe results can be gathered later: tessera dse --gather -o {}", spec.output.display())),
    };
    match gather(spec, &states, Some(id)) {
        Ok(d) => {
            let status = finish(spec, &d);
            if !d.missing.is_empty() {
                let list: Vec<String> = d.missing.iter().map(|m| m.index.to_string()).collect();
                eprintln!(
                    "tessera dse: to run the missing configurations again: sbatch --array={} {}; then tessera dse --gather -o {}",
                    list.join(","),
                    scripts[0].display(),
                    spec.output.display()
                );
            }
            status
        }
        Err(e) => fail(e),
    }
}

/// The sweep from the result files; a configuration without one is missing, with its
/// task's state (when known) and log.
fn gather(spec: &Spec, states: &BTreeMap<String, String>, id: Option<&str>) -> Result<Dse, String> {
    let mut points = Vec::new();
    let mut missing = Vec::new();
    for (i, c) in spec.configs.iter().enumerate() {
        let path = result_path(spec, i);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let p: Point = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
                if p.index != i || p.config != *c {
                    return Err(format!("{}: the result of another configuration (#{}, {})", path.display(), p.index, p.config.label()));
                }
                points.push(p);
            }
            Err(_) => {
                let state = states.get(&i.to_string()).map(|s| format!("task state {s}")).unwrap_or_else(|| "no task state known".into());
                let log = match id {
                    Some(id) => spec.output.join("slurm").join(format!("{id}_{i}.out")).display().to_string(),
                    None => spec.output.join("slurm").join(format!("<job>_{i}.out")).display().to_string(),
                };
                missing.push(Missing { index: i, config: *c, reason: format!("no result file ({state}; log {log})") });
            }
        }
    }
    let ran = match id {
        Some(id) => format!("slurm job array {id}, {} task(s)", spec.configs.len()),
        None => "slurm, gathered from results/".to_string(),
    };
    Ok(sweep(spec, points, missing, ran))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stencil_sets() {
        assert_eq!(stencil_set("paper").unwrap().len(), 10);
        assert_eq!(stencil_set("3D-heat,1D-jacobi").unwrap(), vec!["1D-jacobi", "3D-heat"]);
        assert!(stencil_set("prog.c").unwrap_err().contains("not a stencil"));
    }
}
