//! Footprints: the index range every array access of a region covers over its whole
//! iteration domain, as expressions over the region's scalars.
//!
//! An access outside the mapped section is undefined behaviour in OpenMP; on a device
//! it reads whatever the buffer holds there (the emulated device: zeros) or faults.
//! The runtime evaluates these ranges before a launch and, when one leaves the mapped
//! section (or the present mapping), reports the access and runs the region on the
//! host instead (`runtime/src/data.rs`, `check_footprints`). When every bound is a
//! constant, the compiler says so at compile time ([`constant_violations`]).
//!
//! Derived from the SCoP of the loop nest (`tessera_poly::scop`): subscripts affine
//! in the loop indices and the scalars. Exact for loops whose bounds depend on the
//! scalars only (a box-shaped domain): per dimension the subscript is smallest and
//! largest at corners of the box. Other nests (a bound naming an outer index) get no
//! footprint, so nothing is checked for them.

use tessera_ir::eval::eval_int;
use tessera_ir::manifest::{ArrayArg, Footprint};
use tessera_ir::{print, BinOp, Expr, Region, ScalarType, Section};
use tessera_poly::{AccessKind, Aff, Sym};

/// The footprint of every access of `region`, with the array it accesses, in access
/// order; empty when the nest is not a SCoP with a box-shaped domain.
pub fn footprints(region: &Region) -> Vec<(String, Footprint)> {
    // A read under `c ? … : …` may never happen: the ranges of its array's accesses
    // over-approximate (`Footprint::may`), so that a region that never leaves its
    // section is not refused, while a host run still knows what it may touch.
    let mut guarded: Vec<String> = Vec::new();
    region.visit_stmts(&mut |s| {
        s.visit_exprs(&mut |e| {
            if let Expr::Select { then, otherwise, .. } = e {
                for branch in [then, otherwise] {
                    branch.visit(&mut |x| {
                        if let Expr::Read { array, .. } = x {
                            guarded.push(array.clone());
                        }
                    });
                }
            }
        })
    });
    let Ok(scop) = tessera_poly::scop::extract(region) else { return Vec::new() };
    let param_only = |a: &Aff| !a.mentions(|s| !matches!(s, Sym::Param(_)));
    if !scop.loops.iter().all(|l| param_only(&l.lower) && param_only(&l.upper) && l.step > 0) {
        return Vec::new();
    }
    let ty = |p: &str| region.var(p).map(|v| v.elem).unwrap_or(ScalarType::I64);
    // A derived parameter (`n/2`, `nx*ny`) is its expression, which the runtime evaluates.
    let derived = |p: &str| scop.derived.iter().find(|d| d.name == p).map(|d| d.expr.clone());
    let ty = Params { ty: &ty, derived: &derived };
    let Some(bounds) = scop
        .loops
        .iter()
        .map(|l| Some((aff_expr(&l.lower, &ty)?, aff_expr(&l.upper, &ty)?, l.step)))
        .collect::<Option<Vec<_>>>()
    else {
        return Vec::new();
    };
    // The first and last value of every loop index when its loop runs at all: the
    // last is `lower + step·⌊(upper − 1 − lower) / step⌋` (C division truncates, and
    // the dividend is ≥ 0 then).
    let first: Vec<Expr> = bounds.iter().map(|(lo, _, _)| lo.clone()).collect();
    let last: Vec<Expr> = bounds
        .iter()
        .map(|(lo, up, step)| {
            let span = bin(BinOp::Sub, bin(BinOp::Sub, up.clone(), lit(1)), lo.clone());
            if *step == 1 {
                bin(BinOp::Add, lo.clone(), span)
            } else {
                let k = bin(BinOp::Div, span, lit(*step));
                bin(BinOp::Add, lo.clone(), bin(BinOp::Mul, lit(*step), k))
            }
        })
        .collect();
    let nonempty: Vec<(Expr, Expr)> = bounds.iter().map(|(lo, up, _)| (lo.clone(), up.clone())).collect();
    let mut out = Vec::new();
    for a in &scop.accesses {
        let (mut lo, mut hi) = (Vec::new(), Vec::new());
        for s in &a.subscripts {
            let (Some(l), Some(h)) = (corner(s, &first, &last, &ty, false), corner(s, &first, &last, &ty, true)) else {
                return Vec::new();
            };
            lo.push(l);
            hi.push(h);
        }
        let may = guarded.contains(&a.array);
        let stride = if may { None } else { strides(&a.subscripts, &scop.loops) };
        let exact = stride.is_some();
        let fp = Footprint {
            access: a.text.clone(),
            write: a.kind == AccessKind::Write,
            lo,
            hi,
            nonempty: nonempty.clone(),
            may,
            stride: stride.unwrap_or_default(),
            exact,
        };
        out.push((a.array.clone(), fp));
    }
    out
}

