//! The loops the optimizer models: increasing ones with a `<` test.
//!
//! The region IR keeps every loop in its source's direction and order
//! (`tessera_ir::Stmt::For`): a decreasing loop `for (T i = L; i > U; i += s)`, `s < 0`,
//! stays decreasing, and the baseline kernel runs it so. The SCoP, the tiling and the
//! tiled generator work on increasing loops, so [`apply`] rewrites decreasing loops
//! first, in one of two ways ([`Normalization`]):
//!
//! ```text
//! negated (the default: same iterations, same order)
//!   for (T i = L; i > U; i += s) body
//!   ⇒ for (long i_neg = -(long)L; i_neg < -(long)U; i_neg += -s) body[i := (T)(-i_neg)]
//! reversed (step −1, only when the nest has no dependence at all)
//!   for (T i = L; i > U; i--) body
//!   ⇒ for (T i = (long)U + 1; i < (long)L + 1; i++) body
//! ```
//!
//! Negated: `i_neg = -i` increases exactly when `i` decreases, so the rewritten loop
//! has the same iterations *in the same order*: the dependences the optimizer
//! computes are those of the source order (a sequential loop keeps its order, and a
//! tiling that would break a dependence is still refused), and the body computes with
//! the very values of `i` the host does. `i_neg` is a `long`: negating an `int` or
//! `unsigned` index cannot overflow it (a 64-bit index must stay below 2^63 in
//! magnitude, as the optimizer's integers do everywhere). The subscripts become affine
//! in `i_neg` with negated coefficients; the tiled generator cannot trim writes that
//! run backwards, so such a region keeps the baseline kernel (with the reason).
//!
//! Reversed: the same iterations in the opposite order, with the body untouched. That
//! is only the same computation when no two iterations touch one element with a write
//! among them — no flow, anti or output dependence in the whole nest, which
//! `crate::optimize` establishes on the negated form before it asks for this one
//! (then every iteration reads only values no other iteration writes, whatever the
//! order, and writes elements no other one touches). A loop that must keep its order
//! (a recurrence, a sequential loop carrying a dependence) is never reversed.
//!
//! A `!=` test (`ne`) means `<` / `>` only while the index reaches its bound exactly.
//! An `int` or `long` index cannot step past it without overflowing (undefined), so
//! there it is modelled as `<` / `>`; an unsigned index, or one narrower than `int`,
//! may wrap around past the bound with defined behaviour, so such loops are declined
//! ([`PolyRejectReason::NotEqualTest`]) and keep the baseline kernel, which tests `!=`.
//!
//! The rewritten region is what [`crate::optimize`] plans, and the tiled generator
//! prints the same one: [`apply`] with the plan's [`Normalization`].

use crate::reject::{PolyReject, PolyRejectReason as R};
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::collections::HashSet;
use tessera_ir::{BinOp, Expr, LValue, Region, ScalarType, Stmt, UnOp};

/// How the source's decreasing loops became increasing ones (module docs).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Normalization {
    /// Indices of the decreasing loops of step −1 that run upwards over their own
    /// values (the nest has no dependence). Every other decreasing loop is negated.
    pub reversed: Vec<String>,
}

/// [`apply`] with every decreasing loop negated: the source order.
pub fn increasing(region: &Region) -> Result<Cow<'_, Region>, PolyReject> {
    apply(region, &Normalization::default())
}

/// The indices of the decreasing loops of step −1: those [`Normalization::reversed`]
/// may name.
pub fn reversible(region: &Region) -> Vec<String> {
    let mut out = Vec::new();
    region.visit_stmts(&mut |s| {
        if let Stmt::For { var, step: -1, .. } = s {
            out.push(var.clone());
        }
    });
    out
}

