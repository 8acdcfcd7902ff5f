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
//! largest at corners of the box. A region that is no single perfect nest (statements
//! beside inner loops, locals, `if`s) gets the footprint of each access over the loops
//! around it ([`nest_footprints`]). Other nests (a bound naming an outer index, a
//! subscript through a local) get no footprint, so nothing is checked for them.

use tessera_ir::eval::eval_int;
use tessera_ir::manifest::{ArrayArg, Footprint, Lattice};
use tessera_ir::{print, BinOp, Expr, Region, ScalarType, Section};
use tessera_poly::{AccessKind, Aff, Sym};

/// The footprint of every access of `region`, with the array it accesses, in access
/// order; empty when the nest is not a SCoP with a box-shaped domain.
pub fn footprints(region: &Region) -> Vec<(String, Footprint)> {
    all_footprints(region, &[]).unwrap_or_default()
}

/// The footprints of `region`'s accesses, `None` when they are not known (the nest
/// is not a SCoP with a box-shaped domain) — so that `Some` with no footprint of an
/// array says the region does not access it at all. An access whose subscripts do
/// not name a loop of `loops` is taken to happen whether that loop runs or not: its
/// footprint has no condition that the loop runs (`Footprint::nonempty`) and counts
/// one iteration of it. A folded nest's footprints with its inner loops (`fold`): an
/// initialisation folded into the inner loops' first iteration touches its elements
/// in the source even when they do not run, and its accesses name none of them.
pub fn all_footprints(region: &Region, loops: &[String]) -> Option<Vec<(String, Footprint)>> {
    // A read under `c ? … : …`, in the right operand of `&&` / `||` or in a
    // conditional accumulation may never happen (`tessera_poly::scop::Access::conditional`):
    // its range over-approximates (`Footprint::may`), so that a region that never leaves
    // its section is not refused, while a host run still knows what it may touch.
    let Ok(scop) = tessera_poly::scop::extract(region) else { return None };
    let ty = |p: &str| region.var(p).map(|v| v.elem).unwrap_or(ScalarType::I64);
    // A derived parameter (`n/2`, `nx*ny`) is its expression, which the runtime evaluates.
    let derived = |p: &str| scop.derived.iter().find(|d| d.name == p).map(|d| d.expr.clone());
    let ty = Params { ty: &ty, derived: &derived };
    let mut out = Vec::new();
    for a in &scop.accesses {
        // The loops whose running this access does not depend on.
        let regardless: Vec<bool> = scop
            .loops
            .iter()
            .enumerate()
            .map(|(x, l)| loops.contains(&l.var) && a.subscripts.iter().all(|s| s.coeff(&Sym::Loop(x)) == 0))
            .collect();
        let site = Site { subscripts: &a.subscripts, write: a.kind == AccessKind::Write, may: a.conditional, text: &a.text };
        out.push((a.array.clone(), footprint_of(&scop.loops, &regardless, &site, &ty)?));
    }
    Some(out)
}

/// One access for [`footprint_of`]: its subscripts (affine in the loops' indices,
/// `Sym::Loop(k)` for loop `k`, and parameters), kind and text.
struct Site<'a> {
    subscripts: &'a [Aff],
    write: bool,
    may: bool,
    text: &'a str,
}

