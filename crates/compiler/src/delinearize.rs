//! Delinearisation of linearised subscripts (Grosser, Ramanujam, Pouchet, Sadayappan,
//! Hoefler, "Optimistic Delinearization of Parametrically Sized Arrays", ICS 2015).
//!
//! HPC code indexes flat arrays by hand: `a[i*n + j]`, `a[i + j*n]`,
//! `a[(i*ny + j)*nz + k]`, `a[i*N + j]` with `#define N`. Such a subscript is a
//! polynomial in the loop indices and the region's integer scalars. From all
//! accesses of a one-dimensional array this pass recovers a multi-dimensional view
//! `a[?][n]`, `a[?][ny][nz]` and rewrites every access into it, so that the optimizer
//! and the tiled generator see the region as if the arrays were VLAs:
//!
//! 1. every subscript of the array as a polynomial (monomials of loop indices and
//!    scalars with integer coefficients; `+ - *` only, in arithmetic whose value the
//!    address computation sees exactly — `int`/`long` (overflow is undefined) and
//!    `unsigned long` (wraps like addresses), never `unsigned int`);
//! 2. the *strides*: the scalar factors of the terms that contain a loop index
//!    (`n` in `i*n`; `ny*nz` and `nz` in `i*ny*nz + j*nz + k`) must form a chain in
//!    which each divides the previous one; the extents of the view's inner dimensions
//!    are their quotients (`ny*nz / nz = ny`, `nz`). Without scalar factors, constant
//!    coefficients play the role of the strides (`i*100 + j`: extent 100), when the
//!    view gives every dimension a loop index;
//! 3. every term goes to the outermost dimension whose stride divides it (`n` alone
//!    in `(i + 1)*n + j - 1` is `+1` in dimension 0; a constant of a constant-stride
//!    array is split nearest-first: `-101` with stride 100 is `[-1][-1]`); a
//!    subscript of the view that is not affine fails the array;
//! 4. the view is valid — the same elements as the linear subscripts — when every
//!    inner subscript stays within its extent over the iteration domain:
//!    `0 ≤ sub_d < extent_d`. Over the loops' ranges, these are conditions on the
//!    scalars (smallest and largest values at corners), evaluated by the runtime at
//!    launch; conditions isl proves for all scalar values are dropped. When one fails,
//!    the runtime runs the baseline kernel of the original region (linear
//!    subscripts), never the tiled kernel of the view.
//!
//! Loops enclosing an access may have bounds over the scalars (a box) or affine in
//! the enclosing loops' indices (a triangle, `for (j = 0; j <= i; j++)`): isl proves
//! the conditions over the exact domain, and a condition left to the launch uses the
//! hull of each index's values (stronger than needed, never weaker). Arrays with
//! more than one dimension, and subscripts that are not polynomials, are left as
//! they are (the input-class check then says why the region stays on the host).

use std::collections::{BTreeMap, BTreeSet};
use tessera_ir::{print, BinOp, Expr, LValue, Region, ScalarType, Stmt, UnOp, VarKind};

/// A monomial: the multiset of variable names, sorted.
type Mono = Vec<String>;

/// A polynomial with integer coefficients (no zero entries).
type Poly = BTreeMap<Mono, i64>;

/// An affine form over names: constant and coefficient per name.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Lin {
    /// Constant term.
    pub constant: i64,
    /// Coefficients (no zero entries).
    pub terms: BTreeMap<String, i64>,
}

/// The multi-dimensional view of one flat array.
#[derive(Clone, Debug, PartialEq)]
pub struct View {
    /// The array.
    pub array: String,
    /// The extents of dimensions 1.. of the view (dimension 0 is unbounded), as
    /// expressions over the scalars in `long`.
    pub extents: Vec<Expr>,
    /// The subscripts of every access of the array, in the region's access order.
    pub subscripts: Vec<Vec<Lin>>,
}

/// One launch condition: the view of `array` is valid only if `expr` is nonzero.
#[derive(Clone, Debug, PartialEq)]
pub struct Condition {
    /// The array.
    pub array: String,
    /// An `int`-valued expression over the region's scalars.
    pub expr: Expr,
    /// What it says, for messages: `0 <= j - 1 < n for 'a[(i + 1) * n + j - 1]'`.
    pub text: String,
}

/// What the pass produced.
#[derive(Clone, Debug)]
pub struct Delinearized {
    /// The region with every delinearised access rewritten into its view, the
    /// view's variable with dimensions `[?][e1]…` (outermost unknown, no section).
    pub region: Region,
    /// The views.
    pub views: Vec<View>,
    /// The launch conditions (all must hold), deduplicated; empty when isl proved them.
    pub conditions: Vec<Condition>,
}

/// A loop enclosing an access.
#[derive(Clone, Debug)]
struct LoopCtx {
    var: String,
    ty: ScalarType,
    lower: Expr,
    upper: Expr,
    step: i64,
}

/// One array access with its loop context.
#[derive(Clone, Debug)]
struct Site {
    array: String,
    index: Vec<Expr>,
    loops: Vec<LoopCtx>,
    /// The conditions under which the access happens (`c ? a[…] : …`, `c && a[…]`,
    /// `if (c) …`), each with whether it is negated (the `else` side).
    guards: Vec<(Expr, bool)>,
}

/// Delinearises the region's flat arrays. `Ok(None)`: nothing to delinearise.
/// `Err(why)`: an array's linearised subscripts have no valid view (the region keeps
/// its linear subscripts; the caller reports the original reason with this one).
pub fn delinearize(region: &Region) -> Result<Option<Delinearized>, String> {
    let mut sites = Vec::new();
    let mut stack = Vec::new();
    collect(&region.body, &mut stack, &mut sites);
    let scalars: BTreeSet<&str> = region
        .vars
        .iter()
        .filter(|v| v.kind == VarKind::Scalar && v.elem.is_integer())
        .map(|v| v.name.as_str())
        .collect();
    let mut views = Vec::new();
    for v in region.vars.iter().filter(|v| v.kind != VarKind::Scalar && v.dims.len() == 1) {
        let mine: Vec<&Site> = sites.iter().filter(|s| s.array == v.name).collect();
        if mine.is_empty() || mine.iter().any(|s| s.index.len() != 1) {
            continue;
        }
        if let Some(view) = view_of(&v.name, &mine, &scalars)? {
            views.push(view);
        }
    }
    if views.is_empty() {
        return Ok(None);
    }
    // Conditions.
    let mut conditions: Vec<Condition> = Vec::new();
    for view in &views {
        let mine: Vec<&Site> = sites.iter().filter(|s| s.array == view.array).collect();
        for (site, subs) in mine.iter().zip(&view.subscripts) {
            for (d, sub) in subs.iter().enumerate().skip(1) {
                let extent = &view.extents[d - 1];
                let text = format!(
                    "0 <= {} < {} for '{}'",
                    lin_text(sub),
                    print::expr(extent),
                    print::subscripted(&site.array, &site.index)
                );
                if conditions.iter().any(|c| c.text == text) || proved(site, sub, extent, &scalars) {
                    continue;
                }
                let expr = within(site, sub, extent, region).ok_or_else(|| {
                    format!(
                        "the bounds of the loops around '{}' are not affine in the enclosing loops' indices",
                        print::subscripted(&site.array, &site.index)
                    )
                })?;
                conditions.push(Condition { array: view.array.clone(), expr, text });
            }
        }
    }
    // The rewritten region.
    let mut out = region.clone();
    for view in &views {
        let v = out.vars.iter_mut().find(|v| v.name == view.array).expect("a region array");
        v.dims = std::iter::once(None).chain(view.extents.iter().cloned().map(Some)).collect();
        v.section.clear();
    }
    let mut counters: BTreeMap<String, usize> = BTreeMap::new();
    let types: BTreeMap<String, ScalarType> = region.vars.iter().map(|v| (v.name.clone(), v.elem)).collect();
    let mut stack = Vec::new();
    rewrite(&mut out.body, &mut stack, &mut |array, index, loops| {
        let Some(view) = views.iter().find(|v| v.array == array) else { return };
        let k = counters.entry(array.to_string()).or_insert(0);
        let subs = &view.subscripts[*k];
        *k += 1;
        let ty = |n: &str| loops.iter().rev().find(|l| l.var == n).map(|l| l.ty).or_else(|| types.get(n).copied());
        *index = subs.iter().map(|s| lin_expr(s, &ty)).collect();
    });
    Ok(Some(Delinearized { region: out, views, conditions }))
}

