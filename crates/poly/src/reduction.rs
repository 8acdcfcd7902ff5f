//! Reductions in the SCoP: which statements accumulate into a reduction variable,
//! and whether the tiled kernel may perform the accumulations in another order.
//!
//! **Accumulations.** A statement of the innermost body *accumulates* into the
//! variable `s` of `reduction(op: s)` when it is one of
//!
//! ```text
//!   s = S op E            op the clause's: + (also S - E), *, &, |, ^, &&, ||; also E op S, except for -
//!   s = C ? A : B         min / max: {A, B} = {S, E}, C compares S and E so that the
//!                         select picks the smaller (min) or the larger (max)
//!   if (C) s = E          min / max written as an if (the same as s = C ? E : S)
//!   s = fmax(S, E)        max with the math library (also fmax(E, S), fmaxf; fmin for min)
//!   if (C) s = S op E     a conditional accumulation (C does not read s)
//! ```
//!
//! where `S` is `s` under value-preserving conversions (`(int)s` of a `short s`),
//! `E` is an expression that does not read `s`, and the select's `E` and the
//! comparison's are the same expression up to value-preserving conversions. The
//! reduction variable may be read nowhere else in the loop: not by another
//! statement, a subscript or a loop bound (inside the region it is the private copy,
//! not the value the kernel is passed). A region with any other use of a reduction
//! variable is not tiled ([`PolyRejectReason::ReductionNotTiled`]); it keeps the
//! baseline kernel, which runs the loop as written.
//!
//! **Order.** Every accumulation instance changes `s` by a function `f(s)` that
//! depends only on the array values it reads (the SCoP's array dependences keep those
//! the same in any legal tiling). The tiled kernel performs the accumulations of one
//! variable on one accumulator, in its own order; it computes the loop's result when
//! the functions of two instances commute. The sufficient condition used here
//! ([`Accumulation::exact_in_any_order`]):
//!
//! - *integer variables* (`bool` included) with every conversion on the way from `s`
//!   to the operation value-preserving and the operation done in an integer type: then
//!   `f(s) = s ⊕ a` with `⊕` one of `+`, `*`, `&`, `|`, `^` modulo 2^w (the
//!   conversion back to the variable's type is a homomorphism of these operations;
//!   `s - e` is `s + (−e)`; a conditional accumulation adds the operator's identity,
//!   which is exact for integers), or `f(s) = (s ≠ 0) ∧ b`, `(s ≠ 0) ∨ b`, or
//!   `min(s, a)`, `max(s, a)` (the comparison exact, the candidates representable,
//!   written as selects; `fmin` / `fmax` take floating values only).
//!   Each `⊕` is commutative and associative, so any two such functions commute, and
//!   every order of the same instances gives the same result. (Signed overflow is
//!   taken to wrap, as the kernel's C++ and the host compute it in practice.)
//! - *floating variables* are exact in any order only for `min` and `max` of
//!   candidates whose sign bit is clear (`s = fmax(s, fabs(e))`, `if (fabs(e) > s)
//!   s = fabs(e)`, the max norm of a residual): the private copy starts at the
//!   largest finite value (or its negation), never a NaN, so a NaN candidate is never
//!   taken (a select compares false, `fmax` returns the other argument); the other
//!   candidates are numbers `≥ +0.0`, and two of them that compare equal have the
//!   same bits. The result is their largest (smallest), whatever the order. Any
//!   other floating accumulation is not: `+` and `*` round differently (the reason
//!   `ReductionOp::order_sensitive` gives), and `min` and `max` of values that may
//!   be `-0.0` keep whichever of `-0.0` and `+0.0` comes first. Those must run in
//!   the loop's order — unless `-fplugin-arg-tessera-reassociate` allows sums and
//!   products to be reassociated ([`must_keep_order`]).
//!
//! Whether a tiling keeps the loop's order of a variable's accumulations is decided
//! exactly with isl by `crate::optimize`: the pairs of accumulation instances in the
//! loop's order (`deps::ReductionOrder`) must stay in that order in the tiled
//! schedule, which makes them constraints of the legality test like dependences. A 1-D
//! loop strip-mined into tiles keeps it (tiles in order, the order inside each tile
//! kept, padded iterations skipped by a guard); a 2-D nest keeps it only when its inner
//! loops fit in one tile.

