//! Reductions in the optimizer (`tessera_poly::reduction`): accumulation statements in
//! the SCoP, the loop's order of floating accumulations as a legality constraint
//! (isl), and the reasons of regions left untiled. The fixtures are dumped by the
//! plugin from `tests/ir/src/{sum1d,checksum2d,sum2d}.c`; the stage dumps of the first
//! two are compared with `tests/golden/` (`BLESS=1 cargo test --release -p
//! tessera-poly --test reductions` rewrites them after an intended change).

mod common;

use common::*;
use tessera_ir::{Expr, LValue, Loc, ScalarType, Stmt};
use tessera_poly::{dump, optimize, PolyOptions, Stage};

fn golden(name: &str, got: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden").join(name);
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, got).unwrap();
    }
    let want = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        got == want,
        "dump differs from {}; rerun with BLESS=1 cargo test --release -p tessera-poly --test reductions if intended\n--- got ---\n{got}",
        path.display()
    );
}

fn opts(tile: &[i64], reassociate: bool) -> PolyOptions {
    PolyOptions { tile: Some(tile.to_vec()), port_width: 4, reassociate }
}

/// `s += x[i]` over a float: one statement with one read and no write, its
/// accumulations kept in the loop's order — which strip-mining keeps, so the 1-D
/// loop is tiled, with a partial (padded) last tile for symbolic n.
#[test]
fn float_sum_1d_is_tiled_in_order() {
    let p = plan("sum1d.ir.json", 4, Some(vec![8]));
    let r = &p.scop.reductions[0];
    assert_eq!((r.clause().as_str(), r.ty, r.statements.as_slice(), r.exact_in_any_order), ("reduction(+: s)", ScalarType::F32, &[0][..], false));
    assert_eq!(p.scop.statements[0].reduction.as_deref(), Some("s"));
    assert_eq!(p.scop.statements[0].text, "s = s + x[i]");
    assert_eq!(p.scop.accesses.len(), 1, "one read, no write");
    assert!(p.deps.pairs.is_empty());
    assert_eq!(p.deps.orders.len(), 1, "the order of the accumulations is a constraint");
    assert!(p.candidates[0].legal && p.tiling.padding);
    golden("sum1d.txt", &dump(&p, Stage::All));
    // With reassociation the order is free: no constraint.
    let q = optimize(&region("sum1d.ir.json"), &opts(&[8], true)).unwrap();
    assert!(q.deps.orders.is_empty());
}

/// Integer `+`, `^` and `max` (as an if) over a 2-D image: exact in any order, so
/// they constrain nothing and both intra-tile orders are legal.
#[test]
fn integer_reductions_2d_are_tiled_in_any_order() {
    let p = plan("checksum2d.ir.json", 4, Some(vec![5, 8]));
    let names: Vec<(String, bool)> = p.scop.reductions.iter().map(|r| (r.clause(), r.exact_in_any_order)).collect();
    assert_eq!(
        names,
        [("reduction(+: t)".to_string(), true), ("reduction(^: h)".to_string(), true), ("reduction(max: p)".to_string(), true)]
    );
    assert_eq!(p.scop.statements[2].text, "if (img[i][j] > p) p = img[i][j]");
    assert!(p.deps.pairs.is_empty() && p.deps.orders.is_empty());
    assert!(p.candidates.iter().all(|c| c.legal), "every permutation is legal");
    assert_eq!(p.permutation(), ["i", "j"]);
    golden("checksum2d.txt", &dump(&p, Stage::All));
}

