//! Offload figures of the program corpus (`tests/programs/`): where each target region
//! ran and with which kernel, and why not elsewhere. `make corpus` runs this (it is
//! `#[ignore]`d in `make test`, which already runs every program differentially) and
//! writes `docs/corpus.md`.
//!
//! Every program is built with `tessera cc` (default options) and run once on the
//! emulated device with a report. A region (a `#pragma omp target` line) counts as
//! *on the device* when every execution ran there, *tiled* when the kernel it ran was
//! a tiled one (`tessera` or `paper`), *baseline* when it was the baseline kernel;
//! regions that ran on the host are counted by the reason the runtime reported, and
//! baseline kernels by the reason the compile remark gave
//! (`target region offloaded with the baseline kernel: <why>`). Reasons are grouped by
//! their `[code]` when they carry one, else by their text up to the first quote.
//! Data directives are not regions and are not counted.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use tessera_tests::{emu_run_command, repo_root, tessera_build_command};

/// What one region did over a run.
#[derive(Default)]
struct RegionRuns {
    device: bool,
    host: bool,
    tiled: bool,
    dataflow: bool,
    baseline: bool,
    host_reason: Option<String>,
}

/// A reason's group: its `[code]` (leading, or after `not tiled: ` / `… cannot be
/// generated: `), else — a reason decided at run time — its text up to the first `:`.
fn group(reason: &str) -> String {
    let code = std::iter::once(reason)
        .chain(reason.match_indices(": [").map(|(k, _)| &reason[k + 2..]))
        .find_map(|r| r.strip_prefix('[')?.split_once(']').map(|(code, _)| code));
    match code {
        Some(code) => format!("[{code}]"),
        // Up to the first `:` or location (` at <file>:<line>`).
        None => format!("(run time) {}", reason.split(':').next().unwrap_or(reason).split(" at ").next().unwrap_or(reason).trim()),
    }
}

#[test]
#[ignore = "writes docs/corpus.md; run with `make corpus`"]
fn corpus_figures() {
    let root = repo_root();
    let dir = root.join("tests/programs");
    let mut programs: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/programs")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "c" || e == "cpp"))
        .collect();
    programs.sort();
    let work = tempfile::tempdir().expect("temp dir");
    let mut table = String::new();
    let (mut total, mut on_device, mut tiled, mut dataflow, mut baseline, mut host) = (0, 0, 0, 0, 0, 0);
    let mut host_reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut baseline_reasons: BTreeMap<String, usize> = BTreeMap::new();
    for src in &programs {
        let name = src.file_name().unwrap().to_string_lossy().to_string();
        let bin = work.path().join(name.replace('.', "_"));
        let out = tessera_build_command(src, &bin, &[]).output().expect("tessera cc");
        assert!(out.status.success(), "{name}: tessera cc failed:\n{}", String::from_utf8_lossy(&out.stderr));
        let stderr = String::from_utf8_lossy(&out.stderr).to_string();
        let mut why_baseline: BTreeMap<usize, String> = BTreeMap::new();
        for l in stderr.lines() {
            if let Some((pos, why)) = l.split_once(": remark: target region offloaded with the baseline kernel: ") {
                if let Some(line) = pos.rsplit(':').nth(1).and_then(|n| n.parse().ok()) {
                    why_baseline.insert(line, why.to_string());
                }
            }
        }
        let report = work.path().join(format!("{name}.jsonl"));
        let run = emu_run_command(&bin, &report).output().expect("run");
        assert!(run.status.success(), "{name}: exit status {:?}", run.status.code());
        let mut regions: BTreeMap<usize, RegionRuns> = BTreeMap::new();
        for l in std::fs::read_to_string(&report).unwrap_or_default().lines() {
            let e: serde_json::Value = serde_json::from_str(l).expect("report line");
            if e.get("op").is_some_and(|o| !o.is_null()) {
                continue; // a data directive
            }
            let line: usize = e["region"].as_str().and_then(|r| r.rsplit(':').next()?.parse().ok()).expect("file:line");
            let r = regions.entry(line).or_default();
            if e["device"].as_str() == Some("host") {
                r.host = true;
                r.host_reason.get_or_insert_with(|| e["reason"].as_str().unwrap_or("?").to_string());
            } else {
                r.device = true;
                match e["mode"].as_str() {
                    Some("baseline") => r.baseline = true,
                    Some("dataflow") => {
                        r.tiled = true;
                        r.dataflow = true;
                    }
                    _ => r.tiled = true,
                }
            }
        }
        let (mut d, mut t, mut b, mut h, mut f) = (0, 0, 0, 0, 0);
        for (line, r) in &regions {
            if r.device && !r.host {
                d += 1;
                if r.tiled && !r.baseline {
                    t += 1;
                    f += usize::from(r.dataflow);
                } else {
                    b += 1;
                    let why = why_baseline.get(line).map(String::as_str).unwrap_or("[baseline mode requested]");
                    *baseline_reasons.entry(group(why)).or_default() += 1;
                }
            } else {
                h += 1;
                *host_reasons.entry(group(r.host_reason.as_deref().unwrap_or("?"))).or_default() += 1;
            }
        }
        let _ = writeln!(table, "| `{name}` | {} | {d} | {t} | {f} | {b} | {h} |", regions.len());
        total += regions.len();
        on_device += d;
        tiled += t;
        dataflow += f;
        baseline += b;
        host += h;
    }
    let pct = |a: usize, b: usize| if b == 0 { 0.0 } else { 100.0 * a as f64 / b as f64 };
    let mut doc = String::new();
    let _ = writeln!(doc, "# Offload figures of the test corpus\n");
    let _ = writeln!(
        doc,
        "Generated by `make corpus` (`tests/corpus.rs`) from the programs in `tests/programs/`, \
         built with `tessera cc` and default options and run once on the emulated device. \
         Figures are *exact* counts of target regions (a `#pragma omp target` line; data \
         directives are not counted). A region is on the device when every execution ran \
         there; *tiled* means an optimised kernel — the default `dataflow` kernel (counted \
         again in its own column) or, for a region outside its class, the `tessera` \
         kernel — and *baseline* the untiled one.\n"
    );
    let _ = writeln!(
        doc,
        "**{on_device} of {total} regions run on the device ({:.0} %); {tiled} of those get a tiled kernel ({:.0} %), \
         {dataflow} of them the dataflow kernel; {baseline} the baseline kernel; {host} run on the host.**\n",
        pct(on_device, total),
        pct(tiled, on_device)
    );
    let _ = writeln!(doc, "Host runs include the regions the programs keep on the host on purpose (to test remarks and fallbacks).\n");
    let _ = writeln!(doc, "| program | regions | on device | tiled | of those dataflow | baseline | host |\n|---|---:|---:|---:|---:|---:|---:|");
    doc.push_str(&table);
    let _ = writeln!(doc, "| **total** | **{total}** | **{on_device}** | **{tiled}** | **{dataflow}** | **{baseline}** | **{host}** |\n");
    let _ = writeln!(doc, "## Why regions run on the host\n\n| reason | regions |\n|---|---:|");
    for (r, n) in &host_reasons {
        let _ = writeln!(doc, "| {} | {n} |", r.replace('|', "\\|"));
    }
    let _ = writeln!(doc, "\n## Why regions get the baseline kernel\n\n| reason | regions |\n|---|---:|");
    for (r, n) in &baseline_reasons {
        let _ = writeln!(doc, "| {} | {n} |", r.replace('|', "\\|"));
    }
    let path = root.join("docs/corpus.md");
    std::fs::write(&path, doc).expect("write docs/corpus.md");
    eprintln!("wrote {}", path.display());
}
