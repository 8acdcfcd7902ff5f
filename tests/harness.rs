//! The differential end-to-end harness.
//!
//! Each program in `tests/programs/` is built twice — with plain `clang-19 -fopenmp`
//! (the reference: the CPU run) and with `tessera cc` — and both binaries run with
//! `TESSERA_DEVICE=emu`. Their stdout must be byte-identical (the programs print their
//! results as hexadecimal floats). Expectations live next to the code they describe:
//!
//! - `// expect: emu` (or `host`) on a `#pragma omp target` line: every execution of
//!   that region in the runtime report ran on that device, and the region ran at
//!   least once. A host run's reason must be the text of one of the program's
//!   `expect-remark`s, or contain `<text>` when the comment is `// expect: host ~
//!   <text>` (a reason decided at run time, e.g. an enclosing data region that did
//!   not map).
//! - The same on a data directive line (`target data`, `target enter data`, `target
//!   exit data`, `target update`): every report line of that directive (the runtime
//!   writes one per operation, with an `op` key; `target data` has one at its start
//!   and one at its end) ran there.
//! - `// expect-remark: <text>` (optionally `expect-remark@-1:` to point at another
//!   line): `tessera cc` printed `file:line:col: remark: <what> not offloaded: <text>`
//!   for that line (`<what>` is `target region` or the quoted data directive). No
//!   other "not offloaded" remark may appear.
//! - `// expect-transfers: A to=<bytes> from=<bytes>` (anywhere): summed over every
//!   report line, array `A` moved exactly that many bytes host → device and device
//!   → host (the report's `transfers`, which count map-clause copies, data-directive
//!   copies and the copies around host fallbacks inside data regions).
//!
//! [`offload_policies`] runs a program's Tessera binary again under
//! `OMP_TARGET_OFFLOAD=DISABLED` (same output, everything on the host) and
//! `MANDATORY` (same output when everything offloads, else exit status 1 with the
//! runtime's fatal message).
//!
//! The harness needs `make build` (it runs `target/release/tessera`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository root.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ has a parent").to_path_buf()
}

/// One expectation parsed from a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    /// The region whose pragma is on `line` runs on `device`.
    Device {
        /// Pragma line.
        line: usize,
        /// `emu` or `host`.
        device: String,
        /// For `host ~ <text>`: a text the host reason must contain.
        reason: Option<String>,
    },
    /// Array `array` moved `to` bytes to the device and `from` back, in total.
    Transfers {
        /// Array name as the report has it.
        array: String,
        /// Host → device bytes.
        to: u64,
        /// Device → host bytes.
        from: u64,
    },
    /// A "not offloaded" remark at `line` with `text`.
    Remark {
        /// Line the remark points at.
        line: usize,
        /// Message after `target region not offloaded: `.
        text: String,
    },
}

/// Parses the `expect` comments of a program.
pub fn expectations(source: &str) -> Vec<Expect> {
    let mut out = Vec::new();
    for (i, l) in source.lines().enumerate() {
        let line = i + 1;
        let Some(c) = l.find("// expect") else { continue };
        let c = &l[c + 3..];
        if let Some(d) = c.strip_prefix("expect: ") {
            let (device, reason) = match d.split_once('~') {
                Some((dev, why)) => (dev.trim().to_string(), Some(why.trim().to_string())),
                None => (d.trim().to_string(), None),
            };
            out.push(Expect::Device { line, device, reason });
        } else if let Some(t) = c.strip_prefix("expect-transfers: ") {
            let mut words = t.split_whitespace();
            let array = words.next().expect("expect-transfers: <array> to=<n> from=<n>").to_string();
            let (mut to, mut from) = (None, None);
            for w in words {
                match w.split_once('=') {
                    Some(("to", n)) => to = n.parse().ok(),
                    Some(("from", n)) => from = n.parse().ok(),
                    _ => panic!("line {line}: bad expect-transfers word '{w}'"),
                }
            }
            let (to, from) = (to.expect("expect-transfers: to=<n>"), from.expect("expect-transfers: from=<n>"));
            out.push(Expect::Transfers { array, to, from });
        } else if let Some(rest) = c.strip_prefix("expect-remark") {
            let (delta, text) = match rest.strip_prefix('@') {
                Some(r) => {
                    let (d, t) = r.split_once(':').expect("expect-remark@N: text");
                    (d.parse::<i64>().expect("expect-remark@N with an integer N"), t)
                }
                None => (0, rest.strip_prefix(':').expect("expect-remark: text")),
            };
            out.push(Expect::Remark { line: (line as i64 + delta) as usize, text: text.trim().to_string() });
        }
    }
    out
}

fn run(cmd: &mut Command, what: &str) -> std::process::Output {
    let out = cmd.output().unwrap_or_else(|e| panic!("{what}: cannot run {cmd:?}: {e}"));
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    out
}