/// The footprint of access `a` inside `loops` (outermost first; bounds affine in the
/// parameters, positive steps), with `regardless[k]`: the access happens whether loop
/// `k` runs or not (no condition that it runs, one iteration counted). `None` when a
/// bound names a loop index (the domain is not a box) or a coefficient overflows.
fn footprint_of(loops: &[tessera_poly::scop::Loop], regardless: &[bool], a: &Site<'_>, ty: &Params<'_>) -> Option<Footprint> {
    let param_only = |x: &Aff| !x.mentions(|s| !matches!(s, Sym::Param(_)));
    if !loops.iter().all(|l| param_only(&l.lower) && param_only(&l.upper) && l.step > 0) {
        return None;
    }
    let bounds = loops
        .iter()
        .map(|l| Some((aff_expr(&l.lower, ty)?, aff_expr(&l.upper, ty)?, l.step)))
        .collect::<Option<Vec<_>>>()?;
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
    // Iterations of every loop when it runs: `⌈(upper − lower) / step⌉`.
    let counts: Vec<Expr> = bounds
        .iter()
        .map(|(lo, up, step)| {
            let span = bin(BinOp::Sub, up.clone(), lo.clone());
            if *step == 1 {
                span
            } else {
                bin(BinOp::Div, bin(BinOp::Add, span, lit(step - 1)), lit(*step))
            }
        })
        .collect();
    let (mut lo, mut hi) = (Vec::new(), Vec::new());
    for s in a.subscripts {
        lo.push(corner(s, &first, &last, ty, false)?);
        hi.push(corner(s, &first, &last, ty, true)?);
    }
    Some(Footprint {
        access: a.text.to_string(),
        write: a.write,
        lo,
        hi,
        nonempty: nonempty.iter().zip(regardless).filter(|(_, r)| !**r).map(|(n, _)| n.clone()).collect(),
        may: a.may,
        lattice: lattice(a.subscripts, loops, &counts, &first, ty).map(|mut l| {
            for (c, _) in l.counts.iter_mut().zip(regardless).filter(|(_, r)| **r) {
                *c = lit(1);
            }
            l
        }),
    })
}

/// The footprints of a region that is no single perfect nest (statements beside
/// inner loops, locals, `if`s), from each access and the loops around it: every loop
/// around an access must have bounds over the scalars (a box per access), and every
/// subscript must be affine in those loops' indices and the scalars. An access in a
/// branch of an `if`, of `?:` or right of `&&`/`||` may not happen (`may`).
/// Decreasing loops are first negated (`tessera_poly::normalize::increasing`), which
/// keeps their iterations. `None` when any access or loop is not of that form, or
/// the region holds a statement the IR does not represent.
pub fn nest_footprints(region: &Region) -> Option<Vec<(String, Footprint)>> {
    let region = tessera_poly::normalize::increasing(region).ok()?;
    let scalars: std::collections::HashSet<&str> = region
        .vars
        .iter()
        .filter(|v| v.kind == tessera_ir::VarKind::Scalar && v.elem.is_integer())
        .map(|v| v.name.as_str())
        .collect();
    let mut walk = NestWalk { scalars: &scalars, loops: Vec::new(), derived: Vec::new(), sites: Vec::new() };
    walk.stmts(&region.body, false)?;
    let ty = |p: &str| region.var(p).map(|v| v.elem).unwrap_or(ScalarType::I64);
    let derived = |p: &str| walk.derived.iter().find(|(n, _)| n == p).map(|(_, e)| e.clone());
    let params = Params { ty: &ty, derived: &derived };
    walk.sites
        .iter()
        .map(|(array, loops, subscripts, write, may, text)| {
            let site = Site { subscripts, write: *write, may: *may, text };
            Some((array.clone(), footprint_of(loops, &vec![false; loops.len()], &site, &params)?))
        })
        .collect()
}

/// An access found by [`NestWalk`]: array, its loops, subscripts, write, may, text.
type NestSite = (String, Vec<tessera_poly::scop::Loop>, Vec<Aff>, bool, bool, String);

/// The walk of [`nest_footprints`].
struct NestWalk<'a> {
    scalars: &'a std::collections::HashSet<&'a str>,
    /// The loops around the statement visited, outermost first.
    loops: Vec<tessera_poly::scop::Loop>,
    /// Loop-invariant sub-expressions taken as parameters (`n/2`): name, expression.
    derived: Vec<(String, Expr)>,
    sites: Vec<NestSite>,
}

