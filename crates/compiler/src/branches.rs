//! `if` statements that assign the same places in both branches, as selects.
//!
//! The optimizer and the tiled kernels take assignments only; a boundary written
//! with `if`/`else` inside the nest,
//!
//! ```text
//! if (i == 0 || i == n - 1) b[i] = a[i];          b[i] = i == 0 || i == n - 1
//! else b[i] = 0.5f * (a[i - 1] + a[i + 1]);   ⇒        ? a[i] : 0.5f * (a[i - 1] + a[i + 1]);
//! ```
//!
//! is the same computation as the select on the right: the condition is evaluated once,
//! the branch it picks is evaluated (a select evaluates only that one, like `?:` in C),
//! and the same place is assigned either way. [`convert`] rewrites every `if` of that
//! form, innermost first (an `else if` chain becomes nested selects):
//!
//! - both branches are assignments of the same places in the same order (array
//!   elements with the same subscripts, locals), and the condition reads none of
//!   them but the last (`if (v < 0) v = 0;`) — so evaluating it again before each
//!   assignment gives the same answer, and
//!   each assignment evaluates the value the taken branch would, after the same
//!   earlier assignments;
//! - `if (c) x = e;` without `else`, when the same block has already assigned `x`
//!   unconditionally (`b[i] = a[i]; if (c) b[i] = e;`, or declared the local with a
//!   value): `x = c ? e : x`, whose store of the old value writes nothing new. Without such an assignment the select would
//!   write an element the source may never write (outside its mapped section, or into
//!   an array mapped `to`), so such an `if` stays.
//!
//! With [`convert_guarded`] (for the tiled kernels only), also `if (c) a[s] = e;`
//! without `else` and without an earlier assignment: `a[s] = c ? e : a[s]`, a *guarded
//! write*. The kernel then writes `a[s]` in every iteration, its old value where `c`
//! is false, so it computes the same values, but it writes elements the source may
//! never write. The compiler lists those writes as launch conditions of the kernel
//! (`tessera_ir::manifest::Guard::writes`): the runtime launches it only when they lie
//! in the device's data of the array, else the baseline kernel of the region as
//! written, which keeps the `if`. Not for arrays of a reduction clause (their
//! accumulations are the optimizer's), nor for locals (their old value may be
//! undefined).
//!
//! Reads in the branches become reads that may not happen
//! (`tessera_poly::scop::Access::conditional`), which the footprints and the kernels
//! treat as such. Assignments of the enclosing function's scalars (reductions:
//! `if (a[i] > m) m = a[i];`) are left to the optimizer's own conditional accumulations.

use std::borrow::Cow;
use tessera_ir::{Expr, LValue, Region, Stmt};

/// The region with every `if` of the supported forms as selects (module docs);
/// borrowed when there is none.
pub fn convert(region: &Region) -> Cow<'_, Region> {
    convert_with(region, None)
}

/// An element the converted region writes where the region as written may not
/// ([`convert_guarded`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Guarded {
    /// The array.
    pub array: String,
    /// The assignment as written, `a[i] = e` under `if (c)`.
    pub text: String,
}

/// [`convert`], and also `if (c) a[s] = e;` without `else` as `a[s] = c ? e : a[s]`
/// (module docs), for the tiled kernels: the region and the guarded writes it makes
/// (empty when it makes none).
pub fn convert_guarded(region: &Region) -> (Cow<'_, Region>, Vec<Guarded>) {
    let mut guarded = Vec::new();
    let reduced: Vec<&str> = region
        .reductions
        .iter()
        .map(|r| r.var.as_str())
        .chain(region.array_reductions.iter().map(|r| r.var.as_str()))
        .collect();
    let r = convert_with(region, Some((&mut guarded, &reduced)));
    (r, guarded)
}

fn convert_with<'a>(region: &'a Region, mut guarded: GuardedOut<'_, '_>) -> Cow<'a, Region> {
    let mut changed = false;
    let body = block(&region.body, &mut changed, &mut guarded);
    if !changed {
        return Cow::Borrowed(region);
    }
    let mut r = region.clone();
    r.body = body;
    Cow::Owned(r)
}