/// Runs the differential test of `tests/programs/<name>` and checks its expectations.
pub fn differential(name: &str) {
    let root = repo_root();
    let src = root.join("tests/programs").join(name);
    let source = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let tessera = root.join("target/release/tessera");
    assert!(tessera.is_file(), "{} is missing: run `make build` first", tessera.display());
    let cxx = name.ends_with(".cpp");
    let work = tempfile::tempdir().expect("temp dir");
    let (ref_bin, tes_bin) = (work.path().join("ref"), work.path().join("tessera"));

    let clang = if cxx { "clang++-19" } else { "clang-19" };
    run(
        Command::new(clang).args(["-fopenmp", "-O2", "-o"]).arg(&ref_bin).arg(&src).arg("-lm"),
        "reference build",
    );
    let built = run(
        Command::new(&tessera)
            .arg(if cxx { "c++" } else { "cc" })
            .args(["-O2", "-o"])
            .arg(&tes_bin)
            .arg(&src)
            .arg("-lm"),
        "tessera build",
    );
    let remarks = String::from_utf8_lossy(&built.stderr).to_string();

    let report = work.path().join("report.jsonl");
    let cache = root.join("target/tessera-test-cache");
    let exec = |bin: &Path| {
        run(
            Command::new(bin)
                .env("TESSERA_DEVICE", "emu")
                .env("TESSERA_REPORT", &report)
                .env("TESSERA_CACHE_DIR", &cache)
                .env_remove("OMP_TARGET_OFFLOAD"),
            &format!("running {}", bin.display()),
        )
    };
    let reference = exec(&ref_bin);
    assert!(!report.exists(), "the reference binary must not call the Tessera runtime");
    let tessera_out = exec(&tes_bin);
    if reference.stdout != tessera_out.stdout {
        let (r, t) = (String::from_utf8_lossy(&reference.stdout), String::from_utf8_lossy(&tessera_out.stdout));
        let diff = r.lines().zip(t.lines()).position(|(a, b)| a != b);
        panic!(
            "{name}: output differs from the CPU run (first differing line: {diff:?})\n--- reference\n{r}\n--- tessera\n{t}\n--- tessera stderr\n{}",
            String::from_utf8_lossy(&tessera_out.stderr)
        );
    }

    let entries: Vec<serde_json::Value> = std::fs::read_to_string(&report)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad report line {l}: {e}")))
        .collect();
    let line_of = |e: &serde_json::Value| -> usize {
        let region = e["region"].as_str().expect("report entry has a region");
        let (file, line) = region.rsplit_once(':').expect("region is file:line");
        assert!(file.ends_with(name), "region {region} is not in {name}");
        line.parse().expect("line number")
    };
    let exps = expectations(&source);
    for e in &entries {
        let l = line_of(e);
        assert!(
            exps.iter().any(|x| matches!(x, Expect::Device { line, .. } if *line == l)),
            "{name}: region at line {l} ran but has no `// expect:` comment: {e}"
        );
    }
    let mut expected_remarks = 0;
    for x in &exps {
        match x {
            Expect::Transfers { array, to, from } => {
                let sum = |dir: &str| -> u64 {
                    entries.iter().filter_map(|e| e["transfers"][array.as_str()][dir].as_u64()).sum()
                };
                assert_eq!(
                    (sum("to_device"), sum("from_device")),
                    (*to, *from),
                    "{name}: bytes of '{array}' moved (to the device, back) over the whole run"
                );
            }
            Expect::Device { line, device, reason: want_reason } => {
                let runs: Vec<_> = entries.iter().filter(|e| line_of(e) == *line).collect();
                assert!(!runs.is_empty(), "{name}:{line}: the region never reached the Tessera runtime");
                for r in runs {
                    assert_eq!(r["device"].as_str(), Some(device.as_str()), "{name}:{line}: ran elsewhere: {r}");
                    if device == "host" {
                        // A region kept on the host at compile time reports the remark's reason.
                        let reason = r["reason"].as_str().unwrap_or_else(|| panic!("{name}:{line}: host run without a reason: {r}"));
                        if let Some(w) = want_reason {
                            assert!(reason.contains(w.as_str()), "{name}:{line}: host reason '{reason}' lacks '{w}'");
                            continue;
                        }
                        let remarks: Vec<&str> = exps
                            .iter()
                            .filter_map(|x| match x {
                                Expect::Remark { text, .. } => Some(text.as_str()),
                                _ => None,
                            })
                            .collect();
                        assert!(remarks.contains(&reason), "{name}:{line}: host reason '{reason}' is none of the remarks {remarks:?}");
                    } else {
                        assert!(r["reason"].is_null(), "{name}:{line}: {r}");
                    }
                }
            }
            Expect::Remark { line, text } => {
                expected_remarks += 1;
                let want = format!(" not offloaded: {text}");
                let found = remarks.lines().any(|l| {
                    l.contains("remark: ") && l.ends_with(&want) && l.contains(&format!("{name}:{line}:"))
                });
                assert!(found, "{name}:{line}: missing remark '…{want}'; tessera cc printed:\n{remarks}");
            }
        }
    }
    let actual_remarks = remarks.lines().filter(|l| l.contains("remark: ") && l.contains(" not offloaded: ")).count();
    assert_eq!(actual_remarks, expected_remarks, "{name}: unexpected remarks:\n{remarks}");
}