/// The region with every decreasing loop rewritten as an increasing one as `norm`
/// says, and `!=` tests dropped where they mean `<` / `>` (module docs). Borrowed
/// when there is nothing to rewrite.
pub fn apply<'r>(region: &'r Region, norm: &Normalization) -> Result<Cow<'r, Region>, PolyReject> {
    let mut todo = Ok(false);
    region.visit_stmts(&mut |s| {
        if let (Ok(any), Stmt::For { var, ty, step, ne, .. }) = (&todo, s) {
            todo = if *ne && !ne_is_exact(*ty) {
                Err(PolyReject::new(R::NotEqualTest { var: var.clone(), ty: ty.c_name().into() }, s.loc()))
            } else {
                Ok(*any || *ne || *step < 0)
            };
        }
    });
    if !todo? {
        return Ok(Cow::Borrowed(region));
    }
    let mut used: HashSet<String> = region.vars.iter().map(|v| v.name.clone()).collect();
    region.visit_stmts(&mut |s| match s {
        Stmt::For { var, .. } | Stmt::Let { name: var, .. } => {
            used.insert(var.clone());
        }
        _ => {}
    });
    region.visit_stmts(&mut |s| {
        s.visit_exprs(&mut |e| {
            if let Expr::Var { name, .. } = e {
                used.insert(name.clone());
            }
        })
    });
    let body = stmts(&region.body, norm, &mut used)?;
    Ok(Cow::Owned(Region { body, ..region.clone() }))
}

/// Whether `var != bound` on an index of type `ty` is `<` / `>` in every execution
/// without undefined behaviour: stepping past the bound overflows an `int` or `long`.
pub fn ne_is_exact(ty: ScalarType) -> bool {
    matches!(ty, ScalarType::I32 | ScalarType::I64)
}

fn stmts(body: &[Stmt], norm: &Normalization, used: &mut HashSet<String>) -> Result<Vec<Stmt>, PolyReject> {
    body.iter().map(|s| stmt(s, norm, used)).collect()
}

fn stmt(s: &Stmt, norm: &Normalization, used: &mut HashSet<String>) -> Result<Stmt, PolyReject> {
    Ok(match s {
        Stmt::For { var, ty, lower, upper, step, ne: _, body, loc } => {
            let body = stmts(body, norm, used)?;
            if *step >= 0 {
                // Increasing (a zero step is the SCoP's to refuse); `!=` is `<` here.
                Stmt::For {
                    var: var.clone(),
                    ty: *ty,
                    lower: lower.clone(),
                    upper: upper.clone(),
                    step: *step,
                    ne: false,
                    body,
                    loc: loc.clone(),
                }
            } else {
                if assigns(&body, var) {
                    return Err(PolyReject::new(R::ScalarWrite { name: var.clone() }, loc));
                }
                if *step == -1 && norm.reversed.contains(var) {
                    // The values upper + 1 ..= lower, upwards.
                    let plus1 = |e: &Expr| Expr::Binary {
                        op: BinOp::Add,
                        lhs: Box::new(cast(e.clone(), ScalarType::I64)),
                        rhs: Box::new(Expr::Int { value: 1, ty: ScalarType::I64 }),
                        ty: ScalarType::I64,
                    };
                    return Ok(Stmt::For {
                        var: var.clone(),
                        ty: *ty,
                        lower: plus1(upper),
                        upper: plus1(lower),
                        step: 1,
                        ne: false,
                        body,
                        loc: loc.clone(),
                    });
                }
                let neg = fresh(used, &format!("{var}_neg"));
                let negate = |e: &Expr| Expr::Unary { op: UnOp::Neg, arg: Box::new(cast(e.clone(), ScalarType::I64)), ty: ScalarType::I64 };
                let index = Expr::Unary { op: UnOp::Neg, arg: Box::new(Expr::var(&neg, ScalarType::I64)), ty: ScalarType::I64 };
                let step = step.checked_neg().ok_or_else(|| {
                    PolyReject::new(R::UnsupportedStatement { what: "loop step".into(), text: format!("{var} += {step}") }, loc)
                })?;
                Stmt::For {
                    var: neg.clone(),
                    ty: ScalarType::I64,
                    lower: negate(lower),
                    upper: negate(upper),
                    step,
                    ne: false,
                    body: body.iter().map(|s| subst_stmt(s, var, &index)).collect(),
                    loc: loc.clone(),
                }
            }
        }
        Stmt::If { cond, then, otherwise, loc } => Stmt::If {
            cond: cond.clone(),
            then: stmts(then, norm, used)?,
            otherwise: stmts(otherwise, norm, used)?,
            loc: loc.clone(),
        },
        Stmt::Assign { .. } | Stmt::Let { .. } | Stmt::Unsupported { .. } => s.clone(),
    })
}

