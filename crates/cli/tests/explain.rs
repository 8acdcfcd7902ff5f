//! `tessera explain` on dumped regions: the dataflow kernel's lane count, chosen by the
//! resource model or given with `--lanes` as `-fplugin-arg-tessera-lanes` does.

use std::path::{Path, PathBuf};
use std::process::Command;

fn explain(args: &[&str]) -> (bool, String) {
    explain_ir("2D-jacobi", args)
}

fn explain_ir(stencil: &str, args: &[&str]) -> (bool, String) {
    let ir = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/ir/bench/{stencil}.ir.json"));
    let out = Command::new(PathBuf::from(env!("CARGO_BIN_EXE_tessera"))).arg("explain").arg(&ir).args(args).output().expect("run tessera explain");
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

#[test]
fn the_dataflow_kernels_lanes() {
    // 2D-jacobi's datapath of 16 lanes takes a few percent of the DSPs: the port width.
    let (ok, text) = explain(&[]);
    assert!(ok, "{text}");
    assert!(text.contains("lanes: 16 per cycle (the port width: compute keeps pace with the ports;"), "{text}");
    assert!(text.contains("dataflow kernel: 16 lanes"), "{text}");
    // Given: 4 lanes, a word every 4 cycles, and the estimate at 4 lanes.
    let (ok, text) = explain(&["--lanes", "4"]);
    assert!(ok, "{text}");
    assert!(text.contains("lanes: 4 per cycle, a word of 16 every 4 cycles (lanes=4;"), "{text}");
    assert!(text.contains("dataflow kernel: 4 lanes"), "{text}");
    // More lanes than the port width: the kernel is not generated, and explain says why.
    let (_, text) = explain(&["--port-width", "8", "--lanes", "16"]);
    assert!(text.contains("dataflow kernel: not generated: ") && text.contains("16 lanes: expected a power of two from 1 to the port width 8"), "{text}");
}

/// `--banks 2`: the placement `-fplugin-arg-tessera-banks=2` gives the dataflow kernel's
/// arrays — whole arrays for 2D-jacobi (one read, one written), interleaved over both
/// banks for fdtd0 (its in-place array's two streams against one).
#[test]
fn the_two_bank_placement() {
    let (ok, text) = explain_ir("2D-jacobi", &["--banks", "2"]);
    assert!(ok, "{text}");
    assert!(text.contains("two banks: whole arrays, 1 stream(s) on each"), "{text}");
    let (ok, text) = explain_ir("2D-fdtd0", &["--banks", "2"]);
    assert!(ok, "{text}");
    assert!(text.contains("two banks: whole arrays would put 1 stream(s) on bank 0 and 2 on bank 1; every streamed array interleaved in segments of 4096 bytes"), "{text}");
    let (_, text) = explain_ir("2D-fdtd0", &[]);
    assert!(!text.contains("two banks:"), "{text}");
    let (ok, text) = explain_ir("2D-fdtd0", &["--banks", "3"]);
    assert!(!ok, "{text}");
}