/// A floating sum over a 2-D grid: the tiled schedule runs the first tile's part of
/// every row before the next tile's, so the additions of a row are reordered — the
/// identity is illegal for the order constraint, and the region is rejected with
/// `reduction-order`; with `reassociate` it is tiled. When the inner loop fits in one
/// tile (constant extent 47, tile 64) the order is kept and the nest is tiled, but
/// interchanging the intra-tile loops is illegal.
#[test]
fn float_sum_2d_keeps_the_baseline_unless_reassociated() {
    let r = region("sum2d.ir.json");
    let e = optimize(&r, &opts(&[16, 16], false)).unwrap_err();
    assert_eq!(e.reason.code(), "reduction-order");
    assert_eq!(
        e.remark(),
        "[reduction-order] the floating-point sum 'reduction(+: s)' must be accumulated in the loop's order to match the host bit for bit; tiling the loops would reorder it; use -fplugin-arg-tessera-reassociate to allow partial sums (this changes the rounding, like -ffast-math); a 1-D loop, or inner loops within one tile, keep the order"
    );
    let p = optimize(&r, &opts(&[16, 16], true)).unwrap();
    assert!(p.deps.orders.is_empty() && p.candidates.iter().all(|c| c.legal));

    let mut narrow = r.clone();
    let Stmt::For { body, .. } = &mut narrow.body[0] else { panic!() };
    let Stmt::For { upper, .. } = &mut body[0] else { panic!() };
    *upper = Expr::int(47);
    let p = optimize(&narrow, &opts(&[16, 64], false)).unwrap();
    assert_eq!(p.permutation(), ["i", "j"]);
    let ji = &p.candidates[1];
    assert!(!ji.legal);
    assert_eq!(ji.violated.as_deref(), Some("the loop's order of the accumulations of reduction(+: s)"));
    assert_eq!(optimize(&narrow, &opts(&[16, 16], false)).unwrap_err().reason.code(), "reduction-order");
}

/// A reduction variable read outside its accumulation (here stored into an array:
/// inside the region it is the private copy), or assigned with another operator, keeps
/// the region untiled with `reduction`; so does a loop bound that reads it.
#[test]
fn other_uses_of_a_reduction_variable_are_not_tiled() {
    let base = region("sum1d.ir.json");
    let Stmt::For { body, .. } = &base.body[0] else { panic!() };
    let Stmt::Assign { value, loc, .. } = &body[0] else { panic!() };
    let with_body = |stmts: Vec<Stmt>| {
        let mut r = base.clone();
        let Stmt::For { body, .. } = &mut r.body[0] else { panic!() };
        *body = stmts;
        r
    };
    let s = Expr::var("s", ScalarType::F32);
    let store = Stmt::Assign {
        target: LValue::Element { array: "x".into(), index: vec![Expr::var("i", ScalarType::I32)], ty: ScalarType::F32, loc: Loc::default() },
        value: s.clone(),
        loc: loc.clone(),
    };
    let acc = body[0].clone();
    let e = optimize(&with_body(vec![acc.clone(), store]), &PolyOptions::default()).unwrap_err();
    assert_eq!(e.reason.code(), "reduction");
    assert!(e.message().ends_with("'reduction(+: s)': 's' is read outside its accumulation"), "{}", e.message());
    // `s = s * x[i]` under reduction(+: s).
    let Expr::Binary { lhs, rhs, ty, .. } = value.clone() else { panic!() };
    let mul = Stmt::Assign {
        target: LValue::Scalar { name: "s".into(), ty: ScalarType::F32, loc: Loc::default() },
        value: Expr::Binary { op: tessera_ir::BinOp::Mul, lhs, rhs, ty },
        loc: loc.clone(),
    };
    let e = optimize(&with_body(vec![mul]), &PolyOptions::default()).unwrap_err();
    assert!(e.message().ends_with("'s = s * x[i]' does not accumulate with '+'"), "{}", e.message());
    // A mapped scalar written without a reduction clause: still a scalar write.
    let mut plain = base.clone();
    plain.reductions.clear();
    assert_eq!(optimize(&plain, &PolyOptions::default()).unwrap_err().reason.code(), "scalar-write");
}

/// A decreasing loop is run upwards only when the order is free: not with a floating
/// sum (its additions would be reversed), but with an integer one.
#[test]
fn decreasing_loops_with_ordered_sums_are_not_reversed() {
    let mut r = region("sum1d.ir.json");
    let Stmt::For { lower, upper, step, .. } = &mut r.body[0] else { panic!() };
    let n = std::mem::replace(upper, Expr::int(-1));
    *lower = Expr::Binary { op: tessera_ir::BinOp::Sub, lhs: Box::new(n), rhs: Box::new(Expr::int(1)), ty: ScalarType::I32 };
    *step = -1;
    let p = optimize(&r, &opts(&[8], false)).unwrap();
    assert!(p.normalization.reversed.is_empty(), "the negated loop keeps the order");
    assert_eq!(p.deps.orders.len(), 1);
    let p = optimize(&r, &opts(&[8], true)).unwrap();
    assert_eq!(p.normalization.reversed, ["i"], "reassociated, the order is free");
}