use crate::reject::PolyRejectReason;
use serde::{Deserialize, Serialize};
use tessera_ir::{print, BinOp, Expr, LValue, ReductionOp, ScalarType, Stmt};

/// What [`accumulation`] found in a statement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Accumulation {
    /// Whether the statement's accumulations give the same result in any order (see
    /// the module docs).
    pub exact_in_any_order: bool,
}

/// A reduction variable of the SCoP and the statements that accumulate into it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScopReduction {
    /// The variable.
    pub var: String,
    /// The clause's operator.
    pub op: ReductionOp,
    /// The variable's type.
    pub ty: ScalarType,
    /// The statements (indices into `Scop::statements`) that accumulate into it.
    pub statements: Vec<usize>,
    /// Whether its accumulations give the same result in any order (module docs).
    pub exact_in_any_order: bool,
}

impl ScopReduction {
    /// `reduction(+: s)`.
    pub fn clause(&self) -> String {
        format!("reduction({}: {})", self.op.name(), self.var)
    }
}

/// Whether the tiled kernel must perform the accumulations of `r` in the loop's
/// order: they are not exact in any order, and `reassociate` does not allow
/// reordering them (it does for floating sums and products).
pub fn must_keep_order(r: &ScopReduction, reassociate: bool) -> bool {
    let reassociated = reassociate && matches!(r.op, ReductionOp::Add | ReductionOp::Mul);
    !(r.exact_in_any_order || reassociated)
}

/// What a reduction accumulates, for messages: `sum`, `product`, `minimum`, …
pub fn what(op: ReductionOp) -> &'static str {
    match op {
        ReductionOp::Add => "sum",
        ReductionOp::Mul => "product",
        ReductionOp::Min => "minimum",
        ReductionOp::Max => "maximum",
        ReductionOp::BitAnd => "bitwise and",
        ReductionOp::BitOr => "bitwise or",
        ReductionOp::BitXor => "bitwise exclusive or",
        ReductionOp::LAnd => "logical and",
        ReductionOp::LOr => "logical or",
    }
}

/// Whether `e` reads the variable `name`.
pub fn reads(e: &Expr, name: &str) -> bool {
    let mut found = false;
    e.visit(&mut |x| found |= matches!(x, Expr::Var { name: v, .. } if v == name));
    found
}

/// Whether every value of `from` is a value of `to` (a conversion that loses nothing).
fn preserving(from: ScalarType, to: ScalarType) -> bool {
    use ScalarType::*;
    if from == to {
        return true;
    }
    match (from.is_float(), to.is_float()) {
        (true, true) => from == F32 && to == F64,
        (true, false) => false,
        // Integers up to the significand's width.
        (false, true) => from == Bool || from.size() < to.size() || (from.size() == 4 && to == F64),
        (false, false) => {
            from == Bool
                || match (from.is_signed(), to.is_signed()) {
                    (true, true) | (false, false) => to.size() >= from.size(),
                    (false, true) => to.size() > from.size(),
                    (true, false) => false,
                }
        }
    }
}

/// `e` without its value-preserving conversions (`(long)(int)x` is `x` for a `short x`).
fn strip_preserving(mut e: &Expr) -> &Expr {
    while let Expr::Cast { arg, ty } = e {
        match arg.ty() {
            Some(from) if preserving(from, *ty) => e = arg,
            _ => break,
        }
    }
    e
}

/// Whether `e` is the variable `name` under value-preserving conversions.
fn is_var(e: &Expr, name: &str) -> bool {
    matches!(strip_preserving(e), Expr::Var { name: v, .. } if v == name)
}

/// `e` without any conversions on top.
fn strip_all(mut e: &Expr) -> &Expr {
    while let Expr::Cast { arg, .. } = e {
        e = arg;
    }
    e
}