/// The plan-file lines that say what was delinearised and under which conditions.
pub fn describe(d: &Delinearized) -> String {
    let mut s = String::new();
    for v in &d.views {
        let ext: String = v.extents.iter().map(|e| format!("[{}]", print::expr(e))).collect();
        s.push_str(&format!("delinearised: '{}' as {}[?]{ext}\n", v.array, v.array));
    }
    if d.conditions.is_empty() {
        s.push_str("launch conditions of the view: none (isl proves every inner subscript within its extent where it is accessed)\n");
    }
    for c in &d.conditions {
        s.push_str(&format!("launch condition: {}\n", c.text));
    }
    s
}

/// The view of one array from its accesses, `None` when it needs none.
fn view_of(array: &str, sites: &[&Site], scalars: &BTreeSet<&str>) -> Result<Option<View>, String> {
    let mut polys = Vec::new();
    for s in sites {
        let is_index = |n: &str| s.loops.iter().any(|l| l.var == n);
        let known = |n: &str| is_index(n) || scalars.contains(n);
        let Some(p) = poly_form(&s.index[0], &known) else { return Ok(None) };
        // Every monomial: at most one loop index, of degree 1.
        for m in p.keys() {
            if m.iter().filter(|n| is_index(n)).count() > 1 {
                return Err(format!(
                    "'{}' multiplies loop indices",
                    print::subscripted(array, &s.index)
                ));
            }
        }
        polys.push(p);
    }
    let split = |site: &Site, m: &Mono| -> (Vec<String>, Mono) {
        let (l, p): (Vec<String>, Vec<String>) = m.iter().cloned().partition(|n| site.loops.iter().any(|l| l.var == *n));
        (l, p)
    };
    let mut strides: BTreeSet<Mono> = BTreeSet::new();
    let mut constants: BTreeSet<i64> = BTreeSet::new();
    for (s, p) in sites.iter().zip(&polys) {
        for (m, c) in p {
            let (l, q) = split(s, m);
            if l.is_empty() {
                continue;
            }
            if q.is_empty() {
                if c.unsigned_abs() > 1 {
                    constants.insert(c.abs());
                }
            } else {
                strides.insert(q);
            }
        }
    }
    let parametric = !strides.is_empty();
    let linear_already = polys.iter().all(|p| p.keys().all(|m| m.len() <= 1));
    if !parametric && (constants.is_empty() || !linear_already) {
        return Ok(None);
    }
    // The chain of strides, outermost first; the innermost stride is 1.
    let chain: Vec<Stride> = if parametric {
        let mut v: Vec<Mono> = strides.into_iter().collect();
        v.sort_by(|a, b| b.len().cmp(&a.len()).then(a.cmp(b)));
        for w in v.windows(2) {
            if w[0].len() == w[1].len() || !divides(&w[1], &w[0]) {
                return Err(format!(
                    "the row lengths {} and {} of '{array}' do not divide each other",
                    mono_text(&w[0]),
                    mono_text(&w[1])
                ));
            }
        }
        v.into_iter().map(Stride::Param).collect()
    } else {
        let v: Vec<i64> = constants.into_iter().rev().collect();
        if let Some(w) = v.windows(2).find(|w| w[0] % w[1] != 0) {
            return Err(format!("the row lengths {} and {} of '{array}' do not divide each other", w[0], w[1]));
        }
        v.into_iter().map(Stride::Const).collect()
    };
    let rank = chain.len() + 1;
    let mut subscripts = Vec::new();
    for (s, p) in sites.iter().zip(&polys) {
        let mut subs = vec![Lin::default(); rank];
        for (m, &c) in p {
            let (l, q) = split(s, m);
            match &chain[..] {
                _ if parametric => {
                    let d = chain
                        .iter()
                        .position(|st| matches!(st, Stride::Param(sm) if divides(sm, &q)))
                        .unwrap_or(rank - 1);
                    let rest: Mono = match &chain.get(d) {
                        Some(Stride::Param(sm)) if d < rank - 1 => remove(&q, sm),
                        _ => q.clone(),
                    };
                    let names: Vec<String> = l.iter().cloned().chain(rest).collect();
                    add_term(&mut subs[d], &names, c).ok_or_else(|| not_affine(array, s))?;
                }
                _ if l.is_empty() && q.is_empty() => {
                    // A constant: nearest-first over the constant strides.
                    let mut rem = c;
                    for (d, st) in chain.iter().enumerate() {
                        let Stride::Const(k) = st else { unreachable!() };
                        let qd = nearest_quotient(rem, *k);
                        subs[d].constant = subs[d].constant.checked_add(qd).ok_or_else(|| not_affine(array, s))?;
                        rem -= qd * k;
                    }
                    subs[rank - 1].constant += rem;
                }
                _ => {
                    let d = if l.is_empty() {
                        rank - 1
                    } else {
                        chain.iter().position(|st| matches!(st, Stride::Const(k) if c % k == 0)).unwrap_or(rank - 1)
                    };
                    let k = match chain.get(d) {
                        Some(Stride::Const(k)) => *k,
                        _ => 1,
                    };
                    let names: Vec<String> = l.iter().cloned().chain(q).collect();
                    add_term(&mut subs[d], &names, c / k).ok_or_else(|| not_affine(array, s))?;
                }
            }
        }
        subscripts.push(subs);
    }
    if !parametric {
        // A constant stride is a row length only when every dimension of the view
        // moves with a loop index (`a[2*i]` stays one-dimensional).
        let moves = |d: usize| subscripts.iter().zip(sites).any(|(subs, s): (&Vec<Lin>, &&Site)| {
            subs[d].terms.keys().any(|n| s.loops.iter().any(|l| l.var == *n))
        });
        if !(0..rank).all(moves) {
            return Ok(None);
        }
    }
    // Extents of dimensions 1..: quotients of consecutive strides.
    let extents = (1..rank)
        .map(|d| match (&chain[d - 1], chain.get(d)) {
            (Stride::Param(a), Some(Stride::Param(b))) => product(&remove(a, b)),
            (Stride::Param(a), None) => product(a),
            (Stride::Const(a), Some(Stride::Const(b))) => Expr::Int { value: a / b, ty: ScalarType::I64 },
            (Stride::Const(a), None) => Expr::Int { value: *a, ty: ScalarType::I64 },
            _ => unreachable!("one kind of stride per chain"),
        })
        .collect();
    Ok(Some(View { array: array.to_string(), extents, subscripts }))
}

