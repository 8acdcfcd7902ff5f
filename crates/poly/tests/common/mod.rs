//! Shared helpers of the optimizer's tests: loading region fixtures.
//!
//! Fixtures live in `tests/ir/` at the repository root. They were dumped by the
//! Tessera clang plugin (`-fplugin-arg-tessera-dump-ir=<dir>`) from the C sources in
//! `tests/ir/src/` and `bench/stencils/` (paper sizes: `-DN=16777216`,
//! `-DNI=4096 -DNJ=4096`, `-DNI=256 -DNJ=256 -DNK=256`); `tests/ir/regen.sh`
//! regenerates them.

#![allow(dead_code)]

use std::path::PathBuf;
use tessera_ir::Region;
use tessera_poly::{optimize, Plan, PolyOptions, PolyReject};

/// `tests/ir/<rel>` at the repository root.
pub fn fixture_path(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir").join(rel)
}

/// Loads a region fixture.
pub fn region(rel: &str) -> Region {
    let p = fixture_path(rel);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Region::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Optimizes a fixture with the given port width and tiles.
pub fn run(rel: &str, port_width: u32, tile: Option<Vec<i64>>) -> Result<Plan, PolyReject> {
    optimize(&region(rel), &PolyOptions { tile, port_width, ..Default::default() })
}

/// Optimizes a fixture that must be accepted.
pub fn plan(rel: &str, port_width: u32, tile: Option<Vec<i64>>) -> Plan {
    run(rel, port_width, tile).unwrap_or_else(|e| panic!("{rel}: rejected: {e}"))
}

/// The buffer of the chosen plan that serves the access written `text` (e.g. `A[i][j][k]`).
pub fn buffer_of<'p>(p: &'p Plan, text: &str) -> &'p tessera_poly::Buffer {
    let a = p.scop.accesses.iter().find(|a| a.text == text).unwrap_or_else(|| panic!("no access {text}"));
    p.buffers.buffer_of(a.id).expect("every access has a buffer or nc group")
}

/// The redirected form `target[s0][s1]…` of the access written `text` (first match
/// of that kind: `read` or `write`).
pub fn redirected(p: &Plan, text: &str, write: bool) -> String {
    let a = p
        .scop
        .accesses
        .iter()
        .find(|a| a.text == text && (a.kind == tessera_poly::AccessKind::Write) == write)
        .unwrap_or_else(|| panic!("no access {text}"));
    let r = &p.redirects[a.id];
    format!("{}{}", r.target, r.subscripts.iter().map(|s| format!("[{}]", s.display(&p.scop.names))).collect::<String>())
}

/// Candidate totals by permutation name, e.g. `("ikj", Some(36961))`.
pub fn candidate_totals(p: &Plan) -> Vec<(String, Option<u64>)> {
    p.candidates.iter().map(|c| (c.permutation.concat(), c.total_buffer_elements)).collect()
}
