//! Local scalars of a region (`float t = a[i] * 2;` in a loop body) substituted into
//! their uses, for the tiled kernels.
//!
//! The optimizer models a loop body as assignments to array elements and reduction
//! accumulations; a local declaration is neither, so a region with one would keep the
//! baseline kernel (`[unsupported-statement] local declaration`). Yet most loop bodies
//! written by hand name an intermediate value. [`inline`] gives the optimizer and the
//! tiled generators the region with `(T)e` in place of every use of a local `T t = e;`
//! wherever that computes the same:
//!
//! - the local is never assigned after its declaration, by an assignment or as the
//!   index of a loop (one value per execution of the declaration) — an assignment
//!   in the declaration's own block, outside any nested loop or `if`, first makes a
//!   new version of the local ([`versions`]: `t = e;` is `T t_v1 = e;` for the rest
//!   of the block), which then qualifies on its own;
//! - no statement between the declaration and a use writes what `e` reads (an array it
//!   reads, a scalar it reads); a use in the value of an assignment is evaluated before
//!   that assignment stores (`a[i] = t * 2` after `t = a[i]` reads the old `a[i]`
//!   either way); a use in a loop whose body writes what `e` reads is refused, as a
//!   later iteration would see the new value;
//! - `e` names no other local that stays declared, holds nothing the IR cannot
//!   represent, and is small enough that copying it into every use stays small
//!   ([`MAX_COPIED_NODES`]).
//!
//! A local used only as the index of loops over it (`int j = 0; for (j = 0; …)`, C89's
//! `int i; for (i = 0; …)`) loses its declaration: each loop assigns it before reading.
//!
//! Expressions of the IR have no side effects, and a kernel computes each operation
//! with the host's rounding ([`tessera_ir::Expr`]), so evaluating `e` at the use gives
//! the bits the local held. A local that does not qualify stays, and the region keeps
//! the baseline kernel with the remark it had. The baseline kernel itself is generated
//! from the region as written.

use std::borrow::Cow;
use std::collections::{HashSet, VecDeque};
use tessera_ir::{Expr, LValue, Region, Stmt};

/// Largest number of expression nodes the substitution of one local may copy into its
/// uses (the size of its initialiser times the number of uses).
pub const MAX_COPIED_NODES: usize = 4096;

/// The region with every local that qualifies (module docs) substituted into its uses
/// and its declaration removed; borrowed when there is none.
pub fn inline(region: &Region) -> Cow<'_, Region> {
    let mut locals = HashSet::new();
    region.visit_stmts(&mut |s| {
        if let Stmt::Let { name, .. } = s {
            locals.insert(name.clone());
        }
    });
    if locals.is_empty() {
        return Cow::Borrowed(region);
    }
    let mut taken: HashSet<String> = locals.clone();
    region.visit_stmts(&mut |s| {
        if let Stmt::For { var, .. } = s {
            taken.insert(var.clone());
        }
    });
    taken.extend(region.vars.iter().map(|v| v.name.clone()));
    let mut versioned = false;
    let body = versions(region.body.clone(), &mut taken, &mut versioned);
    let declared = |body: &[Stmt]| {
        let mut names = HashSet::new();
        for s in body {
            s.visit(&mut |s| {
                if let Stmt::Let { name, .. } = s {
                    names.insert(name.clone());
                }
            });
        }
        names
    };
    let mut changed = false;
    let mut body = block(body.clone(), &declared(&body), &mut changed);
    // A version that stays declared would name a local the source does not have in
    // the remark that keeps the region on the baseline kernel: then the region
    // without versions, whose remark names the source's local.
    if versioned && !declared(&body).is_subset(&locals) {
        changed = false;
        body = block(region.body.clone(), &locals, &mut changed);
    }
    if !changed {
        return Cow::Borrowed(region);
    }
    Cow::Owned(Region { body, ..region.clone() })
}