/// A stride of the chain.
#[derive(Clone, Debug)]
enum Stride {
    Param(Mono),
    Const(i64),
}

fn not_affine(array: &str, s: &Site) -> String {
    format!("'{}' is not affine in any view of '{array}'", print::subscripted(array, &s.index))
}

/// `round(c / k)`, ties towards zero.
fn nearest_quotient(c: i64, k: i64) -> i64 {
    let q = c.div_euclid(k);
    let r = c.rem_euclid(k);
    if 2 * r > k || (2 * r == k && q < 0) {
        q + 1
    } else {
        q
    }
}

/// Adds `c · Π names` to an affine form: at most one name.
fn add_term(l: &mut Lin, names: &[String], c: i64) -> Option<()> {
    match names {
        [] => l.constant = l.constant.checked_add(c)?,
        [n] => {
            let e = l.terms.entry(n.clone()).or_insert(0);
            *e = e.checked_add(c)?;
            if *e == 0 {
                l.terms.remove(n);
            }
        }
        _ => return None,
    }
    Some(())
}

/// Whether multiset `a` is contained in `b`.
fn divides(a: &Mono, b: &Mono) -> bool {
    let mut rest = b.clone();
    a.iter().all(|x| match rest.iter().position(|y| y == x) {
        Some(i) => {
            rest.remove(i);
            true
        }
        None => false,
    })
}

/// `b / a` for multisets (`a` divides `b`).
fn remove(b: &Mono, a: &Mono) -> Mono {
    let mut rest = b.clone();
    for x in a {
        if let Some(i) = rest.iter().position(|y| y == x) {
            rest.remove(i);
        }
    }
    rest
}

fn mono_text(m: &Mono) -> String {
    m.join("*")
}

/// `(long)ny * (long)nz`: an extent of the view, in `long`.
fn product(m: &Mono) -> Expr {
    let mut it = m.iter().map(|n| Expr::Cast { arg: Box::new(Expr::var(n, ScalarType::I64)), ty: ScalarType::I64 });
    let first = it.next().unwrap_or(Expr::Int { value: 1, ty: ScalarType::I64 });
    it.fold(first, |acc, x| bin(BinOp::Mul, acc, x, ScalarType::I64))
}

/// The polynomial form of a subscript, in arithmetic that is exact for addresses
/// (see the module docs); `None` otherwise.
fn poly_form(e: &Expr, known: &dyn Fn(&str) -> bool) -> Option<Poly> {
    let exact_op = |t: ScalarType| matches!(t, ScalarType::I32 | ScalarType::I64 | ScalarType::U64);
    match e {
        Expr::Int { value, .. } => Some(if *value == 0 { Poly::new() } else { Poly::from([(Vec::new(), *value)]) }),
        Expr::Var { name, ty } if ty.is_integer() && known(name) => Some(Poly::from([(vec![name.clone()], 1)])),
        Expr::Cast { arg, ty } => {
            let from = arg.ty()?;
            let ok = from.is_integer()
                && match ty {
                    ScalarType::I64 | ScalarType::U64 => true,
                    ScalarType::I32 => from.size() < 4 || from == ScalarType::I32,
                    _ => false,
                };
            if ok { poly_form(arg, known) } else { None }
        }
        Expr::Unary { op: UnOp::Plus, arg, .. } => poly_form(arg, known),
        Expr::Unary { op: UnOp::Neg, arg, ty } if exact_op(*ty) => scale(poly_form(arg, known)?, -1),
        Expr::Binary { op, lhs, rhs, ty } if exact_op(*ty) => {
            let (l, r) = (poly_form(lhs, known)?, poly_form(rhs, known)?);
            match op {
                BinOp::Add => sum(l, r),
                BinOp::Sub => sum(l, scale(r, -1)?),
                BinOp::Mul => {
                    let mut out = Poly::new();
                    for (ml, cl) in &l {
                        for (mr, cr) in &r {
                            let mut m: Mono = ml.iter().chain(mr).cloned().collect();
                            m.sort();
                            let e = out.entry(m).or_insert(0);
                            *e = e.checked_add(cl.checked_mul(*cr)?)?;
                        }
                    }
                    out.retain(|_, c| *c != 0);
                    Some(out)
                }
                _ => None,
            }
        }
        _ => None,
    }
}

fn scale(mut p: Poly, k: i64) -> Option<Poly> {
    for c in p.values_mut() {
        *c = c.checked_mul(k)?;
    }
    Some(p)
}

fn sum(mut a: Poly, b: Poly) -> Option<Poly> {
    for (m, c) in b {
        let e = a.entry(m).or_insert(0);
        *e = e.checked_add(c)?;
    }
    a.retain(|_, c| *c != 0);
    Some(a)
}

fn lin_text(l: &Lin) -> String {
    let mut s = String::new();
    for (n, c) in &l.terms {
        match (*c, s.is_empty()) {
            (1, true) => s.push_str(n),
            (-1, true) => s.push_str(&format!("-{n}")),
            (c, true) => s.push_str(&format!("{c}*{n}")),
            (1, false) => s.push_str(&format!(" + {n}")),
            (-1, false) => s.push_str(&format!(" - {n}")),
            (c, false) if c < 0 => s.push_str(&format!(" - {}*{n}", -c)),
            (c, false) => s.push_str(&format!(" + {c}*{n}")),
        }
    }
    match (l.constant, s.is_empty()) {
        (c, true) => c.to_string(),
        (0, false) => s,
        (c, false) if c < 0 => format!("{s} - {}", -c),
        (c, false) => format!("{s} + {c}"),
    }
}