/// `region` with each integer scalar of `values` that the region does not write
/// replaced by its value (`(name, value)`): in the body, the array extents and the map
/// sections. The region one launch executed, for a model that needs constant trip
/// counts (`tessera dse` on a program with run-time sizes: the runtime's report gives
/// each launch's values). Names that are not such scalars are ignored.
pub fn specialize(region: &Region, values: &[(String, i64)]) -> Region {
    let mut r = region.clone();
    for (name, v) in values {
        let Some(var) = region.vars.iter().find(|x| x.name == *name) else { continue };
        if var.kind != tessera_ir::VarKind::Scalar || var.written || var.writes_back() || var.elem.is_float() {
            continue;
        }
        let by = Expr::Int { value: *v, ty: var.elem };
        r.body = r.body.iter().map(|st| subst_stmt(st, name, &by)).collect();
        for x in &mut r.vars {
            for d in x.dims.iter_mut().flatten() {
                *d = subst(d, name, &by);
            }
            for sec in &mut x.section {
                sec.lower = subst(&sec.lower, name, &by);
                sec.length = subst(&sec.length, name, &by);
            }
        }
    }
    r
}

/// `e` converted to `ty` (no node when it already has that type).
fn cast(e: Expr, ty: ScalarType) -> Expr {
    if e.ty() == Some(ty) {
        e
    } else {
        Expr::Cast { arg: Box::new(e), ty }
    }
}

/// A name nobody in the region uses: `base`, `base_`, `base__`, …
fn fresh(used: &mut HashSet<String>, base: &str) -> String {
    let mut n = base.to_string();
    while used.contains(&n) {
        n.push('_');
    }
    used.insert(n.clone());
    n
}

/// Whether a statement of `body` assigns the scalar `name`.
fn assigns(body: &[Stmt], name: &str) -> bool {
    let mut found = false;
    for s in body {
        s.visit(&mut |s| {
            if let Stmt::Assign { target: LValue::Local { name: n, .. } | LValue::Scalar { name: n, .. }, .. } = s {
                found |= n == name;
            }
        });
    }
    found
}

/// `s` with every use of the scalar `var` replaced by `by` (converted to the use's type).
pub fn subst_stmt(s: &Stmt, var: &str, by: &Expr) -> Stmt {
    let e = |x: &Expr| subst(x, var, by);
    let all = |b: &[Stmt]| b.iter().map(|s| subst_stmt(s, var, by)).collect::<Vec<_>>();
    match s {
        Stmt::For { var: v, ty, lower, upper, step, ne, body, loc } => Stmt::For {
            var: v.clone(),
            ty: *ty,
            lower: e(lower),
            upper: e(upper),
            step: *step,
            ne: *ne,
            body: all(body),
            loc: loc.clone(),
        },
        Stmt::Assign { target, value, loc } => {
            let target = match target {
                LValue::Element { array, index, ty, loc } => {
                    LValue::Element { array: array.clone(), index: index.iter().map(e).collect(), ty: *ty, loc: loc.clone() }
                }
                t => t.clone(),
            };
            Stmt::Assign { target, value: e(value), loc: loc.clone() }
        }
        Stmt::Let { name, ty, init, loc } => {
            Stmt::Let { name: name.clone(), ty: *ty, init: init.as_ref().map(e), loc: loc.clone() }
        }
        Stmt::If { cond, then, otherwise, loc } => {
            Stmt::If { cond: e(cond), then: all(then), otherwise: all(otherwise), loc: loc.clone() }
        }
        Stmt::Unsupported { .. } => s.clone(),
    }
}

