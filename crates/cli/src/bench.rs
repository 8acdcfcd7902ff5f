//! `tessera bench`: builds the paper's ten stencils with Tessera, runs them on the
//! emulated device, checks bit-exactness and prints exact counts, modelled FPGA times
//! and measured times (`crates/bench`, model in `crates/model`,
//! `docs/performance.md`). Progress goes to stderr, the table to stdout.
//!
//! Exit status: 0 when every stencil ran bit-exact (a mode the compiler does not
//! generate yet is a note, not a failure), 1 when one failed or mismatched, 2 for bad
//! arguments.

use clap::Args;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;
use tessera_bench::{driver, output, Config, Env, Mode, Size, Tiles, STENCILS};
use tessera_model::ClockRule;

/// Arguments of `tessera bench`.
#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Problem size: paper (64 MiB per array) or small (the sources' small, odd defaults).
    #[arg(long, default_value = "paper")]
    pub size: String,
    /// Tile sizes: small (256 / 32² / 16³), default (512 / 64² / 32³) or large (1024 / 128² / 32³).
    #[arg(long, default_value = "default")]
    pub tiles: String,
    /// Port width in elements per beat: 4, 8 or 16 (16 floats = 512 bit).
    #[arg(long, default_value_t = 16)]
    pub port_width: u32,
    /// Kernel mode: dataflow (the default, as in `tessera cc`), tessera, paper or baseline (the
    /// baseline is always run as the reference).
    #[arg(long, default_value = "dataflow")]
    pub mode: Mode,
    /// DDR banks the kernels use: 1, or 2 (written arrays in the second bank; each bank
    /// then carries one direction; -fplugin-arg-tessera-banks).
    #[arg(long, default_value_t = 1)]
    pub banks: u32,
    /// Model every design at this clock instead of the paper's comparison clock (50 MHz).
    #[arg(long)]
    pub clock_mhz: Option<f64>,
    /// Also run the stencils in this mode and show it beside the first: its table
    /// after the first, in the JSON as `compare`, in the SVG side by side.
    #[arg(long)]
    pub compare: Option<Mode>,
    /// Write the JSON record here.
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Write the SVG figure here.
    #[arg(long)]
    pub svg: Option<PathBuf>,
    /// Only these stencils (comma-separated names, e.g. 2D-jacobi,3D-heat).
    #[arg(long, value_delimiter = ',')]
    pub only: Vec<String>,
    /// Directory with the stencil sources (default: bench/stencils of this checkout).
    #[arg(long)]
    pub stencils: Option<PathBuf>,
    /// Keep binaries, IR dumps, reports and logs in this directory (default: a
    /// temporary directory, removed afterwards).
    #[arg(long)]
    pub work_dir: Option<PathBuf>,
    /// Limit for each compile and each run, in seconds.
    #[arg(long, default_value_t = 1800)]
    pub timeout: u64,
}

fn write_file(path: &Path, text: &str) -> Result<(), String> {
    if let Some(d) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Runs `tessera bench`.
pub fn run(a: &BenchArgs) -> ExitCode {
    let usage = |msg: String| {
        eprintln!("tessera bench: error: {msg}");
        ExitCode::from(2)
    };
    let size = match Size::parse(&a.size) {
        Ok(s) => s,
        Err(e) => return usage(e),
    };
    let tiles = match Tiles::parse(&a.tiles) {
        Ok(t) => t,
        Err(e) => return usage(e),
    };
    if ![4, 8, 16].contains(&a.port_width) {
        return usage(format!("--port-width {}: expected 4, 8 or 16", a.port_width));
    }
    let clock = match a.clock_mhz {
        Some(c) if c.is_finite() && c > 0.0 => ClockRule::Fixed(c),
        Some(c) => return usage(format!("--clock-mhz {c}: expected a positive number")),
        None => ClockRule::Paper,
    };
    if let Some(bad) = a.only.iter().find(|o| !STENCILS.contains(&o.as_str())) {
        return usage(format!("--only {bad}: unknown stencil (known: {})", STENCILS.join(", ")));
    }
    let exe = match std::env::current_exe() {
        Ok(e) => e,
        Err(e) => return usage(format!("cannot find this executable: {e}")),
    };
    let Some(stencil_dir) = a.stencils.clone().or_else(|| driver::default_stencil_dir(&exe)) else {
        return usage("cannot find bench/stencils (run from the checkout or pass --stencils DIR)".into());
    };
    let (work_dir, temporary) = match &a.work_dir {
        Some(d) => (d.clone(), false),
        None => (std::env::temp_dir().join(format!("tessera-bench-{}", std::process::id())), true),
    };
    if let Err(e) = std::fs::create_dir_all(&work_dir) {
        return usage(format!("{}: {e}", work_dir.display()));
    }
    if !matches!(a.banks, 1 | 2) {
        eprintln!("tessera bench: --banks {}: expected 1 or 2", a.banks);
        return ExitCode::from(2);
    }
    let cfg = Config { size, tiles, port_width: a.port_width, mode: a.mode, banks: a.banks, clock };
    let env = Env { tessera: exe, stencil_dir, work_dir: work_dir.clone(), timeout: Duration::from_secs(a.timeout) };
    let progress = &mut |line: &str| {
        eprintln!("{line}");
        let _ = std::io::stderr().flush();
    };
    let bench = tessera_bench::run(&cfg, &env, &a.only, progress);
    let other = a.compare.map(|mode| {
        progress(&format!("compare: mode {mode}"));
        tessera_bench::run(&Config { mode, ..cfg.clone() }, &env, &a.only, progress)
    });
    if temporary {
        let _ = std::fs::remove_dir_all(&work_dir);
    }
    print!("{}", output::table(&bench));
    if let Some(o) = &other {
        print!("\n{}", output::table(o));
    }
    let failed = bench.failed() || other.as_ref().is_some_and(|o| o.failed());
    let mut status = if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS };
    if let Some(p) = &a.json {
        let mut json = output::to_json(&bench);
        if let Some(o) = &other {
            json["compare"] = output::to_json(o);
        }
        let text = serde_json::to_string_pretty(&json).expect("json") + "\n";
        match write_file(p, &text) {
            Ok(()) => eprintln!("wrote {}", p.display()),
            Err(e) => {
                eprintln!("tessera bench: error: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    if let Some(p) = &a.svg {
        match write_file(p, &output::svg_compared(&bench, other.as_ref())) {
            Ok(()) => eprintln!("wrote {}", p.display()),
            Err(e) => {
                eprintln!("tessera bench: error: {e}");
                status = ExitCode::FAILURE;
            }
        }
    }
    status
}