/// Straight-line assignments to a local declared in the same block become the
/// declarations of new versions of it: `t = e;` after `T t = …;` (or `T t;`) is
/// `T t_v1 = e;`, and the rest of the block names `t_v1` where it named `t` (reads
/// and assignments alike). The local's scope ends with the block, so nothing after
/// it sees the difference; `e` still reads the version before. An assignment inside
/// a nested loop or `if` is not straight-line and stays, and so does the version it
/// assigns (the region then keeps the baseline kernel, as before). Each version is
/// then an ordinary local that [`block`] may substitute (`P t = p[i]; t.y = -t.y;
/// q[i] = t;` of a struct copy, one local per field).
fn versions(body: Vec<Stmt>, taken: &mut HashSet<String>, changed: &mut bool) -> Vec<Stmt> {
    let mut declared: std::collections::HashMap<String, tessera_ir::ScalarType> = Default::default();
    let mut rest: VecDeque<Stmt> = body.into();
    let mut out = Vec::new();
    while let Some(s) = rest.pop_front() {
        match s {
            Stmt::For { var, ty, lower, upper, step, ne, body, loc } => {
                let body = versions(body, taken, changed);
                out.push(Stmt::For { var, ty, lower, upper, step, ne, body, loc });
            }
            Stmt::If { cond, then, otherwise, loc } => {
                let (then, otherwise) = (versions(then, taken, changed), versions(otherwise, taken, changed));
                out.push(Stmt::If { cond, then, otherwise, loc });
            }
            Stmt::Let { ref name, ty, .. } => {
                declared.insert(name.clone(), ty);
                out.push(s);
            }
            Stmt::Assign { target: LValue::Local { ref name, .. }, value, loc } if declared.contains_key(name) => {
                let ty = declared[name];
                let fresh = (1..).map(|k| format!("{name}_v{k}")).find(|n| !taken.contains(n)).expect("a free name");
                taken.insert(fresh.clone());
                let by = Expr::Var { name: fresh.clone(), ty };
                for r in rest.iter_mut() {
                    *r = renamed_targets(&tessera_poly::normalize::subst_stmt(r, name, &by), name, &fresh);
                }
                declared.insert(fresh.clone(), ty);
                out.push(Stmt::Let { name: fresh, ty, init: Some(value), loc });
                *changed = true;
            }
            s => out.push(s),
        }
    }
    out
}

/// `s` with every assignment to the local `from` assigning `to` instead (a loop over
/// `from` assigns it too).
fn renamed_targets(s: &Stmt, from: &str, to: &str) -> Stmt {
    let all = |b: &[Stmt]| b.iter().map(|x| renamed_targets(x, from, to)).collect::<Vec<_>>();
    match s {
        Stmt::Assign { target: LValue::Local { name, ty }, value, loc } if name == from => {
            Stmt::Assign { target: LValue::Local { name: to.to_string(), ty: *ty }, value: value.clone(), loc: loc.clone() }
        }
        Stmt::For { var, ty, lower, upper, step, ne, body, loc } => Stmt::For {
            var: if var == from { to.to_string() } else { var.clone() },
            ty: *ty,
            lower: lower.clone(),
            upper: upper.clone(),
            step: *step,
            ne: *ne,
            body: all(body),
            loc: loc.clone(),
        },
        Stmt::If { cond, then, otherwise, loc } => {
            Stmt::If { cond: cond.clone(), then: all(then), otherwise: all(otherwise), loc: loc.clone() }
        }
        s => s.clone(),
    }
}

fn block(body: Vec<Stmt>, locals: &HashSet<String>, changed: &mut bool) -> Vec<Stmt> {
    let mut rest: VecDeque<Stmt> = body.into();
    let mut out = Vec::new();
    while let Some(s) = rest.pop_front() {
        match s {
            // Only a loop index (`int j = 0; for (j = 0; j < n; j++) …`, C89's
            // `int i; for (i = 0; …)`): every loop over it assigns it before its body
            // reads it, so the declared value is never seen.
            Stmt::Let { ref name, .. } if only_loop_index(name, rest.make_contiguous()) => *changed = true,
            // Never named again (all its uses went to later versions): the IR's
            // expressions have no side effects, so nothing is lost.
            Stmt::Let { ref name, .. } if !rest.iter().any(|r| names(r, name)) => *changed = true,
            Stmt::Let { name, ty, init: Some(e), loc } => {
                if inlinable(&name, &e, rest.make_contiguous(), locals) {
                    let by = if e.ty() == Some(ty) { e } else { Expr::Cast { arg: Box::new(e), ty } };
                    for r in rest.iter_mut() {
                        *r = tessera_poly::normalize::subst_stmt(r, &name, &by);
                    }
                    *changed = true;
                } else {
                    out.push(Stmt::Let { name, ty, init: Some(e), loc });
                }
            }
            Stmt::For { var, ty, lower, upper, step, ne, body, loc } => {
                let body = block(body, locals, changed);
                out.push(Stmt::For { var, ty, lower, upper, step, ne, body, loc });
            }
            Stmt::If { cond, then, otherwise, loc } => {
                let then = block(then, locals, changed);
                let otherwise = block(otherwise, locals, changed);
                out.push(Stmt::If { cond, then, otherwise, loc });
            }
            s => out.push(s),
        }
    }
    out
}