/// Whether `a` and `b` are the same expression (locations aside).
fn same(a: &Expr, b: &Expr) -> bool {
    let all = |x: &[Expr], y: &[Expr]| x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same(x, y));
    match (a, b) {
        (Expr::Read { array: a1, index: i1, ty: t1, .. }, Expr::Read { array: a2, index: i2, ty: t2, .. }) => {
            a1 == a2 && t1 == t2 && all(i1, i2)
        }
        (Expr::Call { func: f1, args: x1, ty: t1, .. }, Expr::Call { func: f2, args: x2, ty: t2, .. }) => {
            f1 == f2 && t1 == t2 && all(x1, x2)
        }
        (Expr::Unary { op: o1, arg: x1, ty: t1 }, Expr::Unary { op: o2, arg: x2, ty: t2 }) => o1 == o2 && t1 == t2 && same(x1, x2),
        (Expr::Cast { arg: x1, ty: t1 }, Expr::Cast { arg: x2, ty: t2 }) => t1 == t2 && same(x1, x2),
        (Expr::Binary { op: o1, lhs: l1, rhs: r1, ty: t1 }, Expr::Binary { op: o2, lhs: l2, rhs: r2, ty: t2 }) => {
            o1 == o2 && t1 == t2 && same(l1, l2) && same(r1, r2)
        }
        (Expr::Select { cond: c1, then: a1, otherwise: b1, ty: t1 }, Expr::Select { cond: c2, then: a2, otherwise: b2, ty: t2 }) => {
            t1 == t2 && same(c1, c2) && same(a1, a2) && same(b1, b2)
        }
        (Expr::Unsupported { .. }, _) | (_, Expr::Unsupported { .. }) => false,
        _ => a == b,
    }
}

/// The binary operator of an accumulation with `op`, besides `-` for `+`.
fn binop(op: ReductionOp) -> Option<BinOp> {
    Some(match op {
        ReductionOp::Add => BinOp::Add,
        ReductionOp::Mul => BinOp::Mul,
        ReductionOp::BitAnd => BinOp::BitAnd,
        ReductionOp::BitOr => BinOp::BitOr,
        ReductionOp::BitXor => BinOp::BitXor,
        ReductionOp::LAnd => BinOp::LAnd,
        ReductionOp::LOr => BinOp::LOr,
        ReductionOp::Min | ReductionOp::Max => return None,
    })
}

/// `value` (assigned to `name` of type `ty`) as `S op E`: whether it is one, and
/// whether the result is exact in any order.
fn op_form(value: &Expr, name: &str, op: ReductionOp, ty: ScalarType) -> Option<bool> {
    let bin = binop(op)?;
    let Expr::Binary { op: o, lhs, rhs, ty: u } = strip_all(value) else { return None };
    let logical = matches!(bin, BinOp::LAnd | BinOp::LOr);
    // `s` under any conversions; exact in any order only under value-preserving ones
    // (for `&&` and `||` only its truth matters: a conversion to bool keeps that).
    let s_side = |x: &Expr| matches!(strip_all(x), Expr::Var { name: v, .. } if v == name);
    let s_exact = |x: &Expr| is_var(x, name) || (logical && matches!(x, Expr::Cast { arg, ty: ScalarType::Bool } if is_var(arg, name)));
    let s_operand = if *o == bin {
        if s_side(lhs) && !reads(rhs, name) {
            lhs
        } else if s_side(rhs) && !reads(lhs, name) {
            rhs
        } else {
            return None;
        }
    } else if *o == BinOp::Sub && op == ReductionOp::Add && s_side(lhs) && !reads(rhs, name) {
        // `s - e` accumulates `-e` into a `+` reduction (OpenMP 5.2: `-` combines as `+`).
        lhs
    } else {
        return None;
    };
    // Modulo 2^w for an integer type (a `bool` variable converts by truth, not
    // modulo 2: only `&&` and `||` are exact for it).
    Some(s_exact(s_operand) && ty.is_integer() && u.is_integer() && (logical || ty != ScalarType::Bool))
}

/// A min / max selection `cond ? (e if picks_e) : s`, with `e` the candidate that is
/// not `s`: whether `cond` makes it pick the smaller (`min`) or larger (`max`) value,
/// and whether the result is exact in any order.
fn select_form(cond: &Expr, e: &Expr, picks_e: bool, name: &str, op: ReductionOp, ty: ScalarType) -> Option<bool> {
    if !matches!(op, ReductionOp::Min | ReductionOp::Max) || reads(e, name) {
        return None;
    }
    let Expr::Binary { op: cmp, lhs, rhs, .. } = strip_all(cond) else { return None };
    let e_core = strip_preserving(e);
    let is_e = |x: &Expr| same(strip_preserving(x), e_core);
    let x_is_e = match (is_var(lhs, name), is_var(rhs, name)) {
        (true, false) if is_e(rhs) => false,
        (false, true) if is_e(lhs) => true,
        _ => return None,
    };
    // Whether `cond` holds exactly when e is below s.
    let true_means_e_less = match cmp {
        BinOp::Lt | BinOp::Le => x_is_e,
        BinOp::Gt | BinOp::Ge => !x_is_e,
        _ => return None,
    };
    let picks_smaller = picks_e == true_means_e_less;
    if picks_smaller != (op == ReductionOp::Min) {
        return None;
    }
    // Exact for integers when the comparison sees the values themselves and the
    // candidate e is a value of the variable's type; for floats when e is never -0.0.
    let exact = (ty.is_integer() && e_core.ty() == Some(ty)) || (ty.is_float() && sign_clear(e));
    Some(exact)
}

