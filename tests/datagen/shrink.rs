//! Smaller variants of a case, for minimising a failing one: ops removed, constructs
//! unwrapped, items, reads and clauses dropped, unused arrays removed. Only variants
//! the [`Model`] accepts are returned, biggest reductions first.

use super::model::Model;
use super::{Body, Case, Fb, Feat, Op, RKind, Scalar, VarRef};

/// Valid one-step reductions of `c`.
pub fn candidates(c: &Case) -> Vec<Case> {
    let mut out = Vec::new();
    if let Some(smaller) = drop_unused_array(c) {
        out.push(smaller);
    }
    for ops in variants(&c.ops) {
        out.push(Case { ops, ..c.clone() });
    }
    out.retain(|x| Model::new(&x.arrs).apply_all(&x.ops).is_ok());
    out
}

fn variants(ops: &[Op]) -> Vec<Vec<Op>> {
    let mut out = Vec::new();
    // Halves first, then single removals.
    if ops.len() >= 4 {
        let h = ops.len() / 2;
        out.push(ops[h..].to_vec());
        out.push(ops[..h].to_vec());
    }
    for k in 0..ops.len() {
        let mut v = ops.to_vec();
        v.remove(k);
        out.push(v);
    }
    for k in 0..ops.len() {
        let body = match &ops[k] {
            Op::Data { body, .. } | Op::Loop { body, .. } => Some(body.clone()),
            _ => None,
        };
        if let Some(body) = body {
            let mut v = ops[..k].to_vec();
            v.extend(body);
            v.extend_from_slice(&ops[k + 1..]);
            out.push(v);
        }
    }
    for k in 0..ops.len() {
        for rep in op_variants(&ops[k]) {
            let mut v = ops.to_vec();
            v[k] = rep;
            out.push(v);
        }
    }
    out
}

fn without<T: Clone>(xs: &[T], k: usize) -> Vec<T> {
    let mut v = xs.to_vec();
    v.remove(k);
    v
}