type GuardedOut<'g, 'r> = Option<(&'g mut Vec<Guarded>, &'r [&'r str])>;

fn block(body: &[Stmt], changed: &mut bool, guarded: &mut GuardedOut<'_, '_>) -> Vec<Stmt> {
    let mut out: Vec<Stmt> = Vec::new();
    for s in body {
        let s = match s {
            Stmt::For { body, .. } => crate::fold::with_body(s, block(body, changed, guarded)),
            Stmt::If { cond, then, otherwise, loc } => {
                let then = block(then, changed, guarded);
                let otherwise = block(otherwise, changed, guarded);
                match selects(cond, &then, &otherwise, &out, guarded) {
                    Some(assigns) => {
                        *changed = true;
                        out.extend(assigns);
                        continue;
                    }
                    None => Stmt::If { cond: cond.clone(), then, otherwise, loc: loc.clone() },
                }
            }
            other => other.clone(),
        };
        out.push(s);
    }
    out
}

/// The same place (locations aside).
fn same_place(a: &LValue, b: &LValue) -> bool {
    match (a, b) {
        (LValue::Element { array: x, index: i, .. }, LValue::Element { array: y, index: j, .. }) => x == y && i == j,
        (LValue::Local { name: x, .. }, LValue::Local { name: y, .. }) => x == y,
        _ => false,
    }
}

/// The value of reading `place`.
fn read_of(place: &LValue) -> Expr {
    match place {
        LValue::Element { array, index, ty, loc } => Expr::Read { array: array.clone(), index: index.clone(), ty: *ty, loc: loc.clone() },
        LValue::Local { name, ty } => Expr::var(name, *ty),
        LValue::Scalar { .. } => unreachable!("scalars are not converted"),
    }
}

/// Whether `e` reads `place` (an element of its array with any subscripts, or the local).
fn reads(e: &Expr, place: &LValue) -> bool {
    let mut hit = false;
    e.visit(&mut |x| {
        hit |= match (x, place) {
            (Expr::Read { array, .. }, LValue::Element { array: a, .. }) => array == a,
            (Expr::Var { name, .. }, LValue::Local { name: n, .. }) => name == n,
            _ => false,
        }
    });
    hit
}

/// The assignments of a branch, or `None` if it holds anything else.
fn assigns(branch: &[Stmt]) -> Option<Vec<(&LValue, &Expr, &tessera_ir::Loc)>> {
    branch
        .iter()
        .map(|s| match s {
            Stmt::Assign { target: t @ (LValue::Element { .. } | LValue::Local { .. }), value, loc } => Some((t, value, loc)),
            _ => None,
        })
        .collect()
}

/// `if (cond) then else otherwise` as assignments of selects, if it has a supported
/// form; `before` is what the block assigned before it.
fn selects(
    cond: &Expr,
    then: &[Stmt],
    otherwise: &[Stmt],
    before: &[Stmt],
    guarded: &mut GuardedOut<'_, '_>,
) -> Option<Vec<Stmt>> {
    let t = assigns(then)?;
    let o = assigns(otherwise)?;
    // `if (c) ; else x = e;` (a `continue` at the top of a loop body becomes one) is
    // `if (c) x = x; else x = e;`: the same with the branches' roles swapped.
    let flip = t.is_empty();
    let (t, o) = if flip { (o, t) } else { (t, o) };
    if t.is_empty() {
        return None;
    }
    let mut guarded_here = Vec::new();
    // Without `else`: each place already assigned unconditionally in this block, or,
    // for guarded writes, an element of an array no reduction accumulates.
    let o: Vec<(&LValue, Expr)> = if o.is_empty() {
        let mut kept = Vec::new();
        let mut new_guarded = Vec::new();
        for (place, value, _) in &t {
            let assigned = before.iter().any(|s| match s {
                Stmt::Assign { target, .. } => same_place(target, place),
                Stmt::Let { name, init: Some(_), .. } => matches!(place, LValue::Local { name: n, .. } if n == name),
                _ => false,
            });
            if !assigned {
                match (place, guarded.as_ref()) {
                    (LValue::Element { array, .. }, Some((_, reduced))) if !reduced.contains(&array.as_str()) => {
                        new_guarded.push(Guarded {
                            array: array.clone(),
                            text: format!("{} = {}", tessera_ir::print::lvalue(place), tessera_ir::print::expr(value)),
                        });
                    }
                    _ => return None,
                }
            }
            kept.push((*place, read_of(place)));
        }
        guarded_here = new_guarded;
        kept
    } else {
        if o.len() != t.len() || t.iter().zip(&o).any(|((a, ..), (b, ..))| !same_place(a, b)) {
            return None;
        }
        o.iter().map(|(p, v, _)| (*p, (*v).clone())).collect()
    };
    // The condition, evaluated again before each assignment, must not see an
    // earlier one: it reads none of the places assigned before the last assignment
    // (`if (v < 0) v = 0;` reads the one place it assigns: evaluated once, before).
    // (The values need nothing: each assignment evaluates the branch the condition
    // picks, in the branch's order.)
    if t[..t.len() - 1].iter().any(|(place, ..)| reads(cond, place)) {
        return None;
    }
    if let Some((list, _)) = guarded.as_mut() {
        list.extend(guarded_here);
    }
    Some(
        t.iter()
            .zip(o)
            .map(|((place, v, loc), (_, other))| {
                let (LValue::Element { ty, .. } | LValue::Local { ty, .. } | LValue::Scalar { ty, .. }) = place;
                let ty = *ty;
                Stmt::Assign {
                    target: (*place).clone(),
                    value: {
                        let (then, otherwise) = if flip { (other, (*v).clone()) } else { ((*v).clone(), other) };
                        Expr::Select { cond: Box::new(cond.clone()), then: Box::new(then), otherwise: Box::new(otherwise), ty }
                    },
                    loc: (*loc).clone(),
                }
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{bin, c, el as el_at, for_, rd as rd_at, set, v, Rng, I};
    use tessera_ir::{BinOp, Loc, ScalarType};

    fn rd(a: &str, i: Expr) -> Expr {
        rd_at(a, vec![i])
    }
    fn el(a: &str, i: Expr) -> LValue {
        el_at(a, vec![i])
    }
    fn if_(cond: Expr, then: Vec<Stmt>, otherwise: Vec<Stmt>) -> Stmt {
        Stmt::If { cond, then, otherwise, loc: Loc::default() }
    }
    fn sel(cond: Expr, a: Expr, b: Expr) -> Expr {
        Expr::Select { cond: Box::new(cond), then: Box::new(a), otherwise: Box::new(b), ty: I }
    }
    fn region(body: Vec<Stmt>) -> Region {
        crate::interp::region(&["a", "b", "c"], &[], vec![for_("i", c(0), c(6), body)])
    }
    fn body(r: &Region) -> Vec<Stmt> {
        let Stmt::For { body, .. } = &r.body[0] else { unreachable!() };
        body.clone()
    }

    /// A boundary written with `if`/`else`, an `else if` chain, and an `if` after an
    /// unconditional assignment of its place.
    #[test]
    fn same_places_become_selects() {
        let edge = bin(BinOp::Eq, v("i"), c(0));
        let halo = bin(BinOp::Add, rd("a", bin(BinOp::Sub, v("i"), c(1))), rd("a", v("i")));
        let r = region(vec![if_(edge.clone(), vec![set(el("b", v("i")), rd("a", v("i")))], vec![set(el("b", v("i")), halo.clone())])]);
        assert_eq!(body(&convert(&r)), vec![set(el("b", v("i")), sel(edge.clone(), rd("a", v("i")), halo.clone()))]);
        let last = bin(BinOp::Eq, v("i"), c(5));
        let chain = region(vec![if_(
            edge.clone(),
            vec![set(el("b", v("i")), c(1))],
            vec![if_(last.clone(), vec![set(el("b", v("i")), c(2))], vec![set(el("b", v("i")), halo.clone())])],
        )]);
        assert_eq!(body(&convert(&chain)), vec![set(el("b", v("i")), sel(edge.clone(), c(1), sel(last, c(2), halo)))]);
        let after = region(vec![set(el("b", v("i")), c(3)), if_(edge.clone(), vec![set(el("b", v("i")), c(4))], vec![])]);
        assert_eq!(body(&convert(&after)), vec![set(el("b", v("i")), c(3)), set(el("b", v("i")), sel(edge, c(4), rd("b", v("i"))))]);
    }

    /// `if`s the conversion must leave: no `else` and no earlier assignment (the select
    /// would write an element the source may never write), different places, a
    /// condition reading a place the branches assign.
    #[test]
    fn keeps_what_a_select_would_change() {
        let edge = bin(BinOp::Eq, v("i"), c(0));
        let kept = |b: Vec<Stmt>| assert!(matches!(convert(&region(b)), Cow::Borrowed(_)));
        kept(vec![if_(edge.clone(), vec![set(el("b", v("i")), c(1))], vec![])]);
        kept(vec![if_(edge.clone(), vec![set(el("b", v("i")), c(1))], vec![set(el("a", v("i")), c(1))])]);
        // The condition reads the place assigned first, which the second assignment's
        // condition would see changed.
        let both = |k| vec![set(el("b", v("i")), c(k)), set(el("a", v("i")), c(k))];
        kept(vec![if_(bin(BinOp::Gt, rd("b", c(0)), c(0)), both(1), both(2))]);
        // Reading the only (last) place is fine: `t = a[i]; if (t < 0) t = 0;`.
        let t = || LValue::Local { name: "t".into(), ty: I };
        let neg = bin(BinOp::Lt, v("t"), c(0));
        let r = region(vec![set(t(), rd("a", v("i"))), if_(neg.clone(), vec![set(t(), c(0))], vec![])]);
        assert_eq!(body(&convert(&r))[1], set(t(), sel(neg, c(0), v("t"))));
    }

    /// Property: on random loop bodies of assignments to a few places (elements at
    /// `i`, `i + 1` or 0 of two arrays, a local; values and conditions reading them or
    /// a third array)
    /// and `if`s over them — with and
    /// without `else`, `else if` chains, conditions reading the arrays — the converted
    /// region computes exactly what the region as written computes.
    #[test]
    fn converting_never_changes_what_a_body_computes() {
        let (mut converted, mut kept) = (0, 0);
        for seed in 1..=5000u64 {
            let mut g = Gen(Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1));
            let mut b = vec![Stmt::Let { name: "t".into(), ty: I, init: Some(c(g.below(5) as i64)), loc: Loc::default() }];
            b.extend(g.block(0));
            let r = region(b);
            let out = convert(&r);
            match &out {
                Cow::Owned(_) => converted += 1,
                Cow::Borrowed(_) => kept += 1,
            }
            let run = |r: &Region| crate::interp::run(r, &[], &["a", "b", "c"]);
            assert_eq!(run(&out), run(&r), "seed {seed}:\n{}\nconverted:\n{}", crate::locals::show(&r.body), crate::locals::show(&out.body));
        }
        assert!(converted > 2000 && kept > 1000, "converted {converted}, kept {kept}");
    }

    /// Property: with guarded writes too (`if (c) a[s] = e;` as `a[s] = c ? e : a[s]`),
    /// the converted region still computes exactly what the region as written computes
    /// (the kernel's extra stores write old values), every write it adds is listed, and
    /// only elements are: an `if` assigning a local it did not assign before stays.
    #[test]
    fn guarded_writes_never_change_what_a_body_computes() {
        let (mut guarded, mut kept) = (0, 0);
        for seed in 1..=5000u64 {
            let mut g = Gen(Rng(seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1));
            let mut b = vec![Stmt::Let { name: "t".into(), ty: I, init: Some(c(g.below(5) as i64)), loc: Loc::default() }];
            b.extend(g.block(0));
            let r = region(b);
            let (out, list) = convert_guarded(&r);
            let plain = convert(&r);
            if list.is_empty() {
                assert_eq!(out.body, plain.body, "seed {seed}: no guarded write, so the plain conversion");
            } else {
                guarded += 1;
            }
            if has_if(&out.body) {
                kept += 1;
            }
            let run = |r: &Region| crate::interp::run(r, &[], &["a", "b", "c"]);
            assert_eq!(run(&out), run(&r), "seed {seed}:\n{}\nconverted:\n{}", crate::locals::show(&r.body), crate::locals::show(&out.body));
        }
        assert!(guarded > 1000 && kept > 100, "guarded {guarded}, kept {kept}");
        // The `continue` form, and a local: `if (c) ; else b[i] = 1;` is guarded,
        // `if (c) u = 1;` of a local `u` not assigned before is not.
        let edge = bin(BinOp::Eq, v("i"), c(0));
        let skip = region(vec![if_(edge.clone(), vec![], vec![set(el("b", v("i")), c(1))])]);
        let (out, list) = convert_guarded(&skip);
        assert_eq!(body(&out), vec![set(el("b", v("i")), sel(edge.clone(), rd("b", v("i")), c(1)))]);
        assert_eq!(list, vec![Guarded { array: "b".into(), text: "b[i] = 1".into() }]);
        let u = LValue::Local { name: "u".into(), ty: I };
        let local = region(vec![Stmt::Let { name: "u".into(), ty: I, init: None, loc: Loc::default() }, if_(edge, vec![set(u, c(1))], vec![])]);
        assert!(matches!(convert_guarded(&local), (Cow::Borrowed(_), ref l) if l.is_empty()));
    }

    fn has_if(body: &[Stmt]) -> bool {
        body.iter().any(|s| match s {
            Stmt::If { .. } => true,
            Stmt::For { body, .. } => has_if(body),
            _ => false,
        })
    }

    struct Gen(Rng);

    impl Gen {
        fn below(&mut self, n: u64) -> u64 {
            self.0.below(n)
        }
        fn index(&mut self) -> Expr {
            match self.below(3) {
                0 => c(0),
                1 => bin(BinOp::Add, v("i"), c(1)),
                _ => v("i"),
            }
        }
        fn place(&mut self) -> LValue {
            match self.below(5) {
                0 => LValue::Local { name: "t".into(), ty: I },
                1 | 2 => el("a", self.index()),
                _ => el("b", self.index()),
            }
        }
        fn expr(&mut self, depth: u32) -> Expr {
            match self.below(if depth > 1 { 4 } else { 6 }) {
                0 => c(self.below(7) as i64 - 3),
                1 => v(if self.below(2) == 0 { "i" } else { "t" }),
                2 | 3 => {
                    // Mostly the array no statement writes.
                    let a = ["a", "b", "c", "c"][self.below(4) as usize];
                    rd(a, self.index())
                }
                _ => {
                    let op = [BinOp::Add, BinOp::Sub, BinOp::Mul][self.below(3) as usize];
                    bin(op, self.expr(depth + 1), self.expr(depth + 1))
                }
            }
        }
        fn cond(&mut self) -> Expr {
            let op = [BinOp::Lt, BinOp::Eq, BinOp::Gt, BinOp::Ne][self.below(4) as usize];
            let x = Expr::Binary { op, lhs: Box::new(self.expr(1)), rhs: Box::new(self.expr(1)), ty: ScalarType::I32 };
            if self.below(4) == 0 {
                let y = Expr::Binary { op: BinOp::Lt, lhs: Box::new(v("i")), rhs: Box::new(c(3)), ty: ScalarType::I32 };
                Expr::Binary { op: BinOp::LAnd, lhs: Box::new(y), rhs: Box::new(x), ty: ScalarType::I32 }
            } else {
                x
            }
        }
        fn assigns(&mut self, places: &[LValue]) -> Vec<Stmt> {
            places.iter().map(|p| set(p.clone(), self.expr(0))).collect()
        }
        fn block(&mut self, depth: u32) -> Vec<Stmt> {
            let mut out = Vec::new();
            for _ in 0..1 + self.below(4) {
                if depth < 2 && self.below(2) == 0 {
                    // Mostly the same places in both branches, sometimes not.
                    let places: Vec<LValue> = (0..1 + self.below(2)).map(|_| self.place()).collect();
                    let then = self.assigns(&places);
                    let otherwise = match self.below(5) {
                        0 => Vec::new(),
                        1 => self.block(depth + 1),
                        2 => {
                            let cond = self.cond();
                            let (x, y) = (self.assigns(&places), self.assigns(&places));
                            vec![if_(cond, x, y)]
                        }
                        _ => self.assigns(&places),
                    };
                    let (then, otherwise) =
                        if self.below(6) == 0 && !then.is_empty() { (Vec::new(), then) } else { (then, otherwise) };
                    out.push(if_(self.cond(), then, otherwise));
                } else {
                    let p = self.place();
                    out.push(set(p, self.expr(0)));
                }
            }
            out
        }
    }
}
