//! `tessera bitstream <dir-or-manifest.json>... --platform <xpfm>`: builds the FPGA
//! binaries (`.xclbin`) of the kernels `tessera cc` wrote, with AMD Vitis.
//!
//! Every input is a `<output>.tessera/` directory (all its `*.manifest.json`, one per
//! kernel) or one manifest file. Per kernel the plan of `crates/flow` is carried out:
//! write `<out>/<target>/<kernel>.cfg` (the connectivity config), then run `v++ -c`
//! and `v++ -l`; for the emulation targets `emconfigutil` runs once first. Every
//! command is printed before it runs, so the output (commands, `#` comments) is itself
//! a shell script. `--jobs N` builds N kernels at a time (each kernel's own steps stay
//! in order; their output then goes to `<kernel>.build/{compile,link}.out`).
//!
//! Beside every bitstream it builds it writes the build record `<kernel>.xclbin.json`
//! (`tessera_ir::manifest::BitstreamRecord`: kernel, manifest hash, target, platform):
//! the XRT backend runs a bitstream only when the record has the hash of the running
//! program's manifest, so a stale or foreign bitstream is never run. The record is
//! removed before a kernel is built and written after it was built; the manifest's
//! hash must match its contents and `<kernel>.cpp` the manifest's kernel source (the
//! record vouches for what was built). A dry run prints the `rm -f` and `printf`
//! commands that do the same.
//!
//! The Vitis headers the kernels include (`tessera_hls.h`, `tessera_wide.h`, `tessera_ship.h`, `tessera_dataflow.h`,
//! `tessera_math.h`, `tessera_emu_abi.h`, embedded in this executable) are written to `<out>/include/`,
//! the first `-I` of every compile.
//!
//! Without `--dry-run` the command needs `v++` on `PATH` and `$XILINX_VITIS` (both set
//! by Vitis' `settings64.sh`), `emconfigutil` for the emulation targets, and an
//! existing platform; otherwise it stops and says what is missing. `--dry-run` only
//! prints the commands and writes the configs (and headers).

use clap::Args;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;
use tessera_flow::{
    emconfig, plan_kernel, run_environment, FlowError, FlowOptions, KernelPlan, LinkClock, Step, Target,
};
use tessera_ir::manifest::{BitstreamRecord, Manifest, BITSTREAM_RECORD_VERSION};

/// The headers generated kernels include, written to `<out>/include/`.
pub(crate) const HEADERS: [(&str, &str); 6] = [
    ("tessera_hls.h", include_str!("../../../host/include/tessera_hls.h")),
    ("tessera_wide.h", include_str!("../../../host/include/tessera_wide.h")),
    ("tessera_ship.h", include_str!("../../../host/include/tessera_ship.h")),
    ("tessera_dataflow.h", include_str!("../../../host/include/tessera_dataflow.h")),
    ("tessera_math.h", include_str!("../../../host/include/tessera_math.h")),
    ("tessera_emu_abi.h", include_str!("../../../host/include/tessera_emu_abi.h")),
];

