//! Programs Tessera must refuse to run to the end (`tests/fatal/`): where finishing
//! would mean wrong results, the run stops with status 1 and a message on stderr.
//! Each program says what it expects in a `// expect-fatal: <text>` comment: the
//! Tessera build's stderr contains `<text>`, its exit status is 1, and what it
//! printed before is a prefix of the CPU run's output (plain clang -fopenmp).

use std::path::Path;
use tessera_tests::{emu_run_command, reference_build_command, repo_root, tessera_build_command};

fn fatal(name: &str) {
    let src = repo_root().join("tests/fatal").join(name);
    let source = std::fs::read_to_string(&src).unwrap_or_else(|e| panic!("{}: {e}", src.display()));
    let want = source
        .lines()
        .find_map(|l| l.split_once("// expect-fatal: ").map(|(_, t)| t.trim().to_string()))
        .unwrap_or_else(|| panic!("{name}: no expect-fatal comment"));
    let work = tempfile::tempdir().expect("temp dir");
    let (ref_bin, tes_bin) = (work.path().join("ref"), work.path().join("tessera"));
    let ok = |c: &mut std::process::Command, what: &str| {
        let out = c.output().unwrap_or_else(|e| panic!("{name}: {what}: {e}"));
        assert!(out.status.success(), "{name}: {what} failed: {}", String::from_utf8_lossy(&out.stderr));
        out
    };
    ok(&mut reference_build_command(&src, &ref_bin), "reference build");
    ok(&mut tessera_build_command(&src, &tes_bin, &[]), "tessera build");
    let reference = ok(&mut emu_run_command(&ref_bin, &work.path().join("ref.jsonl")), "reference run");
    let out = emu_run_command(&tes_bin, Path::new(&work.path().join("tes.jsonl")))
        .output()
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{name}: expected exit status 1; stderr:\n{stderr}");
    assert!(stderr.contains(&want), "{name}: stderr lacks '{want}':\n{stderr}");
    assert!(
        reference.stdout.starts_with(&out.stdout),
        "{name}: output before the error differs from the CPU run's\n--- tessera\n{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn region_with_unknown_footprint_and_an_if_clause_while_data_is_mapped() {
    fatal("opaque_if.c");
}

#[test]
fn region_with_unknown_footprint_inside_a_parallel_region_while_data_is_mapped() {
    fatal("opaque_parallel.c");
}

#[test]
fn region_with_unrepresented_statements_inside_a_parallel_region_while_data_is_mapped() {
    fatal("unbounded_parallel.c");
}

#[test]
fn present_modifier_on_data_not_on_the_device() {
    fatal("present_absent.c");
}

#[test]
fn unsupported_motion_modifier_on_mapped_data() {
    fatal("unsupported_motion.c");
}

#[test]
fn region_of_another_manifest_version_while_data_is_mapped() {
    fatal("stale_manifest.c");
}

/// Every program in the directory has a test above.
#[test]
fn every_fatal_program_is_tested() {
    let listed =
        ["opaque_if.c", "opaque_parallel.c", "present_absent.c", "stale_manifest.c", "unbounded_parallel.c", "unsupported_motion.c"];
    for e in std::fs::read_dir(repo_root().join("tests/fatal")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        assert!(listed.contains(&name.as_str()), "{name} has no test in tests/fatal.rs");
    }
}
