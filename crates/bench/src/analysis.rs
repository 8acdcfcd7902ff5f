//! What the model needs from a region and its plan, computed from the region IR
//! (`-fplugin-arg-tessera-dump-ir`) and `tessera_poly`'s SCoP and plan. Pure.
//!
//! - **Iterations and trip counts** of the rectangular nest (constant bounds).
//! - **Accesses per iteration**: every read and write of the statements
//!   (`accesses_per_iteration`, what the baseline kernel's counting ports see), and the
//!   same with duplicate reads of one element in one statement merged
//!   (`distinct_accesses_per_iteration`, what HLS issues: docs/performance-model.md, "Calibration").
//! - **In place**: some array is both read and written.
//! - **Operation depth**: floating-point operations (`+ - * /`, negation, `?:`) on the
//!   longest path of a statement's expression tree; conversions and reads are free.
//! - **Compulsory bytes**: each element the nest reads, once, plus each element it
//!   writes, once: the union of the accesses' footprints over the domain. Footprints are
//!   boxes when every subscript is `loop index + constant` or a constant (each loop in at
//!   most one dimension); the union of boxes is counted exactly on the grid of their
//!   corners. Any other subscript makes it unknown (`None`), never guessed.
//! - **Rows** of the paper's kernel: executions of the innermost intra-tile loop over
//!   all tiles, `Π_{x ≠ p(d)} trip_x · ⌈extent_{p(d)} / SZ_{p(d)}⌉` (partial tiles run
//!   their real iterations, the padded innermost loop one row per tile).

use std::collections::{BTreeMap, BTreeSet};
use tessera_ir::{BinOp, Expr, Region, Stmt, UnOp};
use tessera_poly::{AccessKind, Aff, Plan, Scop, Sym};

/// Facts about one region's loop nest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Trip count of every loop, outermost first (constant bounds only).
    pub trips: Option<Vec<u64>>,
    /// Statement executions (`Π trips`).
    pub iterations: Option<u64>,
    /// Reads and writes of all statements, duplicates counted.
    pub accesses_per_iteration: u64,
    /// The same, duplicate reads of one element within one statement merged.
    pub distinct_accesses_per_iteration: u64,
    /// Whether an array is both read and written.
    pub in_place: bool,
    /// Floating-point operations on the longest path of any statement.
    pub depth_ops: u32,
    /// Compulsory DDR bytes: (read, written).
    pub compulsory: Option<(u64, u64)>,
    /// Floating-point operations per iteration on the chain of a sequentially
    /// accumulated reduction ([`accumulation_ops`]).
    pub accumulation_ops: u32,
}

impl Facts {
    /// Compulsory bytes, both directions.
    pub fn compulsory_bytes(&self) -> Option<u64> {
        self.compulsory.map(|(r, w)| r + w)
    }
}

/// Computes the [`Facts`] of a region (its SCoP from `tessera_poly::scop::extract`).
pub fn facts(region: &Region) -> Result<Facts, String> {
    let scop = tessera_poly::scop::extract(region).map_err(|e| e.message())?;
    let trips = trips(&scop);
    let iterations = trips.as_ref().map(|t| t.iter().product());
    let accesses_per_iteration = scop.accesses.len() as u64;
    let mut distinct = 0u64;
    for st in &scop.statements {
        let mut seen = BTreeSet::new();
        for &a in &st.accesses {
            let acc = &scop.accesses[a];
            if acc.kind == AccessKind::Write || seen.insert((acc.array.clone(), acc.subscripts.clone().into_iter().map(aff_key).collect::<Vec<_>>())) {
                distinct += 1;
            }
        }
    }
    let in_place = scop.arrays.iter().any(|a| a.read && a.written);
    let depth_ops = statement_values(&region.body).into_iter().map(expr_depth).max().unwrap_or(0);
    let compulsory = trips.as_ref().and_then(|t| compulsory(&scop, t));
    Ok(Facts {
        trips,
        iterations,
        accesses_per_iteration,
        distinct_accesses_per_iteration: distinct,
        in_place,
        depth_ops,
        compulsory,
        accumulation_ops: accumulation_ops(region),
    })
}