/// Arguments of `tessera bitstream`.
#[derive(Args, Debug)]
pub struct BitstreamArgs {
    /// `<output>.tessera` directories written by `tessera cc` (every `*.manifest.json`
    /// in them), or single `<kernel>.manifest.json` files.
    #[arg(required = true, value_name = "DIR|MANIFEST")]
    pub inputs: Vec<PathBuf>,
    /// The Vitis platform: a `.xpfm` file, or a platform name looked up in
    /// `$PLATFORM_REPO_PATHS` and /opt/xilinx/platforms (e.g.
    /// xilinx_u250_gen3x16_xdma_4_1_202210_1). With --flow tapasco: a TaPaSCo platform
    /// name (vcu118).
    #[arg(long)]
    pub platform: String,
    /// Build target: sw_emu (minutes), hw_emu, or hw (hours per kernel).
    #[arg(short = 't', long, default_value = "hw", value_parser = ["sw_emu", "hw_emu", "hw"])]
    pub target: String,
    /// Memory bank of the kernel ports: `BANK` for every port (default DDR[0]), or
    /// `PORT=BANK` / `KERNEL.PORT=BANK` for one port; repeatable. E.g. HBM[0], MIG[0].
    #[arg(long, value_name = "[PORT=]BANK")]
    pub memory: Vec<String>,
    /// Kernel clock in MHz (default: the platform's): `--hls.clock` for HLS and a
    /// link-time clock directive (see --clock-kind).
    #[arg(long, value_name = "MHZ")]
    pub clock_mhz: Option<u32>,
    /// How the link step sets --clock-mhz: `scalable` (`--kernel_frequency`, Alveo
    /// XDMA platforms) or `fixed` (`--clock.freqHz`, platforms with fixed clocks).
    #[arg(long, default_value = "scalable", value_parser = ["scalable", "fixed"])]
    pub clock_kind: String,
    /// Output directory; bitstreams go to `<dir>/<target>/`.
    #[arg(short = 'o', long = "output", default_value = "bitstreams", value_name = "DIR")]
    pub out_dir: PathBuf,
    /// Print the commands and write the connectivity configs; run nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Kernels built at the same time.
    #[arg(short = 'j', long, default_value_t = 1)]
    pub jobs: usize,
    /// Extra include directory for `v++ -c` (after the Tessera headers); repeatable.
    #[arg(short = 'I', long = "include", value_name = "DIR")]
    pub includes: Vec<PathBuf>,
    /// `--report_level` for hw_emu and hw: 0, 1, 2 or estimate.
    #[arg(long, default_value = tessera_flow::DEFAULT_REPORT_LEVEL, value_parser = ["0", "1", "2", "estimate"])]
    pub report_level: String,
    /// Extra argument for every `v++ -c` (e.g. `--compile-arg=-g`); repeatable.
    #[arg(long = "compile-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub compile_args: Vec<String>,
    /// Extra argument for every `v++ -l` (e.g. `--link-arg=--vivado.impl.jobs=8`); repeatable.
    #[arg(long = "link-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub link_args: Vec<String>,
    /// Build flow: `vitis` (v++, an .xclbin per kernel) or `tapasco` (TaPaSCo: one
    /// .bit with a PE per kernel, e.g. `--platform vcu118 --clock-mhz <MHz>`; see
    /// bitstreams/README.md, "VCU118 through TaPaSCo").
    #[arg(long, default_value = "vitis", value_parser = ["vitis", "tapasco"])]
    pub flow: String,
}

/// Runs `tessera bitstream`.
pub fn run(a: &BitstreamArgs) -> ExitCode {
    match build(a) {
        Ok(()) => ExitCode::SUCCESS,
        Err(msg) => {
            eprintln!("tessera bitstream: error: {msg}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file())
}

/// What is missing to run Vitis, as one message, or `None`.
fn vitis_problem(target: Target) -> Option<String> {
    let mut missing = Vec::new();
    if find_on_path("v++").is_none() {
        missing.push("`v++` (the Vitis compiler) is not on PATH".to_string());
    }
    if std::env::var_os("XILINX_VITIS").is_none_or(|v| v.is_empty()) {
        missing.push("XILINX_VITIS is not set".to_string());
    }
    if target.is_emulation() && find_on_path("emconfigutil").is_none() {
        missing.push(format!("`emconfigutil` (needed for {target}) is not on PATH"));
    }
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "AMD Vitis is not set up in this shell:\n{}\n\
         `tessera bitstream` runs AMD Vitis 2023.x/2024.x (v++, emconfigutil), which is not part of Tessera.\n\
         Install Vitis (and XRT to run the bitstreams), then set up the shell and run this command again:\n    \
         source <Vitis install dir>/settings64.sh    # e.g. /tools/Xilinx/Vitis/2023.2/settings64.sh\n    \
         source /opt/xilinx/xrt/setup.sh\n\
         With --dry-run the commands are only printed (and the connectivity configs written).",
        missing.iter().map(|m| format!("  - {m}")).collect::<Vec<_>>().join("\n")
    ))
}

/// The platform as a `.xpfm` path: an existing file, a directory holding one `.xpfm`,
/// or a name found as `<dir>/<name>/<name>.xpfm` under `$PLATFORM_REPO_PATHS` or
/// /opt/xilinx/platforms (where v++ looks too).
fn resolve_platform(p: &str) -> Result<PathBuf, String> {
    let path = Path::new(p);
    if p.contains('/') || p.ends_with(".xpfm") {
        if path.is_file() {
            return Ok(path.to_path_buf());
        }
        if path.is_dir() {
            let xpfms: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| format!("{p}: {e}"))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.extension().is_some_and(|x| x == "xpfm"))
                .collect();
            if let [one] = xpfms.as_slice() {
                return Ok(one.clone());
            }
            return Err(format!(
                "platform directory `{p}` holds {} .xpfm files; pass the .xpfm file itself",
                xpfms.len()
            ));
        }
        return Err(format!(
            "platform file `{p}` does not exist.\n\
             Pass the .xpfm of an installed platform (Alveo platforms install to \
             /opt/xilinx/platforms/<name>/<name>.xpfm; a VCU118 needs a custom platform, see bitstreams/README.md), \
             or a platform name found in $PLATFORM_REPO_PATHS."
        ));
    }
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PLATFORM_REPO_PATHS").map(|v| std::env::split_paths(&v).collect()).unwrap_or_default();
    dirs.push(PathBuf::from("/opt/xilinx/platforms"));
    for d in &dirs {
        for cand in [d.join(p).join(format!("{p}.xpfm")), d.join(format!("{p}.xpfm"))] {
            if cand.is_file() {
                return Ok(cand);
            }
        }
    }
    Err(format!(
        "platform `{p}` not found: no {p}/{p}.xpfm in {}.\n\
         Install the platform (for an Alveo card, its development target platform package), set PLATFORM_REPO_PATHS \
         to the directory holding it, or pass the path of its .xpfm; a VCU118 needs a custom platform (bitstreams/README.md).",
        dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
    ))
}