/// Whether `s` reads or assigns the local (or loop index) `name`.
fn names(s: &Stmt, name: &str) -> bool {
    let mut found = false;
    s.visit(&mut |x| match x {
        Stmt::Assign { target: LValue::Local { name: n, .. }, .. } | Stmt::For { var: n, .. } => found |= n == name,
        _ => {}
    });
    s.visit_exprs(&mut |e| found |= matches!(e, Expr::Var { name: n, .. } if n == name));
    found
}

/// Whether the local `name` is used in `rest` (the statements after its declaration)
/// only as the index of loops over it: read only inside such a loop's body, never
/// assigned otherwise, not in the bounds of a loop over it, and there is such a loop.
fn only_loop_index(name: &str, rest: &[Stmt]) -> bool {
    fn mentions(e: &Expr, name: &str) -> bool {
        let mut found = false;
        e.visit(&mut |x| found |= matches!(x, Expr::Var { name: n, .. } if n == name));
        found
    }
    fn go(s: &Stmt, name: &str, inside: bool, loops: &mut usize) -> bool {
        let outside_use = |e: &Expr| !inside && mentions(e, name);
        match s {
            Stmt::For { var, lower, upper, body, .. } => {
                let own = var == name;
                if own && (mentions(lower, name) || mentions(upper, name)) || outside_use(lower) || outside_use(upper) {
                    return false;
                }
                *loops += usize::from(own);
                body.iter().all(|b| go(b, name, inside || own, loops))
            }
            Stmt::Assign { target, value, .. } => {
                let index_use = match target {
                    LValue::Element { index, .. } => index.iter().any(outside_use),
                    LValue::Local { name: n, .. } => n == name,
                    LValue::Scalar { .. } => false,
                };
                !index_use && !outside_use(value)
            }
            Stmt::Let { init, .. } => !init.as_ref().is_some_and(outside_use),
            Stmt::If { cond, then, otherwise, .. } => {
                !outside_use(cond) && then.iter().chain(otherwise).all(|b| go(b, name, inside, loops))
            }
            Stmt::Unsupported { .. } => false,
        }
    }
    let mut loops = 0;
    rest.iter().all(|s| go(s, name, false, &mut loops)) && loops > 0
}

/// What an initialiser reads.
struct Reads<'a> {
    arrays: HashSet<&'a str>,
    scalars: HashSet<&'a str>,
}

/// Whether the local `name` declared `= e` may be substituted into `rest`, the
/// statements after its declaration in its block (module docs).
fn inlinable(name: &str, e: &Expr, rest: &[Stmt], locals: &HashSet<String>) -> bool {
    let mut reads = Reads { arrays: HashSet::new(), scalars: HashSet::new() };
    let mut size = 0usize;
    let mut representable = true;
    e.visit(&mut |x| {
        size += 1;
        match x {
            Expr::Read { array, .. } => {
                reads.arrays.insert(array);
            }
            Expr::Var { name: v, .. } => {
                representable &= !locals.contains(v);
                reads.scalars.insert(v);
            }
            Expr::Unsupported { .. } => representable = false,
            _ => {}
        }
    });
    if !representable {
        return false;
    }
    let mut walk = Walk { name, reads: &reads, uses: 0 };
    let mut clobbered = false;
    walk.stmts(rest, &mut clobbered) && size.saturating_mul(walk.uses) <= MAX_COPIED_NODES
}