/// A min / max written as the math library's `fmin(s, e)` / `fmax(e, s)` (and the
/// `f` forms): whether it is one, and whether the result is exact in any order
/// (when `e` is never `-0.0`, module docs).
fn call_form(func: tessera_ir::MathFn, args: &[Expr], name: &str, op: ReductionOp) -> Option<bool> {
    use tessera_ir::MathFn;
    let fits = matches!((func, op), (MathFn::Fmin, ReductionOp::Min) | (MathFn::Fmax, ReductionOp::Max));
    let e = match args {
        [x, y] if is_var(x, name) && !reads(y, name) => y,
        [x, y] if is_var(y, name) && !reads(x, name) => x,
        _ => return None,
    };
    fits.then(|| sign_clear(e))
}

/// Whether `e`, a floating value, has its sign bit clear whatever it reads (`fabs(x)`,
/// also widened to `double`): it is never `-0.0`.
fn sign_clear(e: &Expr) -> bool {
    matches!(strip_preserving(e), Expr::Call { func: tessera_ir::MathFn::Fabs, .. })
}

/// Whether statement `st` accumulates into the reduction variable `name` of type `ty`
/// with `op` (module docs), and how; `Err` says why not, when it assigns `name` some
/// other way. `Ok(None)`: the statement does not assign `name`.
pub fn accumulation(st: &Stmt, name: &str, op: ReductionOp, ty: ScalarType) -> Result<Option<Accumulation>, String> {
    let assigns = |target: &LValue| matches!(target, LValue::Scalar { name: n, .. } if n == name);
    let not_form = |text: String| format!("'{text}' does not accumulate with '{}'", op.name());
    match st {
        Stmt::Assign { target, value, .. } if assigns(target) => {
            let exact = match strip_all(value) {
                Expr::Select { cond, then, otherwise, .. } => match (is_var(then, name), is_var(otherwise, name)) {
                    (false, true) => select_form(cond, then, true, name, op, ty),
                    (true, false) => select_form(cond, otherwise, false, name, op, ty),
                    _ => None,
                },
                Expr::Call { func, args, .. } => call_form(*func, args, name, op),
                _ => op_form(value, name, op, ty),
            };
            match exact {
                Some(exact_in_any_order) => Ok(Some(Accumulation { exact_in_any_order })),
                None => Err(not_form(format!("{} = {}", name, print::expr(value)))),
            }
        }
        Stmt::If { cond, then, otherwise, .. } => {
            let [Stmt::Assign { target, value, .. }] = then.as_slice() else { return Ok(None) };
            if !assigns(target) {
                return Ok(None);
            }
            let text = || format!("if ({}) {name} = {}", print::expr(cond), print::expr(value));
            if !otherwise.is_empty() {
                return Err(not_form(text()));
            }
            let exact = if reads(value, name) {
                // `if (c) s = s op e`: `s op (c ? e : identity)`.
                if reads(cond, name) {
                    None
                } else {
                    op_form(value, name, op, ty)
                }
            } else {
                // `if (c) s = e`: `s = c ? e : s`.
                select_form(cond, value, true, name, op, ty)
            };
            match exact {
                Some(exact_in_any_order) => Ok(Some(Accumulation { exact_in_any_order })),
                None => Err(not_form(text())),
            }
        }
        _ => Ok(None),
    }
}

