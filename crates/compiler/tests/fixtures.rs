//! The pipeline on region IR files the plugin dumped from `tests/programs/` (no clang
//! needed): every file parses, the decision is the expected one, and the generated
//! kernels match their snapshots in `tests/snapshots/`.
//!
//! Bless new snapshots after an intended change of the generator with
//! `TESSERA_BLESS=1 cargo test --release -p tessera-compiler --test fixtures`, then
//! review the diff. Refresh the IR files with `scripts/dump-test-ir.sh`.

use std::path::{Path, PathBuf};
use tessera_compiler::{compile_region, Options};
use tessera_ir::Region;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn load(name: &str) -> Region {
    let p = repo().join("tests/ir/programs").join(name);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Region::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Expected decision per IR file: `Ok(kernel name)` or `Err(reject code)`. The IR files
/// have no `source` (an absolute path), so the names hash `location.file`; they change
/// when an IR file is refreshed (the IR hash).
const EXPECTED: &[(&str, Result<&str, &str>)] = &[
    ("flat_index_locals.0.ir.json", Ok("tessera_flat_index_locals_c88b1b86_l29_r0_69015997")),
    ("flat_index_locals.1.ir.json", Ok("tessera_flat_index_locals_c88b1b86_l38_r1_eece3497")),
    ("flat_index_locals.2.ir.json", Ok("tessera_flat_index_locals_c88b1b86_l48_r2_17e83dec")),
    ("flat_index_locals.3.ir.json", Ok("tessera_flat_index_locals_c88b1b86_l55_r3_7900deb4")),
    ("flat_index_locals.4.ir.json", Err("non-affine-subscript")),
    ("indirect.0.ir.json", Err("non-affine-subscript")),
    ("indirect.1.ir.json", Err("call")),
    ("indirect.2.ir.json", Err("unsupported-clause")),
    ("inplace.0.ir.json", Ok("tessera_inplace_49e30993_l14_r0_43c7061f")),
    ("inplace.1.ir.json", Ok("tessera_inplace_49e30993_l19_r1_4dac7bf3")),
    ("loop_forms.0.ir.json", Ok("tessera_loop_forms_55bca3ba_l29_r0_80efe1c9")),
    ("loop_forms.1.ir.json", Ok("tessera_loop_forms_55bca3ba_l34_r1_5b83b0ff")),
    ("loop_forms.2.ir.json", Ok("tessera_loop_forms_55bca3ba_l39_r2_9aa2e5d9")),
    ("loop_forms.3.ir.json", Ok("tessera_loop_forms_55bca3ba_l45_r3_8fda385b")),
    ("loop_forms.4.ir.json", Ok("tessera_loop_forms_55bca3ba_l50_r4_c60afcc1")),
    ("loop_forms.5.ir.json", Ok("tessera_loop_forms_55bca3ba_l55_r5_c69d8bf7")),
    ("loop_forms.6.ir.json", Ok("tessera_loop_forms_55bca3ba_l60_r6_e4ea332d")),
    ("loop_forms.7.ir.json", Ok("tessera_loop_forms_55bca3ba_l67_r7_481eb1b6")),
    ("loop_forms.8.ir.json", Ok("tessera_loop_forms_55bca3ba_l74_r8_31602470")),
    ("loop_forms.9.ir.json", Ok("tessera_loop_forms_55bca3ba_l79_r9_05e47b24")),
    ("loop_forms.10.ir.json", Ok("tessera_loop_forms_55bca3ba_l85_r10_be56e4a6")),
    ("loop_forms.11.ir.json", Err("non-canonical-loop")),
    ("loop_forms.12.ir.json", Err("non-canonical-loop")),
    ("loop_forms.13.ir.json", Err("non-canonical-loop")),
    ("math_helpers.0.ir.json", Ok("tessera_math_helpers_6a5178e6_l49_r0_d2259f5c")),
    ("math_helpers.1.ir.json", Ok("tessera_math_helpers_6a5178e6_l55_r1_5b78f7ee")),
    ("math_helpers.2.ir.json", Err("call")),
    ("math_helpers.3.ir.json", Err("call")),
    ("math_helpers.4.ir.json", Err("call")),
    ("math_image.0.ir.json", Ok("tessera_math_image_d5ed1e3a_l17_r0_32386d6b")),
    ("math_image.1.ir.json", Ok("tessera_math_image_d5ed1e3a_l26_r1_bb66c5c1")),
    ("math_image.2.ir.json", Ok("tessera_math_image_d5ed1e3a_l36_r2_2fcfad1c")),
    ("math_image.3.ir.json", Err("inexact-math")),
    ("math_image.4.ir.json", Ok("tessera_math_image_d5ed1e3a_l90_r4_8da48832")),
    ("math_stencil.0.ir.json", Err("inexact-math")),
    ("math_stencil.1.ir.json", Ok("tessera_math_stencil_f958355c_l15_r1_e4cc02c0")),
    ("math_stencil.2.ir.json", Ok("tessera_math_stencil_f958355c_l15_r2_cb6f6090")),
    ("stencil1d.0.ir.json", Ok("tessera_stencil1d_d2938287_l11_r0_50f74628")),
    ("stencil2d.0.ir.json", Ok("tessera_stencil2d_1c6d3bbe_l14_r0_923b97f1")),
    ("stencil3d.0.ir.json", Ok("tessera_stencil3d_701c3d14_l16_r0_4522b0e1")),
    ("templates.0.ir.json", Ok("tessera_templates_f0db377a_l29_r0_9de71d8e")),
    ("templates.1.ir.json", Ok("tessera_templates_f0db377a_l9_r1_dbef982a")),
    ("templates.2.ir.json", Ok("tessera_templates_f0db377a_l9_r2_74e72e6a")),
    ("types.0.ir.json", Ok("tessera_types_a97baac0_l21_r0_4be05f69")),
    ("types.1.ir.json", Ok("tessera_types_a97baac0_l31_r1_158d6344")),
    ("types.2.ir.json", Ok("tessera_types_a97baac0_l35_r2_632160eb")),
    ("vla_params.0.ir.json", Ok("tessera_vla_params_0b8f242d_l7_r0_5dc49077")),
];

#[test]
fn every_fixture_is_listed() {
    for e in std::fs::read_dir(repo().join("tests/ir/programs")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        // Only target regions (`.ir.json`); the plugin dumps data directives as `.data.json`.
        if !name.ends_with(".ir.json") {
            continue;
        }
        assert!(EXPECTED.iter().any(|(n, _)| *n == name), "{name} has no expectation in EXPECTED");
    }
}

#[test]
fn decisions_and_snapshots() {
    let bless = std::env::var_os("TESSERA_BLESS").is_some();
    let snapshots = repo().join("crates/compiler/tests/snapshots");
    let mut stale = Vec::new();
    for (file, expected) in EXPECTED {
        let region = load(file);
        let opts = Options { mode: tessera_compiler::Mode::Baseline, ..Options::default() };
        let out = compile_region(&region, &opts);
        match (expected, &out.rejection) {
            (Err(code), Some(r)) => {
                assert_eq!(r.reason.code(), *code, "{file}: {}", r.message());
                assert_eq!(out.manifest.rejected.as_deref(), Some(r.remark().as_str()));
                assert!(out.manifest.kernel.is_none());
            }
            (Ok(kernel), None) => {
                assert_eq!(out.manifest.kernel.as_deref(), Some(*kernel), "{file}");
                assert_eq!(out.manifest.args.len(), region.vars.len(), "{file}: one argument per variable");
                let snap = snapshots.join(format!("{kernel}.cpp"));
                if bless {
                    std::fs::create_dir_all(&snapshots).unwrap();
                    std::fs::write(&snap, &out.manifest.kernel_source).unwrap();
                } else {
                    let want = std::fs::read_to_string(&snap).unwrap_or_default();
                    if want != out.manifest.kernel_source {
                        stale.push(format!("{file} -> {}", snap.display()));
                    }
                }
            }
            (e, r) => panic!("{file}: expected {e:?}, got rejection {r:?}"),
        }
    }
    assert!(
        stale.is_empty(),
        "generated kernels differ from their snapshots:\n  {}\nreview the change and bless it with \
         `TESSERA_BLESS=1 cargo test --release -p tessera-compiler --test fixtures`",
        stale.join("\n  ")
    );
}

/// A dumped region survives a JSON round trip unchanged.
#[test]
fn ir_round_trips() {
    let r = load("stencil3d.0.ir.json");
    assert_eq!(Region::from_json(&r.to_json()).unwrap(), r);
    assert_eq!(r.vars.iter().map(|v| v.name.as_str()).collect::<Vec<_>>(), ["B", "A"]);
}
