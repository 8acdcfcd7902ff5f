//! The emulated DATAFLOW region (`host/include/tessera_dataflow.h`) on its own:
//! `tests/cpp/dataflow_test.cpp` compiled by every available compiler, with the
//! x86-64 context switch and with POSIX ucontext (`-DTESSERA_EMU_UCONTEXT`, what other
//! architectures use): results under both schedules, stream depths respected and
//! reported, deadlocks found and described, native wide words bit-equal to ap_uint,
//! the load and store processes' burst-at-a-time row helpers equal to the beat-wise
//! ones Vitis compiles (random rows: stream words, memory, every counter).

mod common;

use common::*;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// (description, binary) for each compiler × context-switch implementation.
fn binaries() -> &'static Vec<(String, PathBuf)> {
    static BINS: OnceLock<(tempfile::TempDir, Vec<(String, PathBuf)>)> = OnceLock::new();
    &BINS
        .get_or_init(|| {
            let tmp = tempfile::tempdir().unwrap();
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp/dataflow_test.cpp");
            let mut bins = Vec::new();
            for (i, cxx) in compilers().iter().enumerate() {
                for (j, extra) in [&[][..], &["-DTESSERA_EMU_UCONTEXT"][..]].iter().enumerate() {
                    let out = tmp.path().join(format!("df_{i}_{j}"));
                    let o = Command::new(cxx)
                        .args(["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas", "-I"])
                        .arg(shim_include())
                        .arg("-isystem")
                        .arg(hls_headers())
                        .args(*extra)
                        .arg("-o")
                        .arg(&out)
                        .arg(&src)
                        .output()
                        .unwrap_or_else(|e| panic!("cannot run {cxx}: {e}"));
                    assert!(o.status.success(), "{cxx} {extra:?}:\n{}", String::from_utf8_lossy(&o.stderr));
                    bins.push((format!("{cxx} {extra:?}"), out));
                }
            }
            (tmp, bins)
        })
        .1
}

fn run(bin: &Path, case: &str, schedule: Option<&str>) -> Output {
    let mut c = Command::new(bin);
    c.arg(case).env_remove("TESSERA_EMU_DATAFLOW");
    if let Some(s) = schedule {
        c.env("TESSERA_EMU_DATAFLOW", s);
    }
    c.output().unwrap()
}

fn passes(what: &str, o: &Output) {
    assert!(
        o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "ok",
        "{what}: {:?}\n{}{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn aborts_with(what: &str, o: &Output, msg: &str) {
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.signal(), Some(libc::SIGABRT), "{what}: {:?} {stderr}", o.status);
    assert!(stderr.starts_with(msg), "{what}: stderr was {stderr:?}");
}

#[test]
fn both_schedules_compute_the_same_and_report_their_streams() {
    for (what, bin) in binaries() {
        for schedule in [None, Some("concurrent"), Some("sequential")] {
            passes(&format!("{what} {schedule:?}"), &run(bin, "pipeline", schedule));
        }
        passes(what, &run(bin, "wide", None));
        passes(&format!("{what} rows"), &run(bin, "rows", None));
        let o = run(bin, "pipeline", Some("csim"));
        aborts_with(what, &o, "tessera emu: TESSERA_EMU_DATAFLOW=csim: expected concurrent or sequential");
    }
}

#[test]
fn a_depth_too_small_for_the_processes_order_is_a_reported_deadlock() {
    for (what, bin) in binaries() {
        aborts_with(
            what,
            &run(bin, "deadlock", None),
            "tessera emu: dataflow region crossed deadlocked: no process can go on; \
             writer waits to write a (2 of depth 2); reader waits to read b (0 of depth 2)",
        );
        // C simulation's schedule has unbounded streams: no deadlock.
        passes(what, &run(bin, "deadlock", Some("sequential")));
    }
}

#[test]
fn misuse_aborts_with_a_message() {
    for (what, bin) in binaries() {
        aborts_with(what, &run(bin, "empty_read", None), "tessera emu: read from the empty hls::stream lonely");
        aborts_with(what, &run(bin, "nested", None), "tessera emu: dataflow region crossed started inside another one");
    }
}
