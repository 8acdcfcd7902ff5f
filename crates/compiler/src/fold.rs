//! Imperfect nests made perfect: an initialisation before an accumulating inner loop
//! folded into that loop's first iteration.
//!
//! The optimizer and the tiled kernels take one perfect loop nest. The way linear
//! algebra is written — PolyBench's gemm, atax, bicg, a matrix–vector product — puts
//! a statement beside the inner loop:
//!
//! ```text
//! for i, j:                                 for i:
//!   C[i][j] = beta * C[i][j];                 double s = 0.0;
//!   for k:                                    for j:
//!     C[i][j] = C[i][j] + A[i][k] * B[k][j];    s = s + A[i][j] * x[j];
//!                                             y[i] = s;
//! ```
//!
//! [`fold`] rewrites such a body into one perfect nest computing the same bits:
//!
//! 1. A local accumulator `s` declared before the inner nest and stored once after
//!    it, `X = s`, into an element `X` of the same type that nothing else in the body
//!    touches, becomes that element: `X = init` before the nest, `X` wherever the nest
//!    reads or assigns `s`. `X` then holds every value `s` held; the only difference
//!    is that the intermediate values are stored too, where nothing reads them.
//! 2. Every statement `X = e` before the inner nest `k1 … kr` whose element the
//!    innermost body assigns moves into that body: a read of `X` in the body before
//!    the body's first assignment of it becomes `(k1 == lower1 && … ) ? e : X`. In the
//!    first iteration that is `e`, the value the statement stored (already converted
//!    to `X`'s type); in every later one, what the body stored last. `e` reads only
//!    data the region never writes (or `X` itself, which is not yet assigned where it
//!    is read), so evaluating it one iteration later gives the same value.
//!
//! Step 2 is only the same computation when the inner nest runs at least once —
//! otherwise the source still stores `e` and the folded nest stores nothing. The inner
//! loops' bounds must depend only on the region's scalars, and "every inner loop runs
//! at least once" becomes a launch condition, checked by the runtime like those of a
//! delinearised view: when it fails, the baseline kernel of the region as written
//! runs. Nothing else is needed: the conditions are exactly what the proof above uses.
//!
//! The folded nest's footprints also stand in for the nest's (a host run inside a data
//! region copies what they cover): an initialisation names no inner loop, so its
//! accesses keep their footprints whether the inner loops run or not. An
//! initialisation the body overwrites before reading it vanishes from the folded nest
//! (dead when the inner loops run); under launch conditions the source may still
//! evaluate it, so such a nest is not folded.
//!
//! The folded region is what the optimizer plans and the tiled kernels compute; the
//! baseline kernel, the footprints and the host fallback keep the region as written.
//! Anything outside the pattern is left alone (the region keeps the baseline kernel
//! and the reason `not-a-loop-nest`).

use std::collections::HashSet;
use tessera_ir::{eval, print, BinOp, Expr, LValue, Region, ScalarType, Stmt, VarKind};

/// The folded region and what it rests on.
#[derive(Clone, Debug)]
pub struct Folded {
    /// The region, one perfect nest.
    pub region: Region,
    /// Launch conditions (all must hold): each inner loop runs at least once.
    pub conditions: Vec<Condition>,
    /// What was folded, one line each, for the plan.
    pub notes: Vec<String>,
}

/// One launch condition of a folded region.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// An `int`-valued expression over the region's scalars.
    pub expr: Expr,
    /// What it says: `'k' runs at least once: 0 < nk`.
    pub text: String,
    /// The loop it is about (`k`).
    pub var: String,
}

/// The plan's lines for a folded region.
pub fn describe(f: &Folded) -> String {
    let mut s = String::new();
    for n in &f.notes {
        s.push_str(&format!("folded: {n}\n"));
    }
    for c in &f.conditions {
        s.push_str(&format!("launch condition: {}\n", c.text));
    }
    s
}

/// What the region assigns anywhere: arrays, and scalars (locals and the enclosing
/// function's variables).
struct Assigned {
    arrays: HashSet<String>,
    scalars: HashSet<String>,
}

fn assigned(body: &[Stmt]) -> Assigned {
    let mut a = Assigned { arrays: HashSet::new(), scalars: HashSet::new() };
    fn go(s: &Stmt, a: &mut Assigned) {
        match s {
            Stmt::Assign { target: LValue::Element { array, .. }, .. } => {
                a.arrays.insert(array.clone());
            }
            Stmt::Assign { target: LValue::Local { name, .. } | LValue::Scalar { name, .. }, .. } => {
                a.scalars.insert(name.clone());
            }
            Stmt::Let { name, .. } => {
                a.scalars.insert(name.clone());
            }
            Stmt::For { var, body, .. } => {
                a.scalars.insert(var.clone());
                body.iter().for_each(|s| go(s, a));
            }
            Stmt::If { then, otherwise, .. } => then.iter().chain(otherwise).for_each(|s| go(s, a)),
            Stmt::Unsupported { .. } => {}
        }
    }
    body.iter().for_each(|s| go(s, &mut a));
    a
}

