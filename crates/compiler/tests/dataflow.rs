//! Mode `dataflow` in the pipeline: a stencil in the streaming kernel's input class
//! gets the dataflow kernel (the plan file shows the exact Load and Store sets); an
//! in-place stencil falls back to the tessera mode's kernel (then, as in mode
//! tessera, the baseline), the plan saying why (`dataflow-unsupported`).

use std::path::{Path, PathBuf};
use tessera_compiler::{compile_region, Options};
use tessera_ir::Region;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(rel: &str) -> Region {
    let p = repo().join(rel);
    Region::from_json(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn plan(out: &tessera_compiler::Outcome) -> String {
    out.files.iter().find(|(f, _)| f.ends_with(".plan.txt")).map(|(_, t)| t.clone()).unwrap_or_default()
}

#[test]
fn a_stencil_gets_the_dataflow_kernel() {
    let opts = Options::from_plugin_args(&["mode=dataflow"]).unwrap();
    let out = compile_region(&load("tests/ir/small/2D-5p.ir.json"), &opts);
    assert_eq!(out.manifest.mode, tessera_compiler::options::Mode::Dataflow);
    assert_eq!((&out.fallback, &out.internal), (&None, &None));
    assert!(out.manifest.kernel_source.contains("#pragma HLS DATAFLOW"));
    let p = plan(&out);
    assert!(p.contains("Load and Store sets (isl):") && p.contains("  Load  A: ") && p.contains("  Store X: "), "{p}");
    assert!(p.ends_with("kernel: dataflow\n"), "{p}");
    // The default mode is dataflow; mode=tessera gives the tiled kernel.
    assert_eq!(compile_region(&load("tests/ir/small/2D-5p.ir.json"), &Options::default()).manifest.mode, tessera_compiler::options::Mode::Dataflow);
    let tessera = Options::from_plugin_args(&["mode=tessera"]).unwrap();
    assert_eq!(compile_region(&load("tests/ir/small/2D-5p.ir.json"), &tessera).manifest.mode, tessera_compiler::options::Mode::Tessera);
}

#[test]
fn in_place_stencils_fall_back_with_the_reason() {
    let opts = Options::from_plugin_args(&["mode=dataflow"]).unwrap();
    // fdtd's ey update is point-wise in place: streamed.
    assert_eq!(compile_region(&load("tests/ir/small/2D-fdtd0.ir.json"), &opts).manifest.mode, tessera_compiler::options::Mode::Dataflow);
    // Gauss-Seidel reads elements its sweep writes: the tessera kernel.
    let out = compile_region(&load("tests/ir/gauss_seidel5.ir.json"), &opts);
    assert_eq!(out.manifest.mode, tessera_compiler::options::Mode::Tessera);
    assert_eq!(out.fallback, None);
    let p = plan(&out);
    assert!(p.contains("dataflow kernel not generated: [dataflow-unsupported] no dataflow kernel: 'A' is both read and written at other elements"), "{p}");
    assert!(p.contains("kernel: tessera (fallback from dataflow mode)"), "{p}");
}
