//! Dependences, legality, padding hazards, rejections and symbolic sizes.

mod common;

use common::*;
use tessera_ir::{Expr, Stmt};
use tessera_poly::{optimize, BufferKind, DepKind, PolyOptions, PolyRejectReason};

/// `A[i][j] = 0.5f * (A[i][j] + A[i-1][j+1])`, i ∈ [1, 1000), j ∈ [0, 128): a flow
/// dependence of distance (1, −1). The j loop fits in one tile of the default 2D size
/// (128), so a dependence never crosses a j-tile boundary and tiling with the original
/// order is legal; interchanging the intra-tile loops turns the distance into (−1, 1),
/// so (j, i) is illegal. (For uniform dependences with large enough extents, tiling is
/// legal exactly when every distance component is ≥ 0, and then every intra-tile
/// permutation is legal too; a permutation can only be forbidden while tiling stays
/// legal when, as here, the dependence stays inside one tile.)
#[test]
fn dependence_forbids_a_permutation() {
    let p = plan("skew_dep.ir.json", 1, None);
    assert_eq!(p.deps.pairs.len(), 1);
    let d = &p.deps.pairs[0];
    assert_eq!(d.kind, DepKind::Flow);
    assert_eq!(d.distance_summary(), "(1, -1)");
    assert_eq!(p.candidates.len(), 2);
    assert!(p.candidates[0].legal && p.candidates[0].chosen);
    let ji = &p.candidates[1];
    assert!(!ji.legal);
    assert_eq!(ji.violated.as_deref(), Some("flow W0 A[i][j] -> R1 A[i - 1][j + 1], distance (1, -1)"));
    assert_eq!(ji.total_buffer_elements, None);
    // The write and the read it feeds are dependence-connected: one shared buffer.
    let b = buffer_of(&p, "A[i][j]");
    assert_eq!(b.kind, BufferKind::Chunk);
    assert_eq!(b.accesses.len(), 3);
    assert!(p.tiling.guarded.is_empty(), "j runs exactly 128 iterations: no padding");
    assert!(!p.tiling.padding);
}

/// The same nest with tiles (128, 64): the dependence now crosses j-tile boundaries
/// (tile (T, 0) needs a value of tile (T, 64), which runs later), so rectangular
/// tiling is illegal and the region is rejected.
#[test]
fn dependence_forbids_tiling() {
    let e = run("skew_dep.ir.json", 1, Some(vec![128, 64])).unwrap_err();
    assert_eq!(e.reason.code(), "tiling-illegal");
    assert_eq!(
        e.message(),
        "tiling the loops would violate a data dependence: flow W0 A[i][j] -> R1 A[i - 1][j + 1], distance (1, -1)"
    );
}

/// PolyBench seidel-2d (one sweep, 9 points, in place): reading A[i−1][j+1] (flow) and
/// A[i+1][j−1] (anti) gives distance (1, −1) with symbolic n — the Gauss–Seidel case
/// the paper excludes (Sec. 4, Sec. 6 "The data dependences in seidel prevent loop
/// tiling").
#[test]
fn gauss_seidel_9_point_is_rejected() {
    let e = run("seidel9.ir.json", 16, None).unwrap_err();
    match &e.reason {
        PolyRejectReason::TilingIllegal { dependence } => {
            assert!(dependence.ends_with("distance (1, -1)"), "{dependence}");
        }
        r => panic!("{r:?}"),
    }
    assert_eq!(e.loc.line, 5, "points at the directive");
}

/// The 5-point in-place Gauss–Seidel sweep
/// `A[i][j] = (A[i-1][j] + A[i][j-1] + A[i+1][j] + A[i][j+1]) / 4` has only the
/// distances (1, 0) and (0, 1) (flow from the two already-updated neighbours, anti
/// to the two not-yet-updated ones). Contrary to the expectation it has no
/// (1, −1) distance: rectangular tiling and both intra-tile orders are legal, so it is
/// accepted, with all five accesses in one shared buffer (they are dependence-connected
/// and their working sets overlap).
#[test]
fn gauss_seidel_5_point_is_tileable() {
    let p = plan("gauss_seidel5.ir.json", 1, None);
    let mut d: Vec<String> = p.deps.pairs.iter().map(|d| format!("{} {}", d.kind.name(), d.distance_summary())).collect();
    d.sort();
    assert_eq!(d, ["anti (0, 1)", "anti (1, 0)", "flow (0, 1)", "flow (1, 0)"]);
    assert!(p.candidates.iter().all(|c| c.legal));
    assert_eq!(p.buffers.buffers.len(), 1);
    let b = &p.buffers.buffers[0];
    assert_eq!((b.kind, b.shape.as_slice(), b.accesses.len()), (BufferKind::Chunk, &[3, 130][..], 5));
    // Padding j is harmless: a padded write A[i][m-1] happens after the only real read
    // of that element in the tile, and it is trimmed at write-back.
    assert!(p.tiling.guarded.is_empty());
    assert_eq!(p.tiling.trimmed.len(), 1);
}

