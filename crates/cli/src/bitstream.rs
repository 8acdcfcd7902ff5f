//! `tessera bitstream <dir-or-manifest.json>... --platform <xpfm>`: links the kernels
//! `tessera cc` wrote into one FPGA binary (`.xclbin`) for the program, with AMD Vitis.
//!
//! Every input is a `<output>.tessera/` directory (all its `*.manifest.json`, one per
//! kernel) or one manifest file. The plans of `crates/flow` are carried out: for the
//! emulation targets `emconfigutil` runs once first; every kernel is compiled (`v++ -c`,
//! `<kernel>.xo`; `--jobs N` compiles N at a time, their output then goes to
//! `<kernel>.build/compile.out`); then ONE `v++ -l` links every `.xo` into
//! `<out>/<target>/<program>.xclbin` with the connectivity config `<program>.cfg` (one
//! compute unit per kernel). `<program>` is `--name`, by default the kernel directory's
//! name without `.tessera` (`tessera cc -o app` writes `app.tessera/`), which is the
//! executable's name the runtime looks the xclbin up by; kernels from directories of
//! different names need `--name`. Every command is printed before it runs, so the
//! output (commands, `#` comments) is itself a shell script.
//!
//! `--per-kernel` links every kernel into an xclbin of its own instead (the name its
//! manifest gives, `<kernel>.xclbin`, with `<kernel>.cfg`): for kernels too large to fit
//! on the device together, at the price of a board reload whenever the program
//! switches between kernels.
//!
//! Beside every xclbin it builds it writes the build record `<xclbin>.json`
//! (`tessera_ir::manifest::BitstreamRecord`: every kernel linked in with its manifest's
//! hash, target, platform): the XRT backend runs a kernel from an xclbin only when the
//! record lists it with the hash of the running program's manifest, so a stale or
//! foreign kernel is never run. The record is removed before the build and written
//! after the link produced the xclbin; every manifest's hash must match its contents
//! and `<kernel>.cpp` the manifest's kernel source (the record vouches for what was
//! built). A dry run prints the `rm -f` and `printf` commands that do the same.
//!
//! The Vitis headers the kernels include (`tessera_hls.h`, `tessera_wide.h`, `tessera_ship.h`, `tessera_dataflow.h`,
//! `tessera_math.h`, `tessera_emu_abi.h`, embedded in this executable) are written to `<out>/include/`,
//! the first `-I` of every compile.
//!
//! `--slurm` submits the same work to Slurm instead (`slurm.rs`): every kernel's
//! `v++ -c` as a job, its `v++ -l` (and the build record) as a job that starts after it
//! (`--dependency=afterok`), scripts in `<out>/<target>/slurm/`; with `--dry-run` the
//! sbatch commands are printed.
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
    emconfig, plan_kernel, plan_link, run_environment, FlowError, FlowOptions, KernelPlan, LinkClock, LinkPlan, Step,
    Target,
};
use tessera_ir::manifest::{BitstreamRecord, Manifest, RecordedKernel, BITSTREAM_RECORD_VERSION};

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
    /// The program's name: its kernels are linked into `<NAME>.xclbin`, which the runtime
    /// looks up by the executable's name. Default: the kernel directory's name without
    /// `.tessera` (`tessera cc -o app` writes `app.tessera/`: `app.xclbin`).
    #[arg(long, value_name = "NAME", conflicts_with = "per_kernel")]
    pub name: Option<String>,
    /// Link every kernel into an xclbin of its own (`<kernel>.xclbin`) instead of one
    /// for the program: for kernels that do not fit on the device together (the board
    /// is then reloaded whenever the next region's kernel is in another xclbin).
    #[arg(long)]
    pub per_kernel: bool,
    #[command(flatten)]
    pub slurm: crate::slurm::SlurmArgs,
    /// Build flow: `vitis` (v++, one .xclbin for the program) or `tapasco` (TaPaSCo: one
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
    // What the build record says of each plan (same index).
    let mut recorded: Vec<RecordedKernel> = Vec::new();
    // The kernel directory of every input, for the program's default name.
    let mut kernel_dirs: Vec<PathBuf> = Vec::new();
    for file in manifest_files(&a.inputs)? {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let main = Manifest::from_json(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let mut opts = base.clone();
        opts.kernel_dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
        if !kernel_dirs.contains(&opts.kernel_dir) {
            kernel_dirs.push(opts.kernel_dir.clone());
        }
        // A delinearised region has a second kernel (its guard's fallback, the
        // baseline of the region as written), linked beside it.
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
                    if let Some(other) = plans.iter().find(|q| q.kernel == p.kernel) {
                        return Err(format!(
                            "kernel {} is given twice ({} and {}); pass each kernel directory once",
                            p.kernel, other.source.display(), p.source.display()
                        ));
                    }
                    if let Some(other) = plans.iter().find(|q| a.per_kernel && q.xclbin == p.xclbin) {
                        return Err(format!(
                            "kernels of {} and {} would both be built as {}; build them into different --output directories",
                            other.region,
                            p.region,
                            p.xclbin.display()
                        ));
                    }
                    recorded.push(RecordedKernel {
                        kernel: p.kernel.clone(),
                        hash: manifest.hash.clone(),
                        region: p.region.clone(),
                        manifest: file.display().to_string(),
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
    let record = |kernels: Vec<RecordedKernel>| BitstreamRecord {
        version: BITSTREAM_RECORD_VERSION,
        kernels,
        target: target.to_string(),
        platform: base.platform.clone(),
    };
    // One link for the whole program, or (--per-kernel) each kernel's own.
    let link = if a.per_kernel {
        None
    } else {
        let name = match &a.name {
            Some(n) => n.clone(),
            None => program_name(&kernel_dirs)?,
        };
        Some((plan_link(&name, &plans, &base).map_err(|e| e.to_string())?, record(recorded.clone())))
    };

    // Files: headers, configs.
    create_dir(&include_dir)?;
    for (name, text) in HEADERS {
        write_file(&include_dir.join(name), text)?;
    }
    let emconfig_step = emconfig(&base);
    let into = match &link {
        Some((l, _)) => format!(", linked into {}", l.xclbin.display()),
        None => ", one bitstream per kernel".to_string(),
    };
    say(&format!(
        "# tessera bitstream: {} kernel(s), target {target}, platform {}{into}{}",
        plans.len(),
        base.platform,
        if a.dry_run { " (dry run: nothing is run)" } else { "" }
    ));
    for p in &plans {
        for d in p.dirs() {
            create_dir(&d)?;
        }
        let ports: Vec<String> = p.ports.iter().map(|q| format!("{} -> {}", q.port, q.memory)).collect();
        let out = if link.is_some() { &p.xo } else { &p.xclbin };
        say(&format!("# {} ({}): {} -> {}", p.kernel, p.region, p.source.display(), out.display()));
        say(&format!("#   memory ports: {}", if ports.is_empty() { "none".to_string() } else { ports.join(", ") }));
        if link.is_none() {
            write_file(&p.cfg_path, &p.cfg)?;
            say(&format!("#   wrote {}", p.cfg_path.display()));
        }
    }
    if let Some((l, _)) = &link {
        for d in l.dirs() {
            create_dir(&d)?;
        }
        write_file(&l.cfg_path, &l.cfg)?;
        say(&format!("# wrote {} (the connectivity of the link)", l.cfg_path.display()));
    }

    if a.slurm.slurm {
        let per_kernel: Vec<BitstreamRecord> = recorded.iter().map(|k| record(vec![k.clone()])).collect();
        return submit_to_slurm(a, &base, emconfig_step.as_ref(), &plans, link.as_ref(), &per_kernel);
    }
    if a.dry_run {
        if let Some(s) = &emconfig_step {
            say(&s.shell());
        }
        let printf = |r: &BitstreamRecord, path: &Path| {
            say(&format!(
                "printf '%s\\n' {} > {}",
                tessera_flow::shell_quote(r.to_json().trim_end()),
                tessera_flow::shell_quote(&path.display().to_string())
            ))
        };
        match &link {
            Some((l, r)) => {
                let path = BitstreamRecord::path_for(&l.xclbin);
                say(&format!("rm -f {}", tessera_flow::shell_quote(&path.display().to_string())));
                for p in &plans {
                    say(&format!("# {}", p.kernel));
                    say(&p.compile.shell());
                }
                say(&format!("# {}: every kernel", l.name));
                say(&l.link.shell());
                printf(r, &path);
            }
            None => {
                for (p, k) in plans.iter().zip(&recorded) {
                    say(&format!("# {}", p.kernel));
                    let path = BitstreamRecord::path_for(&p.xclbin);
                    say(&format!("rm -f {}", tessera_flow::shell_quote(&path.display().to_string())));
                    for s in p.steps() {
                        say(&s.shell());
                    }
                    printf(&record(vec![k.clone()]), &path);
                }
            }
        }
        print_environment(&base, "# after building, to run with these bitstreams:");
        return Ok(());
    }

    if let Some(s) = &emconfig_step {
        run_step(s, None)?;
    }
    match &link {
        Some((l, r)) => {
            let record_path = BitstreamRecord::path_for(&l.xclbin);
            remove_record(&record_path)?;
            let failures = run_kernels(&plans, a.jobs, |p, parallel| {
                run_step(&p.compile, parallel.then(|| p.build_dir.join("compile.out")).as_deref())
            });
            if !failures.is_empty() {
                return Err(format!(
                    "{} of {} kernel(s) failed to compile, {} is not linked:\n{}",
                    failures.len(),
                    plans.len(),
                    l.xclbin.display(),
                    failures.iter().map(|f| format!("  {f}")).collect::<Vec<_>>().join("\n")
                ));
            }
            link_program(l, r, &record_path)?;
            say(&format!("# built {} ({} kernel(s))", l.xclbin.display(), l.kernels.len()));
        }
        None => {
            let records: Vec<BitstreamRecord> = recorded.iter().map(|k| record(vec![k.clone()])).collect();
            let failures = run_kernels(&plans, a.jobs, |p, parallel| {
                let i = plans.iter().position(|q| q.kernel == p.kernel).expect("a planned kernel");
                build_kernel(p, &records[i], parallel)
            });
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
        }
    }
    print_environment(&base, "# to run with these bitstreams:");
    Ok(())
}

/// The program's default name: the kernel directories' name without `.tessera`
/// (`tessera cc -o app` writes `app.tessera/`), which must be the same for all.
fn program_name(kernel_dirs: &[PathBuf]) -> Result<String, String> {
    let names: BTreeSet<String> = kernel_dirs
        .iter()
        .map(|d| {
            let abs = if d.as_os_str().is_empty() { Path::new(".") } else { d.as_path() };
            let abs = std::fs::canonicalize(abs).unwrap_or_else(|_| abs.to_path_buf());
            let n = abs.file_name().and_then(|n| n.to_str()).unwrap_or("");
            n.strip_suffix(".tessera").unwrap_or(n).to_string()
        })
        .collect();
    match names.len() {
        1 => Ok(names.into_iter().next().expect("one name")),
        _ => Err(format!(
            "the kernels come from directories of different programs ({}); they are linked into one xclbin named \
             after the program: give its name with --name <program> (the executable's name, which the runtime \
             looks the xclbin up by), or build each program on its own",
            kernel_dirs.iter().map(|d| d.display().to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
}

/// Removes an old build record (a missing one is fine).
fn remove_record(path: &Path) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("cannot remove the old build record {}: {e}", path.display()))
        }
        _ => Ok(()),
    }
}

/// Links the compiled kernels into the program's `.xclbin`, checks it exists, writes
/// its build record.
fn link_program(l: &LinkPlan, record: &BitstreamRecord, record_path: &Path) -> Result<(), String> {
    run_step(&l.link, None).map_err(|e| {
        format!(
            "linking {} kernel(s) into {} failed: {e} (v++ logs: {})",
            l.kernels.len(),
            l.xclbin.display(),
            l.build_dir.join("logs").display()
        )
    })?;
    if !l.xclbin.is_file() {
        return Err(format!("v++ -l succeeded but {} does not exist", l.xclbin.display()));
    }
    write_file(record_path, &record.to_json())?;
    say(&format!("#   wrote its build record {} (kernels {})", record_path.display(), record.kernel_names()));
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

/// Builds one kernel into its own `.xclbin` (`--per-kernel`): remove its build record,
/// compile, link, check the `.xclbin` exists, write the build record.
fn build_kernel(p: &KernelPlan, record: &BitstreamRecord, parallel: bool) -> Result<(), String> {
    let log = |name: &str| parallel.then(|| p.build_dir.join(name));
    let record_path = BitstreamRecord::path_for(&p.xclbin);
    remove_record(&record_path)?;
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

/// Runs `work` on every kernel, `jobs` at a time (`work` is told whether others run
/// beside it); the failures as `kernel: reason (logs)`, in kernel order.
fn run_kernels(
    plans: &[KernelPlan],
    jobs: usize,
    work: impl Fn(&KernelPlan, bool) -> Result<(), String> + Sync,
) -> Vec<String> {
    let jobs = jobs.min(plans.len());
    let next = AtomicUsize::new(0);
    let failures: Mutex<BTreeSet<(usize, String)>> = Mutex::new(BTreeSet::new());
    std::thread::scope(|scope| {
        for _ in 0..jobs {
            scope.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(p) = plans.get(i) else { break };
                if let Err(e) = work(p, jobs > 1) {
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

/// `--slurm`: the emulation config, every kernel's compile and, after it (`afterok`),
/// its link and build record as Slurm jobs (`crate::slurm`); printed with `--dry-run`.
fn submit_to_slurm(
    a: &BitstreamArgs,
    base: &FlowOptions,
    emconfig_step: Option<&Step>,
    plans: &[KernelPlan],
    link: Option<&(tessera_flow::LinkPlan, BitstreamRecord)>,
    per_kernel: &[BitstreamRecord],
) -> Result<(), String> {
    use crate::slurm::{self, Job};
    let q = |p: &Path| tessera_flow::shell_quote(&p.display().to_string());
    let dir = base.target_dir().join("slurm");
    let job = |name: String, commands: Vec<String>, after: Vec<usize>| Job::single(&dir, name, commands, after);
    let write_record = |r: &BitstreamRecord, path: &Path| {
        format!("printf '%s\\n' {} > {}", tessera_flow::shell_quote(r.to_json().trim_end()), q(path))
    };
    let mut jobs = Vec::new();
    if let Some(s) = emconfig_step {
        jobs.push(job("emconfig".into(), vec![s.shell()], vec![]));
    }
    match link {
        // One compile job per kernel, then the program's link after all of them.
        Some((l, r)) => {
            let record = BitstreamRecord::path_for(&l.xclbin);
            let mut compiles = Vec::new();
            for p in plans {
                let mut commands = Vec::new();
                if compiles.is_empty() {
                    commands.push(format!("rm -f {}", q(&record)));
                }
                commands.push(p.compile.shell());
                compiles.push(jobs.len());
                jobs.push(job(format!("compile-{}", p.kernel), commands, vec![]));
            }
            let commands = vec![l.link.shell(), format!("test -f {}", q(&l.xclbin)), write_record(r, &record)];
            jobs.push(job(format!("link-{}", l.name), commands, compiles));
        }
        // --per-kernel: each kernel's compile, then its own link.
        None => {
            for (p, r) in plans.iter().zip(per_kernel) {
                let record = BitstreamRecord::path_for(&p.xclbin);
                jobs.push(job(format!("compile-{}", p.kernel), vec![format!("rm -f {}", q(&record)), p.compile.shell()], vec![]));
                let commands = vec![p.link.shell(), format!("test -f {}", q(&p.xclbin)), write_record(r, &record)];
                jobs.push(job(format!("link-{}", p.kernel), commands, vec![jobs.len() - 1]));
            }
        }
    }
    let waits = "a link job starts when the compile jobs it needs have succeeded";
    slurm::write_and_submit(&jobs, &a.slurm, &dir, a.dry_run, waits, &mut |l| say(l))?;
    print_environment(base, "# after the link jobs, to run with these bitstreams:");
    Ok(())
}