/// `--memory` values: the default bank and the per-port banks.
fn parse_memory(values: &[String]) -> Result<(Option<String>, BTreeMap<String, String>), String> {
    let mut default = None;
    let mut ports = BTreeMap::new();
    for v in values {
        match v.split_once('=') {
            Some((port, bank)) => {
                if port.is_empty() || bank.is_empty() {
                    return Err(format!("--memory {v}: expected PORT=BANK, e.g. A=DDR[1]"));
                }
                if ports.insert(port.to_string(), bank.to_string()).is_some() {
                    return Err(format!("--memory: port `{port}` is given twice"));
                }
            }
            None => {
                if default.replace(v.clone()).is_some() {
                    return Err("--memory: the default bank (a value without PORT=) is given twice".to_string());
                }
            }
        }
    }
    Ok((default, ports))
}

/// The manifests of the inputs, in order (a directory's sorted by file name).
pub(crate) fn manifest_files(inputs: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for input in inputs {
        if input.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(input)
                .map_err(|e| format!("{}: {e}", input.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(".manifest.json")))
                .collect();
            if found.is_empty() {
                return Err(format!(
                    "{}: no *.manifest.json in this directory (expected a <program>.tessera directory written by `tessera cc`, \
                     which has one manifest per offloaded region)",
                    input.display()
                ));
            }
            found.sort();
            out.extend(found);
        } else if input.is_file() {
            out.push(input.clone());
        } else {
            return Err(format!("{}: no such file or directory", input.display()));
        }
    }
    Ok(out)
}

pub(crate) fn create_dir(d: &Path) -> Result<(), String> {
    std::fs::create_dir_all(d).map_err(|e| format!("cannot create {}: {e}", d.display()))
}

pub(crate) fn write_file(p: &Path, contents: &str) -> Result<(), String> {
    std::fs::write(p, contents).map_err(|e| format!("cannot write {}: {e}", p.display()))
}

