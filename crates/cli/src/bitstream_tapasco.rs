//! `tessera bitstream --flow tapasco --platform vcu118 --clock-mhz <MHz>`: builds one
//! FPGA bitstream (`.bit`) for all kernels of a program with TaPaSCo (one PE per
//! kernel), for a board TaPaSCo supports; the plan comes from
//! `tessera_flow::tapasco`, which documents the steps.
//!
//! Files: the Tessera headers in `<out>/include/`, per kernel
//! `<out>/tapasco/kernel/<kernel>/{kernel.json,<kernel>.cpp}`; TaPaSCo's cores and
//! compositions under `<out>/tapasco/{core,compose}/`; the bitstream as
//! `<out>/<platform>/<program>.bit` with its build record `<program>.bit.json`
//! (`tessera_ir::tapasco::TapascoRecord`), removed before the build and written after
//! it. `tapasco hls` skips a kernel whose core exists, so each core is stamped with
//! its manifest's hash (`<out>/tapasco/core/<kernel>/tessera.hash`, written once the
//! core's `.zip` exists) and a core with another stamp is removed before `tapasco
//! hls`; TaPaSCo's bitstream is removed before `tapasco compose`, so only a bitstream
//! of this run is copied. Every command is printed before it runs; `--dry-run` writes
//! the files and prints the commands as a shell script (`set -e`, the stamps, the
//! record's removal and its `printf`) without running anything.
//!
//! Without `--dry-run` it needs `tapasco` on `PATH` and `TAPASCO_HOME` (both set by a
//! TaPaSCo workspace's `tapasco-setup.sh`), and `vivado` and `vitis_hls` on `PATH`;
//! otherwise it stops and says what is missing.

use crate::bitstream::{
    check_kernel_files, create_dir, find_on_path, manifest_files, run_step, say, write_file, BitstreamArgs, HEADERS,
};
use std::path::{Path, PathBuf};
use tessera_flow::tapasco::{plan, run_environment, TapascoOptions, TapascoPlan};
use tessera_flow::{shell_quote, FlowError};
use tessera_ir::manifest::Manifest;
use tessera_ir::tapasco::TapascoRecord;

/// What is missing to run TaPaSCo's toolflow, as one message, or `None`.
fn tapasco_problem() -> Option<String> {
    let mut missing = Vec::new();
    if find_on_path("tapasco").is_none() {
        missing.push("`tapasco` (TaPaSCo's toolflow) is not on PATH".to_string());
    }
    if std::env::var_os("TAPASCO_HOME").is_none_or(|v| v.is_empty()) {
        missing.push("TAPASCO_HOME is not set".to_string());
    }
    if find_on_path("vivado").is_none() {
        missing.push("`vivado` is not on PATH".to_string());
    }
    if find_on_path("vitis_hls").is_none() {
        missing.push("`vitis_hls` is not on PATH".to_string());
    }
    if missing.is_empty() {
        return None;
    }
    Some(format!(
        "TaPaSCo is not set up in this shell:\n{}\n\
         `tessera bitstream --flow tapasco` runs TaPaSCo's toolflow (tapasco hls, tapasco compose; \
         github.com/esa-tu-darmstadt/tapasco) with AMD Vivado and Vitis HLS, none of which is part of Tessera.\n\
         Install them, then set up the shell and run this command again:\n    \
         source <Vivado install dir>/settings64.sh      # e.g. /tools/Xilinx/Vivado/2023.2/settings64.sh\n    \
         source <Vitis HLS install dir>/settings64.sh   # vitis_hls\n    \
         source <TaPaSCo workspace>/tapasco-setup.sh     # tapasco, TAPASCO_HOME (see bitstreams/README.md)\n\
         With --dry-run the commands are only printed (and the kernel descriptions written).",
        missing.iter().map(|m| format!("  - {m}")).collect::<Vec<_>>().join("\n")
    ))
}

/// The program's name for the bitstream: the first input's `<program>.tessera`
/// directory (or the one holding the manifest), without `.tessera`; characters other
/// than letters, digits, `_`, `-` and `.` become `_`.
fn program_name(input: &Path) -> String {
    let dir = if input.is_dir() { input.to_path_buf() } else { input.parent().map(Path::to_path_buf).unwrap_or_default() };
    let dir = std::path::absolute(&dir).unwrap_or(dir);
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("program");
    let name = name.strip_suffix(".tessera").unwrap_or(name);
    let clean: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || "_-.".contains(c) { c } else { '_' }).collect();
    if clean.is_empty() || clean.starts_with('.') { format!("program{clean}") } else { clean }
}