/// Folds the region's imperfect nest into a perfect one (module docs), or `None` when
/// its body is not of that form.
pub fn fold(region: &Region) -> Option<Folded> {
    let written = assigned(&region.body);
    // Scalars whose value is the same everywhere in the region: its integer and
    // floating scalars that nothing in it assigns (a reduction's is a private copy).
    let invariant: HashSet<&str> = region
        .vars
        .iter()
        .filter(|v| v.kind == VarKind::Scalar && !written.scalars.contains(&v.name) && region.reduction(&v.name).is_none())
        .map(|v| v.name.as_str())
        .collect();
    let cx = Cx { written: &written, invariant: &invariant };
    let mut notes = Vec::new();
    let mut conditions = Vec::new();
    let body = cx.block(&region.body, &mut Vec::new(), &mut notes, &mut conditions)?;
    let mut region = region.clone();
    region.body = body;
    Some(Folded { region, conditions, notes })
}

struct Cx<'a> {
    written: &'a Assigned,
    invariant: &'a HashSet<&'a str>,
}

/// The inner nest's loops, outermost first, and its innermost body.
fn chain(s: &Stmt) -> Option<(Vec<&Stmt>, &[Stmt])> {
    let mut loops = Vec::new();
    let mut cur = s;
    loop {
        let Stmt::For { body, .. } = cur else { return None };
        loops.push(cur);
        match body.as_slice() {
            [inner @ Stmt::For { .. }] => cur = inner,
            b if !b.is_empty() && b.iter().all(|s| matches!(s, Stmt::Assign { .. })) => return Some((loops, b)),
            _ => return None,
        }
    }
}

/// Every `Var` and `Read` of `e`, each through `f`; `false` as soon as one fails.
fn all_leaves(e: &Expr, f: &mut dyn FnMut(&Expr) -> bool) -> bool {
    let mut ok = true;
    e.visit(&mut |x| {
        if ok && matches!(x, Expr::Var { .. } | Expr::Read { .. } | Expr::Unsupported { .. }) {
            ok = f(x);
        }
    });
    ok
}

fn mentions_var(e: &Expr, name: &str) -> bool {
    !all_leaves(e, &mut |x| !matches!(x, Expr::Var { name: n, .. } if n == name))
}

fn mentions_array(e: &Expr, array: &str) -> bool {
    !all_leaves(e, &mut |x| !matches!(x, Expr::Read { array: a, .. } if a == array))
}

/// Whether a statement mentions `name` as a scalar or an array anywhere (targets,
/// subscripts, bounds, values).
fn stmt_mentions(s: &Stmt, name: &str) -> bool {
    let mut hit = false;
    s.visit_exprs(&mut |e| hit |= matches!(e, Expr::Var { name: n, .. } if n == name) || matches!(e, Expr::Read { array, .. } if array == name));
    let mut targets = |s: &Stmt| match s {
        Stmt::Assign { target: LValue::Element { array: n, .. } | LValue::Local { name: n, .. } | LValue::Scalar { name: n, .. }, .. }
        | Stmt::Let { name: n, .. }
        | Stmt::For { var: n, .. } => n == name,
        _ => false,
    };
    fn any(s: &Stmt, f: &mut dyn FnMut(&Stmt) -> bool) -> bool {
        f(s) || match s {
            Stmt::For { body, .. } => body.iter().any(|b| any(b, f)),
            Stmt::If { then, otherwise, .. } => then.iter().chain(otherwise).any(|b| any(b, f)),
            _ => false,
        }
    }
    hit || any(s, &mut targets)
}

/// `e` with every occurrence of the node `from` replaced by `to`.
fn replace(e: &Expr, from: &dyn Fn(&Expr) -> bool, to: &Expr) -> Expr {
    e.map(&mut |x| from(x).then(|| to.clone()))
}

fn element_read(target: &LValue) -> Expr {
    match target {
        LValue::Element { array, index, ty, loc } => Expr::Read { array: array.clone(), index: index.clone(), ty: *ty, loc: loc.clone() },
        _ => unreachable!("only elements are folded"),
    }
}

/// The same element (locations aside).
fn same_element(a: &LValue, b: &LValue) -> bool {
    matches!((a, b), (LValue::Element { array: x, index: i, .. }, LValue::Element { array: y, index: j, .. }) if x == y && i == j)
}

fn is_element(e: &Expr, array: &str, index: &[Expr]) -> bool {
    matches!(e, Expr::Read { array: a, index: i, .. } if a == array && i == index)
}

fn converted(e: Expr, ty: ScalarType) -> Expr {
    if e.ty() == Some(ty) {
        e
    } else {
        Expr::Cast { arg: Box::new(e), ty }
    }
}