pub(crate) fn say(line: &str) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn build(a: &BitstreamArgs) -> Result<(), String> {
    if a.flow == "tapasco" {
        return crate::bitstream_tapasco::build(a);
    }
    let target = Target::parse(&a.target).expect("clap checks the target");
    let (default_memory, port_memory) = parse_memory(&a.memory)?;
    if a.jobs == 0 {
        return Err("--jobs must be at least 1".to_string());
    }

    // Vitis first: without it nothing else matters (and the message says how to get it).
    let platform = if a.dry_run {
        a.platform.clone()
    } else {
        if let Some(problem) = vitis_problem(target) {
            return Err(problem);
        }
        resolve_platform(&a.platform)?.display().to_string()
    };

    let include_dir = a.out_dir.join("include");
    let mut base = FlowOptions::new(target, platform, PathBuf::new(), a.out_dir.clone());
    if let Some(m) = default_memory {
        base.default_memory = m;
    }
    base.port_memory = port_memory;
    base.clock_mhz = a.clock_mhz;
    base.link_clock = if a.clock_kind == "fixed" { LinkClock::Fixed } else { LinkClock::Scalable };
    base.report_level = Some(a.report_level.clone());
    base.includes = std::iter::once(include_dir.clone()).chain(a.includes.iter().cloned()).collect();
    base.compile_args = a.compile_args.clone();
    base.link_args = a.link_args.clone();

    // Plan every kernel before writing or running anything.
    let mut plans: Vec<KernelPlan> = Vec::new();
    // The build record of each plan (same index).
    let mut records: Vec<BitstreamRecord> = Vec::new();
    for file in manifest_files(&a.inputs)? {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let main = Manifest::from_json(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut opts = base.clone();
        opts.kernel_dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        // A delinearised region has a second kernel (its guard's fallback, the
        // baseline of the region as written), with a bitstream of its own.
        let fallback = main.fallback();
        for manifest in std::iter::once(&main).chain(fallback.as_ref()) {
            match plan_kernel(manifest, &opts) {
                Ok(p) => {
                    if !p.source.is_file() {
                        return Err(format!(
                            "{}: the kernel source {} is missing (the manifest must stay in the <program>.tessera directory \
                             `tessera cc` wrote, next to its kernel)",
                            file.display(),
                            p.source.display()
                        ));
                    }
                    check_kernel_files(&file, manifest, &p.source)?;
                    if let Some(other) = plans.iter().find(|q| q.xclbin == p.xclbin) {
                        return Err(format!(
                            "kernels of {} and {} would both be built as {}; build them into different --output directories",
                            other.region,
                            p.region,
                            p.xclbin.display()
                        ));
                    }
                    records.push(BitstreamRecord {
                        version: BITSTREAM_RECORD_VERSION,
                        kernel: p.kernel.clone(),
                        hash: manifest.hash.clone(),
                        region: p.region.clone(),
                        manifest: file.display().to_string(),
                        target: target.to_string(),
                        platform: base.platform.clone(),
                    });
                    plans.push(p);
                }
                Err(e @ FlowError::NotOffloaded { .. }) => say(&format!("# skipping {}: {e}", file.display())),
                Err(e) => return Err(format!("{}: {e}", file.display())),
            }
        }
    }
    if plans.is_empty() {
        return Err("no kernel to build".to_string());
    }
    for key in base.port_memory.keys() {
        let used = plans.iter().any(|p| {
            p.ports.iter().any(|q| {
                [q.port.clone(), q.arg.clone(), format!("{}.{}", p.kernel, q.port), format!("{}.{}", p.kernel, q.arg)]
                    .contains(key)
            })
        });
        if !used {
            let all: Vec<String> =
                plans.iter().flat_map(|p| p.ports.iter().map(move |q| format!("{}.{}", p.kernel, q.arg))).collect();
            return Err(format!(
                "--memory {key}=…: no kernel has a memory port `{key}` (memory ports: {})",
                all.join(", ")
            ));
        }
    }

    // Files: headers, configs.
    create_dir(&include_dir)?;
    for (name, text) in HEADERS {
        write_file(&include_dir.join(name), text)?;
    }
    let emconfig_step = emconfig(&base);
    say(&format!(
        "# tessera bitstream: {} kernel(s), target {target}, platform {}{}",
        plans.len(),
        base.platform,
        if a.dry_run { " (dry run: nothing is run)" } else { "" }
    ));
    for p in &plans {
        for d in p.dirs() {
            create_dir(&d)?;
        }
        write_file(&p.cfg_path, &p.cfg)?;
        let ports: Vec<String> = p.ports.iter().map(|q| format!("{} -> {}", q.port, q.memory)).collect();
        say(&format!("# {} ({}): {} -> {}", p.kernel, p.region, p.source.display(), p.xclbin.display()));
        say(&format!("#   memory ports: {}", if ports.is_empty() { "none".to_string() } else { ports.join(", ") }));
        say(&format!("#   wrote {}", p.cfg_path.display()));
    }

    if a.dry_run {
        if let Some(s) = &emconfig_step {
            say(&s.shell());
        }
        for (p, r) in plans.iter().zip(&records) {
            say(&format!("# {}", p.kernel));
            let record = BitstreamRecord::path_for(&p.xclbin).display().to_string();
            say(&format!("rm -f {}", tessera_flow::shell_quote(&record)));
            for s in p.steps() {
                say(&s.shell());
            }
            say(&format!(
                "printf '%s\\n' {} > {}",
                tessera_flow::shell_quote(r.to_json().trim_end()),
                tessera_flow::shell_quote(&record)
            ));
        }
        print_environment(&base, "# after building, to run with these bitstreams:");
        return Ok(());
    }

    if let Some(s) = &emconfig_step {
        run_step(s, None)?;
    }
    let failures = run_kernels(&plans, &records, a.jobs);
    if !failures.is_empty() {
        return Err(format!(
            "{} of {} kernel(s) failed:\n{}",
            failures.len(),
            plans.len(),
            failures.iter().map(|f| format!("  {f}")).collect::<Vec<_>>().join("\n")
        ));
    }
    say(&format!("# built {} bitstream(s):", plans.len()));
    for p in &plans {
        say(&format!("#   {}", p.xclbin.display()));
    }
    print_environment(&base, "# to run with these bitstreams:");
    Ok(())
}

/// The environment for running the host program, with absolute paths.
fn print_environment(opts: &FlowOptions, title: &str) {
    say(title);
    let abs = std::fs::canonicalize(opts.target_dir()).unwrap_or_else(|_| opts.target_dir());
    let dir = opts.target_dir().display().to_string();
    for (k, v) in run_environment(opts) {
        let v = if v == dir { abs.display().to_string() } else { v };
        say(&format!("#   export {k}={}", tessera_flow::shell_quote(&v)));
    }
}

/// Runs one step, printing it first; output to the terminal, or to `log` (parallel
/// builds). An error names the command and where its output is.
pub(crate) fn run_step(s: &Step, log: Option<&Path>) -> Result<(), String> {
    say(&s.shell());
    let mut cmd = Command::new(&s.program);
    cmd.args(&s.args).stdin(Stdio::null());
    if let Some(log) = log {
        let f = std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let f2 = f.try_clone().map_err(|e| format!("{}: {e}", log.display()))?;
        cmd.stdout(f).stderr(f2);
    }
    let status = cmd.status().map_err(|e| format!("cannot run {}: {e}", s.program))?;
    if status.success() {
        Ok(())
    } else {
        let where_ = log.map(|l| format!("; output in {}", l.display())).unwrap_or_default();
        Err(format!("`{} {}` failed ({status}){where_}", s.program, s.args.first().map_or("", |a| a.as_str())))
    }
}

/// Checks that a manifest describes the kernel that will be built: its hash matches
/// its contents and the kernel source file is the manifest's kernel (the build record
/// vouches for both).
pub(crate) fn check_kernel_files(file: &Path, manifest: &Manifest, source: &Path) -> Result<(), String> {
    if manifest.hash != manifest.content_hash() {
        return Err(format!(
            "{}: the manifest's hash does not match its contents (edited after `tessera cc` wrote it?); \
             recompile the program with `tessera cc`",
            file.display()
        ));
    }
    let text = std::fs::read_to_string(source).map_err(|e| format!("{}: {e}", source.display()))?;
    if text != manifest.kernel_source {
        return Err(format!(
            "{}: the kernel source {} differs from the kernel in the manifest (edited after `tessera cc` wrote it?): \
             the bitstream would not be the kernel the program runs; recompile the program with `tessera cc` \
             (changes belong in the program's source)",
            file.display(),
            source.display()
        ));
    }
    Ok(())
}

/// Builds one kernel: remove its build record, compile, link, check the `.xclbin`
/// exists, write the build record.
fn build_kernel(p: &KernelPlan, record: &BitstreamRecord, parallel: bool) -> Result<(), String> {
    let log = |name: &str| parallel.then(|| p.build_dir.join(name));
    let record_path = BitstreamRecord::path_for(&p.xclbin);
    match std::fs::remove_file(&record_path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            return Err(format!("cannot remove the old build record {}: {e}", record_path.display()))
        }
        _ => {}
    }
    run_step(&p.compile, log("compile.out").as_deref())?;
    run_step(&p.link, log("link.out").as_deref())?;
    if !p.xclbin.is_file() {
        return Err(format!("v++ -l succeeded but {} does not exist", p.xclbin.display()));
    }
    write_file(&record_path, &record.to_json())?;
    say(&format!("# built {}", p.xclbin.display()));
    say(&format!("#   wrote its build record {}", record_path.display()));
    Ok(())
}

/// Builds all kernels, `jobs` at a time; the failures as `kernel: reason (logs)`.
fn run_kernels(plans: &[KernelPlan], records: &[BitstreamRecord], jobs: usize) -> Vec<String> {
    let jobs = jobs.min(plans.len());
    let next = AtomicUsize::new(0);
    let failures: Mutex<BTreeSet<(usize, String)>> = Mutex::new(BTreeSet::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = plans.get(i) else { break };
                if let Err(e) = build_kernel(p, &records[i], jobs > 1) {
                    let logs = p.build_dir.join("logs");
                    failures
                        .lock()
                        .expect("no worker panics")
                        .insert((i, format!("{}: {e} (v++ logs: {})", p.kernel, logs.display())));
                }
            });
        }
    });
    failures.into_inner().expect("no worker panics").into_iter().map(|(_, f)| f).collect()
}