/// Runs `tessera bitstream --flow tapasco`.
pub fn build(a: &BitstreamArgs) -> Result<(), String> {
    // Options of the Vitis flow that have no meaning here are refused, not ignored.
    if a.target != "hw" {
        return Err(format!("--flow tapasco builds hardware only; -t {} is a Vitis target", a.target));
    }
    if !a.memory.is_empty() {
        return Err("--memory is a Vitis option; on TaPaSCo every PE's masters share the board's memory".to_string());
    }
    if !a.link_args.is_empty() {
        return Err("--link-arg is a Vitis option (TaPaSCo has no v++ link)".to_string());
    }
    if let Some(n) = &a.name {
        if !tessera_flow::is_program_name(n) {
            return Err(format!("--name {n}: a program name is letters, digits and `_ . + -`, not starting with `.` or `-`"));
        }
    }
    if a.per_kernel {
        return Err("--per-kernel is a Vitis option; TaPaSCo composes every kernel into one bitstream".to_string());
    }
    let clock_mhz = a.clock_mhz.ok_or(
        "--flow tapasco needs --clock-mhz <MHz>: the design clock of `tapasco compose … @ <MHz> MHz` \
         (TaPaSCo has no default; the VCU118 designs of the method ran at the clock their timing closed at)",
    )?;
    // Under --slurm the tools run on the cluster's nodes, not here.
    if !a.dry_run && !a.slurm.slurm {
        if let Some(problem) = tapasco_problem() {
            return Err(problem);
        }
    }
    let out_dir = std::path::absolute(&a.out_dir).map_err(|e| format!("{}: {e}", a.out_dir.display()))?;
    let include_dir = out_dir.join("include");
    let mut includes = vec![include_dir.clone()];
    for i in &a.includes {
        includes.push(std::path::absolute(i).map_err(|e| format!("{}: {e}", i.display()))?);
    }
    let opts = TapascoOptions {
        platform: a.platform.clone(),
        clock_mhz,
        out_dir,
        name: a.name.clone().unwrap_or_else(|| program_name(&a.inputs[0])),
        includes,
        compile_flags: a.compile_args.clone(),
    };

    // Every kernel (and a guarded region's fallback kernel), with its manifest file.
    let mut manifests: Vec<(Manifest, PathBuf)> = Vec::new();
    for file in manifest_files(&a.inputs)? {
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{}: {e}", file.display()))?;
        let main = Manifest::from_json(&text).map_err(|e| format!("{}: {e}", file.display()))?;
        let fallback = main.fallback();
        for m in std::iter::once(main).chain(fallback) {
            if m.kernel.is_none() {
                let e = FlowError::NotOffloaded { region: m.region.clone(), reason: m.rejected.clone() };
                say(&format!("# skipping {}: {e}", file.display()));
                continue;
            }
            let dir = file.parent().map(Path::to_path_buf).unwrap_or_default();
            let source = dir.join(format!("{}.cpp", m.kernel.as_deref().unwrap_or_default()));
            if !source.is_file() {
                return Err(format!(
                    "{}: the kernel source {} is missing (the manifest must stay in the <program>.tessera directory \
                     `tessera cc` wrote, next to its kernel)",
                    file.display(),
                    source.display()
                ));
            }
            check_kernel_files(&file, &m, &source)?;
            manifests.push((m, file.clone()));
        }
    }
    if manifests.is_empty() {
        return Err("no kernel to build".to_string());
    }
    let refs: Vec<&Manifest> = manifests.iter().map(|(m, _)| m).collect();
    let p: TapascoPlan = plan(&refs, &opts).map_err(|e| e.to_string())?;
    let hashes: Vec<(String, String)> =
        manifests.iter().map(|(m, f)| (m.hash.clone(), f.display().to_string())).collect();
    let record = p.record(&opts, &hashes);
    let record_path = TapascoRecord::path_for(&p.bit);

    // Files: headers, kernel descriptions and sources.
    create_dir(&include_dir)?;
    for (name, text) in HEADERS {
        write_file(&include_dir.join(name), text)?;
    }
    for d in p.dirs(&opts) {
        create_dir(&d)?;
    }
    say(&format!(
        "# tessera bitstream --flow tapasco: {} kernel(s), platform {}, {clock_mhz} MHz{}",
        p.kernels.len(),
        opts.platform,
        if a.dry_run { " (dry run: nothing is run)" } else { "" }
    ));
    for (k, (m, _)) in p.kernels.iter().zip(&manifests) {
        write_file(&k.json_path, &k.json)?;
        write_file(&k.source, &m.kernel_source)?;
        let ports: Vec<&str> = k.arguments.iter().filter(|(_, arr)| *arr).map(|(n, _)| n.as_str()).collect();
        say(&format!("# {} ({}): TaPaSCo kernel ID {}, PE {}", k.kernel, k.region, k.id, k.vlnv));
        say(&format!(
            "#   AXI4 masters (m_axi): {}; arguments at 0x20 + 0x10*i: {}",
            if ports.is_empty() { "none".to_string() } else { ports.join(", ") },
            k.arguments.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>().join(", ")
        ));
        say(&format!("#   wrote {}", k.json_path.display()));
    }

    let record_q = shell_quote(&record_path.display().to_string());
    let q = |p: &Path| shell_quote(&p.display().to_string());
    // The build as shell commands, in two parts: the cores (`tapasco hls`), then the
    // composition and the build record (`tapasco compose`), which needs every core.
    let mut hls = vec![format!("rm -f {record_q}")];
    for k in &p.kernels {
        // A core made from another manifest is made again (`tapasco hls` skips existing cores).
        hls.push(format!("[ \"$(cat {} 2>/dev/null)\" = {} ] || rm -rf {}", q(&k.stamp), k.hash, q(&k.core)));
    }
    hls.push(p.hls.shell());
    for k in &p.kernels {
        hls.push(format!("test -f {}", q(&k.core_zip)));
        hls.push(format!("printf '%s\\n' {} > {}", k.hash, q(&k.stamp)));
    }
    let compose = vec![
        format!("rm -f {}", q(&p.tapasco_bit)),
        p.compose.shell(),
        format!("test -f {}", q(&p.tapasco_bit)),
        p.copy.shell(),
        format!("printf '%s' {} > {record_q}", shell_quote(&record.to_json())),
    ];
    if a.slurm.slurm {
        return submit_to_slurm(a, &opts, &p, hls, compose);
    }
    if a.dry_run {
        say("set -e");
        say("# a core made from another manifest is made again (`tapasco hls` skips existing cores)");
        for line in hls.iter().chain(&compose) {
            say(line);
        }
        print_next_steps(&p.bit, "# after building, to run with this bitstream:");
        return Ok(());
    }
    remove_file(&record_path, "the old build record")?;
    for k in &p.kernels {
        if std::fs::read_to_string(&k.stamp).ok().as_deref().map(str::trim) != Some(k.hash.as_str()) && k.core.exists() {
            say(&format!("# {}: its core was made from another manifest; removing {}", k.kernel, k.core.display()));
            std::fs::remove_dir_all(&k.core).map_err(|e| format!("cannot remove {}: {e}", k.core.display()))?;
        }
    }
    run_step(&p.hls, None)?;
    for k in &p.kernels {
        if !k.core_zip.is_file() {
            return Err(format!(
                "tapasco hls did not produce the core of kernel {} ({} is missing; HLS log: {})",
                k.kernel,
                k.core_zip.display(),
                k.hls_log.display()
            ));
        }
        write_file(&k.stamp, &format!("{}\n", k.hash))?;
    }
    remove_file(&p.tapasco_bit, "the old TaPaSCo bitstream")?;
    run_step(&p.compose, None)?;
    if !p.tapasco_bit.is_file() {
        return Err(format!(
            "tapasco compose wrote no bitstream {} (see the Vivado log beside it, or TaPaSCo's output above)",
            p.tapasco_bit.display()
        ));
    }
    run_step(&p.copy, None)?;
    write_file(&record_path, &record.to_json())?;
    say(&format!("# built {}", p.bit.display()));
    say(&format!("#   wrote its build record {}", record_path.display()));
    print_next_steps(&p.bit, "# to run with this bitstream:");
    Ok(())
}