/// Floating-point operations per loop iteration on the loop-carried chain of a
/// reduction the kernel accumulates in the loop's order (`+` or `*` on a floating
/// variable): for each such variable, the operations between its value read and its
/// value written, summed over its assignments (`s = s + a[i] * b[i]` is 1); the
/// longest over the variables (their chains run side by side). For kernels built
/// without `reassociate` (with it, the partial results break the chain: 0).
pub fn accumulation_ops(region: &Region) -> u32 {
    /// Operations from the root of `e` down to a read of `name`, if `e` reads it.
    fn chain(e: &Expr, name: &str) -> Option<u32> {
        match e {
            Expr::Var { name: n, .. } if n == name => Some(0),
            Expr::Binary { op, lhs, rhs, ty } => {
                let arith = ty.is_float() && matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div);
                let below = chain(lhs, name).max(chain(rhs, name))?;
                Some(below + u32::from(arith))
            }
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => chain(arg, name),
            Expr::Select { then, otherwise, .. } => chain(then, name).max(chain(otherwise, name)),
            _ => None,
        }
    }
    let vars = region.vars.iter().filter(|v| region.reduction(&v.name).is_some_and(|r| r.op.order_sensitive(v.elem)));
    vars.map(|v| {
        let mut ops = 0;
        region.visit_stmts(&mut |s| {
            if let Stmt::Assign { target: tessera_ir::LValue::Scalar { name, .. }, value, .. } = s {
                if *name == v.name {
                    ops += chain(value, name).unwrap_or(0);
                }
            }
        });
        ops
    })
    .max()
    .unwrap_or(0)
}

/// Floating-point operations per row of a tiled kernel on the chain of a reduction it
/// accumulates in the loop's order: `ops` ([`accumulation_ops`], per iteration) times
/// the iterations of a row (the padded innermost intra-tile loop, unrolled), when the
/// plan keeps some reduction's order; 0 otherwise (no floating `+`/`*` reduction, or
/// reassociated ones, whose partial results break the chain).
pub fn row_accumulation_ops(plan: &Plan, ops: u32) -> u32 {
    if plan.deps.orders.is_empty() {
        return 0;
    }
    let row = plan.tiling.loops[plan.tiling.padded_loop].trip.count();
    ops.saturating_mul(u32::try_from(row).unwrap_or(u32::MAX))
}

/// A hashable form of an affine expression.
fn aff_key(a: Aff) -> String {
    format!("{a:?}")
}

/// Constant trip counts of the loops, or `None`.
fn trips(scop: &Scop) -> Option<Vec<u64>> {
    scop.loops
        .iter()
        .map(|l| {
            let extent = l.upper.sub(&l.lower).as_constant()?;
            Some(if extent <= 0 { 0 } else { (extent as u64).div_ceil(l.step as u64) })
        })
        .collect()
}

/// The assigned values of every assignment in a body (nested loops included).
fn statement_values(body: &[Stmt]) -> Vec<&Expr> {
    let mut out = Vec::new();
    for s in body {
        match s {
            Stmt::For { body, .. } => out.extend(statement_values(body)),
            Stmt::Assign { value, .. } => out.push(value),
            _ => {}
        }
    }
    out
}

/// Floating-point operations on the longest path of an expression.
fn expr_depth(e: &Expr) -> u32 {
    match e {
        Expr::Binary { op, lhs, rhs, .. } => {
            let arith = matches!(op, BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div);
            u32::from(arith) + expr_depth(lhs).max(expr_depth(rhs))
        }
        Expr::Unary { op, arg, .. } => u32::from(*op == UnOp::Neg) + expr_depth(arg),
        Expr::Cast { arg, .. } => expr_depth(arg),
        Expr::Select { cond, then, otherwise, .. } => 1 + expr_depth(cond).max(expr_depth(then)).max(expr_depth(otherwise)),
        // One operation, like an addition (see the model's documentation of `D`).
        Expr::Call { args, .. } => 1 + args.iter().map(expr_depth).max().unwrap_or(0),
        _ => 0,
    }
}

/// A half-open box `[lo, hi)` per dimension.
type Box_ = Vec<(i64, i64)>;

/// The footprint of one access over the rectangular domain, if it is a box.
fn footprint(scop: &Scop, subscripts: &[Aff]) -> Option<Box_> {
    let mut used = BTreeSet::new();
    subscripts
        .iter()
        .map(|s| {
            if let Some(c) = s.as_constant() {
                return Some((c, c + 1));
            }
            match s.terms.as_slice() {
                [t] if t.coeff == 1 => {
                    let Sym::Loop(x) = t.sym else { return None };
                    let l = &scop.loops[x];
                    if l.step != 1 || !used.insert(x) {
                        return None;
                    }
                    let (lo, hi) = (l.lower.as_constant()?, l.upper.as_constant()?);
                    Some((lo + s.constant, hi.max(lo) + s.constant))
                }
                _ => None,
            }
        })
        .collect()
}