/// Padding can break a cached in-place update: with j ∈ [0, 99) padded to 128, the
/// padded iteration (i, 99) writes A[i][99] before the real iteration (i+1, 98) of the
/// same tile reads it. isl finds the hazard; the write becomes nc with a guard, and
/// the read connected to it by the dependence goes with it (paper Sec. 3: shared
/// buffer or nc). The independent read A[i][j] keeps a chunk buffer.
#[test]
fn padding_hazard_guards_the_write() {
    let p = plan("padding_hazard.ir.json", 1, None);
    assert!(p.tiling.padding);
    let w = buffer_of(&p, "A[i - 1][j + 1]");
    assert_eq!(w.kind, BufferKind::Nc);
    assert_eq!(w.accesses.len(), 2);
    assert!(w.reason.as_deref().unwrap().contains("guarded write W0"), "{:?}", w.reason);
    let names: Vec<&str> = p.tiling.guarded.iter().map(|&a| p.scop.accesses[a].name.as_str()).collect();
    assert_eq!(names, ["R1", "W0"]);
    assert!(p.tiling.trimmed.is_empty());
    assert_eq!(redirected(&p, "A[i][j]", true), "A[ti + i][tj + j]");
    assert!(p.redirects.iter().filter(|r| !r.cached).all(|r| r.guarded));
    assert_eq!(buffer_of(&p, "A[i][j]").kind, BufferKind::Chunk);
    assert_eq!(p.candidates[0].uncached_accesses, Some(2));
}

/// `B[i] = A[i * i % n]`: rejected with the subscript printed.
#[test]
fn non_affine_subscript_is_rejected() {
    let e = run("nonaffine.ir.json", 1, None).unwrap_err();
    assert_eq!(e.reason, PolyRejectReason::NonAffineSubscript { array: "A".into(), subscript: "i * i % n".into() });
    assert_eq!(e.message(), "subscript 'i * i % n' of 'A' is not affine");
    assert_eq!((e.loc.line, e.loc.col), (5, 12));
}

/// Symbolic sizes are isl parameters; boxes stay constant, trip counts of the outer
/// intra-tile loops keep a `min`, and alignment halos assume the worst case.
#[test]
fn parametric_domains() {
    let p = plan("jacobi2d_param.ir.json", 16, None);
    assert_eq!(p.scop.params, ["n", "m"]);
    assert_eq!(p.scop.domain, "[n, m] -> { S0[i, j] : 1 <= i < n - 1 and 1 <= j < m - 1 }");
    let a = buffer_of(&p, "A[i][j]");
    assert_eq!((a.kind, a.box_size.as_slice()), (BufferKind::Chunk, &[3, 130][..]));
    assert_eq!((a.halo_left, a.shape.as_slice(), a.misalignment), (15, &[3, 160][..], None));
    let b = buffer_of(&p, "B[i][j]");
    assert_eq!((b.kind, b.shape.as_slice()), (BufferKind::Line, &[1, 144][..]));
    assert!(p.tiling.padded_iterations.starts_with("[n, m] -> {"), "{}", p.tiling.padded_iterations);
    // Same region at w = 1: no halo at all.
    let p1 = plan("jacobi2d_param.ir.json", 1, None);
    assert_eq!(p1.buffers.total_elements, 3 * 130 + 128);

    // The symbolic running example and the two-statement body.
    let f = plan("paper_fig2.ir.json", 8, None);
    assert!(f.scop.params == ["N"] && f.buffers.uncached_accesses == 0);
    let t = plan("two_statements.ir.json", 1, None);
    assert_eq!(t.scop.statements.len(), 2);
    assert_eq!(t.scop.schedule, "[n, m] -> { S0[i, j] -> [i, j, 0]; S1[i, j] -> [i, j, 1] }");
    let hz = buffer_of(&t, "hz[i][j]");
    assert_eq!((hz.kind, hz.shape.as_slice(), hz.accesses.len()), (BufferKind::Chunk, &[2, 129][..], 4));
}