/// Builds `tests/programs/<name>` with `tessera cc` and runs it under
/// `OMP_TARGET_OFFLOAD=DISABLED` (the output must equal the CPU run's and every
/// report line must be on the host) and `MANDATORY` (with `fatal = None`, the same
/// output and nothing on the host; with `Some(text)`, exit status 1 and the runtime's
/// fatal message containing `text`).
pub fn offload_policies(name: &str, fatal: Option<&str>) {
    let root = repo_root();
    let src = root.join("tests/programs").join(name);
    let tessera = root.join("target/release/tessera");
    assert!(tessera.is_file(), "{} is missing: run `make build` first", tessera.display());
    let cxx = name.ends_with(".cpp");
    let work = tempfile::tempdir().expect("temp dir");
    let (ref_bin, tes_bin) = (work.path().join("ref"), work.path().join("tessera"));
    let clang = if cxx { "clang++-19" } else { "clang-19" };
    run(Command::new(clang).args(["-fopenmp", "-O2", "-o"]).arg(&ref_bin).arg(&src).arg("-lm"), "reference build");
    run(
        Command::new(&tessera).arg(if cxx { "c++" } else { "cc" }).args(["-O2", "-o"]).arg(&tes_bin).arg(&src).arg("-lm"),
        "tessera build",
    );
    let cache = root.join("target/tessera-test-cache");
    let reference = run(Command::new(&ref_bin).env_remove("OMP_TARGET_OFFLOAD"), "reference run");
    let exec = |policy: &str, report: &Path| {
        Command::new(&tes_bin)
            .env("TESSERA_DEVICE", "emu")
            .env("TESSERA_REPORT", report)
            .env("TESSERA_CACHE_DIR", &cache)
            .env("OMP_TARGET_OFFLOAD", policy)
            .output()
            .unwrap_or_else(|e| panic!("cannot run {}: {e}", tes_bin.display()))
    };
    let lines = |report: &Path| -> Vec<serde_json::Value> {
        std::fs::read_to_string(report)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("report line"))
            .collect()
    };

    let report = work.path().join("disabled.jsonl");
    let out = exec("DISABLED", &report);
    assert!(out.status.success(), "{name} under DISABLED: {}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.stdout, reference.stdout, "{name} under DISABLED: output differs from the CPU run");
    let entries = lines(&report);
    assert!(!entries.is_empty(), "{name}: nothing reached the runtime");
    for e in &entries {
        assert_eq!(e["device"], "host", "{name} under DISABLED: {e}");
        assert_eq!(e["reason"], "OMP_TARGET_OFFLOAD=DISABLED", "{name} under DISABLED: {e}");
    }

    let report = work.path().join("mandatory.jsonl");
    let out = exec("MANDATORY", &report);
    match fatal {
        None => {
            assert!(out.status.success(), "{name} under MANDATORY: {}", String::from_utf8_lossy(&out.stderr));
            assert_eq!(out.stdout, reference.stdout, "{name} under MANDATORY: output differs from the CPU run");
            for e in lines(&report) {
                assert_ne!(e["device"], "host", "{name} under MANDATORY: {e}");
            }
        }
        Some(text) => {
            assert_eq!(out.status.code(), Some(1), "{name} under MANDATORY must stop");
            let stderr = String::from_utf8_lossy(&out.stderr);
            assert!(
                stderr.contains("tessera: fatal: ") && stderr.contains("OMP_TARGET_OFFLOAD=MANDATORY") && stderr.contains(text),
                "{name} under MANDATORY: {stderr}"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_expectations() {
        let src = "#pragma omp target // expect: emu\n  x; // expect-remark: why\n y; // expect-remark@-2: other\n\
                   #pragma omp target // expect: host ~ did not map\n// expect-transfers: A to=40 from=8\n";
        assert_eq!(
            expectations(src),
            vec![
                Expect::Device { line: 1, device: "emu".into(), reason: None },
                Expect::Remark { line: 2, text: "why".into() },
                Expect::Remark { line: 1, text: "other".into() },
                Expect::Device { line: 4, device: "host".into(), reason: Some("did not map".into()) },
                Expect::Transfers { array: "A".into(), to: 40, from: 8 },
            ]
        );
    }
}