/// The affine form as an expression in `long`.
fn lin_expr(l: &Lin, ty: &dyn Fn(&str) -> Option<ScalarType>) -> Expr {
    let long = ScalarType::I64;
    let mut e: Option<Expr> = None;
    for (n, c) in &l.terms {
        let v = Expr::Cast { arg: Box::new(Expr::var(n, ty(n).unwrap_or(long))), ty: long };
        let t = if *c == 1 { v } else { bin(BinOp::Mul, Expr::Int { value: *c, ty: long }, v, long) };
        e = Some(match e {
            None => t,
            Some(acc) => bin(BinOp::Add, acc, t, long),
        });
    }
    match (e, l.constant) {
        (None, c) => Expr::Int { value: c, ty: long },
        (Some(e), 0) => e,
        (Some(e), c) if c < 0 => bin(BinOp::Sub, e, Expr::Int { value: -c, ty: long }, long),
        (Some(e), c) => bin(BinOp::Add, e, Expr::Int { value: c, ty: long }, long),
    }
}

fn bin(op: BinOp, lhs: Expr, rhs: Expr, ty: ScalarType) -> Expr {
    Expr::Binary { op, lhs: Box::new(lhs), rhs: Box::new(rhs), ty }
}

fn to_long(e: &Expr) -> Expr {
    Expr::Cast { arg: Box::new(e.clone()), ty: ScalarType::I64 }
}

fn lit(v: i64) -> Expr {
    Expr::Int { value: v, ty: ScalarType::I64 }
}

/// Whether a loop bound names only the region's integer scalars (no index, no read).
fn over_scalars(e: &Expr, region: &Region) -> bool {
    let mut ok = true;
    e.visit(&mut |n| {
        ok &= match n {
            Expr::Var { name, .. } => region.var(name).is_some_and(|v| v.kind == VarKind::Scalar && v.elem.is_integer()),
            Expr::Read { .. } | Expr::Unsupported { .. } => false,
            _ => true,
        }
    });
    ok
}

/// `int` condition: the loops around `site` run no iteration, or `sub` stays in
/// `[0, extent)` over all of them. A loop whose bounds name enclosing indices (a
/// triangle, `j <= i`) contributes the hull of its values over the enclosing loops'
/// ranges — a superset, so the condition may fail where the access would not, never
/// the other way round. `None` when a bound is not affine in the enclosing indices
/// with constant coefficients.
fn within(site: &Site, sub: &Lin, extent: &Expr, region: &Region) -> Option<Expr> {
    let int = ScalarType::I32;
    let long = ScalarType::I64;
    let mut nonempty: Option<Expr> = None;
    let mut range: BTreeMap<&str, (Expr, Expr)> = BTreeMap::new();
    for l in &site.loops {
        let k = l.step.unsigned_abs() as i64;
        let (ne, min, max) = if over_scalars(&l.lower, region) && over_scalars(&l.upper, region) {
            let (lo, up) = (to_long(&l.lower), to_long(&l.upper));
            if l.step > 0 {
                // last = lower + step·⌊(upper − 1 − lower) / step⌋ (nonnegative dividend).
                let span = bin(BinOp::Sub, bin(BinOp::Sub, up.clone(), lit(1), long), lo.clone(), long);
                let last = bin(BinOp::Add, lo.clone(), bin(BinOp::Mul, lit(k), bin(BinOp::Div, span, lit(k), long), long), long);
                (bin(BinOp::Lt, lo.clone(), up, int), lo, last)
            } else {
                let span = bin(BinOp::Sub, bin(BinOp::Sub, lo.clone(), lit(1), long), up.clone(), long);
                let last = bin(BinOp::Sub, lo.clone(), bin(BinOp::Mul, lit(k), bin(BinOp::Div, span, lit(k), long), long), long);
                (bin(BinOp::Gt, lo.clone(), up, int), last, lo)
            }
        } else {
            let (lo_min, lo_max) = hull(&l.lower, &range, region)?;
            let (up_min, up_max) = hull(&l.upper, &range, region)?;
            if l.step > 0 {
                // lower ≤ index ≤ upper − 1 (the last value may be below it).
                let top = bin(BinOp::Sub, up_max.clone(), lit(1), long);
                (bin(BinOp::Lt, lo_min.clone(), up_max, int), lo_min, top)
            } else {
                let bottom = bin(BinOp::Add, up_min.clone(), lit(1), long);
                (bin(BinOp::Gt, lo_max.clone(), up_min, int), bottom, lo_max)
            }
        };
        nonempty = Some(match nonempty {
            None => ne,
            Some(acc) => bin(BinOp::LAnd, acc, ne, int),
        });
        range.insert(&l.var, (min, max));
    }
    let corner = |max: bool| -> Expr {
        let mut e = lit(sub.constant);
        for (n, c) in &sub.terms {
            let v = match range.get(n.as_str()) {
                Some((lo, hi)) => {
                    if (*c > 0) == max {
                        hi.clone()
                    } else {
                        lo.clone()
                    }
                }
                None => {
                    let ty = region.var(n).map_or(long, |v| v.elem);
                    to_long(&Expr::var(n, ty))
                }
            };
            e = bin(BinOp::Add, e, bin(BinOp::Mul, lit(*c), v, long), long);
        }
        e
    };
    let inside = bin(
        BinOp::LAnd,
        bin(BinOp::Ge, corner(false), lit(0), int),
        bin(BinOp::Lt, corner(true), to_long(extent), int),
        int,
    );
    Some(match nonempty {
        None => inside,
        Some(ne) => bin(BinOp::LOr, Expr::Unary { op: UnOp::Not, arg: Box::new(ne), ty: int }, inside, int),
    })
}

/// The smallest and largest values (in `long`) of a loop bound `e` that is affine in
/// the enclosing loops' indices, with constant coefficients, plus terms over the
/// scalars, as the indices range over `range` (each index's smallest and largest
/// value). `None` for any other bound.
fn hull(e: &Expr, range: &BTreeMap<&str, (Expr, Expr)>, region: &Region) -> Option<(Expr, Expr)> {
    let long = ScalarType::I64;
    let scalar = |n: &str| region.var(n).is_some_and(|v| v.kind == VarKind::Scalar && v.elem.is_integer());
    let p = poly_form(e, &|n| range.contains_key(n) || scalar(n))?;
    let (mut min, mut max) = (lit(0), lit(0));
    for (m, &c) in &p {
        let (lo, hi) = match m.iter().filter(|n| range.contains_key(n.as_str())).count() {
            0 => {
                let t = bin(BinOp::Mul, lit(c), product(m), long);
                (t.clone(), t)
            }
            1 if m.len() == 1 => {
                let (a, b) = &range[m[0].as_str()];
                let (small, large) = if c > 0 { (a, b) } else { (b, a) };
                (bin(BinOp::Mul, lit(c), small.clone(), long), bin(BinOp::Mul, lit(c), large.clone(), long))
            }
            _ => return None,
        };
        min = bin(BinOp::Add, min, lo, long);
        max = bin(BinOp::Add, max, hi, long);
    }
    Some((min, max))
}