/// Elements in the union of boxes of one dimensionality, counted on the grid of their
/// corners.
fn union_volume(boxes: &[Box_]) -> u64 {
    let boxes: Vec<&Box_> = boxes.iter().filter(|b| b.iter().all(|(lo, hi)| lo < hi)).collect();
    let Some(first) = boxes.first() else { return 0 };
    let d = first.len();
    let cuts: Vec<Vec<i64>> = (0..d)
        .map(|k| {
            let mut c: Vec<i64> = boxes.iter().flat_map(|b| [b[k].0, b[k].1]).collect();
            c.sort_unstable();
            c.dedup();
            c
        })
        .collect();
    let mut total = 0u64;
    let mut cell = vec![0usize; d];
    loop {
        let inside = boxes.iter().any(|b| (0..d).all(|k| b[k].0 <= cuts[k][cell[k]] && cuts[k][cell[k] + 1] <= b[k].1));
        if inside {
            total += (0..d).map(|k| (cuts[k][cell[k] + 1] - cuts[k][cell[k]]) as u64).product::<u64>();
        }
        // Next cell (odometer).
        let mut k = d;
        loop {
            if k == 0 {
                return total;
            }
            k -= 1;
            cell[k] += 1;
            if cell[k] + 1 < cuts[k].len() {
                break;
            }
            cell[k] = 0;
        }
    }
}

/// Compulsory (read, written) bytes, or `None` when a footprint is not a box.
fn compulsory(scop: &Scop, trips: &[u64]) -> Option<(u64, u64)> {
    if trips.contains(&0) {
        return Some((0, 0));
    }
    let mut groups: BTreeMap<(String, bool), Vec<Box_>> = BTreeMap::new();
    for a in &scop.accesses {
        groups.entry((a.array.clone(), a.kind == AccessKind::Write)).or_default().push(footprint(scop, &a.subscripts)?);
    }
    let (mut read, mut written) = (0, 0);
    for ((array, write), boxes) in &groups {
        let bytes = union_volume(boxes) * scop.array(array)?.elem.size() as u64;
        if *write {
            written += bytes;
        } else {
            read += bytes;
        }
    }
    Some((read, written))
}