fn op_variants(op: &Op) -> Vec<Op> {
    let mut out = Vec::new();
    match op {
        Op::Data { items, cond, body } => {
            if items.len() > 1 {
                for k in 0..items.len() {
                    out.push(Op::Data { items: without(items, k), cond: *cond, body: body.clone() });
                }
            }
            if cond.is_some() {
                out.push(Op::Data { items: items.clone(), cond: None, body: body.clone() });
            }
            for b in variants(body) {
                out.push(Op::Data { items: items.clone(), cond: *cond, body: b });
            }
        }
        Op::Loop { steps, a, b, body } => {
            if *steps > 1 {
                out.push(Op::Loop { steps: steps - 1, a: *a, b: *b, body: body.clone() });
            }
            for bd in variants(body) {
                out.push(Op::Loop { steps: *steps, a: *a, b: *b, body: bd });
            }
        }
        Op::Threads { base, len, slices, picks, body } => {
            for bd in variants(body) {
                out.push(Op::Threads {
                    base: *base,
                    len: *len,
                    slices: slices.clone(),
                    picks: picks.clone(),
                    body: bd,
                });
            }
            if slices.len() > 1 {
                for k in 0..slices.len() {
                    out.push(Op::Threads {
                        base: *base,
                        len: *len,
                        slices: without(slices, k),
                        picks: picks.clone(),
                        body: body.clone(),
                    });
                }
            }
        }
        Op::Enter { items, nowait } | Op::Exit { items, nowait } => {
            let mk = |items: Vec<super::Item>, nowait: bool| match op {
                Op::Enter { .. } => Op::Enter { items, nowait },
                _ => Op::Exit { items, nowait },
            };
            if items.len() > 1 {
                for k in 0..items.len() {
                    out.push(mk(without(items, k), *nowait));
                }
            }
            if *nowait {
                out.push(mk(items.clone(), false));
            }
        }
        Op::Update { motions, nowait } => {
            if motions.len() > 1 {
                for k in 0..motions.len() {
                    out.push(Op::Update { motions: without(motions, k), nowait: *nowait });
                }
            }
            if *nowait {
                out.push(Op::Update { motions: motions.clone(), nowait: false });
            }
            if motions.iter().any(|m| m.2) {
                let plain = motions.iter().map(|(to, s, _)| (*to, *s, false)).collect();
                out.push(Op::Update { motions: plain, nowait: *nowait });
            }
        }
        Op::HostWrite { v, rows, cols, self_read: true, salt } => {
            out.push(Op::HostWrite { v: *v, rows: *rows, cols: *cols, self_read: false, salt: *salt });
        }
        Op::Region(r) => {
            let mut push = |f: &dyn Fn(&mut super::Region)| {
                let mut x = r.clone();
                f(&mut x);
                if x != *r {
                    out.push(Op::Region(x));
                }
            };
            for k in 0..r.maps.len() {
                push(&|x| {
                    x.maps.remove(k);
                });
            }
            push(&|x| x.fb = None);
            push(&|x| {
                x.extra = 0;
                x.no_collapse = false;
            });
            push(&|x| x.reduce_w = false);
            push(&|x| x.row_ptr = false);
            push(&|x| x.scalar_map = 0);
            push(&|x| {
                if let Body::Assign { cond, scalar, .. } = &mut x.body {
                    *cond = false;
                    *scalar = Scalar::None;
                }
            });
            let nreads = match &r.body {
                Body::Assign { reads, .. } | Body::Reduce { reads } => reads.len(),
            };
            for k in 0..nreads {
                push(&|x| match &mut x.body {
                    Body::Assign { reads, .. } => {
                        reads.remove(k);
                    }
                    Body::Reduce { reads } if reads.len() > 1 => {
                        reads.remove(k);
                    }
                    _ => {}
                });
            }
            push(&|x| {
                if x.kind != RKind::Target {
                    x.kind = RKind::Teams
                }
            });
            push(&|x| {
                let (a, b) = x.rows;
                if a.lo == b.lo && b.k - a.k > 1 {
                    x.rows.1.k = a.k + (b.k - a.k) / 2;
                }
            });
            push(&|x| {
                let (a, b) = x.rows;
                if a.lo == b.lo && b.k - a.k > 1 {
                    x.rows = (a, super::Ix { k: a.k + 1, lo: a.lo });
                }
            });
            push(&|x| {
                if x.two_d && x.cols.1 - x.cols.0 > 1 {
                    x.cols.1 = x.cols.0 + 1;
                }
            });
        }
        _ => {}
    }
    out
}

/// Visits every variable index an op names (mutably).
fn vars_mut(ops: &mut [Op], f: &mut dyn FnMut(&mut usize)) {
    fn v(r: &mut VarRef, f: &mut dyn FnMut(&mut usize)) {
        match r {
            VarRef::Arr(i) | VarRef::Interior(i, _) => f(i),
            VarRef::Pick(_) => {}
        }
    }
    for op in ops {
        match op {
            Op::Region(r) => {
                for m in &mut r.maps {
                    v(&mut m.sec.v, f);
                }
                match &mut r.body {
                    Body::Assign { w, reads, .. } => {
                        v(w, f);
                        for x in reads {
                            v(&mut x.v, f);
                        }
                    }
                    Body::Reduce { reads } => {
                        for x in reads {
                            v(&mut x.v, f);
                        }
                    }
                }
            }
            Op::Data { items, body, .. } => {
                for m in items {
                    v(&mut m.sec.v, f);
                }
                vars_mut(body, f);
            }
            Op::Enter { items, .. } | Op::Exit { items, .. } => {
                for m in items {
                    v(&mut m.sec.v, f);
                }
            }
            Op::Update { motions, .. } => {
                for m in motions {
                    v(&mut m.1.v, f);
                }
            }
            Op::HostWrite { v: x, .. } | Op::Print { v: x, .. } => v(x, f),
            Op::Loop { a, b, body, .. } => {
                f(a);
                f(b);
                vars_mut(body, f);
            }
            Op::Threads { slices, picks, body, .. } => {
                for s in slices {
                    f(s);
                }
                for (a, b) in picks {
                    f(a);
                    f(b);
                }
                vars_mut(body, f);
            }
        }
    }
}