/// An isl constraint saying that `e` (an `&&` / `||` / `!` of comparisons of affine
/// expressions) is nonzero, or zero when `negated`; `None` for anything else.
fn guard_text(e: &Expr, negated: bool, affine: &dyn Fn(&Expr) -> Option<String>) -> Option<String> {
    match e {
        Expr::Unary { op: UnOp::Not, arg, .. } => guard_text(arg, !negated, affine),
        Expr::Binary { op: op @ (BinOp::LAnd | BinOp::LOr), lhs, rhs, .. } => {
            let (a, b) = (guard_text(lhs, negated, affine)?, guard_text(rhs, negated, affine)?);
            let conj = (*op == BinOp::LAnd) != negated;
            Some(format!("(({a}) {} ({b}))", if conj { "and" } else { "or" }))
        }
        Expr::Binary { op, lhs, rhs, .. } => {
            let (a, b) = (affine(lhs)?, affine(rhs)?);
            let op = match (op, negated) {
                (BinOp::Lt, false) | (BinOp::Ge, true) => "<",
                (BinOp::Le, false) | (BinOp::Gt, true) => "<=",
                (BinOp::Gt, false) | (BinOp::Le, true) => ">",
                (BinOp::Ge, false) | (BinOp::Lt, true) => ">=",
                (BinOp::Eq, false) | (BinOp::Ne, true) => "=",
                (BinOp::Ne, false) | (BinOp::Eq, true) => return Some(format!("({a} < {b} or {a} > {b})")),
                _ => return None,
            };
            Some(format!("{a} {op} {b}"))
        }
        _ => None,
    }
}

/// Whether isl proves `0 <= sub < extent` for every iteration around `site` and
/// every value of the scalars (then no launch condition is needed).
fn proved(site: &Site, sub: &Lin, extent: &Expr, scalars: &BTreeSet<&str>) -> bool {
    use tessera_poly::{affine, Sym};
    let ident = |n: &str| format!("v_{n}");
    let derived: std::cell::RefCell<Vec<String>> = std::cell::RefCell::new(Vec::new());
    // `e` over the scalars and the indices of the loops `outer` (a triangle's bounds).
    let text_in = |e: &Expr, outer: &[LoopCtx]| -> Option<String> {
        let lookup = |n: &str| {
            if scalars.contains(n) {
                Some(Sym::Param(n.to_string()))
            } else {
                outer.iter().position(|o| o.var == n).map(Sym::Tile)
            }
        };
        let a = affine::from_expr_with(e, &lookup, &mut |x| {
            // A loop-invariant expression (`n/2`, `nx*ny`): one parameter per text.
            let key = print::expr(x);
            let mut d = derived.borrow_mut();
            let k = d.iter().position(|t| *t == key).unwrap_or_else(|| {
                d.push(key);
                d.len() - 1
            });
            Some(Sym::Loop(k))
        })?;
        Some(a.format(&|s| match s {
            Sym::Loop(k) => format!("d_{k}"),
            Sym::Param(p) => ident(p),
            Sym::Tile(o) => ident(&outer[*o].var),
            Sym::Intra(_) => unreachable!("bounds over scalars and enclosing indices"),
        }))
    };
    let text_of = |e: &Expr| text_in(e, &[]);
    let mut cons = Vec::new();
    for (k, l) in site.loops.iter().enumerate() {
        let bound = |e: &Expr| text_in(e, &site.loops[..k]);
        let (Some(lo), Some(up)) = (bound(&l.lower), bound(&l.upper)) else { return false };
        let x = ident(&l.var);
        cons.push(if l.step > 0 { format!("{lo} <= {x} < {up}") } else { format!("{up} < {x} <= {lo}") });
    }
    // Where the access happens: its guards that are affine conditions of the loop
    // indices and scalars (any other guard is left out, which only weakens the proof).
    let in_scope = |n: &str| scalars.contains(n) || site.loops.iter().any(|l| l.var == n);
    let affine_text = |e: &Expr| -> Option<String> {
        let lookup = |n: &str| in_scope(n).then(|| Sym::Param(n.to_string()));
        let a = affine::from_expr_with(e, &lookup, &mut |_| None)?;
        Some(a.format(&|s| match s {
            Sym::Param(p) => ident(p),
            _ => unreachable!("only names in scope"),
        }))
    };
    for (g, negated) in &site.guards {
        if let Some(t) = guard_text(g, *negated, &affine_text) {
            cons.push(t);
        }
    }
    let Some(ext) = text_of(extent) else { return false };
    let sub_text = {
        let mut s = sub.constant.to_string();
        for (n, c) in &sub.terms {
            if *c < 0 {
                s.push_str(&format!(" - {}*{}", -c, ident(n)));
            } else {
                s.push_str(&format!(" + {c}*{}", ident(n)));
            }
        }
        s
    };
    let params: Vec<String> =
        scalars.iter().map(|s| ident(s)).chain((0..derived.borrow().len()).map(|k| format!("d_{k}"))).collect();
    let dims: Vec<String> = site.loops.iter().map(|l| ident(&l.var)).collect();
    let cons = if cons.is_empty() { String::new() } else { format!("{} and ", cons.join(" and ")) };
    let set = format!("[{}] -> {{ [{}] : {cons}({sub_text} < 0 or {sub_text} >= {ext}) }}", params.join(", "), dims.join(", "));
    tessera_poly::set_is_empty(&set).unwrap_or(false)
}

/// Every array access, in the order [`rewrite`] visits them, with its guards.
fn collect(body: &[Stmt], stack: &mut Vec<LoopCtx>, out: &mut Vec<Site>) {
    collect_guarded(body, stack, &mut Vec::new(), out)
}

/// The reads of `e` in pre-order ([`Expr::visit`]'s), under `guards` and the
/// conditions inside `e` that guard them ([`Expr::visit_guarded`]).
fn reads_guarded(e: &Expr, stack: &[LoopCtx], guards: &[(Expr, bool)], out: &mut Vec<Site>) {
    e.visit_guarded(&mut |n, inner| {
        if let Expr::Read { array, index, .. } = n {
            let guards = guards.iter().cloned().chain(inner.iter().map(|(c, neg)| ((*c).clone(), *neg))).collect();
            out.push(Site { array: array.clone(), index: index.clone(), loops: stack.to_vec(), guards });
        }
    });
}

fn collect_guarded(body: &[Stmt], stack: &mut Vec<LoopCtx>, guards: &mut Vec<(Expr, bool)>, out: &mut Vec<Site>) {
    for s in body {
        match s {
            Stmt::For { var, ty, lower, upper, step, body, .. } => {
                reads_guarded(lower, stack, guards, out);
                reads_guarded(upper, stack, guards, out);
                stack.push(LoopCtx { var: var.clone(), ty: *ty, lower: lower.clone(), upper: upper.clone(), step: *step });
                collect_guarded(body, stack, guards, out);
                stack.pop();
            }
            Stmt::Assign { target, value, .. } => {
                reads_guarded(value, stack, guards, out);
                if let LValue::Element { array, index, .. } = target {
                    for i in index {
                        reads_guarded(i, stack, guards, out);
                    }
                    out.push(Site { array: array.clone(), index: index.clone(), loops: stack.clone(), guards: guards.clone() });
                }
            }
            Stmt::Let { init: Some(e), .. } => reads_guarded(e, stack, guards, out),
            Stmt::Let { .. } | Stmt::Unsupported { .. } => {}
            Stmt::If { cond, then, otherwise, .. } => {
                reads_guarded(cond, stack, guards, out);
                guards.push((cond.clone(), false));
                collect_guarded(then, stack, guards, out);
                guards.pop();
                guards.push((cond.clone(), true));
                collect_guarded(otherwise, stack, guards, out);
                guards.pop();
            }
        }
    }
}