fn subst(x: &Expr, var: &str, by: &Expr) -> Expr {
    x.map(&mut |e| match e {
        Expr::Var { name, ty } if name == var => Some(cast(by.clone(), *ty)),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::{print, BinOp, Loc, Var, VarKind};
    use ScalarType::*;

    fn int_var(name: &str) -> Var {
        Var {
            name: name.into(),
            kind: VarKind::Scalar,
            elem: I32,
            dims: vec![],
            map: None,
            section: vec![],
            written: false,
            loc: Loc::default(),
        }
    }

    fn region(body: Vec<Stmt>) -> Region {
        let a = Var { kind: VarKind::Pointer, elem: F32, dims: vec![None], written: true, ..int_var("a") };
        Region::new(Loc::default(), vec![a, int_var("n")], body)
    }

    fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary { op, lhs: Box::new(l), rhs: Box::new(r), ty: I32 }
    }

    fn for_(var: &str, ty: ScalarType, lower: Expr, upper: Expr, step: i64, ne: bool, body: Vec<Stmt>) -> Stmt {
        Stmt::For { var: var.into(), ty, lower, upper, step, ne, body, loc: Loc::default() }
    }

    /// `a[i] = a[i + 1] + (float)i`.
    fn update(i: Expr) -> Stmt {
        let read = Expr::Read { array: "a".into(), index: vec![bin(BinOp::Add, i.clone(), Expr::int(1))], ty: F32, loc: Loc::default() };
        let value = Expr::Binary { op: BinOp::Add, lhs: Box::new(read), rhs: Box::new(Expr::Cast { arg: Box::new(i.clone()), ty: F32 }), ty: F32 };
        Stmt::Assign {
            target: LValue::Element { array: "a".into(), index: vec![i], ty: F32, loc: Loc::default() },
            value,
            loc: Loc::default(),
        }
    }

    #[test]
    fn increasing_loops_are_kept() {
        let i = Expr::var("i", I32);
        let r = region(vec![for_("i", I32, Expr::int(0), Expr::var("n", I32), 1, false, vec![update(i)])]);
        assert!(matches!(increasing(&r).unwrap(), Cow::Borrowed(_)));
    }

    /// `for (int i = n - 2; i > 0; i--)` (the plugin's `i >= 1`) becomes
    /// `for (long i_neg = -(n - 2); i_neg < -0; i_neg += 1)` over `(int)(-i_neg)`.
    #[test]
    fn decreasing_loops_count_up_over_the_negated_index() {
        let i = Expr::var("i", I32);
        let lower = bin(BinOp::Sub, Expr::var("n", I32), Expr::int(2));
        let r = region(vec![for_("i", I32, lower, bin(BinOp::Sub, Expr::int(1), Expr::int(1)), -1, false, vec![update(i)])]);
        let n = increasing(&r).unwrap();
        let Stmt::For { var, ty, lower, upper, step, ne, body, .. } = &n.body[0] else { panic!() };
        assert_eq!((var.as_str(), *ty, *step, *ne), ("i_neg", I64, 1, false));
        assert_eq!((print::expr(lower), print::expr(upper)), ("-(n - 2)".to_string(), "-(1 - 1)".to_string()));
        let widened = |e: &Expr| Expr::Unary { op: UnOp::Neg, arg: Box::new(cast(e.clone(), I64)), ty: I64 };
        let Stmt::For { lower: l0, upper: u0, .. } = &r.body[0] else { panic!() };
        assert_eq!((lower, upper), (&widened(l0), &widened(u0)));
        let Stmt::Assign { target: LValue::Element { index, .. }, value, .. } = &body[0] else { panic!() };
        let back = Expr::Cast {
            arg: Box::new(Expr::Unary { op: UnOp::Neg, arg: Box::new(Expr::var("i_neg", I64)), ty: I64 }),
            ty: I32,
        };
        assert_eq!(index[0], back);
        assert_eq!(value, &{
            let Stmt::Assign { value, .. } = update(back) else { panic!() };
            value
        });
        // The SCoP sees an increasing loop whose subscripts run backwards.
        let scop = crate::scop::extract(&n).unwrap();
        assert_eq!(scop.domain, "[n] -> { S0[i_neg] : 2 - n <= i_neg < 0 }");
    }

    /// Steps other than 1, a `long` index (no cast back), names already taken, nests.
    #[test]
    fn steps_types_names_and_nests() {
        let j = Expr::var("j", I64);
        let mut r = region(vec![for_(
            "i",
            I32,
            Expr::int(0),
            Expr::var("n", I32),
            1,
            false,
            vec![for_("j", I64, Expr::int(30), Expr::int(-1), -3, false, vec![update(j)])],
        )]);
        r.vars.push(int_var("j_neg"));
        let n = increasing(&r).unwrap();
        let Stmt::For { body, .. } = &n.body[0] else { panic!() };
        let Stmt::For { var, lower, upper, step, body, .. } = &body[0] else { panic!() };
        assert_eq!((var.as_str(), *step), ("j_neg_", 3));
        assert_eq!(print::expr(lower), "-30");
        assert_eq!(upper, &Expr::Unary { op: UnOp::Neg, arg: Box::new(cast(Expr::int(-1), I64)), ty: I64 });
        let Stmt::Assign { target: LValue::Element { index, .. }, .. } = &body[0] else { panic!() };
        // A `long` index needs no conversion back.
        assert_eq!(index[0], Expr::Unary { op: UnOp::Neg, arg: Box::new(Expr::var("j_neg_", I64)), ty: I64 });
    }

    /// `!=` is `<`/`>` for `int` and `long` indices; others may wrap around past the bound.
    #[test]
    fn not_equal_tests() {
        let i = Expr::var("i", I32);
        let r = region(vec![for_("i", I32, Expr::int(0), Expr::var("n", I32), 1, true, vec![update(i)])]);
        let Stmt::For { ne, .. } = &increasing(&r).unwrap().body[0] else { panic!() };
        assert!(!ne);
        let r = region(vec![for_("i", I32, Expr::var("n", I32), Expr::int(0), -1, true, vec![update(Expr::var("i", I32))])]);
        let Stmt::For { var, ne, .. } = &increasing(&r).unwrap().body[0] else { panic!() };
        assert_eq!((var.as_str(), *ne), ("i_neg", false));
        for ty in [U8, I8, I16, U16, U32, U64] {
            let u = Expr::var("u", ty);
            let r = region(vec![for_("u", ty, Expr::Int { value: 250, ty }, Expr::int(4), 1, true, vec![update(u)])]);
            let e = increasing(&r).unwrap_err();
            assert_eq!(e.reason, R::NotEqualTest { var: "u".into(), ty: ty.c_name().into() });
            assert_eq!(e.reason.code(), "not-equal-test");
        }
    }

    /// Reversed: the same values upwards, the body as it is; only loops of step −1.
    #[test]
    fn reversed_loops_count_up_over_their_own_index() {
        let i = Expr::var("i", I32);
        let lower = bin(BinOp::Sub, Expr::var("n", I32), Expr::int(2));
        let body = vec![update(i.clone())];
        let r = region(vec![for_(
            "i",
            I32,
            lower.clone(),
            Expr::int(0),
            -1,
            false,
            vec![for_("j", I32, Expr::int(9), Expr::int(0), -2, false, body.clone())],
        )]);
        assert_eq!(reversible(&r), ["i"]);
        let norm = Normalization { reversed: vec!["i".into(), "j".into()] };
        let n = apply(&r, &norm).unwrap();
        let Stmt::For { var, ty, lower: l, upper: u, step, body: inner, .. } = &n.body[0] else { panic!() };
        assert_eq!((var.as_str(), *ty, *step), ("i", I32, 1));
        assert_eq!((print::expr(l), print::expr(u)), ("0 + 1".to_string(), "n - 2 + 1".to_string()));
        // `j` has step −2: negated whatever the list says; `i` is left alone in it.
        let Stmt::For { var, step, body: b, .. } = &inner[0] else { panic!() };
        assert_eq!((var.as_str(), *step), ("j_neg", 2));
        let Stmt::Assign { target: LValue::Element { index, .. }, .. } = &b[0] else { panic!() };
        assert_eq!(index[0], i);
        let scop = crate::scop::extract(&n).unwrap();
        assert_eq!(scop.domain, "[n] -> { S0[i, j_neg] : 1 <= i < n - 1 and -9 <= j_neg < 0 and (j_neg - (-9)) mod 2 = 0 }");
    }

    /// `optimize` reverses a decreasing loop only when the nest has no dependence.
    #[test]
    fn optimize_reverses_only_dependence_free_nests() {
        let i = Expr::var("i", I32);
        let lower = bin(BinOp::Sub, Expr::var("n", I32), Expr::int(1));
        // a[i] = a[i + 1] + i, downwards: iteration i reads what iteration i + 1 wrote.
        let r = region(vec![for_("i", I32, lower.clone(), Expr::int(-1), -1, false, vec![update(i.clone())])]);
        let plan = crate::optimize(&r, &crate::PolyOptions::default()).unwrap();
        assert!(plan.normalization.reversed.is_empty());
        assert_eq!(plan.scop.loops[0].var, "i_neg");
        assert_eq!(plan.deps.pairs.len(), 1);
        // a[i] = a[i] + i: no two iterations share an element.
        let Stmt::Assign { target, loc, .. } = update(i.clone()) else { panic!() };
        let same = Expr::Read { array: "a".into(), index: vec![i.clone()], ty: F32, loc: Loc::default() };
        let own = Stmt::Assign { target, value: Expr::Binary { op: BinOp::Add, lhs: Box::new(same), rhs: Box::new(Expr::Cast { arg: Box::new(i), ty: F32 }), ty: F32 }, loc };
        let r = region(vec![for_("i", I32, lower, Expr::int(-1), -1, false, vec![own])]);
        let plan = crate::optimize(&r, &crate::PolyOptions::default()).unwrap();
        assert_eq!(plan.normalization.reversed, ["i"]);
        assert_eq!(plan.scop.domain, "[n] -> { S0[i] : 0 <= i < n }");
        assert!(crate::dump(&plan, crate::Stage::Scop).contains("decreasing loops run upwards (the nest has no dependence): i"));
    }

    /// A decreasing loop whose body assigns its index is not rewritten.
    #[test]
    fn assigned_indices_are_refused() {
        let bump = Stmt::Assign { target: LValue::Local { name: "i".into(), ty: I32 }, value: Expr::int(0), loc: Loc::default() };
        let r = region(vec![for_("i", I32, Expr::var("n", I32), Expr::int(0), -1, false, vec![bump])]);
        assert_eq!(increasing(&r).unwrap_err().reason, R::ScalarWrite { name: "i".into() });
    }
}

#[cfg(test)]
mod specialize_tests {
    use super::specialize;
    use tessera_ir::Region;

    /// jacobi2d_param with n = 67, m = 71: the SCoP's trip counts become the constants
    /// 65 and 69, the extents of A and B the constants; the original stays symbolic.
    #[test]
    fn launch_values_make_trip_counts_constant() {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir/jacobi2d_param.ir.json");
        let r = Region::from_json(&std::fs::read_to_string(p).unwrap()).unwrap();
        let trips = |r: &Region| {
            let s = crate::scop::extract(r).unwrap();
            s.loops.iter().map(|l| l.upper.sub(&l.lower).as_constant()).collect::<Vec<_>>()
        };
        assert_eq!(trips(&r), [None, None]);
        let s = specialize(&r, &[("n".into(), 67), ("m".into(), 71), ("nosuch".into(), 1)]);
        assert_eq!(trips(&s), [Some(65), Some(69)]);
        let a = s.var("A").unwrap();
        let consts: Vec<Option<i128>> = a.dims.iter().map(|d| tessera_ir::eval::eval_int(d.as_ref().unwrap(), &|_| None).ok()).collect();
        assert_eq!(consts, [Some(67), Some(71)]);
        assert_eq!(s.vars.len(), r.vars.len(), "the scalars stay (unused)");
    }
}