/// Rows of the paper's kernel under `plan` (see the module docs), from the constant
/// trip counts; `None` when a bound is not constant.
pub fn rows(plan: &Plan) -> Option<u64> {
    let t = &plan.tiling;
    let p = t.padded_loop;
    let mut rows = 1u64;
    for (x, l) in plan.scop.loops.iter().enumerate() {
        let extent = l.upper.sub(&l.lower).as_constant()?.max(0) as u64;
        let step = l.step as u64;
        rows *= if x == p { extent.div_ceil(t.loops[x].size as u64) } else { extent.div_ceil(step) };
    }
    Some(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;
    use tessera_poly::{optimize, PolyOptions};

    fn fixture(rel: &str) -> Region {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir").join(rel);
        Region::from_json(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
    }

    #[test]
    fn union_of_boxes() {
        assert_eq!(union_volume(&[vec![(0, 4)], vec![(2, 6)]]), 6);
        // A 5-point cross over [1,3)²: the plus shape inside [0,4)² has 16 - 4 corners.
        let cross = vec![
            vec![(1, 3), (1, 3)],
            vec![(0, 2), (1, 3)],
            vec![(2, 4), (1, 3)],
            vec![(1, 3), (0, 2)],
            vec![(1, 3), (2, 4)],
        ];
        assert_eq!(union_volume(&cross), 12);
        assert_eq!(union_volume(&[vec![(0, 0), (0, 5)]]), 0);
    }

    /// Paper sizes (tests/ir/bench: 64 MiB per array).
    #[test]
    fn facts_of_the_paper_stencils() {
        let f = facts(&fixture("bench/2D-jacobi.ir.json")).unwrap();
        let n = 4096u64;
        assert_eq!(f.trips, Some(vec![n - 2, n - 2]));
        assert_eq!((f.accesses_per_iteration, f.distinct_accesses_per_iteration, f.in_place), (6, 6, false));
        assert_eq!(f.depth_ops, 5); // 0.2 * ((((a + b) + c) + d) + e)
        // A: everything but the 4 corners; B: the interior.
        assert_eq!(f.compulsory, Some(((n * n - 4) * 4, (n - 2) * (n - 2) * 4)));

        // 3D-heat: 10 reads of A, 7 distinct elements (A[i][j][k] four times).
        let f = facts(&fixture("bench/3D-heat.ir.json")).unwrap();
        assert_eq!((f.accesses_per_iteration, f.distinct_accesses_per_iteration), (11, 8));
        let m = 256u64;
        // A: the 7-point star's footprint: the cube without its 12 edges (and 8 corners).
        assert_eq!(f.compulsory, Some(((m * m * m - 12 * (m - 2) - 8) * 4, (m - 2).pow(3) * 4)));

        // 2D-fdtd0, in place: ey rows 1..n read and written, hz all read.
        let f = facts(&fixture("bench/2D-fdtd0.ir.json")).unwrap();
        assert!(f.in_place);
        assert_eq!((f.accesses_per_iteration, f.distinct_accesses_per_iteration, f.depth_ops), (4, 4, 3));
        assert_eq!(f.compulsory, Some((((n - 1) * n + n * n) * 4, (n - 1) * n * 4)));
    }

    /// A math call is one operation after its deepest argument:
    /// sqrtf((x1 - x0) * (x1 - x0) + (y1 - y0) * (y1 - y0)) is sub, mul, add, sqrt.
    #[test]
    fn math_calls_are_one_operation() {
        let r = fixture("programs/math_image.0.ir.json");
        assert_eq!(facts(&r).unwrap().depth_ops, 4);
    }

    #[test]
    fn accumulation_chains() {
        use tessera_ir::{Loc, LValue, Reduction, ReductionOp, ScalarType::*};
        let mut r = fixture("bench/2D-jacobi.ir.json");
        assert_eq!(accumulation_ops(&r), 0);
        let s = |ty| Expr::var("s", ty);
        let add = |l: Expr, ty| Expr::Binary { op: BinOp::Add, lhs: Box::new(l), rhs: Box::new(Expr::Float { bits: 1f64.to_bits(), ty }), ty };
        let assign = |value| Stmt::Assign { target: LValue::Scalar { name: "s".into(), ty: F32, loc: Loc::default() }, value, loc: Loc::default() };
        let mut v = r.vars[0].clone();
        (v.name, v.kind, v.elem, v.dims, v.written) = ("s".into(), tessera_ir::VarKind::Scalar, F32, vec![], true);
        r.vars.push(v);
        // s = (float)((double)s + 1.0); s = s + 1.0f: two additions on the chain.
        r.body.push(assign(Expr::Cast { arg: Box::new(add(Expr::Cast { arg: Box::new(s(F32)), ty: F64 }, F64)), ty: F32 }));
        r.body.push(assign(add(s(F32), F32)));
        assert_eq!(accumulation_ops(&r), 0, "not a reduction");
        r.reductions.push(Reduction { op: ReductionOp::Add, var: "s".into(), loc: Loc::default(), unsupported: None });
        assert_eq!(accumulation_ops(&r), 2);
        r.reductions[0].op = ReductionOp::Max;
        assert_eq!(accumulation_ops(&r), 0, "exact in any order");
        // A tiled 1-D sum in the loop's order: the row (tile) of 256 unrolled additions
        // is one chain; reassociated, no chain is modelled.
        let r = fixture("sum1d.ir.json");
        let ops = facts(&r).unwrap().accumulation_ops;
        assert_eq!(ops, 1);
        let plan = |reassociate| optimize(&r, &PolyOptions { tile: Some(vec![256]), port_width: 16, reassociate }).unwrap();
        assert_eq!(row_accumulation_ops(&plan(false), ops), 256);
        assert_eq!(row_accumulation_ops(&plan(true), ops), 0);
    }

    #[test]
    fn rows_of_the_paper_kernel() {
        let r = fixture("bench/2D-jacobi.ir.json");
        let p = optimize(&r, &PolyOptions { tile: Some(vec![128, 128]), port_width: 16, ..Default::default() }).unwrap();
        assert_eq!(rows(&p), Some(4094 * 32)); // every i, 32 column tiles
        let r = fixture("bench/1D-jacobi.ir.json");
        let p = optimize(&r, &PolyOptions { tile: Some(vec![1024]), port_width: 16, ..Default::default() }).unwrap();
        assert_eq!(row_accumulation_ops(&p, 3), 0, "a stencil keeps no reduction's order");
        assert_eq!(rows(&p), Some(((1u64 << 24) - 2).div_ceil(1024))); // one row per tile
        let r = fixture("bench/3D-27p.ir.json");
        let p = optimize(&r, &PolyOptions { tile: Some(vec![32, 32, 32]), port_width: 16, ..Default::default() }).unwrap();
        assert_eq!(rows(&p), Some(254 * 254 * 8));
    }
}