/// The case without its last array no op names (with the others renumbered).
fn drop_unused_array(c: &Case) -> Option<Case> {
    let mut ops = c.ops.clone();
    let mut used = vec![false; c.arrs.len()];
    vars_mut(&mut ops, &mut |i| used[*i] = true);
    let k = (0..c.arrs.len()).rev().find(|i| !used[*i])?;
    if c.arrs.len() == 1 {
        return None;
    }
    vars_mut(&mut ops, &mut |i| {
        if *i > k {
            *i -= 1
        }
    });
    let mut arrs = c.arrs.clone();
    arrs.remove(k);
    Some(Case { id: c.id, arrs, ops, kstruct: c.kstruct })
}

/// Features [`strip`] can remove from a case without touching the rest.
pub const STRIPPABLE: [Feat; 16] = [
    Feat::FbIf,
    Feat::FbCall,
    Feat::FbLocal,
    Feat::FbStmt,
    Feat::FbOpaque,
    Feat::FbNowait,
    Feat::DataIf,
    Feat::DataNowait,
    Feat::Always,
    Feat::Cond,
    Feat::Scalars,
    Feat::Clauses,
    Feat::ArrReduce,
    Feat::MapScalar,
    Feat::Aos,
    Feat::KStruct,
];

/// The case with every use of `f` removed (`if` clauses, fallback triggers, `nowait`,
/// `always`, …), if it uses `f`, `f` is strippable and the result is valid.
pub fn strip(c: &Case, f: Feat) -> Option<Case> {
    if !STRIPPABLE.contains(&f) || !c.used().has(f) {
        return None;
    }
    fn items(items: &mut [super::Item], f: Feat) {
        if f == Feat::Always {
            for i in items {
                i.always = false;
            }
        }
    }
    fn walk(ops: &mut [Op], f: Feat) {
        for op in ops {
            match op {
                Op::Region(r) => {
                    items(&mut r.maps, f);
                    let drop = matches!(
                        (r.fb, f),
                        (Some(Fb::If(_)), Feat::FbIf)
                            | (Some(Fb::Call), Feat::FbCall)
                            | (Some(Fb::Global), Feat::FbGlobal)
                            | (Some(Fb::Local), Feat::FbLocal)
                            | (Some(Fb::Stmt), Feat::FbStmt)
                            | (Some(Fb::Opaque), Feat::FbOpaque)
                            | (Some(Fb::Nowait), Feat::FbNowait)
                    );
                    if drop {
                        r.fb = None;
                    }
                    if f == Feat::Clauses {
                        r.extra = 0;
                        r.no_collapse = false;
                    }
                    if f == Feat::RowPtr {
                        r.row_ptr = false;
                    }
                    if f == Feat::MapScalar {
                        r.scalar_map = 0;
                    }
                    if f == Feat::ArrReduce {
                        r.reduce_w = false;
                    }
                    if let Body::Assign { cond, scalar, .. } = &mut r.body {
                        if f == Feat::Cond {
                            *cond = false;
                        }
                        if f == Feat::Scalars {
                            *scalar = Scalar::None;
                        }
                    }
                }
                Op::Data { items: its, cond, body } => {
                    items(its, f);
                    if f == Feat::DataIf {
                        *cond = None;
                    }
                    walk(body, f);
                }
                Op::Enter { items: its, nowait } | Op::Exit { items: its, nowait } => {
                    items(its, f);
                    if f == Feat::DataNowait {
                        *nowait = false;
                    }
                }
                Op::Update { nowait, .. } => {
                    if f == Feat::DataNowait {
                        *nowait = false;
                    }
                }
                Op::Loop { body, .. } | Op::Threads { body, .. } => walk(body, f),
                Op::HostWrite { .. } | Op::Print { .. } => {}
            }
        }
    }
    let mut out = c.clone();
    walk(&mut out.ops, f);
    if f == Feat::Aos {
        for a in &mut out.arrs {
            a.aos = false;
        }
    }
    if f == Feat::KStruct {
        out.kstruct = 0;
    }
    (Model::new(&out.arrs).apply_all(&out.ops).is_ok() && !out.used().has(f)).then_some(out)
}