struct Walk<'a> {
    name: &'a str,
    reads: &'a Reads<'a>,
    uses: usize,
}

impl Walk<'_> {
    /// Uses of the local in `e`.
    fn uses_in(&self, e: &Expr) -> usize {
        let mut n = 0;
        e.visit(&mut |x| {
            if matches!(x, Expr::Var { name, .. } if name == self.name) {
                n += 1;
            }
        });
        n
    }

    /// Counts the uses in `e`; false when there are some and the value is clobbered.
    fn check(&mut self, e: &Expr, clobbered: bool) -> bool {
        let n = self.uses_in(e);
        self.uses += n;
        n == 0 || !clobbered
    }

    /// Whether `target` is something the initialiser reads.
    fn clobbers(&self, target: &LValue) -> bool {
        match target {
            LValue::Element { array, .. } => self.reads.arrays.contains(array.as_str()),
            LValue::Local { name, .. } | LValue::Scalar { name, .. } => self.reads.scalars.contains(name.as_str()),
        }
    }

    /// Walks `stmts` in execution order; false when a use would see another value.
    fn stmts(&mut self, stmts: &[Stmt], clobbered: &mut bool) -> bool {
        stmts.iter().all(|s| self.stmt(s, clobbered))
    }

    fn stmt(&mut self, s: &Stmt, clobbered: &mut bool) -> bool {
        match s {
            Stmt::Assign { target, value, .. } => {
                if matches!(target, LValue::Local { name, .. } if name == self.name) {
                    return false; // assigned again
                }
                let index_ok = match target {
                    LValue::Element { index, .. } => index.iter().all(|i| self.check(i, *clobbered)),
                    _ => true,
                };
                if !index_ok || !self.check(value, *clobbered) {
                    return false;
                }
                *clobbered |= self.clobbers(target);
                true
            }
            Stmt::Let { init, .. } => init.as_ref().is_none_or(|e| self.check(e, *clobbered)),
            Stmt::If { cond, then, otherwise, .. } => {
                if !self.check(cond, *clobbered) {
                    return false;
                }
                let (mut a, mut b) = (*clobbered, *clobbered);
                let ok = self.stmts(then, &mut a) && self.stmts(otherwise, &mut b);
                *clobbered = a || b;
                ok
            }
            Stmt::For { var, lower, upper, body, .. } => {
                if !self.check(lower, *clobbered) || !self.check(upper, *clobbered) {
                    return false;
                }
                if var == self.name {
                    return false; // the loop assigns the local (`int j = 0; for (j = 0; …)`)
                }
                // A loop over a variable the initialiser reads assigns it before the body.
                let mut writes = self.reads.scalars.contains(var.as_str());
                *clobbered |= writes;
                let mut used = false;
                for b in body {
                    b.visit(&mut |x| {
                        if let Stmt::Assign { target, .. } = x {
                            writes |= self.clobbers(target);
                        }
                    });
                    b.visit_exprs(&mut |x| used |= matches!(x, Expr::Var { name, .. } if name == self.name));
                }
                if writes && used {
                    return false; // a later iteration would read the new value
                }
                self.stmts(body, clobbered)
            }
            // Nothing is known of what it does; the region stays on the host anyway.
            Stmt::Unsupported { .. } => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::{Loc, ScalarType};

    fn read(a: &str, i: &str) -> Expr {
        Expr::Read { array: a.into(), index: vec![Expr::var(i, ScalarType::I32)], ty: ScalarType::F32, loc: Loc::default() }
    }
    fn store(a: &str, i: &str, value: Expr) -> Stmt {
        Stmt::Assign {
            target: LValue::Element { array: a.into(), index: vec![Expr::var(i, ScalarType::I32)], ty: ScalarType::F32, loc: Loc::default() },
            value,
            loc: Loc::default(),
        }
    }
    fn let_(name: &str, ty: ScalarType, e: Expr) -> Stmt {
        Stmt::Let { name: name.into(), ty, init: Some(e), loc: Loc::default() }
    }
    fn add(a: Expr, b: Expr) -> Expr {
        Expr::Binary { op: tessera_ir::BinOp::Add, lhs: Box::new(a), rhs: Box::new(b), ty: ScalarType::F32 }
    }
    fn t() -> Expr {
        Expr::var("t", ScalarType::F32)
    }
    fn region(body: Vec<Stmt>) -> Region {
        let mut r = crate::test_support::fixture("bench/1D-jacobi.ir.json");
        r.body = vec![Stmt::For {
            var: "i".into(),
            ty: ScalarType::I32,
            lower: Expr::int(0),
            upper: Expr::int(8),
            step: 1,
            ne: false,
            body,
            loc: Loc::default(),
        }];
        r
    }
    fn body(r: &Region) -> Vec<Stmt> {
        match &r.body[0] {
            Stmt::For { body, .. } => body.clone(),
            _ => unreachable!(),
        }
    }

    /// `t = a[i]; b[i] = t + t;` becomes `b[i] = a[i] + a[i];`, with the conversion
    /// to the local's type kept; a use in the value of a store to what it reads too.
    #[test]
    fn substitutes_into_later_statements() {
        let r = region(vec![let_("t", ScalarType::F32, read("a", "i")), store("b", "i", add(t(), t()))]);
        assert_eq!(body(&inline(&r)), vec![store("b", "i", add(read("a", "i"), read("a", "i")))]);
        let r = region(vec![let_("t", ScalarType::F32, read("a", "i")), store("a", "i", add(t(), t()))]);
        assert_eq!(body(&inline(&r)), vec![store("a", "i", add(read("a", "i"), read("a", "i")))]);
        // A double initialiser of a float local: converted where the local was.
        let d = Expr::Cast { arg: Box::new(read("a", "i")), ty: ScalarType::F64 };
        let r = region(vec![let_("t", ScalarType::F32, d.clone()), store("b", "i", t())]);
        assert_eq!(body(&inline(&r)), vec![store("b", "i", Expr::Cast { arg: Box::new(d), ty: ScalarType::F32 })]);
    }

    /// A store to what the initialiser reads before a use, a second assignment of the
    /// local inside an `if`, or a use in a loop that writes what it reads keep the
    /// declaration; a second assignment in the same block is a new version.
    #[test]
    fn keeps_locals_whose_value_would_change() {
        let clobbered = region(vec![
            let_("t", ScalarType::F32, read("a", "i")),
            store("a", "i", Expr::Float { bits: 0, ty: ScalarType::F32 }),
            store("b", "i", t()),
        ]);
        assert!(matches!(inline(&clobbered), Cow::Borrowed(_)));
        let reassigned = region(vec![
            let_("t", ScalarType::F32, read("a", "i")),
            Stmt::Assign { target: LValue::Local { name: "t".into(), ty: ScalarType::F32 }, value: add(t(), t()), loc: Loc::default() },
            store("b", "i", t()),
        ]);
        // Assigned again in the same block: a new version, substituted in turn.
        assert_eq!(body(&inline(&reassigned)), vec![store("b", "i", add(read("a", "i"), read("a", "i")))]);
        // Assigned again inside an `if`: not straight-line, kept.
        let assigned_in_branch = region(vec![
            let_("t", ScalarType::F32, read("a", "i")),
            Stmt::If {
                cond: Expr::int(1),
                then: vec![Stmt::Assign { target: LValue::Local { name: "t".into(), ty: ScalarType::F32 }, value: add(t(), t()), loc: Loc::default() }],
                otherwise: vec![],
                loc: Loc::default(),
            },
            store("b", "i", t()),
        ]);
        assert!(matches!(inline(&assigned_in_branch), Cow::Borrowed(_)));
        // A version that cannot be substituted (what it read is written before its
        // use): the region keeps the source's local, not a version of it.
        let clobbered_version = region(vec![
            let_("t", ScalarType::F32, read("a", "i")),
            Stmt::Assign { target: LValue::Local { name: "t".into(), ty: ScalarType::F32 }, value: add(t(), t()), loc: Loc::default() },
            store("a", "i", Expr::Float { bits: 0, ty: ScalarType::F32 }),
            store("b", "i", t()),
        ]);
        let kept = inline(&clobbered_version);
        let mut lets = Vec::new();
        kept.visit_stmts(&mut |s| {
            if let Stmt::Let { name, .. } = s {
                lets.push(name.clone());
            }
        });
        assert_eq!(lets, vec!["t".to_string()]);
        let in_loop = region(vec![
            let_("t", ScalarType::F32, read("a", "i")),
            Stmt::For {
                var: "j".into(),
                ty: ScalarType::I32,
                lower: Expr::int(0),
                upper: Expr::int(4),
                step: 1,
                ne: false,
                body: vec![store("b", "j", t()), store("a", "j", Expr::Float { bits: 0, ty: ScalarType::F32 })],
                loc: Loc::default(),
            },
        ]);
        assert!(matches!(inline(&in_loop), Cow::Borrowed(_)));
        // In one branch of an `if` only: the other branch's use is still fine, a use
        // after the `if` is not.
        let branch = |after: bool| {
            let mut b = vec![
                let_("t", ScalarType::F32, read("a", "i")),
                Stmt::If {
                    cond: Expr::int(1),
                    then: vec![store("a", "i", Expr::Float { bits: 0, ty: ScalarType::F32 })],
                    otherwise: vec![store("b", "i", t())],
                    loc: Loc::default(),
                },
            ];
            if after {
                b.push(store("c", "i", t()));
            }
            region(b)
        };
        assert!(matches!(inline(&branch(false)), Cow::Owned(_)));
        assert!(matches!(inline(&branch(true)), Cow::Borrowed(_)));
    }

    /// A local that only serves as the index of a loop over it loses its declaration;
    /// one read after the loop keeps it.
    #[test]
    fn drops_locals_that_are_only_loop_indices() {
        let j = |body: Vec<Stmt>| Stmt::For {
            var: "t".into(),
            ty: ScalarType::I32,
            lower: Expr::int(0),
            upper: Expr::int(4),
            step: 1,
            ne: false,
            body,
            loc: Loc::default(),
        };
        let r = region(vec![let_("t", ScalarType::I32, Expr::int(0)), j(vec![store("b", "t", read("a", "t"))])]);
        assert_eq!(body(&inline(&r)), vec![j(vec![store("b", "t", read("a", "t"))])]);
        let after = region(vec![
            let_("t", ScalarType::I32, Expr::int(0)),
            j(vec![store("b", "t", read("a", "t"))]),
            store("c", "i", Expr::var("t", ScalarType::I32)),
        ]);
        assert!(matches!(inline(&after), Cow::Borrowed(_)));
    }

    /// A chain of locals: each substituted into the next, in order.
    #[test]
    fn chains_substitute_in_order() {
        let u = Expr::var("u", ScalarType::F32);
        let r = region(vec![
            let_("t", ScalarType::F32, read("a", "i")),
            let_("u", ScalarType::F32, add(t(), t())),
            store("b", "i", add(u.clone(), u)),
        ]);
        let a2 = add(read("a", "i"), read("a", "i"));
        assert_eq!(body(&inline(&r)), vec![store("b", "i", add(a2.clone(), a2))]);
    }

    /// Property: on random loop bodies of locals (declared, read, assigned again),
    /// stores to arrays and to a scalar, `if`s and inner loops, the region [`inline`]
    /// gives computes exactly what the region as written computes (a small integer
    /// interpreter of the IR runs both).
    #[test]
    fn inlining_never_changes_what_a_body_computes() {
        let (mut inlined, mut kept) = (0, 0);
        for seed in 1..=3000u64 {
            let mut g = Gen { state: seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1, next_local: 0 };
            let body = g.block(0, &mut vec!["i".to_string()], &mut Vec::new());
            let r = region(body);
            let v = inline(&r);
            match &v {
                Cow::Owned(_) => inlined += 1,
                Cow::Borrowed(_) => kept += 1,
            }
            let want = run(&r);
            let got = run(&v);
            assert_eq!(got, want, "seed {seed}: the inlined body computes something else\n{}\n{}", show(&r.body), show(&v.body));
        }
        // The generator exercises both outcomes.
        assert!(inlined > 500 && kept > 300, "inlined {inlined}, kept {kept}");
    }

    struct Gen {
        state: u64,
        next_local: usize,
    }

    const I: ScalarType = ScalarType::I64;

    impl Gen {
        fn below(&mut self, n: u64) -> u64 {
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            self.state % n
        }
        fn index(&mut self, loops: &[String]) -> Expr {
            if self.below(3) == 0 {
                Expr::Int { value: self.below(8) as i64, ty: I }
            } else {
                Expr::var(&loops[self.below(loops.len() as u64) as usize], I)
            }
        }
        fn expr(&mut self, depth: u32, loops: &[String], locals: &[String]) -> Expr {
            match self.below(if depth > 2 { 4 } else { 7 }) {
                0 => Expr::Int { value: self.below(7) as i64 - 3, ty: I },
                1 if !locals.is_empty() => Expr::var(&locals[self.below(locals.len() as u64) as usize], I),
                1 | 2 => Expr::var(if self.below(2) == 0 { "s" } else { &loops[0] }, I),
                3 => {
                    let a = ["a", "b"][self.below(2) as usize];
                    Expr::Read { array: a.into(), index: vec![self.index(loops)], ty: I, loc: Loc::default() }
                }
                _ => {
                    let op = [tessera_ir::BinOp::Add, tessera_ir::BinOp::Sub, tessera_ir::BinOp::Mul][self.below(3) as usize];
                    Expr::Binary { op, lhs: Box::new(self.expr(depth + 1, loops, locals)), rhs: Box::new(self.expr(depth + 1, loops, locals)), ty: I }
                }
            }
        }
        fn block(&mut self, depth: u32, loops: &mut Vec<String>, locals: &mut Vec<String>) -> Vec<Stmt> {
            let scope = locals.len();
            let n = 1 + self.below(5);
            let mut out = Vec::new();
            for _ in 0..n {
                let s = match self.below(10) {
                    0..=2 => {
                        let e = self.expr(0, loops, locals);
                        let name = format!("t{}", self.next_local);
                        self.next_local += 1;
                        locals.push(name.clone());
                        Stmt::Let { name, ty: I, init: Some(e), loc: Loc::default() }
                    }
                    3..=5 => {
                        let a = ["a", "b"][self.below(2) as usize];
                        let index = vec![self.index(loops)];
                        let value = self.expr(0, loops, locals);
                        Stmt::Assign { target: LValue::Element { array: a.into(), index, ty: I, loc: Loc::default() }, value, loc: Loc::default() }
                    }
                    6 if !locals.is_empty() => {
                        let name = locals[self.below(locals.len() as u64) as usize].clone();
                        Stmt::Assign { target: LValue::Local { name, ty: I }, value: self.expr(0, loops, locals), loc: Loc::default() }
                    }
                    6 | 7 => Stmt::Assign {
                        target: LValue::Scalar { name: "s".into(), ty: I, loc: Loc::default() },
                        value: self.expr(0, loops, locals),
                        loc: Loc::default(),
                    },
                    8 if depth < 2 => {
                        let cond = self.expr(1, loops, locals);
                        let then = self.block(depth + 1, loops, locals);
                        let otherwise = self.block(depth + 1, loops, locals);
                        Stmt::If { cond, then, otherwise, loc: Loc::default() }
                    }
                    9 if depth < 2 => {
                        // C code often declares the index first: `int j = 0; for (j = 0; …)`.
                        let var = if !locals.is_empty() && self.below(3) == 0 {
                            locals[self.below(locals.len() as u64) as usize].clone()
                        } else {
                            self.next_local += 1;
                            format!("j{}", self.next_local - 1)
                        };
                        // The body reads the index but never assigns it (a canonical loop).
                        let saved = locals.clone();
                        locals.retain(|l| *l != var);
                        loops.push(var.clone());
                        let body = self.block(depth + 1, loops, locals);
                        loops.pop();
                        *locals = saved;
                        Stmt::For { var, ty: I, lower: Expr::Int { value: 0, ty: I }, upper: Expr::Int { value: 3, ty: I }, step: 1, ne: false, body, loc: Loc::default() }
                    }
                    _ => continue,
                };
                out.push(s);
            }
            locals.truncate(scope);
            out
        }
    }

    /// Runs the body of [`region`]'s loop over `a`, `b` (8 elements) and `s` with
    /// wrapping 64-bit arithmetic; returns the final arrays and `s`.
    fn run(r: &Region) -> (Vec<i64>, Vec<i64>, i64) {
        use std::collections::HashMap;
        struct M {
            vars: HashMap<String, i64>,
            a: Vec<i64>,
            b: Vec<i64>,
        }
        fn ev(e: &Expr, m: &M) -> i64 {
            match e {
                Expr::Int { value, .. } => *value,
                Expr::Var { name, .. } => m.vars[name],
                Expr::Read { array, index, .. } => {
                    let i = ev(&index[0], m) as usize;
                    if array == "a" { m.a[i] } else { m.b[i] }
                }
                Expr::Binary { op, lhs, rhs, .. } => {
                    let (x, y) = (ev(lhs, m), ev(rhs, m));
                    match op {
                        tessera_ir::BinOp::Add => x.wrapping_add(y),
                        tessera_ir::BinOp::Sub => x.wrapping_sub(y),
                        _ => x.wrapping_mul(y),
                    }
                }
                Expr::Cast { arg, .. } => ev(arg, m),
                other => panic!("not generated: {other:?}"),
            }
        }
        fn exec(ss: &[Stmt], m: &mut M) {
            for s in ss {
                match s {
                    Stmt::Let { name, init, .. } => {
                        let v = ev(init.as_ref().unwrap(), m);
                        m.vars.insert(name.clone(), v);
                    }
                    Stmt::Assign { target, value, .. } => {
                        let v = ev(value, m);
                        match target {
                            LValue::Element { array, index, .. } => {
                                let i = ev(&index[0], m) as usize;
                                if array == "a" { m.a[i] = v } else { m.b[i] = v }
                            }
                            LValue::Local { name, .. } | LValue::Scalar { name, .. } => {
                                m.vars.insert(name.clone(), v);
                            }
                        }
                    }
                    Stmt::If { cond, then, otherwise, .. } => {
                        if ev(cond, m) != 0 { exec(then, m) } else { exec(otherwise, m) }
                    }
                    Stmt::For { var, lower, upper, body, .. } => {
                        let (lo, hi) = (ev(lower, m), ev(upper, m));
                        for k in lo..hi {
                            m.vars.insert(var.clone(), k);
                            exec(body, m);
                        }
                    }
                    Stmt::Unsupported { .. } => panic!("not generated"),
                }
            }
        }
        let mut m = M { vars: HashMap::from([("s".to_string(), 5)]), a: (0..8).map(|k| k * 3 - 7).collect(), b: (0..8).map(|k| 11 - k * k).collect() };
        exec(&r.body, &mut m);
        (m.a, m.b, m.vars["s"])
    }
}

/// A body as text, for the property test's failure messages.
#[cfg(test)]
pub(crate) fn show(b: &[Stmt]) -> String {
    use tessera_ir::print;
    fn go(s: &Stmt, d: usize, out: &mut String) {
        let pad = "  ".repeat(d);
        match s {
            Stmt::Let { name, init, .. } => out.push_str(&format!("{pad}let {name} = {};\n", init.as_ref().map_or("?".into(), print::expr))),
            Stmt::Assign { target, value, .. } => out.push_str(&format!("{pad}{} = {};\n", print::lvalue(target), print::expr(value))),
            Stmt::For { var, lower, upper, body, .. } => {
                out.push_str(&format!("{pad}for {var} in {}..{} {{\n", print::expr(lower), print::expr(upper)));
                body.iter().for_each(|b| go(b, d + 1, out));
                out.push_str(&format!("{pad}}}\n"));
            }
            Stmt::If { cond, then, otherwise, .. } => {
                out.push_str(&format!("{pad}if {} {{\n", print::expr(cond)));
                then.iter().for_each(|b| go(b, d + 1, out));
                out.push_str(&format!("{pad}}} else {{\n"));
                otherwise.iter().for_each(|b| go(b, d + 1, out));
                out.push_str(&format!("{pad}}}\n"));
            }
            Stmt::Unsupported { .. } => out.push_str(&format!("{pad}unsupported\n")),
        }
    }
    let mut out = String::new();
    b.iter().for_each(|s| go(s, 0, &mut out));
    out
}