/// Tile options and structural rejections.
#[test]
fn options_and_structure() {
    let e = run("bench/2D-5p.ir.json", 1, Some(vec![64, 64, 64])).unwrap_err();
    assert_eq!(e.reason, PolyRejectReason::TileSizeCount { depth: 2, given: 3 });
    // One size is every loop's.
    assert_eq!(plan("bench/2D-5p.ir.json", 1, Some(vec![64])).tiling.tile_sizes, [64, 64]);
    let e = run("bench/2D-5p.ir.json", 1, Some(vec![64, 0])).unwrap_err();
    assert_eq!(e.reason.code(), "bad-tile-size");
    // A tile override is honoured.
    let p = plan("bench/2D-5p.ir.json", 1, Some(vec![16, 32]));
    assert_eq!(buffer_of(&p, "A[i - 1][j]").shape, [3, 34]);
    assert_eq!(p.options.tile.as_deref(), Some(&[16, 32][..]));

    // An `if` in the body.
    let mut r = region("bench/2D-5p.ir.json");
    let inner = innermost(&mut r.body);
    let s = inner.remove(0);
    inner.push(Stmt::If { cond: Expr::int(1), then: vec![s], otherwise: vec![], loc: r.location.clone() });
    let e = optimize(&r, &PolyOptions::default()).unwrap_err();
    assert_eq!(e.reason.code(), "unsupported-statement");
    assert!(e.message().contains("if statement"), "{}", e.message());

    // An imperfect nest: a statement beside the inner loop.
    let mut r = region("bench/2D-5p.ir.json");
    let Stmt::For { body, .. } = &mut r.body[0] else { panic!() };
    let Stmt::For { body: inner, .. } = &body[0] else { panic!() };
    let extra = inner[0].clone();
    body.push(extra);
    let e = optimize(&r, &PolyOptions::default()).unwrap_err();
    assert_eq!(e.reason.code(), "not-a-loop-nest");

    // A non-rectangular bound: j < i.
    let mut r = region("bench/2D-5p.ir.json");
    let Stmt::For { body, .. } = &mut r.body[0] else { panic!() };
    let Stmt::For { upper, .. } = &mut body[0] else { panic!() };
    *upper = Expr::var("i", tessera_ir::ScalarType::I32);
    let e = optimize(&r, &PolyOptions::default()).unwrap_err();
    assert_eq!(e.reason.code(), "non-rectangular");
}

fn innermost(body: &mut Vec<Stmt>) -> &mut Vec<Stmt> {
    match body.first() {
        Some(Stmt::For { .. }) => {}
        _ => return body,
    }
    let Some(Stmt::For { body: b, .. }) = body.first_mut() else { unreachable!() };
    innermost(b)
}

/// The paper's write-after-write corner case (Sec. 4, step 3): `s[0] = s[0] + A[i]`.
/// The padded iterations of the last tile would keep adding garbage to s[0], which
/// real iterations wrote earlier — trimming cannot help, so the write is nc and
/// guarded, and the dependence-connected read too. With a constant trip count that is
/// a multiple of the tile there is no padding and s[0] may be cached.
#[test]
fn write_after_write_corner_case() {
    let p = plan("reduction.ir.json", 1, None);
    let kinds: Vec<&str> = p.deps.pairs.iter().map(|d| d.kind.name()).collect();
    assert!(kinds.contains(&"flow") && kinds.contains(&"anti") && kinds.contains(&"output"), "{kinds:?}");
    let s = buffer_of(&p, "s[0]");
    assert_eq!((s.kind, s.accesses.len()), (BufferKind::Nc, 2));
    assert_eq!(p.tiling.guarded.len(), 2);
    assert_eq!(buffer_of(&p, "A[i]").kind, BufferKind::Full);

    // n = 2048: two full tiles, no padded iteration, s[0] cached in a 1-element buffer.
    let mut r = region("reduction.ir.json");
    let Stmt::For { upper, .. } = &mut r.body[0] else { panic!() };
    *upper = Expr::int(2048);
    let p = optimize(&r, &PolyOptions::default()).unwrap();
    assert!(!p.tiling.padding);
    let s = buffer_of(&p, "s[0]");
    assert_eq!((s.kind, s.shape.as_slice()), (BufferKind::Full, &[1][..]));
    assert!(p.tiling.guarded.is_empty());
}

/// A loop whose index is compared in a type that does not hold every index value
/// (`int i < unsigned n`: a negative `i` converts to a huge value) or whose index is
/// narrower than `int` is not modelled over the integers: rejected, so the region
/// keeps the baseline kernel, which keeps the source's arithmetic.
#[test]
fn wrapping_loops_are_rejected() {
    use tessera_ir::ScalarType;
    let retype = |f: &dyn Fn(&mut ScalarType, &mut Expr)| {
        let mut r = region("jacobi2d_param.ir.json");
        if let Some(Stmt::For { ty, upper, .. }) = r.body.first_mut() {
            f(ty, upper);
        }
        optimize(&r, &PolyOptions::default()).map(|_| ()).unwrap_err()
    };
    let e = retype(&|_, upper| *upper = Expr::Cast { arg: Box::new(upper.clone()), ty: ScalarType::U32 });
    assert_eq!(e.reason.code(), "wrapping-loop", "{}", e.message());
    assert!(e.message().contains("compared as 'unsigned int'"), "{}", e.message());
    let e = retype(&|ty, upper| {
        *ty = ScalarType::I16;
        *upper = Expr::Cast { arg: Box::new(upper.clone()), ty: ScalarType::I16 };
    });
    assert_eq!(e.reason.code(), "wrapping-loop", "{}", e.message());
    // Compared in a wider signed type: exact, still tiled.
    let mut r = region("jacobi2d_param.ir.json");
    if let Some(Stmt::For { upper, .. }) = r.body.first_mut() {
        *upper = Expr::Cast { arg: Box::new(upper.clone()), ty: ScalarType::I64 };
    }
    assert!(optimize(&r, &PolyOptions::default()).is_ok());
}