/// Per dimension, the distance between the indices an access takes, when its box
/// with those strides is exactly what it touches over a box-shaped domain: each
/// dimension's subscript names at most one loop index, and no index appears in two
/// dimensions (then the indices are the products of independent arithmetic
/// progressions, `|coefficient| · step` apart). `None` otherwise (`a[i][i]`,
/// `a[i + j]`, which the box only bounds).
fn strides(subscripts: &[Aff], loops: &[tessera_poly::scop::Loop]) -> Option<Vec<i64>> {
    let mut used = vec![false; loops.len()];
    let mut out = Vec::with_capacity(subscripts.len());
    for s in subscripts {
        let named: Vec<usize> = (0..loops.len()).filter(|&k| s.coeff(&Sym::Loop(k)) != 0).collect();
        match named.as_slice() {
            [] => out.push(1),
            [k] if !used[*k] => {
                used[*k] = true;
                out.push(s.coeff(&Sym::Loop(*k)).checked_abs()?.checked_mul(loops[*k].step)?);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// The footprint of an access of a delinearised view (`a[i][j]` of extents
/// `[?][n]`) as one of the flat array: per bound `Σ_d idx_d · Π_{e>d} extent_e`.
/// When the view's launch conditions hold (inner subscripts within their extents),
/// this is the range of the linear subscripts; otherwise still a bound of it for
/// independent loop indices per dimension, and the runtime checks it before either
/// kernel runs.
pub fn linearized(fp: Footprint, extents: &[Expr]) -> Footprint {
    let flat = |idx: &[Expr]| -> Expr {
        let mut e = idx[0].clone();
        for (d, x) in idx.iter().enumerate().skip(1) {
            let ext = Expr::Cast { arg: Box::new(extents[d - 1].clone()), ty: ScalarType::I64 };
            e = bin(BinOp::Add, bin(BinOp::Mul, e, ext), x.clone());
        }
        e
    };
    // The flat range also spans the row ends between the view's rows.
    Footprint { lo: vec![flat(&fp.lo)], hi: vec![flat(&fp.hi)], stride: Vec::new(), exact: false, ..fp }
}

/// For every footprint whose bounds are all constants, and whose array's section
/// is constant too: the accesses that leave the section, as warnings
/// (`'a[i + 1]' reads a[100], outside the mapped section a[0:100]`).
pub fn constant_violations(args: &[(String, &ArrayArg)]) -> Vec<String> {
    let none = |_: &str| None;
    let c = |e: &Expr| eval_int(e, &none).ok();
    let mut out = Vec::new();
    for (name, arr) in args {
        if arr.section.is_empty() {
            continue;
        }
        let Some(sec) = arr.section.iter().map(|s| Some((c(&s.lower)?, c(&s.length)?))).collect::<Option<Vec<_>>>()
        else {
            continue;
        };
        for fp in arr.footprint.iter().filter(|fp| !fp.may) {
            let Some(ne) = fp.nonempty.iter().map(|(l, u)| Some(c(l)? < c(u)?)).collect::<Option<Vec<bool>>>() else {
                continue;
            };
            if ne.contains(&false) {
                continue;
            }
            let (Some(lo), Some(hi)) = (
                fp.lo.iter().map(c).collect::<Option<Vec<_>>>(),
                fp.hi.iter().map(c).collect::<Option<Vec<_>>>(),
            ) else {
                continue;
            };
            if let Some(index) = outside(&lo, &hi, &sec) {
                out.push(format!(
                    "'{}' {} {name}{}, outside the mapped section {name}{} (undefined behaviour in OpenMP; Tessera \
                     runs the region on the host)",
                    fp.access,
                    if fp.write { "writes" } else { "reads" },
                    index.iter().map(|i| format!("[{i}]")).collect::<String>(),
                    print_section(&arr.section),
                ));
            }
        }
    }
    out
}

/// The first corner of the box `[lo, hi]` (per dimension) that lies outside the
/// section `sec` (per dimension `(lower, length)`), or `None` when the box is inside.
pub fn outside(lo: &[i128], hi: &[i128], sec: &[(i128, i128)]) -> Option<Vec<i128>> {
    let d = (0..lo.len().min(sec.len())).find(|&d| lo[d] < sec[d].0 || hi[d] >= sec[d].0 + sec[d].1)?;
    let mut index: Vec<i128> = lo.to_vec();
    index[d] = if lo[d] < sec[d].0 { lo[d] } else { hi[d] };
    Some(index)
}

/// `[l:n][l:n]` as written in a map clause.
pub fn print_section(section: &[Section]) -> String {
    section.iter().map(|s| format!("[{}:{}]", print::expr(&s.lower), print::expr(&s.length))).collect()
}

/// The smallest (`max = false`) or largest value of `s` over the box of loop
/// indices `[first, last]`.
fn corner(s: &Aff, first: &[Expr], last: &[Expr], ty: &Params<'_>, max: bool) -> Option<Expr> {
    let mut e = lit(s.constant);
    for t in &s.terms {
        let v = match &t.sym {
            Sym::Param(p) => param(p, ty),
            Sym::Loop(x) => {
                let hi = (t.coeff > 0) == max;
                if hi { last.get(*x)?.clone() } else { first.get(*x)?.clone() }
            }
            Sym::Tile(_) | Sym::Intra(_) => return None,
        };
        e = bin(BinOp::Add, e, bin(BinOp::Mul, lit(t.coeff), v));
    }
    Some(e)
}

/// An affine expression over scalars as an `i64` IR expression.
fn aff_expr(a: &Aff, ty: &Params<'_>) -> Option<Expr> {
    let mut e = lit(a.constant);
    for t in &a.terms {
        let Sym::Param(p) = &t.sym else { return None };
        e = bin(BinOp::Add, e, bin(BinOp::Mul, lit(t.coeff), param(p, ty)));
    }
    Some(e)
}

/// How parameters of the SCoP become expressions over the region's scalars.
struct Params<'a> {
    /// The type of a scalar.
    ty: &'a dyn Fn(&str) -> ScalarType,
    /// The expression of a derived parameter.
    derived: &'a dyn Fn(&str) -> Option<Expr>,
}

fn param(p: &str, ty: &Params<'_>) -> Expr {
    let arg = (ty.derived)(p).unwrap_or_else(|| Expr::var(p, (ty.ty)(p)));
    Expr::Cast { arg: Box::new(arg), ty: ScalarType::I64 }
}

fn lit(v: i64) -> Expr {
    Expr::Int { value: v, ty: ScalarType::I64 }
}

fn bin(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs), ty: ScalarType::I64 }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `for (i = 0; i < n; i++) b[i] = a[i + 1]`, `a` mapped `[0:n]`: the read
    /// reaches `a[n]`; with constants, a warning.
    #[test]
    fn box_domains_and_constant_warnings() {
        let region: Region = serde_json::from_str(include_str!("../../../tests/ir/programs/stencil1d.0.ir.json")).unwrap();
        let fps = footprints(&region);
        assert!(!fps.is_empty());
        let n = |v: i128| move |name: &str| (name == "n").then_some(v);
        for (_, fp) in &fps {
            for (l, h) in fp.lo.iter().zip(&fp.hi) {
                let (l, h) = (eval_int(l, &n(10)).unwrap(), eval_int(h, &n(10)).unwrap());
                assert!(l <= h, "{}: [{l}, {h}]", fp.access);
            }
        }
        assert_eq!(outside(&[0], &[9], &[(0, 10)]), None);
        assert_eq!(outside(&[0], &[10], &[(0, 10)]), Some(vec![10]));
        assert_eq!(outside(&[-1, 0], &[5, 9], &[(0, 10), (0, 10)]), Some(vec![-1, 0]));
        assert_eq!(outside(&[0, 0], &[5, 12], &[(0, 10), (0, 10)]), Some(vec![0, 12]));
        assert!(fps.iter().all(|(_, fp)| !fp.may));
    }

    /// A read under `c ? … : …`: every range of its array is what the region *may*
    /// touch (the other arrays' stay exact), and none warns at compile time.
    #[test]
    fn guarded_reads_give_ranges_of_what_may_be_touched() {
        let mut region: Region = serde_json::from_str(include_str!("../../../tests/ir/programs/stencil1d.0.ir.json")).unwrap();
        fn guard(stmts: &mut [tessera_ir::Stmt]) {
            for s in stmts {
                match s {
                    tessera_ir::Stmt::Assign { value, .. } => {
                        let ty = value.ty().unwrap_or(ScalarType::F32);
                        let v = std::mem::replace(value, Expr::int(0));
                        let zero = Expr::Cast { arg: Box::new(Expr::int(0)), ty };
                        *value = Expr::Select { cond: Box::new(Expr::int(1)), then: Box::new(v), otherwise: Box::new(zero), ty };
                    }
                    tessera_ir::Stmt::For { body, .. } => guard(body),
                    _ => {}
                }
            }
        }
        guard(&mut region.body);
        let fps = footprints(&region);
        assert!(!fps.is_empty());
        let read: std::collections::BTreeSet<&str> =
            fps.iter().filter(|(_, fp)| !fp.write).map(|(a, _)| a.as_str()).collect();
        for (array, fp) in &fps {
            assert_eq!(fp.may, read.contains(array.as_str()), "{array}: {}", fp.access);
        }
        assert!(fps.iter().any(|(_, fp)| fp.may) && fps.iter().any(|(_, fp)| !fp.may));
        assert!(fps.iter().all(|(_, fp)| fp.exact != fp.may));
    }

    /// Property: a footprint marked exact is exactly the set of indices its access
    /// takes — every combination of `lo[d] + k·stride[d] ≤ hi[d]` and nothing else —
    /// for random steps, lower bounds and affine subscripts `c·i + d·j + k` of a 2-D
    /// nest (found by enumerating the iteration domain); and the rule marks the usual
    /// forms (`A[i][j]`, `A[2*i][j + 1]`) exact and `A[i][i]`, `A[i + j][0]` not.
    #[test]
    fn exact_footprints_are_the_indices_taken() {
        use std::collections::BTreeSet;
        let base: Region = serde_json::from_str(include_str!("../../../tests/ir/programs/stencil2d.0.ir.json")).unwrap();
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut rnd = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let (i, j) = (Expr::var("i", ScalarType::I32), Expr::var("j", ScalarType::I32));
        let term = |c: i64, x: &Expr| bin(BinOp::Mul, lit(c), x.clone());
        let (mut exact, mut inexact) = (0, 0);
        for case in 0..400 {
            let mut region = base.clone();
            let mut cs: Vec<i64> = (0..6).map(|_| rnd(5) as i64 - 2).collect();
            // Mostly one index per dimension (`A[2*i][j]`, `A[j][-i]`), the forms
            // the rule calls exact when their coefficients are not 0.
            match case % 4 {
                0 => (cs[1], cs[3]) = (0, 0),
                1 => (cs[0], cs[4]) = (0, 0),
                _ => {}
            }
            let (si, sj) = (1 + rnd(3) as i64, 1 + rnd(3) as i64);
            let index = vec![
                bin(BinOp::Add, bin(BinOp::Add, term(cs[0], &i), term(cs[1], &j)), lit(cs[2] + 2)),
                bin(BinOp::Add, bin(BinOp::Add, term(cs[3], &i), term(cs[4], &j)), lit(cs[5] + 2)),
            ];
            let tessera_ir::Stmt::For { step: step_i, body, .. } = &mut region.body[0] else { panic!() };
            *step_i = si;
            let tessera_ir::Stmt::For { step: step_j, body, .. } = &mut body[0] else { panic!() };
            *step_j = sj;
            let tessera_ir::Stmt::Assign { value, loc, .. } = &mut body[0] else { panic!() };
            *value = Expr::Read { array: "A".into(), index: index.clone(), ty: ScalarType::F32, loc: loc.clone() };
            let fps = footprints(&region);
            let Some((_, fp)) = fps.iter().find(|(a, _)| a == "A") else { panic!("case {case}: no footprint") };
            let env = |name: &str| match name {
                "n" => Some(9),
                "m" => Some(8),
                _ => None,
            };
            if !fp.exact {
                inexact += 1;
                continue;
            }
            exact += 1;
            let mut taken = BTreeSet::new();
            for vi in (1..8).step_by(si as usize) {
                for vj in (1..7).step_by(sj as usize) {
                    let at = |name: &str| match name {
                        "i" => Some(vi),
                        "j" => Some(vj),
                        _ => env(name),
                    };
                    taken.insert(index.iter().map(|e| eval_int(e, &at).unwrap()).collect::<Vec<i128>>());
                }
            }
            let (lo, hi): (Vec<i128>, Vec<i128>) =
                (fp.lo.iter().map(|e| eval_int(e, &env).unwrap()).collect(), fp.hi.iter().map(|e| eval_int(e, &env).unwrap()).collect());
            let mut boxed = BTreeSet::new();
            let mut a = lo[0];
            while a <= hi[0] {
                let mut b = lo[1];
                while b <= hi[1] {
                    boxed.insert(vec![a, b]);
                    b += fp.stride[1] as i128;
                }
                a += fp.stride[0] as i128;
            }
            assert_eq!(taken, boxed, "case {case}: {} steps {si}, {sj}, stride {:?}", fp.access, fp.stride);
        }
        assert!(exact > 50 && inexact > 50, "{exact} exact, {inexact} not");
        // The usual forms.
        let rule = |subs: &[Vec<i64>]| {
            let loops: Vec<tessera_poly::scop::Loop> = (0..2)
                .map(|k| tessera_poly::scop::Loop {
                    var: format!("i{k}"),
                    lower: Aff::constant(0),
                    upper: Aff::sym(Sym::Param("n".into())),
                    step: 1,
                    loc: base.location.clone(),
                })
                .collect();
            let affs: Vec<Aff> = subs
                .iter()
                .map(|c| Aff::sym(Sym::Loop(0)).scale(c[0]).add(&Aff::sym(Sym::Loop(1)).scale(c[1])).add_constant(c[2]))
                .collect();
            strides(&affs, &loops)
        };
        assert_eq!(rule(&[vec![1, 0, 0], vec![0, 1, 0]]), Some(vec![1, 1]));
        assert_eq!(rule(&[vec![2, 0, 0], vec![0, 1, 1]]), Some(vec![2, 1]));
        assert_eq!(rule(&[vec![1, 0, 0], vec![1, 0, 0]]), None);
        assert_eq!(rule(&[vec![1, 1, 0], vec![0, 0, 0]]), None);
    }
}