/// `--slurm`: the cores (`tapasco hls`, every kernel) as one job and, after it
/// (`afterok`), the composition and build record as another (`crate::slurm`); printed
/// with `--dry-run`. Scripts and logs in `<out>/<platform>/slurm/`.
fn submit_to_slurm(a: &BitstreamArgs, opts: &TapascoOptions, p: &TapascoPlan, hls: Vec<String>, compose: Vec<String>) -> Result<(), String> {
    use crate::slurm::{self, Job};
    let dir = opts.out_dir.join(&opts.platform).join("slurm");
    let job = |name: String, commands: Vec<String>, after: Vec<usize>| Job::single(&dir, name, commands, after);
    let jobs = vec![job(format!("hls-{}", opts.name), hls, vec![]), job(format!("compose-{}", opts.name), compose, vec![0])];
    let waits = "the compose job starts when the hls job has succeeded";
    slurm::write_and_submit(&jobs, &a.slurm, &dir, a.dry_run, waits, &mut |l| say(l))?;
    print_next_steps(&p.bit, "# after the compose job, to run with this bitstream:");
    Ok(())
}

/// Removes `path` if it exists.
fn remove_file(path: &Path, what: &str) -> Result<(), String> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(format!("cannot remove {what} {}: {e}", path.display())),
        _ => Ok(()),
    }
}

/// How to load the bitstream and run the program on it.
fn print_next_steps(bit: &Path, title: &str) {
    say(title);
    say(&format!("#   tapasco-load-bitstream {} --reload-driver", shell_quote(&bit.display().to_string())));
    for (k, v) in run_environment() {
        say(&format!("#   export {k}={}", shell_quote(&v)));
    }
}