fn binary(op: BinOp, lhs: Expr, rhs: Expr) -> Expr {
    Expr::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs), ty: ScalarType::I32 }
}

impl Cx<'_> {
    /// An expression of the region's invariant scalars and constants (and of `loops`).
    fn invariant_expr(&self, e: &Expr, loops: &[String]) -> bool {
        all_leaves(e, &mut |x| matches!(x, Expr::Var { name, .. } if self.invariant.contains(name.as_str()) || loops.contains(name)))
    }

    /// The block `body` inside the loops `outer` (indices), folded; `None` when no
    /// imperfect nest of the supported form is found or the block is not one.
    fn block(&self, body: &[Stmt], outer: &mut Vec<String>, notes: &mut Vec<String>, conds: &mut Vec<Condition>) -> Option<Vec<Stmt>> {
        if let [s @ Stmt::For { var, body: inner, .. }] = body {
            outer.push(var.clone());
            let folded = self.block(inner, outer, notes, conds)?;
            outer.pop();
            return Some(vec![with_body(s, folded)]);
        }
        let loops: Vec<usize> = body.iter().enumerate().filter(|(_, s)| matches!(s, Stmt::For { .. })).map(|(k, _)| k).collect();
        let [p] = loops.as_slice() else { return None };
        let (mut pre, mut nest, post) = (body[..*p].to_vec(), body[*p].clone(), &body[p + 1..]);
        // 1. Local accumulators stored once after the nest.
        for (k, st) in post.iter().enumerate() {
            let Stmt::Assign { target: target @ LValue::Element { array, index, ty, .. }, value: Expr::Var { name: s, ty: sty }, .. } = st else {
                return None;
            };
            if sty != ty || !index.iter().all(|e| self.invariant_expr(e, outer)) {
                return None;
            }
            let l = pre.iter().position(|x| matches!(x, Stmt::Let { name, ty: lty, init: Some(_), .. } if name == s && lty == ty))?;
            // `s` nowhere else outside the nest; `X`'s array nowhere but in this store.
            let others = pre.iter().enumerate().filter(|(j, _)| *j != l).map(|(_, x)| x).chain(post.iter().enumerate().filter(|(j, _)| *j != k).map(|(_, x)| x));
            if others.clone().any(|x| stmt_mentions(x, s)) || others.chain([&pre[l], &nest]).any(|x| stmt_mentions(x, array)) {
                return None;
            }
            // In the nest, `s` only as a value and as a whole target: not in bounds
            // or subscripts, not declared again.
            if !self.local_only_in_values(&nest, s) {
                return None;
            }
            let Stmt::Let { init: Some(init), loc, .. } = &pre[l] else { unreachable!() };
            pre[l] = Stmt::Assign { target: target.clone(), value: converted(init.clone(), *ty), loc: loc.clone() };
            nest = substitute_local(&nest, s, target);
            notes.push(format!("the local '{s}' accumulates in '{}', where the region stores it", print::lvalue(target)));
        }
        // 2. Initialisations moved into the first iteration.
        let (loops, inner) = chain(&nest)?;
        let inner_vars: Vec<String> = loops.iter().map(|l| match l {
            Stmt::For { var, .. } => var.clone(),
            _ => unreachable!(),
        }).collect();
        let mut inits: Vec<(&LValue, &Expr)> = Vec::new();
        for st in &pre {
            let Stmt::Assign { target: target @ LValue::Element { array, index, .. }, value, .. } = st else { return None };
            if inits.iter().any(|(t, _)| matches!(t, LValue::Element { array: a, .. } if a == array))
                || !index.iter().all(|e| self.invariant_expr(e, outer))
            {
                return None;
            }
            // The innermost body assigns exactly this element, and touches no other of its array.
            if !inner.iter().any(|s| matches!(s, Stmt::Assign { target: t, .. } if same_element(t, target))) || !only_element(inner, array, index) {
                return None;
            }
            if loops.iter().any(|l| matches!(l, Stmt::For { lower, upper, .. } if mentions_array(lower, array) || mentions_array(upper, array))) {
                return None;
            }
            // What the initialisation reads does not change before the first iteration reads it.
            let stable = all_leaves(value, &mut |x| match x {
                Expr::Var { name, .. } => self.invariant.contains(name.as_str()) || outer.contains(name),
                Expr::Read { array: a, index: i, .. } => {
                    (!self.written.arrays.contains(a) && i.iter().all(|e| self.invariant_expr(e, outer)))
                        || (a == array && i == index)
                }
                _ => false,
            });
            if !stable {
                return None;
            }
            inits.push((target, value));
        }
        if inits.is_empty() {
            return None;
        }
        // The inner loops' bounds: invariant, so "each runs at least once" is a launch condition.
        let mut first: Option<Expr> = None;
        let conds_at = conds.len();
        for l in &loops {
            let Stmt::For { var, ty, lower, upper, step, ne, .. } = l else { unreachable!() };
            if !self.invariant_expr(lower, &[]) || !self.invariant_expr(upper, &[]) {
                return None;
            }
            let cmp = upper.ty()?;
            let start = converted(converted(lower.clone(), *ty), cmp);
            let op = match (ne, *step > 0) {
                (true, _) => BinOp::Ne,
                (false, true) => BinOp::Lt,
                (false, false) => BinOp::Gt,
            };
            let expr = binary(op, start, upper.clone());
            match eval::eval_int(&expr, &|_| None) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(_) => {
                    let text = format!("'{var}' runs at least once: {}", print::expr(&expr));
                    conds.push(Condition { expr, text, var: var.clone() });
                }
            }
            let at_start = binary(BinOp::Eq, Expr::var(var, *ty), converted(lower.clone(), *ty));
            first = Some(match first {
                None => at_start,
                Some(f) => binary(BinOp::LAnd, f, at_start),
            });
        }
        let first = first.expect("a nest has a loop");
        // The innermost body with the initial values read in the first iteration.
        let mut pending: Vec<(&LValue, &Expr)> = inits.clone();
        let mut body: Vec<Stmt> = Vec::new();
        let mut read_inits: Vec<&LValue> = Vec::new();
        for s in inner {
            let Stmt::Assign { target, value, loc } = s else { unreachable!() };
            let mut v = value.clone();
            for (x, e) in &pending {
                let LValue::Element { array, index, ty, .. } = x else { unreachable!() };
                let sel = Expr::Select { cond: Box::new(first.clone()), then: Box::new((*e).clone()), otherwise: Box::new(element_read(x)), ty: *ty };
                let replaced = replace(&v, &|n| is_element(n, array, index), &sel);
                if replaced != v {
                    read_inits.push(x);
                }
                v = replaced;
            }
            pending.retain(|(x, _)| !same_element(x, target));
            body.push(Stmt::Assign { target: target.clone(), value: v, loc: loc.clone() });
        }
        // An initialisation the body overwrites before reading it is dead when the inner
        // loops run, and disappears; when they may not (launch conditions), the source
        // still evaluates it there, and the footprints (a host run's copies) come from
        // the folded nest: its reads must stay in it, so such a nest is not folded.
        if conds.len() > conds_at && inits.iter().any(|(x, _)| !read_inits.iter().any(|r| same_element(r, x))) {
            return None;
        }
        for (x, _) in &inits {
            notes.push(format!(
                "'{}' initialised before the loop '{}' is read as its initial value in the loop's first iteration",
                print::lvalue(x),
                inner_vars[0]
            ));
        }
        // The nest rebuilt around the new body.
        let mut nest_out = body;
        for l in loops.iter().rev() {
            nest_out = vec![with_body(l, nest_out)];
        }
        Some(nest_out)
    }

    /// `s` appears in `nest` only as a value (`Var`) and as the whole target of
    /// assignments: not in a bound, a subscript or a declaration.
    fn local_only_in_values(&self, nest: &Stmt, s: &str) -> bool {
        fn go(st: &Stmt, s: &str) -> bool {
            match st {
                Stmt::For { var, lower, upper, body, .. } => {
                    var != s && !mentions_var(lower, s) && !mentions_var(upper, s) && body.iter().all(|b| go(b, s))
                }
                Stmt::Assign { target, value, .. } => {
                    let sub_ok = match target {
                        LValue::Element { index, .. } => !index.iter().any(|e| mentions_var(e, s)),
                        LValue::Local { .. } | LValue::Scalar { .. } => true,
                    };
                    let mut in_subscript = false;
                    value.visit(&mut |e| {
                        if let Expr::Read { index, .. } = e {
                            in_subscript |= index.iter().any(|i| mentions_var(i, s));
                        }
                    });
                    sub_ok && !in_subscript && !matches!(target, LValue::Scalar { name, .. } if name == s)
                }
                Stmt::Let { name, init, .. } => name != s && init.as_ref().is_none_or(|e| !mentions_var(e, s)),
                Stmt::If { .. } | Stmt::Unsupported { .. } => false,
            }
        }
        go(nest, s)
    }
}

