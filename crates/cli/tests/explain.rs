//! `tessera explain` on dumped regions: the dataflow kernel's lane count, chosen by the
//! resource model or given with `--lanes` as `-fplugin-arg-tessera-lanes` does.

use std::path::{Path, PathBuf};
use std::process::Command;

fn explain(args: &[&str]) -> (bool, String) {
    let ir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir/bench/2D-jacobi.ir.json");
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