/// What [`rewrite`] calls per access: array, its subscripts, the enclosing loops.
type AccessFn<'a> = dyn FnMut(&str, &mut Vec<Expr>, &[LoopCtx]) + 'a;

/// Calls `f` on the index of every array access, in [`collect`]'s order.
fn rewrite(body: &mut [Stmt], stack: &mut Vec<LoopCtx>, f: &mut AccessFn<'_>) {
    // Pre-order, as `Expr::visit`: an access, then the reads in its (new) subscripts.
    fn expr(e: &mut Expr, stack: &[LoopCtx], f: &mut AccessFn<'_>) {
        e.visit_mut(&mut |e| {
            if let Expr::Read { array, index, .. } = e {
                f(array, index, stack);
            }
        });
    }
    for s in body {
        match s {
            Stmt::For { var, ty, lower, upper, step, body, .. } => {
                expr(lower, stack, f);
                expr(upper, stack, f);
                stack.push(LoopCtx { var: var.clone(), ty: *ty, lower: lower.clone(), upper: upper.clone(), step: *step });
                rewrite(body, stack, f);
                stack.pop();
            }
            Stmt::Assign { target, value, .. } => {
                expr(value, stack, f);
                if let LValue::Element { array, index, .. } = target {
                    for i in index.iter_mut() {
                        expr(i, stack, f);
                    }
                    f(array, index, stack);
                }
            }
            Stmt::Let { init: Some(e), .. } => expr(e, stack, f),
            Stmt::Let { .. } | Stmt::Unsupported { .. } => {}
            Stmt::If { cond, then, otherwise, .. } => {
                expr(cond, stack, f);
                rewrite(then, stack, f);
                rewrite(otherwise, stack, f);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::eval::eval_int;
    use tessera_ir::{Loc, MapKind, Section, Var};
    use ScalarType::*;

    fn v(n: &str) -> Expr {
        Expr::var(n, I32)
    }
    fn c(x: i64) -> Expr {
        Expr::int(x)
    }
    fn add(a: Expr, b: Expr) -> Expr {
        bin(BinOp::Add, a, b, I32)
    }
    fn sub(a: Expr, b: Expr) -> Expr {
        bin(BinOp::Sub, a, b, I32)
    }
    fn mul(a: Expr, b: Expr) -> Expr {
        bin(BinOp::Mul, a, b, I32)
    }
    fn read(a: &str, i: Expr) -> Expr {
        Expr::Read { array: a.into(), index: vec![i], ty: F32, loc: Loc::default() }
    }

    /// `for (v0 = 0; v0 < b0; v0++) … b[sub] = a[sub]` over flat `float *a, *b`, with
    /// the integer scalars `scalars`.
    fn region(loops: &[(&str, Expr)], write: Expr, reads: Vec<Expr>, scalars: &[&str]) -> Region {
        let value = reads.into_iter().map(|r| read("a", r)).reduce(|x, y| bin(BinOp::Add, x, y, F32)).unwrap();
        let mut body = vec![Stmt::Assign {
            target: LValue::Element { array: "b".into(), index: vec![write], ty: F32, loc: Loc::default() },
            value,
            loc: Loc::default(),
        }];
        for (var, upper) in loops.iter().rev() {
            body = vec![Stmt::For {
                var: var.to_string(),
                ty: I32,
                lower: c(0),
                upper: upper.clone(),
                step: 1,
                ne: false,
                body,
                loc: Loc::default(),
            }];
        }
        let flat = |name: &str, written: bool| Var {
            name: name.into(),
            kind: VarKind::Pointer,
            elem: F32,
            dims: vec![None],
            map: Some(MapKind::Tofrom),
            section: vec![Section { lower: c(0), length: c(1 << 20) }],
            written,
            loc: Loc::default(),
        };
        let mut vars = vec![flat("a", false), flat("b", true)];
        for s in scalars {
            vars.push(Var { name: s.to_string(), kind: VarKind::Scalar, elem: I32, dims: vec![], map: None, section: vec![], written: false, loc: Loc::default() });
        }
        Region::new(Loc::default(), vars, body)
    }

    /// The subscripts of every access of `array`, as text.
    fn subs(d: &Delinearized, array: &str) -> Vec<String> {
        let view = d.views.iter().find(|v| v.array == array).unwrap();
        view.subscripts.iter().map(|s| s.iter().map(|l| format!("[{}]", lin_text(l))).collect()).collect()
    }

    fn extents(d: &Delinearized, array: &str) -> Vec<String> {
        d.views.iter().find(|v| v.array == array).unwrap().extents.iter().map(print::expr).collect()
    }

    #[test]
    fn row_major_with_a_runtime_row_length() {
        // b[i*n + j] = a[i*n + j], i < m, j < n: a[?][n], valid for every m, n.
        let ij = add(mul(v("i"), v("n")), v("j"));
        let r = region(&[("i", v("m")), ("j", v("n"))], ij.clone(), vec![ij], &["m", "n"]);
        let d = delinearize(&r).unwrap().unwrap();
        assert_eq!(subs(&d, "a"), ["[i][j]"]);
        assert_eq!(extents(&d, "b"), ["n"]);
        assert!(d.conditions.is_empty(), "{:?}", d.conditions);
        // The rewritten region: two-dimensional accesses, the outer extent unknown.
        let a = d.region.var("a").unwrap();
        assert_eq!((a.dims.len(), a.dims[0].is_none(), a.section.is_empty()), (2, true, true));
        let mut texts = Vec::new();
        for s in &d.region.body {
            s.visit_exprs(&mut |e| if let Expr::Read { .. } = e { texts.push(print::expr(e)) });
        }
        assert_eq!(texts.len(), 1);
        assert!(texts[0].starts_with("a[") && texts[0].matches('[').count() == 2, "{}", texts[0]);
        assert!(crate::check::check_region_view(&r, &d.region, crate::options::MathMode::Exact).is_ok());
    }

    #[test]
    fn column_major_and_three_dimensions() {
        // a[i + j*n]: the index with the row length is the outer one.
        let e = add(v("i"), mul(v("j"), v("n")));
        let r = region(&[("i", v("n")), ("j", v("m"))], e.clone(), vec![e], &["m", "n"]);
        let d = delinearize(&r).unwrap().unwrap();
        assert_eq!(subs(&d, "a"), ["[j][i]"]);
        assert!(d.conditions.is_empty());
        // a[(i*ny + j)*nz + k]: a[?][ny][nz].
        let e = add(mul(add(mul(v("i"), v("ny")), v("j")), v("nz")), v("k"));
        let r = region(&[("i", v("nx")), ("j", v("ny")), ("k", v("nz"))], e.clone(), vec![e], &["nx", "ny", "nz"]);
        let d = delinearize(&r).unwrap().unwrap();
        assert_eq!(subs(&d, "a"), ["[i][j][k]"]);
        assert_eq!(extents(&d, "a"), ["ny", "nz"]);
        assert!(d.conditions.is_empty());
    }

    #[test]
    fn constant_row_lengths() {
        // a[i*100 + j - 101]: [i - 1][j - 1] of a[?][100].
        let w = add(mul(v("i"), c(100)), v("j"));
        let rd = sub(add(mul(v("i"), c(100)), v("j")), c(101));
        let r = region(&[("i", c(50)), ("j", c(100))], w, vec![rd], &[]);
        let d = delinearize(&r).unwrap().unwrap();
        assert_eq!(subs(&d, "a"), ["[i - 1][j - 1]"]);
        assert_eq!(extents(&d, "a"), ["100"]);
        // j - 1 < 0 at j = 0: a launch condition, which fails for these constants.
        assert_eq!(d.conditions.len(), 1);
        assert_eq!(d.conditions[0].text, "0 <= j - 1 < 100 for 'a[i * 100 + j - 101]'");
        assert_eq!(eval_int(&d.conditions[0].expr, &|_| None), Ok(0));
        // a[2*i] in a one-dimensional loop stays one-dimensional.
        let r = region(&[("i", c(50))], v("i"), vec![mul(c(2), v("i"))], &[]);
        assert!(delinearize(&r).unwrap().is_none());
    }

    #[test]
    fn stencil_offsets_go_to_their_dimension() {
        // a[(i + 1)*n + j - 1], 0 <= i < m, 1 <= j < n (from j < n with a shifted read).
        let rd = sub(add(mul(add(v("i"), c(1)), v("n")), v("j")), c(1));
        let mut r = region(&[("i", v("m")), ("j", v("n"))], add(mul(v("i"), v("n")), v("j")), vec![rd], &["m", "n"]);
        if let Stmt::For { body, .. } = &mut r.body[0] {
            if let Stmt::For { lower, .. } = &mut body[0] {
                *lower = c(1);
            }
        }
        let d = delinearize(&r).unwrap().unwrap();
        assert_eq!(subs(&d, "a"), ["[i + 1][j - 1]"]);
        assert!(d.conditions.is_empty(), "1 <= j < n gives 0 <= j - 1 < n: {:?}", d.conditions);
    }

    #[test]
    fn launch_conditions_are_evaluated_over_the_scalars() {
        // j < len with rows of n: valid only when len <= n (or nothing runs).
        let ij = add(mul(v("i"), v("n")), v("j"));
        let r = region(&[("i", v("m")), ("j", v("len"))], ij.clone(), vec![ij], &["m", "n", "len"]);
        let d = delinearize(&r).unwrap().unwrap();
        assert_eq!(d.conditions.len(), 2, "{:?}", d.conditions);
        assert_eq!(d.conditions[0].text, "0 <= j < n for 'a[i * n + j]'");
        let env = |m: i128, n: i128, len: i128| {
            move |name: &str| match name {
                "m" => Some(m),
                "n" => Some(n),
                "len" => Some(len),
                _ => None,
            }
        };
        let holds = |m, n, len| d.conditions.iter().all(|c| eval_int(&c.expr, &env(m, n, len)) == Ok(1));
        assert!(holds(5, 10, 10));
        assert!(holds(5, 10, 3));
        assert!(!holds(5, 10, 11));
        assert!(holds(0, 10, 11), "no iteration, nothing to check");
        assert!(holds(5, 10, 0));
    }

    /// `region` with loops `(var, lower, upper, step)` (bounds may name enclosing
    /// indices): `for (var = lower; var < upper (> for a negative step); var += step)`.
    fn nest(loops: &[(&str, Expr, Expr, i64)], write: Expr, reads: Vec<Expr>, scalars: &[&str]) -> Region {
        let mut r = region(&loops.iter().map(|(v, _, u, _)| (*v, u.clone())).collect::<Vec<_>>(), write, reads, scalars);
        let mut body = &mut r.body;
        for (_, lo, _, st) in loops {
            let Stmt::For { lower, step, body: inner, .. } = &mut body[0] else { unreachable!() };
            *lower = lo.clone();
            *step = *st;
            body = inner;
        }
        r
    }

    #[test]
    fn triangular_nests() {
        // L[i*n + j] and L[j*n + i] for 0 <= j <= i < n: isl proves both views.
        let (ij, ji) = (add(mul(v("i"), v("n")), v("j")), add(mul(v("j"), v("n")), v("i")));
        let r = nest(&[("i", c(0), v("n"), 1), ("j", c(0), add(v("i"), c(1)), 1)], ij.clone(), vec![ij, ji], &["n"]);
        let d = delinearize(&r).unwrap().unwrap();
        assert_eq!(subs(&d, "a"), ["[i][j]", "[j][i]"]);
        assert!(d.conditions.is_empty(), "{:?}", d.conditions);
        // Rows of m, j <= i < n: valid when n <= m — a launch condition over the hull
        // of j (0 … n - 1).
        let ij = add(mul(v("i"), v("m")), v("j"));
        let r = nest(&[("i", c(0), v("n"), 1), ("j", c(0), add(v("i"), c(1)), 1)], ij.clone(), vec![ij.clone()], &["n", "m"]);
        let d = delinearize(&r).unwrap().unwrap();
        assert_eq!(d.conditions.len(), 2, "one per array: {:?}", d.conditions);
        assert_eq!(d.conditions[0].text, "0 <= j < m for 'a[i * m + j]'");
        let env = |n: i128, m: i128| move |x: &str| [("n", n), ("m", m)].into_iter().find(|(k, _)| *k == x).map(|(_, v)| v);
        let holds = |n, m| d.conditions.iter().all(|c| eval_int(&c.expr, &env(n, m)) == Ok(1));
        assert!(holds(10, 10) && holds(3, 10) && holds(0, 0));
        assert!(!holds(11, 10));
        // A bound that is not affine in the enclosing index: no view.
        let r = nest(&[("i", c(0), v("n"), 1), ("j", c(0), mul(v("i"), v("i")), 1)], ij.clone(), vec![ij], &["n", "m"]);
        assert!(delinearize(&r).unwrap_err().contains("not affine in the enclosing loops' indices"));
    }

    /// The launch conditions of triangular and trapezoidal nests are never weaker than
    /// the accesses: for random nests (bounds affine in the enclosing index, steps of
    /// either sign) and random scalars, whenever the conditions hold every iteration's
    /// inner subscript is within its extent.
    #[test]
    fn triangular_conditions_imply_every_access_in_range() {
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |k: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state % k) as i64
        };
        let mut checked = 0;
        for _ in 0..400 {
            // j runs between a + b*i and c + d*i (either direction); the access is
            // a[i*m + j + e].
            let (a, b, cc, dd, e) = (next(5) - 2, next(3) - 1, next(7) - 2, next(3) - 1, next(5) - 2);
            let step = if next(2) == 0 { 1 } else { -1 };
            let lin = |k: i64, x: i64| add(c(k), mul(c(x), v("i")));
            let (lo, up) = if step > 0 { (lin(a, b), add(lin(cc, dd), v("n"))) } else { (add(lin(cc, dd), v("n")), lin(a, b)) };
            let idx = add(add(mul(v("i"), v("m")), v("j")), c(e));
            let r = nest(&[("i", c(0), v("n"), 1), ("j", lo.clone(), up.clone(), step)], idx.clone(), vec![idx], &["n", "m"]);
            let Ok(Some(d)) = delinearize(&r) else { continue };
            for _ in 0..20 {
                let (n, m) = (next(9) as i128, next(12) as i128);
                let env = |x: &str| match x {
                    "n" => Some(n),
                    "m" => Some(m),
                    _ => None,
                };
                if !d.conditions.iter().all(|c| eval_int(&c.expr, &env) == Ok(1)) {
                    continue;
                }
                checked += 1;
                for i in 0..n {
                    let at = |x: &Expr| eval_int(x, &|name| if name == "i" { Some(i) } else { env(name) }).unwrap();
                    let (l, u) = (at(&lo), at(&up));
                    let mut j = l;
                    while (step > 0 && j < u) || (step < 0 && j > u) {
                        let inner = j + e as i128;
                        assert!(inner >= 0 && inner < m, "a[i*m + j + {e}] with j from {l} to {u} (step {step}), i = {i}, n = {n}, m = {m}: {:?}", d.conditions);
                        j += step as i128;
                    }
                }
            }
        }
        assert!(checked > 100, "only {checked} cases where the conditions held");
    }

    #[test]
    fn subscripts_without_a_view() {
        // Row lengths n and m that do not divide each other.
        let e = add(mul(v("i"), v("n")), mul(v("j"), v("m")));
        let r = region(&[("i", v("m")), ("j", v("n"))], e.clone(), vec![e], &["m", "n"]);
        let why = delinearize(&r).unwrap_err();
        assert!(why.contains("do not divide each other"), "{why}");
        // A product of loop indices.
        let e = mul(v("i"), v("j"));
        let r = region(&[("i", v("m")), ("j", v("n"))], add(mul(v("i"), v("n")), v("j")), vec![e], &["m", "n"]);
        assert!(delinearize(&r).unwrap_err().contains("multiplies loop indices"));
        // `unsigned int` arithmetic wraps at 2^32 before the address is computed: no view.
        let u = |x: Expr| Expr::Cast { arg: Box::new(x), ty: U32 };
        let e = bin(BinOp::Add, bin(BinOp::Mul, u(v("i")), u(v("n")), U32), u(v("j")), U32);
        let r = region(&[("i", v("m")), ("j", v("n"))], e.clone(), vec![e], &["m", "n"]);
        assert!(delinearize(&r).unwrap().is_none());
    }

    /// The compiled region: the tiled kernel of the view, a guard with the baseline
    /// kernel of the region as written, and one-dimensional footprints of the flat
    /// arrays (what the runtime checks against `a[0:…]`).
    #[test]
    fn compiled_with_a_guard_and_flat_footprints() {
        let ij = add(mul(v("i"), v("n")), v("j"));
        let r = region(&[("i", v("m")), ("j", v("len"))], ij.clone(), vec![ij], &["m", "n", "len"]);
        let tessera = crate::Options::from_plugin_args(&["mode=tessera"]).unwrap();
        // The default mode streams the view (in strips: its row length is a run-time
        // value), under the same guard.
        let df = crate::compile_region(&r, &crate::Options::default());
        assert_eq!(df.manifest.mode, crate::options::Mode::Dataflow, "{:?}", df.fallback);
        assert_eq!(df.manifest.guard.as_ref().map(|g| g.conditions.len()), Some(2));
        let out = crate::compile_region(&r, &tessera);
        assert!(out.rejection.is_none(), "{:?}", out.rejection);
        let m = &out.manifest;
        assert_eq!(m.mode, crate::options::Mode::Tessera, "{:?}", out.fallback);
        let g = m.guard.as_ref().expect("a guard");
        assert_eq!(g.conditions.len(), 2);
        let fb = m.fallback().unwrap();
        assert_eq!((fb.mode.name(), fb.hash == fb.content_hash()), ("baseline", true));
        assert!(fb.kernel_source.contains("b[i * n + j] = a[i * n + j];"), "{}", fb.kernel_source);
        assert!(out.files.iter().any(|(f, _)| f.ends_with("_linear.cpp")));
        let plan = &out.files.iter().find(|(f, _)| f.ends_with(".plan.txt")).unwrap().1;
        assert!(plan.contains("delinearised: 'a' as a[?][n]") && plan.contains("launch condition: 0 <= j < n for 'a[i * n + j]'"), "{plan}");
        let a = m.args[0].array.as_ref().unwrap();
        assert_eq!(a.dims.len(), 1);
        let env = |name: &str| match name {
            "m" => Some(4),
            "n" => Some(10),
            "len" => Some(7),
            _ => None,
        };
        let fp = &a.footprint[0];
        assert_eq!((fp.lo.len(), eval_int(&fp.lo[0], &env), eval_int(&fp.hi[0], &env)), (1, Ok(0), Ok(36)));
        // Without a launch condition (j < n), no guard.
        let ij = add(mul(v("i"), v("n")), v("j"));
        let r = region(&[("i", v("m")), ("j", v("n"))], ij.clone(), vec![ij], &["m", "n"]);
        let out = crate::compile_region(&r, &tessera);
        assert_eq!((out.manifest.mode.name(), out.manifest.guard.is_none()), ("tessera", true));
        let out = crate::compile_region(&r, &crate::Options::default());
        assert_eq!((out.manifest.mode.name(), out.manifest.guard.is_none()), ("dataflow", true));
        // The baseline mode keeps the subscripts as written, without a guard.
        let out = crate::compile_region(&r, &crate::Options::from_plugin_args(&["mode=baseline"]).unwrap());
        assert_eq!((out.manifest.mode.name(), out.manifest.guard.is_none()), ("baseline", true));
        assert!(out.manifest.kernel_source.contains("i * n + j"), "{}", out.manifest.kernel_source);
    }

    #[test]
    fn nearest_quotients() {
        assert_eq!(nearest_quotient(-101, 100), -1);
        assert_eq!(nearest_quotient(-150, 100), -1);
        assert_eq!(nearest_quotient(150, 100), 1);
        assert_eq!(nearest_quotient(149, 100), 1);
        assert_eq!(nearest_quotient(49, 100), 0);
    }
}