/// The reason a region's reduction is not tiled.
pub(crate) fn not_tiled(op: ReductionOp, var: &str, why: String) -> PolyRejectReason {
    PolyRejectReason::ReductionNotTiled { text: format!("reduction({}: {var})", op.name()), why }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::{Loc, UnOp};

    fn v(n: &str, ty: ScalarType) -> Expr {
        Expr::var(n, ty)
    }
    fn cast(e: Expr, ty: ScalarType) -> Expr {
        Expr::Cast { arg: Box::new(e), ty }
    }
    fn bin(op: BinOp, l: Expr, r: Expr, ty: ScalarType) -> Expr {
        Expr::Binary { op, lhs: Box::new(l), rhs: Box::new(r), ty }
    }
    /// Every read at another column: the same expression twice differs in location.
    fn read(a: &str, ty: ScalarType) -> Expr {
        use std::sync::atomic::{AtomicU32, Ordering};
        static COL: AtomicU32 = AtomicU32::new(1);
        let loc = Loc { col: COL.fetch_add(1, Ordering::Relaxed), ..Loc::default() };
        Expr::Read { array: a.into(), index: vec![v("i", ScalarType::I32)], ty, loc }
    }
    fn assign(n: &str, ty: ScalarType, value: Expr) -> Stmt {
        Stmt::Assign { target: LValue::Scalar { name: n.into(), ty, loc: Loc::default() }, value, loc: Loc::default() }
    }
    fn sel(c: Expr, a: Expr, b: Expr, ty: ScalarType) -> Expr {
        Expr::Select { cond: Box::new(c), then: Box::new(a), otherwise: Box::new(b), ty }
    }
    fn if_(c: Expr, then: Stmt) -> Stmt {
        Stmt::If { cond: c, then: vec![then], otherwise: vec![], loc: Loc::default() }
    }
    fn exact(r: Result<Option<Accumulation>, String>) -> Option<bool> {
        r.unwrap().map(|a| a.exact_in_any_order)
    }

    /// The forms of the module docs, exact in any order for integers only.
    #[test]
    fn accumulations_and_their_order() {
        use ReductionOp::*;
        use ScalarType::*;
        let (s, f) = (|| v("s", F32), || read("x", F32));
        // s = s + x[i]: a float sum, in the loop's order.
        assert_eq!(exact(accumulation(&assign("s", F32, bin(BinOp::Add, s(), f(), F32)), "s", Add, F32)), Some(false));
        // x[i] * s and s - x[i].
        assert_eq!(exact(accumulation(&assign("s", F32, bin(BinOp::Mul, f(), s(), F32)), "s", Mul, F32)), Some(false));
        assert_eq!(exact(accumulation(&assign("s", F32, bin(BinOp::Sub, s(), f(), F32)), "s", Add, F32)), Some(false));
        assert!(accumulation(&assign("s", F32, bin(BinOp::Sub, f(), s(), F32)), "s", Add, F32).is_err());
        assert!(accumulation(&assign("s", F32, bin(BinOp::Mul, s(), f(), F32)), "s", Add, F32).unwrap_err().contains("does not accumulate with '+'"));
        // E reads s: not an accumulation.
        assert!(accumulation(&assign("s", F32, bin(BinOp::Add, s(), bin(BinOp::Mul, s(), f(), F32), F32)), "s", Add, F32).is_err());
        // Narrow integers: (signed char)((int)w + (int)(signed char)v[i]) is exact in any order.
        let w = || cast(v("w", I8), I32);
        let e = cast(cast(read("v", I32), I8), I32);
        assert_eq!(exact(accumulation(&assign("w", I8, cast(bin(BinOp::Add, w(), e, I32), I8)), "w", Add, I8)), Some(true));
        // An int accumulated in float arithmetic rounds: only in order.
        let sf = cast(v("k", I32), F32);
        assert_eq!(exact(accumulation(&assign("k", I32, cast(bin(BinOp::Add, sf, f(), F32), I32)), "k", Add, I32)), Some(false));
        // s truncated on the way: an accumulation, but only in the loop's order.
        let trunc = cast(v("l", I64), I32);
        assert_eq!(exact(accumulation(&assign("l", I64, cast(bin(BinOp::Add, trunc, read("v", I32), I32), I64)), "l", Add, I64)), Some(false));
        // p = p && v[i] > 0.
        let gt = bin(BinOp::Gt, read("v", I32), Expr::int(0), I32);
        assert_eq!(exact(accumulation(&assign("p", I32, bin(BinOp::LAnd, v("p", I32), gt.clone(), I32)), "p", LAnd, I32)), Some(true));
        assert!(accumulation(&assign("p", I32, bin(BinOp::LAnd, v("p", I32), gt, I32)), "p", LOr, I32).is_err());
    }

    #[test]
    fn min_and_max_as_selects_and_ifs() {
        use ReductionOp::*;
        use ScalarType::*;
        let (h, e) = (|| v("h", I32), || read("v", I32));
        let lt = |a, b| bin(BinOp::Lt, a, b, I32);
        let gt = |a, b| bin(BinOp::Gt, a, b, I32);
        // h = v[i] > h ? v[i] : h (max), h = v[i] < h ? v[i] : h (min), h = h < v[i] ? h : v[i] (min).
        assert_eq!(exact(accumulation(&assign("h", I32, sel(gt(e(), h()), e(), h(), I32)), "h", Max, I32)), Some(true));
        assert_eq!(exact(accumulation(&assign("h", I32, sel(lt(e(), h()), e(), h(), I32)), "h", Min, I32)), Some(true));
        assert_eq!(exact(accumulation(&assign("h", I32, sel(lt(h(), e()), h(), e(), I32)), "h", Min, I32)), Some(true));
        // The wrong way round.
        assert!(accumulation(&assign("h", I32, sel(gt(e(), h()), e(), h(), I32)), "h", Min, I32).is_err());
        assert!(accumulation(&assign("h", I32, sel(lt(h(), e()), e(), h(), I32)), "h", Min, I32).is_err());
        // if (v[i] < h) h = v[i];
        assert_eq!(exact(accumulation(&if_(lt(e(), h()), assign("h", I32, e())), "h", Min, I32)), Some(true));
        assert!(accumulation(&if_(lt(e(), h()), assign("h", I32, e())), "h", Max, I32).is_err());
        // if ((int)px[i] > (int)b) b = px[i]; over unsigned char.
        let px = || read("px", U8);
        let c = bin(BinOp::Gt, cast(px(), I32), cast(v("b", U8), I32), I32);
        assert_eq!(exact(accumulation(&if_(c, assign("b", U8, px())), "b", Max, U8)), Some(true));
        // Floating min: in the loop's order (signed zeros, NaNs).
        let (m, x) = (|| v("m", F32), || read("x", F32));
        let c = bin(BinOp::Lt, x(), m(), I32);
        assert_eq!(exact(accumulation(&assign("m", F32, sel(c, x(), m(), F32)), "m", Min, F32)), Some(false));
        // m = fminf(m, x[i]), fmax(x[i], m): with the math library, also in order.
        let call = |func, a, b| Expr::Call { func, args: vec![a, b], ty: F32, loc: Loc::default() };
        let (fmin, fmax) = (tessera_ir::MathFn::Fmin, tessera_ir::MathFn::Fmax);
        assert_eq!(exact(accumulation(&assign("m", F32, call(fmin, m(), x())), "m", Min, F32)), Some(false));
        // Of fabs(…) (also widened): never -0.0, so in any order.
        let abs = || Expr::Call { func: tessera_ir::MathFn::Fabs, args: vec![x()], ty: F32, loc: Loc::default() };
        assert_eq!(exact(accumulation(&assign("m", F32, call(fmax, m(), abs())), "m", Max, F32)), Some(true));
        let d = || v("d", F64);
        let wide = || cast(abs(), F64);
        let dcall = Expr::Call { func: fmax, args: vec![wide(), d()], ty: F64, loc: Loc::default() };
        assert_eq!(exact(accumulation(&assign("d", F64, dcall), "d", Max, F64)), Some(true));
        let c = bin(BinOp::Gt, wide(), d(), I32);
        assert_eq!(exact(accumulation(&if_(c, assign("d", F64, wide())), "d", Max, F64)), Some(true));
        let neg = Expr::Unary { op: UnOp::Neg, arg: Box::new(abs()), ty: F32 };
        assert_eq!(exact(accumulation(&assign("m", F32, call(fmin, neg, m())), "m", Min, F32)), Some(false));
        assert_eq!(exact(accumulation(&assign("m", F32, call(fmax, x(), m())), "m", Max, F32)), Some(false));
        assert!(accumulation(&assign("m", F32, call(fmax, m(), x())), "m", Min, F32).is_err());
        assert!(accumulation(&assign("m", F32, call(fmin, m(), m())), "m", Min, F32).is_err());
        assert!(accumulation(&assign("m", F32, call(fmin, x(), x())), "m", Min, F32).is_err());
        // A comparison of another value.
        let c = bin(BinOp::Lt, read("y", I32), h(), I32);
        assert!(accumulation(&assign("h", I32, sel(c, e(), h(), I32)), "h", Min, I32).is_err());
        // if (c) n = n + 1: a conditional sum; a condition reading n is not.
        let one = || Expr::int(1);
        let c = bin(BinOp::Ne, read("g", F64), Expr::Float { bits: 0, ty: F64 }, I32);
        assert_eq!(exact(accumulation(&if_(c.clone(), assign("n", I32, bin(BinOp::Add, v("n", I32), one(), I32))), "n", Add, I32)), Some(true));
        let c2 = bin(BinOp::Lt, v("n", I32), one(), I32);
        assert!(accumulation(&if_(c2, assign("n", I32, bin(BinOp::Add, v("n", I32), one(), I32))), "n", Add, I32).is_err());
        // Other statements and variables: not an assignment of the variable.
        assert_eq!(accumulation(&assign("t", I32, e()), "h", Min, I32), Ok(None));
        assert_eq!(accumulation(&if_(c, assign("t", I32, e())), "h", Min, I32), Ok(None));
        let neg = Expr::Unary { op: UnOp::Neg, arg: Box::new(h()), ty: I32 };
        assert!(accumulation(&assign("h", I32, neg), "h", Min, I32).is_err());
    }

    /// The module docs' argument for floating min / max of sign-clear candidates, on
    /// sequences of doubles with NaNs of several payloads, zeros of both signs,
    /// infinities and repeats: from the identity, every order gives the same bits —
    /// with `fmax` preferring either argument on ties and with the select — and with
    /// `-0.0` among the candidates some orders do not (so the check can fail).
    #[test]
    fn max_of_sign_clear_candidates_is_the_same_in_any_order() {
        let fmax_first = |s: f64, e: f64| if e.is_nan() { s } else if s.is_nan() { e } else if s >= e { s } else { e };
        let fmax_second = |s: f64, e: f64| if e.is_nan() { s } else if s.is_nan() { e } else if e >= s { e } else { s };
        let select = |s: f64, e: f64| if e > s { e } else { s };
        let pool = [0.0, -0.0, 1.5, -1.5, 2.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::from_bits(0xfff8_0000_0000_0001), 1e-310];
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let mut signed_zero_differs = false;
        for _ in 0..2000 {
            let len = 1 + (next() % 7) as usize;
            let raw: Vec<f64> = (0..len).map(|_| pool[(next() % pool.len() as u64) as usize]).collect();
            for clear in [true, false] {
                let vals: Vec<f64> = raw.iter().map(|v| if clear { v.abs() } else { *v }).collect();
                for f in [&fmax_first as &dyn Fn(f64, f64) -> f64, &fmax_second, &select] {
                    let fold = |xs: &[f64]| xs.iter().fold(-f64::MAX, |s, &e| f(s, e)).to_bits();
                    let want = fold(&vals);
                    for _ in 0..8 {
                        let mut perm = vals.clone();
                        for i in (1..perm.len()).rev() {
                            perm.swap(i, (next() % (i as u64 + 1)) as usize);
                        }
                        if clear {
                            assert_eq!(fold(&perm), want, "{vals:?} vs {perm:?}");
                        } else {
                            signed_zero_differs |= fold(&perm) != want;
                        }
                    }
                }
            }
        }
        assert!(signed_zero_differs, "zeros of both signs: some order should differ");
    }

    #[test]
    fn order_is_kept_for_floats_unless_reassociated() {
        let r = |op, ty: ScalarType| ScopReduction { var: "s".into(), op, ty, statements: vec![0], exact_in_any_order: ty.is_integer() };
        assert!(must_keep_order(&r(ReductionOp::Add, ScalarType::F32), false));
        assert!(!must_keep_order(&r(ReductionOp::Add, ScalarType::F32), true));
        assert!(!must_keep_order(&r(ReductionOp::Mul, ScalarType::F64), true));
        assert!(must_keep_order(&r(ReductionOp::Min, ScalarType::F64), true));
        assert!(!must_keep_order(&r(ReductionOp::Add, ScalarType::I32), false));
        assert_eq!(r(ReductionOp::Max, ScalarType::F32).clause(), "reduction(max: s)");
    }
}
