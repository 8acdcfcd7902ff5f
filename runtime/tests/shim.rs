//! The HLS emulation shim (`host/include/tessera_hls.h`, `tessera_wide.h`) on its own:
//! `tests/cpp/shim_test.cpp` compiled with `-Wall -Wextra -Werror` by every available
//! compiler, without and with the vendor headers; its counter checks must pass and
//! every illegal transaction must abort the process with the shim's message.

mod common;

use common::*;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const FLAGS: &[&str] = &["-std=c++17", "-O2", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas"];

fn compile(cxx: &str, src: &Path, out: &Path, extra: &[&str]) {
    let o = Command::new(cxx)
        .args(FLAGS)
        .arg("-I")
        .arg(shim_include())
        .args(extra)
        .arg("-o")
        .arg(out)
        .arg(src)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cxx}: {e}"));
    assert!(o.status.success(), "{cxx} {extra:?} failed:\n{}", String::from_utf8_lossy(&o.stderr));
}

/// The test program for each (compiler, wide?) pair, built once.
fn binaries() -> &'static Vec<(String, PathBuf)> {
    static BINS: OnceLock<(tempfile::TempDir, Vec<(String, PathBuf)>)> = OnceLock::new();
    &BINS
        .get_or_init(|| {
            let tmp = tempfile::tempdir().unwrap();
            let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/cpp/shim_test.cpp");
            let hls = hls_headers();
            let mut bins = Vec::new();
            for (i, cxx) in compilers().iter().enumerate() {
                let narrow = tmp.path().join(format!("shim_{i}"));
                compile(cxx, &src, &narrow, &[]);
                bins.push((cxx.to_string(), narrow));
                let wide = tmp.path().join(format!("shim_wide_{i}"));
                compile(cxx, &src, &wide, &["-DTESSERA_TEST_WIDE", "-isystem", hls.to_str().unwrap()]);
                bins.push((format!("{cxx} (wide)"), wide));
            }
            (tmp, bins)
        })
        .1
}

#[test]
fn counters_strobes_and_wide_words() {
    for (what, bin) in binaries() {
        let o = Command::new(bin).arg("counters").output().unwrap();
        assert!(
            o.status.success() && String::from_utf8_lossy(&o.stdout).trim() == "ok",
            "{what}: {}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
    }
}

#[test]
fn illegal_transactions_abort_with_a_message() {
    let cases = [
        ("oob_read", "tessera emu: out-of-bounds read of a[100] (buffer has 100 elements)"),
        ("oob_write", "tessera emu: out-of-bounds write of a[-1] (buffer has 100 elements)"),
        ("burst_oob", "tessera emu: out-of-bounds read_request of a[90..106) (buffer has 100 elements)"),
        (
            "cross_4k",
            "tessera emu: read_request of big[1000..1048) crosses a 4 KiB boundary (bytes 4000..4192 from the buffer's base)",
        ),
        ("too_long", "tessera emu: write_request of 257 beats on big: an AXI burst has at most 256 beats"),
        ("read_without_request", "tessera emu: read() on a without an outstanding read_request"),
        ("write_beyond", "tessera emu: write() on a beyond the requested length"),
        ("response_without_request", "tessera emu: write_response() on a without a write_request"),
        ("response_early", "tessera emu: write_response() on a before the burst's 4 beats were written (2 written)"),
        ("unread_at_end", "tessera emu: the kernel ended with 3 requested beats of a never read"),
        ("no_response_at_end", "tessera emu: the kernel ended with 1 write bursts on a without write_response()"),
        ("scalar_port", "tessera emu: tessera::maxi bound to argument 2 (n), which is not an array"),
    ];
    // One binary per compiler is enough for the abort paths (the wide build shares them).
    for (what, bin) in binaries().iter().step_by(2) {
        for (case, msg) in cases {
            let o = Command::new(bin).arg(case).output().unwrap();
            let stderr = String::from_utf8_lossy(&o.stderr);
            assert!(!o.status.success(), "{what} {case}: exited successfully");
            assert_eq!(o.status.signal(), Some(libc::SIGABRT), "{what} {case}: {:?} {stderr}", o.status);
            assert!(stderr.starts_with(msg), "{what} {case}: stderr was {stderr:?}");
        }
    }
}

#[test]
fn under_synthesis_ports_are_plain_pointers() {
    // With __SYNTHESIS__ the shim includes Vitis' <hls_burst_maxi.h> (a stub here) and
    // maxi<T> is exactly T *, so `#pragma HLS INTERFACE m_axi port=p` sees a pointer.
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("hls_burst_maxi.h"), "#pragma once\nnamespace hls { template <typename T> class burst_maxi; }\n")
        .unwrap();
    let src = tmp.path().join("syn.cpp");
    std::fs::write(
        &src,
        r#"#include "tessera_hls.h"
#include <type_traits>
static_assert(std::is_same<tessera::maxi<const float>, const float *>::value, "maxi<const T> is const T *");
static_assert(std::is_same<tessera::maxi<double>, double *>::value, "maxi<T> is T *");
extern "C" void k(tessera::maxi<const float> a, tessera::maxi<float> b, int n) {
#pragma HLS INTERFACE mode=m_axi port=a offset=slave bundle=gmem0
  for (int i = 0; i < n; i++) b[i] = a[i];
}
"#,
    )
    .unwrap();
    let o = Command::new("c++")
        .args(FLAGS)
        .args(["-D__SYNTHESIS__", "-c", "-I"])
        .arg(tmp.path())
        .arg("-I")
        .arg(shim_include())
        .arg("-o")
        .arg(tmp.path().join("syn.o"))
        .arg(&src)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