impl NestWalk<'_> {
    /// `e` as an affine form over the enclosing loops' indices (`with_loops`) and the
    /// scalars.
    fn aff(&mut self, e: &Expr, with_loops: bool) -> Option<Aff> {
        let loops = &self.loops;
        let scalars = self.scalars;
        let lookup = |n: &str| {
            if let Some(k) = loops.iter().position(|l| l.var == n).filter(|_| with_loops) {
                return Some(Sym::Loop(k));
            }
            // A loop index shadows a scalar of the same name.
            (scalars.contains(n) && !loops.iter().any(|l| l.var == n)).then(|| Sym::Param(n.to_string()))
        };
        let derived = &mut self.derived;
        tessera_poly::affine::from_expr_with(e, &lookup, &mut |x| {
            let key = print::expr(x);
            let k = derived.iter().position(|(_, d)| print::expr(d) == key).unwrap_or_else(|| {
                derived.push((format!("__tessera_fp{}", derived.len()), x.clone()));
                derived.len() - 1
            });
            Some(Sym::Param(derived[k].0.clone()))
        })
    }

    fn stmts(&mut self, body: &[tessera_ir::Stmt], may: bool) -> Option<()> {
        use tessera_ir::{LValue, Stmt};
        for st in body {
            match st {
                Stmt::For { var, lower, upper, step, body, loc, .. } => {
                    self.expr(lower, may)?;
                    self.expr(upper, may)?;
                    let (lower, upper) = (self.aff(lower, false)?, self.aff(upper, false)?);
                    if *step <= 0 {
                        return None;
                    }
                    self.loops.push(tessera_poly::scop::Loop { var: var.clone(), lower, upper, step: *step, loc: loc.clone() });
                    let r = self.stmts(body, may);
                    self.loops.pop();
                    r?;
                }
                Stmt::Let { init, .. } => {
                    if let Some(e) = init {
                        self.expr(e, may)?;
                    }
                }
                Stmt::Assign { target, value, .. } => {
                    self.expr(value, may)?;
                    if let LValue::Element { array, index, .. } = target {
                        for i in index {
                            self.expr(i, may)?;
                        }
                        self.site(array, index, true, may)?;
                    }
                }
                Stmt::If { cond, then, otherwise, .. } => {
                    self.expr(cond, may)?;
                    self.stmts(then, true)?;
                    self.stmts(otherwise, true)?;
                }
                Stmt::Unsupported { .. } => return None,
            }
        }
        Some(())
    }

    /// The reads of `e`: those under a guard may not happen.
    fn expr(&mut self, e: &Expr, may: bool) -> Option<()> {
        let mut reads: Vec<(&str, &[Expr], bool)> = Vec::new();
        let mut ok = true;
        e.visit_guarded(&mut |x, guards| match x {
            Expr::Read { array, index, .. } => reads.push((array, index, may || !guards.is_empty())),
            Expr::Unsupported { .. } => ok = false,
            _ => {}
        });
        if !ok {
            return None;
        }
        for (array, index, may) in reads {
            self.site(array, index, false, may)?;
        }
        Some(())
    }

    fn site(&mut self, array: &str, index: &[Expr], write: bool, may: bool) -> Option<()> {
        let subscripts = index.iter().map(|i| self.aff(i, true)).collect::<Option<Vec<_>>>()?;
        let text = print::subscripted(array, index);
        self.sites.push((array.to_string(), self.loops.clone(), subscripts, write, may, text));
        Some(())
    }
}