/// The loop `l` with the body `body` instead of its own.
pub(crate) fn with_body(l: &Stmt, body: Vec<Stmt>) -> Stmt {
    let Stmt::For { var, ty, lower, upper, step, ne, loc, .. } = l else { unreachable!("a loop") };
    Stmt::For { var: var.clone(), ty: *ty, lower: lower.clone(), upper: upper.clone(), step: *step, ne: *ne, body, loc: loc.clone() }
}

/// Every access of `array` in `body` (reads anywhere, assignments) is the element
/// `array[index]`, and none is inside a subscript.
fn only_element(body: &[Stmt], array: &str, index: &[Expr]) -> bool {
    body.iter().all(|s| {
        let Stmt::Assign { target, value, .. } = s else { return false };
        let target_ok = match target {
            LValue::Element { array: a, index: i, .. } => {
                (a != array || i.as_slice() == index) && !i.iter().any(|e| mentions_array(e, array))
            }
            _ => true,
        };
        let mut ok = true;
        value.visit(&mut |e| {
            if let Expr::Read { array: a, index: i, .. } = e {
                ok &= (a != array || i.as_slice() == index) && !i.iter().any(|x| mentions_array(x, array));
            }
        });
        target_ok && ok
    })
}

/// `st` with the local `s` replaced by the element `x` (reads and assignments).
fn substitute_local(st: &Stmt, s: &str, x: &LValue) -> Stmt {
    let read = element_read(x);
    let is_s = |e: &Expr| matches!(e, Expr::Var { name, .. } if name == s);
    match st {
        Stmt::For { body, .. } => with_body(st, body.iter().map(|b| substitute_local(b, s, x)).collect()),
        Stmt::Assign { target, value, loc } => {
            let target = match target {
                LValue::Local { name, .. } if name == s => x.clone(),
                t => t.clone(),
            };
            Stmt::Assign { target, value: replace(value, &is_s, &read), loc: loc.clone() }
        }
        Stmt::Let { name, ty, init, loc } => {
            Stmt::Let { name: name.clone(), ty: *ty, init: init.as_ref().map(|e| replace(e, &is_s, &read)), loc: loc.clone() }
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::interp::{bin, c, el, for_, rd, set, v, Rng, I};

    fn local(name: &str) -> LValue {
        LValue::Local { name: name.into(), ty: I }
    }
    fn let_(name: &str, init: Expr) -> Stmt {
        Stmt::Let { name: name.into(), ty: I, init: Some(init), loc: tessera_ir::Loc::default() }
    }
    fn region(body: Vec<Stmt>) -> Region {
        crate::interp::region(&["a", "b", "c"], &["n", "m", "s"], body)
    }

    /// gemm's shape: `c[i] = c[i] * m; for k: c[i] = c[i] + a[k] * b[i]` becomes one
    /// nest whose first iteration reads the initial value, under "k runs at least once".
    #[test]
    fn an_initialisation_moves_into_the_first_iteration() {
        let init = bin(BinOp::Mul, rd("c", vec![v("i")]), v("m"));
        let acc = bin(BinOp::Add, rd("c", vec![v("i")]), bin(BinOp::Mul, rd("a", vec![v("k")]), rd("b", vec![v("i")])));
        let r = region(vec![for_("i", c(0), v("n"), vec![set(el("c", vec![v("i")]), init.clone()), for_("k", c(0), v("m"), vec![set(el("c", vec![v("i")]), acc)])])]);
        let f = fold(&r).expect("folded");
        let first = binary(BinOp::Eq, v("k"), c(0));
        let sel = Expr::Select { cond: Box::new(first), then: Box::new(init), otherwise: Box::new(rd("c", vec![v("i")])), ty: I };
        let want = bin(BinOp::Add, sel, bin(BinOp::Mul, rd("a", vec![v("k")]), rd("b", vec![v("i")])));
        assert_eq!(f.region.body, vec![for_("i", c(0), v("n"), vec![for_("k", c(0), v("m"), vec![set(el("c", vec![v("i")]), want)])])]);
        assert_eq!(f.conditions.len(), 1);
        assert_eq!(f.conditions[0].text, "'k' runs at least once: 0 < m");
        // A constant trip count needs no condition; one that is zero is not folded.
        let r = |hi: i64| region(vec![for_("i", c(0), v("n"), vec![set(el("c", vec![v("i")]), c(0)), for_("k", c(0), c(hi), vec![set(el("c", vec![v("i")]), bin(BinOp::Add, rd("c", vec![v("i")]), v("k")))])])]);
        assert!(fold(&r(4)).expect("folded").conditions.is_empty());
        assert!(fold(&r(0)).is_none());
    }

    /// A matrix–vector product with a local accumulator: the local becomes the
    /// element it is stored into.
    #[test]
    fn a_local_accumulator_becomes_its_element() {
        let r = region(vec![for_(
            "i",
            c(0),
            v("n"),
            vec![
                let_("t", c(0)),
                for_("k", c(0), v("m"), vec![set(local("t"), bin(BinOp::Add, v("t"), rd("a", vec![v("k")])))]),
                set(el("b", vec![v("i")]), v("t")),
            ],
        )]);
        let f = fold(&r).expect("folded");
        let sel = Expr::Select { cond: Box::new(binary(BinOp::Eq, v("k"), c(0))), then: Box::new(c(0)), otherwise: Box::new(rd("b", vec![v("i")])), ty: I };
        assert_eq!(
            f.region.body,
            vec![for_("i", c(0), v("n"), vec![for_("k", c(0), v("m"), vec![set(el("b", vec![v("i")]), bin(BinOp::Add, sel, rd("a", vec![v("k")])))])])]
        );
        assert_eq!(f.notes[0], "the local 't' accumulates in 'b[i]', where the region stores it");
    }

    /// Bodies the fold must leave alone.
    #[test]
    fn refuses_what_would_change_the_result() {
        let acc = |x: &str| set(el(x, vec![v("i")]), bin(BinOp::Add, rd(x, vec![v("i")]), rd("a", vec![v("k")])));
        let nest = |pre: Vec<Stmt>, hi: Expr, inner: Vec<Stmt>| region(vec![for_("i", c(0), v("n"), { let mut b = pre; b.push(for_("k", c(0), hi, inner)); b })]);
        // The inner body reads another element of the initialised array.
        assert!(fold(&nest(vec![set(el("c", vec![v("i")]), c(0))], v("m"), vec![set(el("c", vec![v("i")]), bin(BinOp::Add, rd("c", vec![v("k")]), c(1)))])).is_none());
        // The initialised element is not assigned in the inner body.
        assert!(fold(&nest(vec![set(el("c", vec![v("i")]), c(0))], v("m"), vec![acc("b")])).is_none());
        // The initial value reads an array the region writes.
        assert!(fold(&nest(vec![set(el("c", vec![v("i")]), rd("b", vec![v("i")]))], v("m"), vec![acc("c"), acc("b")])).is_none());
        // A triangular inner loop: its trip count is not a launch condition.
        assert!(fold(&nest(vec![set(el("c", vec![v("i")]), c(0))], v("i"), vec![acc("c")])).is_none());
        // A local stored into an element of another type, or read after its store.
        let local_nest = |store: Stmt, after: Vec<Stmt>| {
            let mut b = vec![let_("t", c(0)), for_("k", c(0), v("m"), vec![set(local("t"), bin(BinOp::Add, v("t"), rd("a", vec![v("k")])))]), store];
            b.extend(after);
            region(vec![for_("i", c(0), v("n"), b)])
        };
        let narrow = LValue::Element { array: "b".into(), index: vec![v("i")], ty: ScalarType::I32, loc: tessera_ir::Loc::default() };
        assert!(fold(&local_nest(set(narrow, Expr::Cast { arg: Box::new(v("t")), ty: ScalarType::I32 }), vec![])).is_none());
        assert!(fold(&local_nest(set(el("b", vec![v("i")]), v("t")), vec![set(el("c", vec![v("i")]), v("t"))])).is_none());
        // The stored element's array is read in the nest.
        let reads_b = region(vec![for_(
            "i",
            c(0),
            v("n"),
            vec![let_("t", c(0)), for_("k", c(0), v("m"), vec![set(local("t"), bin(BinOp::Add, v("t"), rd("b", vec![v("k")])))]), set(el("b", vec![v("i")]), v("t"))],
        )]);
        assert!(fold(&reads_b).is_none());
        // Two inner loops side by side.
        let two = region(vec![for_("i", c(0), v("n"), vec![set(el("c", vec![v("i")]), c(0)), for_("k", c(0), v("m"), vec![acc("c")]), for_("l", c(0), v("m"), vec![acc("b")])])]);
        assert!(fold(&two).is_none());
    }

    /// Property: on random imperfect nests (initialisations, local accumulators, one
    /// or two inner loops of run-time trip counts, reads of the initialised elements
    /// before and after their assignment), whenever [`fold`] folds and its launch
    /// conditions hold, the folded region computes exactly what the region as written
    /// computes (a small integer interpreter runs both).
    #[test]
    fn folding_never_changes_what_a_nest_computes() {
        let (mut folded, mut checked, mut locals, mut deep) = (0, 0, 0, 0);
        for seed in 1..=10000u64 {
            let mut g = Gen { rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1) };
            let r = g.region();
            let Some(f) = fold(&r) else { continue };
            folded += 1;
            locals += f.notes.iter().any(|n| n.starts_with("the local")) as usize;
            deep += matches!(&f.region.body[0], Stmt::For { body, .. } if matches!(&body[0], Stmt::For { body, .. } if matches!(&body[0], Stmt::For { .. }))) as usize;
            for (n, m) in [(3, 0), (4, 1), (2, 3), (5, 2)] {
                let env = |x: &str| match x {
                    "n" => Some(n),
                    "m" => Some(m),
                    "s" => Some(7),
                    _ => None,
                };
                let holds = f.conditions.iter().all(|c| eval::eval_int(&c.expr, &|x| env(x).map(i128::from)).expect("evaluable") != 0);
                if !holds {
                    continue;
                }
                checked += 1;
                let want = run(&r, n, m);
                let got = run(&f.region, n, m);
                assert_eq!(got, want, "seed {seed}, n = {n}, m = {m}:\n{}\nfolded:\n{}", crate::locals::show(&r.body), crate::locals::show(&f.region.body));
            }
        }
        // Each form is exercised: local accumulators, two inner loops.
        assert!(folded > 500 && checked > 1500 && locals > 100 && deep > 150, "folded {folded}, checked {checked}, locals {locals}, two inner loops {deep}");
    }

    /// The class of the lost-copy bug for imperfect nests: the footprints of a region
    /// that folds (`region_footprints`: the folded nest's, its initialisations' kept
    /// whether the inner loops run or not) are what a host run inside a data region
    /// copies — every element they cover to the host before, every element a write
    /// footprint covers back after. For every trip count, the inner loops' zero
    /// included, that must be enough: every element the region as written writes is
    /// covered by a write footprint, and running it from arrays that hold the true
    /// values only where a footprint covers them (stale data elsewhere) gives the same
    /// values in every element copied back. (A read the fold drops — of an
    /// initialisation the nest overwrites before reading — needs no footprint.)
    #[test]
    fn folded_footprints_cover_what_the_nest_touches() {
        let (mut covered, mut empty_inner) = (0, 0);
        for seed in 1..=4000u64 {
            let mut g = Gen { rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1) };
            let r = g.region();
            let Some(f) = fold(&r) else { continue };
            let fps = crate::region_footprints(&r, Some(&f));
            assert!(!fps.is_empty(), "seed {seed}: a folded nest without footprints");
            let (c, e) = footprints_cover(seed, &r, &fps);
            covered += c;
            empty_inner += e;
        }
        assert!(covered > 1000 && empty_inner > 200, "covered {covered}, with empty inner loops {empty_inner}");
    }

    /// The same property for the footprints of every access over the loops around it
    /// (`footprint::nest_footprints`), which regions that do not fold get: a host run
    /// that copies only what they cover computes what the region as written does.
    #[test]
    fn nest_footprints_cover_what_the_nest_touches() {
        let (mut covered, mut empty_inner) = (0, 0);
        // Every imperfect nest of the generator, folding or not.
        for seed in 1..=4000u64 {
            let mut g = Gen { rng: Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1) };
            let r = g.region();
            let Some(fps) = crate::footprint::nest_footprints(&r) else { continue };
            assert!(!fps.is_empty(), "seed {seed}: a nest without footprints");
            let (c, e) = footprints_cover(seed, &r, &fps);
            covered += c;
            empty_inner += e;
        }
        assert!(covered > 1000 && empty_inner > 200, "covered {covered}, with empty inner loops {empty_inner}");
    }

    /// The checks of the two tests above for region `r` (generator seed `seed`) and its
    /// footprints `fps`, over several trip counts: every element the region writes is
    /// in a write footprint, and running it from arrays that hold the true values only
    /// where a footprint covers them gives the same values in every element a write
    /// footprint covers. Returns how many trip counts were checked, and how many of
    /// those had empty inner loops while the region touched something.
    fn footprints_cover(seed: u64, r: &Region, fps: &[(String, tessera_ir::manifest::Footprint)]) -> (usize, usize) {
        let arrays = ["a", "b", "c"];
        let (mut covered, mut empty_inner) = (0, 0);
        for (n, m) in [(3, 0), (4, 1), (2, 3), (0, 2), (1, 0)] {
            let env = |x: &str| match x {
                "n" => Some(n as i128),
                "m" => Some(m as i128),
                "s" => Some(7),
                _ => None,
            };
            let value = |e: &Expr| eval::eval_int(e, &env).expect("evaluable");
            // Whether a footprint of `array` (a write footprint when `write`) covers index k.
            let covers = |array: &str, k: i64, write: bool| {
                fps.iter().any(|(x, fp)| {
                    x == array
                        && (fp.write || !write)
                        && fp.nonempty.iter().all(|(lo, up)| value(lo) < value(up))
                        && value(&fp.lo[0]) <= k as i128
                        && k as i128 <= value(&fp.hi[0])
                        && fp.lattice.as_ref().is_none_or(|l| {
                            // Some t with 0 <= t_j < counts_j: base + Σ t_j·delta_j = k.
                            let counts: Vec<i128> = l.counts.iter().map(value).collect();
                            let delta: Vec<i128> = l.delta[0].iter().map(value).collect();
                            let mut sums = vec![value(&l.base[0])];
                            for (c, d) in counts.iter().zip(&delta) {
                                sums = sums.iter().flat_map(|s| (0..*c).map(move |t| s + t * d)).collect();
                            }
                            sums.contains(&(k as i128))
                        })
                })
            };
            let scalars = [("n", n), ("m", m), ("s", 7)];
            let (want, trace) = crate::interp::run_traced(r, &scalars, &arrays);
            let show = || format!("seed {seed}, n = {n}, m = {m}:\n{}", crate::locals::show(&r.body));
            for (array, k, _) in trace.iter().filter(|t| t.2) {
                assert!(covers(array, *k, true), "{}\n{array}[{k}] is written but in no write footprint", show());
            }
            let stale: Vec<Vec<i64>> = crate::interp::initial(arrays.len())
                .into_iter()
                .zip(arrays)
                .map(|(init, a)| (0..16).map(|k| if covers(a, k, false) { init[k as usize] } else { 1000 + 7 * k }).collect())
                .collect();
            let (got, _) = crate::interp::run_from(r, &scalars, &arrays, stale);
            for (j, a) in arrays.iter().enumerate() {
                for k in (0..16).filter(|&k| covers(a, k, true)) {
                    assert_eq!(got[j][k as usize], want[j][k as usize], "{}\n{a}[{k}] differs when uncovered elements are stale", show());
                }
            }
            covered += 1;
            empty_inner += (m == 0 && !trace.is_empty()) as usize;
        }
        (covered, empty_inner)
    }

    struct Gen {
        rng: Rng,
    }

    impl Gen {
        fn below(&mut self, n: u64) -> u64 {
            self.rng.below(n)
        }
        fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
            xs[self.below(xs.len() as u64) as usize]
        }
        /// A subscript over the loops in scope (kept within the arrays' 16 elements).
        fn index(&mut self, loops: &[&str]) -> Expr {
            match self.below(4) {
                0 => c(self.below(3) as i64),
                1 if loops.len() > 1 => bin(BinOp::Add, v(loops[0]), v(loops[1])),
                _ => v(self.pick(loops)),
            }
        }
        fn expr(&mut self, depth: u32, loops: &[&str], locals: &[&str]) -> Expr {
            match self.below(if depth > 1 { 4 } else { 7 }) {
                0 => c(self.below(5) as i64 - 2),
                1 if !locals.is_empty() => v(self.pick(locals)),
                1 => v(self.pick(&["n", "m", "s"])),
                2 => v(self.pick(loops)),
                3 => {
                    let a = self.pick(&["a", "b", "c"]);
                    rd(a, vec![self.index(loops)])
                }
                _ => {
                    let op = [BinOp::Add, BinOp::Sub, BinOp::Mul][self.below(3) as usize];
                    bin(op, self.expr(depth + 1, loops, locals), self.expr(depth + 1, loops, locals))
                }
            }
        }
        fn region(&mut self) -> Region {
            let outer = ["i"];
            let mut pre = Vec::new();
            let mut post = Vec::new();
            let mut locals: Vec<&str> = Vec::new();
            // Initialisations: of elements at the outer index, or of local accumulators.
            for _ in 0..1 + self.below(2) {
                if self.below(3) == 0 {
                    let name = ["t", "u"][locals.len().min(1)];
                    if !locals.contains(&name) {
                        pre.push(let_(name, self.expr(1, &outer, &[])));
                        locals.push(name);
                        let a = self.pick(&["a", "b", "c"]);
                        post.push(set(el(a, vec![if self.below(5) == 0 { c(1) } else { v("i") }]), v(name)));
                    }
                } else {
                    let a = self.pick(&["a", "b", "c"]);
                    let index = vec![if self.below(6) == 0 { c(0) } else { v("i") }];
                    pre.push(set(el(a, index), self.expr(1, &outer, &[])));
                }
            }
            // The inner nest: one or two loops of run-time (or constant) trip counts.
            let bound = |g: &mut Gen| match g.below(4) {
                0 => c(g.below(3) as i64),
                1 => v("n"),
                _ => v("m"),
            };
            let two = self.below(3) == 0;
            let inner_loops: Vec<&str> = if two { vec!["i", "k", "l"] } else { vec!["i", "k"] };
            let mut inner = Vec::new();
            for _ in 0..1 + self.below(3) {
                let value_loops = &inner_loops;
                if !locals.is_empty() && self.below(2) == 0 {
                    let name = self.pick(&locals);
                    let e = self.expr(1, value_loops, &locals);
                    inner.push(set(local(name), bin(BinOp::Add, v(name), e)));
                } else {
                    let a = self.pick(&["a", "b", "c"]);
                    let index = vec![if self.below(2) == 0 { v("i") } else { self.index(value_loops) }];
                    inner.push(set(el(a, index), self.expr(0, value_loops, &locals)));
                }
            }
            let mut nest = inner;
            if two {
                let hi = bound(self);
                nest = vec![for_("l", if self.below(3) == 0 { v("m") } else { c(0) }, hi, nest)];
            }
            let hi = bound(self);
            let lo = if self.below(4) == 0 { c(1) } else { c(0) };
            let mut body = pre;
            body.push(for_("k", lo, hi, nest));
            body.extend(post);
            region(vec![for_("i", c(0), v("n"), body)])
        }
    }

    /// Runs a region over `a`, `b`, `c` and the scalars `n`, `m`, `s`.
    fn run(r: &Region, n: i64, m: i64) -> Vec<Vec<i64>> {
        crate::interp::run(r, &[("n", n), ("m", m), ("s", 7)], &["a", "b", "c"])
    }
}