/// The lattice of indices an access with `subscripts` takes over the box-shaped
/// domain of `loops` (iterations `counts`, first indices `first`): per dimension the
/// subscript at the first indices, and per loop what one iteration adds to it.
/// Exact for every affine subscript; `None` when a coefficient overflows.
fn lattice(subscripts: &[Aff], loops: &[tessera_poly::scop::Loop], counts: &[Expr], first: &[Expr], ty: &Params<'_>) -> Option<Lattice> {
    let base = subscripts.iter().map(|s| corner(s, first, first, ty, false)).collect::<Option<Vec<_>>>()?;
    let delta = subscripts
        .iter()
        .map(|s| (0..loops.len()).map(|k| Some(lit(s.coeff(&Sym::Loop(k)).checked_mul(loops[k].step)?))).collect())
        .collect::<Option<Vec<Vec<Expr>>>>()?;
    Some(Lattice { counts: counts.to_vec(), base, delta })
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
    // The flat range also spans the row ends between the view's rows; the lattice,
    // linear in the indices, is the flat lattice of the view's (the flat subscripts
    // as written, which the view's decompose whether or not its conditions hold).
    let lattice = fp.lattice.as_ref().map(|l| {
        let loops = l.counts.len();
        let column = |k: usize| flat(&l.delta.iter().map(|d| d[k].clone()).collect::<Vec<_>>());
        Lattice { counts: l.counts.clone(), base: vec![flat(&l.base)], delta: vec![(0..loops).map(column).collect()] }
    });
    Footprint { lo: vec![flat(&fp.lo)], hi: vec![flat(&fp.hi)], lattice, ..fp }
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

    /// An imperfect nest with a local, an `if`/`else` and a decreasing inner loop:
    /// every access gets its range over the loops around it; those in the branches
    /// may not happen; a subscript through a local leaves the footprints unknown.
    #[test]
    fn accesses_of_imperfect_nests_over_their_own_loops() {
        use crate::interp::{bin, c, el, for_, rd, set, v};
        use tessera_ir::{Loc, Stmt};
        let r1 = |a: &str, i: Expr| rd(a, vec![i]);
        let inner = Stmt::For {
            var: "j".into(),
            ty: ScalarType::I32,
            lower: bin(BinOp::Sub, v("m"), c(1)),
            upper: c(-1),
            step: -1,
            ne: false,
            body: vec![set(el("b", vec![v("j")]), r1("c", bin(BinOp::Add, v("j"), c(2))))],
            loc: Loc::default(),
        };
        let body = vec![
            Stmt::Let { name: "t".into(), ty: ScalarType::I32, init: Some(r1("a", v("i"))), loc: Loc::default() },
            inner,
            Stmt::If {
                cond: bin(BinOp::Gt, v("t"), c(0)),
                then: vec![set(el("d", vec![v("i")]), r1("a", bin(BinOp::Add, v("i"), c(1))))],
                otherwise: vec![set(el("d", vec![v("i")]), c(0))],
                loc: Loc::default(),
            },
        ];
        let region = crate::interp::region(&["a", "b", "c", "d"], &["n", "m"], vec![for_("i", c(0), v("n"), body)]);
        assert!(all_footprints(&region, &[]).is_none(), "no perfect nest");
        let fps = nest_footprints(&region).expect("footprints of every access");
        let env = |x: &str| match x {
            "n" => Some(5),
            "m" => Some(3),
            _ => None,
        };
        let got: Vec<(String, bool, bool, i128, i128)> = fps
            .iter()
            .map(|(a, fp)| (a.clone(), fp.write, fp.may, eval_int(&fp.lo[0], &env).unwrap(), eval_int(&fp.hi[0], &env).unwrap()))
            .collect();
        let want = [
            ("a", false, false, 0, 4),
            ("c", false, false, 2, 4),
            ("b", true, false, 0, 2),
            ("a", false, true, 1, 5),
            ("d", true, true, 0, 4),
            ("d", true, true, 0, 4),
        ];
        let want: Vec<(String, bool, bool, i128, i128)> = want.iter().map(|(a, w, m, l, h)| (a.to_string(), *w, *m, *l, *h)).collect();
        assert_eq!(got, want);
        // A subscript through a local: unknown.
        let body = vec![
            Stmt::Let { name: "k".into(), ty: ScalarType::I32, init: Some(bin(BinOp::Mul, v("i"), c(2))), loc: Loc::default() },
            Stmt::Let { name: "u".into(), ty: ScalarType::I32, init: Some(c(0)), loc: Loc::default() },
            set(el("b", vec![v("k")]), c(1)),
        ];
        let region = crate::interp::region(&["a", "b"], &["n"], vec![for_("i", c(0), v("n"), body)]);
        assert!(nest_footprints(&region).is_none());
    }

    /// A read under `c ? … : …` (or right of `&&`): its range is what the region *may*
    /// touch; every other access's, also of the same array, stays exact.
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
        let plain = footprints(&region);
        guard(&mut region.body);
        let fps = footprints(&region);
        assert!(!fps.is_empty());
        for (array, fp) in &fps {
            assert_eq!(fp.may, !fp.write, "{array}: {}", fp.access);
        }
        assert!(fps.iter().any(|(_, fp)| fp.may) && fps.iter().any(|(_, fp)| !fp.may));
        // `x && a[…]`: only the right operand's reads may not happen; the same
        // array read unconditionally (in the condition) stays exact.
        let mut anded = region.clone();
        fn and(stmts: &mut [tessera_ir::Stmt]) {
            for s in stmts {
                match s {
                    tessera_ir::Stmt::Assign { value: Expr::Select { cond, then, .. }, .. } => {
                        let mut read = None;
                        then.visit(&mut |e| {
                            if read.is_none() && matches!(e, Expr::Read { .. }) {
                                read = Some(e.clone());
                            }
                        });
                        let first = read.expect("the value reads");
                        let first = Expr::Binary { op: BinOp::Ne, lhs: Box::new(first.clone()), rhs: Box::new(first), ty: ScalarType::I32 };
                        **cond = Expr::Binary { op: BinOp::LAnd, lhs: Box::new(first.clone()), rhs: Box::new(first), ty: ScalarType::I32 };
                    }
                    tessera_ir::Stmt::For { body, .. } => and(body),
                    _ => {}
                }
            }
        }
        and(&mut anded.body);
        let fps2 = footprints(&anded);
        let cond_reads = 2 * 2;
        assert_eq!(fps2.len(), fps.len() + cond_reads, "{fps2:?}");
        assert_eq!(fps2.iter().filter(|(_, fp)| !fp.write && !fp.may).count(), 2, "the left operand's two reads are sure");
        assert_eq!(plain.len(), fps.len());
        // Every access, guarded or not, knows exactly which indices it may take.
        assert!(fps.iter().all(|(_, fp)| fp.lattice.is_some()));
    }

    /// The indices a lattice stands for, for the scalars in `env`.
    fn enumerate(l: &Lattice, env: &dyn Fn(&str) -> Option<i128>) -> std::collections::BTreeSet<Vec<i128>> {
        let ev = |e: &Expr| eval_int(e, env).unwrap();
        let counts: Vec<i128> = l.counts.iter().map(ev).collect();
        let base: Vec<i128> = l.base.iter().map(ev).collect();
        let delta: Vec<Vec<i128>> = l.delta.iter().map(|d| d.iter().map(ev).collect()).collect();
        let mut out = std::collections::BTreeSet::new();
        let mut t = vec![0i128; counts.len()];
        'all: loop {
            out.insert((0..base.len()).map(|d| base[d] + (0..t.len()).map(|k| t[k] * delta[d][k]).sum::<i128>()).collect());
            for k in (0..t.len()).rev() {
                t[k] += 1;
                if t[k] < counts[k] {
                    continue 'all;
                }
                t[k] = 0;
            }
            break;
        }
        out
    }

    /// Property: the lattice of a footprint is exactly the set of indices its access
    /// takes, and its box bounds them, for random steps and affine subscripts
    /// `c·i + d·j + k` of a 2-D nest (`A[i][j]`, `A[2*i][j + 1]`, `A[i][i]`,
    /// `A[i + j][0]`, …; found by enumerating the iteration domain); and linearised as
    /// the flat view of rows of 20 (`linearized`), exactly the flat indices.
    #[test]
    fn lattices_are_the_indices_taken() {
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
        let mut shared = 0;
        for case in 0..400 {
            let mut region = base.clone();
            let mut cs: Vec<i64> = (0..6).map(|_| rnd(5) as i64 - 2).collect();
            // Half with one index per dimension (`A[2*i][j]`, `A[j][-i]`), half mixed.
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
            let lattice = fp.lattice.as_ref().unwrap_or_else(|| panic!("case {case}: {} has no lattice", fp.access));
            assert_eq!(enumerate(lattice, &env), taken, "case {case}: {} steps {si}, {sj}", fp.access);
            let (lo, hi): (Vec<i128>, Vec<i128>) =
                (fp.lo.iter().map(|e| eval_int(e, &env).unwrap()).collect(), fp.hi.iter().map(|e| eval_int(e, &env).unwrap()).collect());
            assert!(taken.iter().all(|x| (0..2).all(|d| lo[d] <= x[d] && x[d] <= hi[d])));
            // Two loop iterations that take one index: the box of such an access is
            // never its set, but the lattice still is.
            shared += usize::from(taken.len() < (7 + si as usize - 1) / si as usize * ((6 + sj as usize - 1) / sj as usize));
            let rows = Expr::int(20);
            let flat = linearized(fp.clone(), &[rows]);
            let flat_taken: BTreeSet<Vec<i128>> = taken.iter().map(|x| vec![x[0] * 20 + x[1]]).collect();
            assert_eq!(enumerate(flat.lattice.as_ref().unwrap(), &env), flat_taken, "case {case}: {} flat", fp.access);
        }
        assert!(shared > 50, "{shared} cases where iterations share an index");
    }
}
