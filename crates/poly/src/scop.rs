//! The SCoP of a region: domain, schedule and access relations (paper Sec. 2, Fig. 2).
//!
//! A region is in the optimizer's input class when its body is one perfect loop nest
//! of depth d — each loop's body is exactly the next loop, the innermost body is a
//! non-empty list of array assignments — with bounds affine in integer scalars of the
//! region (a rectangular domain, paper Sec. 4: "a canonical loop nest with a
//! rectangular iteration domain") and affine subscripts. Integer scalars become isl
//! parameters (symbolic sizes); constant extents stay constants.
//!
//! Statement `S_s` is the s-th assignment of the innermost body. Its domain is the
//! iteration space of the nest, its schedule `S_s[x] -> [x, s]` (the original order,
//! statements in textual order), and every array read and the write of the statement
//! is an access with an affine subscript per dimension. Accesses are numbered in
//! execution order within a statement instance — the reads of the right-hand side in
//! pre-order, then the write — and named `R0, R1, …` / `W0, …` as in the paper.
//!
//! A statement may also accumulate into a reduction variable (`s = s + a[i]`,
//! `if (a[i] < m) m = a[i]`; the forms are those of [`crate::reduction`]): it has
//! reads only (the condition's, then the value's), and [`Scop::reductions`] lists the
//! variable with its statements. Such a variable is no parameter and may be read
//! nowhere else; any other scalar assignment is refused (`scalar-write`).
//!
//! Everything here is plain data; the isl objects are built from the text forms
//! ([`Scop::domain`], [`Scop::schedule`], [`Access::relation`]) inside
//! `optimize()` and never leave it.

use crate::affine::{self, Aff, Sym, SymNames};
use crate::reduction::{self, ScopReduction};
use crate::reject::{PolyReject, PolyRejectReason as R};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use tessera_ir::{print, Expr, LValue, Loc, Region, ScalarType, Stmt, VarKind};

/// One loop of the nest, `for (var = lower; var < upper; var += step)`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Loop {
    /// Index name.
    pub var: String,
    /// Lower bound (affine in parameters).
    pub lower: Aff,
    /// Exclusive upper bound (affine in parameters).
    pub upper: Aff,
    /// Positive constant step.
    pub step: i64,
    /// Location of the `for`.
    pub loc: Loc,
}

/// Read or write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AccessKind {
    /// An array element read.
    Read,
    /// An array element write.
    Write,
}

/// One array access of one statement.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Access {
    /// Index in [`Scop::accesses`].
    pub id: usize,
    /// `R<n>` or `W<n>` (numbered per kind, in execution order).
    pub name: String,
    /// Index of the statement in [`Scop::statements`].
    pub statement: usize,
    /// The array.
    pub array: String,
    /// Read or write.
    pub kind: AccessKind,
    /// One affine subscript per array dimension, over [`Sym::Loop`] and [`Sym::Param`].
    pub subscripts: Vec<Aff>,
    /// The access relation as isl text, `[params] -> { S0[i, j] -> A[i - 1, j] }`
    /// (unrestricted; intersect with the domain for the accesses that happen).
    pub relation: String,
    /// `A[i - 1][j]`.
    pub text: String,
    /// Location of the subscript expression.
    pub loc: Loc,
    /// A read that may not happen: inside a branch of `c ? a : b`, in the right
    /// operand of `&&` or `||`, or in a conditional accumulation (`if (c) s = s + …`).
    /// Its relation still covers every iteration, so what it reaches over-approximates
    /// what the region reads; a kernel that reads it unconditionally must not leave
    /// what the unconditional accesses of its array bound.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conditional: bool,
}

/// The reads of `e` in pre-order ([`Expr::visit`]'s), each with whether it may not
/// happen ([`Access::conditional`]) given that `e` is evaluated when `under` is false.
fn reads_of<'a>(e: &'a Expr, under: bool, out: &mut Vec<(&'a str, &'a [Expr], &'a Loc, bool)>) {
    e.visit_guarded(&mut |n, guards| {
        if let Expr::Read { array, index, loc, .. } = n {
            out.push((array, index, loc, under || !guards.is_empty()));
        }
    });
}

/// One assignment of the innermost body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Statement {
    /// `S0`, `S1`, …
    pub name: String,
    /// The statement, printed.
    pub text: String,
    /// Its accesses (indices into [`Scop::accesses`]), reads then the write (reads
    /// only for an accumulation).
    pub accesses: Vec<usize>,
    /// Location.
    pub loc: Loc,
    /// For an accumulation into a reduction variable (no array write): the variable.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<String>,
}

/// An array the nest accesses.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Array {
    /// Name.
    pub name: String,
    /// Element type.
    pub elem: ScalarType,
    /// Extent of every dimension, outermost first, when affine in parameters
    /// (`None`: unknown here; only the inner extents matter for address alignment).
    pub extents: Vec<Option<Aff>>,
    /// Whether the nest reads it.
    pub read: bool,
    /// Whether the nest writes it.
    pub written: bool,
}

/// A parameter that stands for a loop-invariant integer expression of the region's
/// scalars which is not affine in them: a product `nx*ny`, a division by a constant
/// `n/2` (paper Sec. 2's "runtime constants"). isl treats it as one more symbolic
/// size; kernels compute it before the loops as `const <ty> <name> = <expr>;`, in the
/// source's C arithmetic, and the runtime evaluates `expr` where it needs the value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Derived {
    /// Its name (an identifier unused by the region).
    pub name: String,
    /// The expression, as in the source (types and casts kept).
    pub expr: Expr,
    /// Its C type.
    pub ty: ScalarType,
}

// `Expr` compares floats by their bits, so equality is an equivalence.
impl Eq for Derived {}

/// The SCoP of a region's loop nest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Scop {
    /// Integer scalars of the region that bounds or subscripts use, then the
    /// [`Derived`] parameters: the isl parameters.
    pub params: Vec<String>,
    /// The parameters that stand for loop-invariant expressions, in order of use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub derived: Vec<Derived>,
    /// Spelling of loop indices and tile origins in dumps.
    pub names: SymNames,
    /// The loops, outermost first.
    pub loops: Vec<Loop>,
    /// The statements of the innermost body, in order.
    pub statements: Vec<Statement>,
    /// All accesses, statement by statement.
    pub accesses: Vec<Access>,
    /// The arrays accessed, in order of first access.
    pub arrays: Vec<Array>,
    /// The reduction variables of the region with the statements that accumulate into
    /// them, in the order of the region's `reduction` clauses.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reductions: Vec<ScopReduction>,
    /// The iteration domain as an isl union set.
    pub domain: String,
    /// The original schedule as an isl union map (`S_s[x] -> [x, s]`).
    pub schedule: String,
    /// Location of the region's directive.
    pub loc: Loc,
}

/// Words of isl's input syntax that cannot be used as variable names.
const ISL_KEYWORDS: [&str; 20] = [
    "exists", "and", "or", "implies", "not", "mod", "floor", "ceil", "floord", "ceild", "min", "max", "rat", "infty",
    "infinity", "NaN", "true", "false", "domain", "range",
];

/// A name usable in isl text for a C identifier.
pub(crate) fn isl_ident(name: &str) -> String {
    if ISL_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

impl Scop {
    /// Depth of the nest.
    pub fn depth(&self) -> usize {
        self.loops.len()
    }

    /// `[N, M] -> ` (or empty), the parameter prefix of isl text.
    pub(crate) fn isl_params(&self) -> String {
        if self.params.is_empty() {
            String::new()
        } else {
            format!("[{}] -> ", self.params.iter().map(|p| isl_ident(p)).collect::<Vec<_>>().join(", "))
        }
    }

    /// An array by name.
    pub fn array(&self, name: &str) -> Option<&Array> {
        self.arrays.iter().find(|a| a.name == name)
    }

    /// Whether the extent of loop `x` is a compile-time constant (`upper − lower`).
    pub fn constant_extent(&self, x: usize) -> Option<i64> {
        self.loops[x].upper.sub(&self.loops[x].lower).as_constant()
    }
}

/// isl spelling of a [`Sym`] in the SCoP's own text (loops and parameters only).
pub(crate) fn isl_sym(scop_loops: &[Loop], s: &Sym) -> String {
    match s {
        Sym::Loop(x) => isl_ident(&scop_loops[*x].var),
        Sym::Param(p) => isl_ident(p),
        Sym::Tile(x) => format!("t_{x}"),
        Sym::Intra(x) => format!("r_{x}"),
    }
}

/// Names not used by anything in the SCoP: `base`, `base_`, `base__`, …
pub(crate) fn fresh(used: &mut HashSet<String>, base: &str) -> String {
    let mut n = base.to_string();
    while used.contains(&n) || ISL_KEYWORDS.contains(&n.as_str()) {
        n.push('_');
    }
    used.insert(n.clone());
    n
}

fn reject(r: R, loc: &Loc) -> PolyReject {
    PolyReject::new(r, loc)
}

/// Builds the SCoP of a region, or says why the region is outside the input class.
pub fn extract(region: &Region) -> Result<Scop, PolyReject> {
    let rloc = &region.location;
    // 1. The perfect nest.
    let mut loops_ir: Vec<&Stmt> = Vec::new();
    let mut body: &[Stmt] = &region.body;
    let stmts: &[Stmt] = loop {
        let loops_here = body.iter().filter(|s| matches!(s, Stmt::For { .. })).count();
        match (body, loops_here) {
            ([s @ Stmt::For { body: inner, .. }], _) => {
                loops_ir.push(s);
                body = inner;
            }
            ([], _) if loops_ir.is_empty() => {
                return Err(reject(R::NotALoopNest { what: "the region body is empty".into() }, rloc))
            }
            ([], _) => return Err(reject(R::NotALoopNest { what: "the innermost loop body is empty".into() }, rloc)),
            (_, 0) if loops_ir.is_empty() => {
                return Err(reject(R::NotALoopNest { what: "the region body contains no loop".into() }, rloc))
            }
            (_, 0) => break body,
            (b, n) => {
                let loc = b.iter().find(|s| !matches!(s, Stmt::For { .. })).map_or(rloc, |s| s.loc());
                let what = match (n, loops_ir.last()) {
                    (n, _) if n > 1 => format!("{n} sibling loops"),
                    (_, Some(Stmt::For { var, .. })) => format!("statements beside the loop nested in '{var}'"),
                    _ => "statements beside the loop".to_string(),
                };
                return Err(reject(R::NotALoopNest { what }, loc));
            }
        }
    };
    // 2. Reductions: which statements accumulate into which variable; the variables
    // are read nowhere else.
    let mut reductions = reductions(region, &loops_ir, stmts)?;
    // Parameters: integer scalars of the region (a reduction variable is the private
    // copy inside, which varies).
    let int_scalars: Vec<&str> = region
        .vars
        .iter()
        .filter(|v| v.kind == VarKind::Scalar && v.elem.is_integer() && region.reduction(&v.name).is_none())
        .map(|v| v.name.as_str())
        .collect();
    let loop_vars: Vec<String> = loops_ir
        .iter()
        .map(|s| match s {
            Stmt::For { var, .. } => var.clone(),
            _ => unreachable!(),
        })
        .collect();
    let mut used_params: Vec<String> = Vec::new();
    // Loop-invariant, non-affine expressions of the scalars: new parameters.
    let derived: std::cell::RefCell<Vec<Derived>> = std::cell::RefCell::new(Vec::new());
    let taken: HashSet<String> = region.vars.iter().map(|v| v.name.clone()).chain(loop_vars.iter().cloned()).collect();
    let derive = |e: &Expr| -> Option<Sym> {
        let ty = e.ty()?;
        let mut d = derived.borrow_mut();
        if let Some(x) = d.iter().find(|x| x.expr == *e) {
            return Some(Sym::Param(x.name.clone()));
        }
        let mut used: HashSet<String> = taken.clone();
        used.extend(d.iter().map(|x| x.name.clone()));
        let name = fresh(&mut used, &derived_name(e));
        d.push(Derived { name: name.clone(), expr: e.clone(), ty });
        Some(Sym::Param(name))
    };
    let note_params = |a: &Aff, used: &mut Vec<String>| {
        for t in &a.terms {
            if let Sym::Param(p) = &t.sym {
                if !used.contains(p) {
                    used.push(p.clone());
                }
            }
        }
    };
    // 3. Loops.
    let mut loops = Vec::new();
    for s in &loops_ir {
        let Stmt::For { var, ty, lower, upper, step, ne, loc, .. } = s else { unreachable!() };
        if *ne && !crate::normalize::ne_is_exact(*ty) {
            return Err(reject(R::NotEqualTest { var: var.clone(), ty: ty.c_name().into() }, loc));
        }
        // The comparison converts the index to `cmp`: exact (every index value kept)
        // unless it makes a signed index unsigned or narrows it.
        let cmp = upper.ty().unwrap_or(*ty);
        let preserving = cmp.is_integer()
            && match (ty.is_signed(), cmp.is_signed()) {
                (true, true) | (false, false) => cmp.size() >= ty.size(),
                (false, true) => cmp.size() > ty.size(),
                (true, false) => false,
            };
        if !ty.is_integer() || ty.size() < 4 || !preserving {
            return Err(reject(
                R::WrappingLoop { var: var.clone(), ty: ty.c_name().into(), cmp: cmp.c_name().into() },
                loc,
            ));
        }
        let lookup = |n: &str| {
            if let Some(y) = loop_vars.iter().position(|v| v == n) {
                Some(Sym::Loop(y))
            } else {
                int_scalars.contains(&n).then(|| Sym::Param(n.to_string()))
            }
        };
        let bound = |e: &Expr| -> Result<Aff, PolyReject> {
            check_expr(e)?;
            let a = affine::from_expr_with(e, &lookup, &mut |x| derive(x))
                .ok_or_else(|| reject(R::NonAffineBound { var: var.clone(), bound: print::expr(e) }, loc))?;
            if a.mentions(|s| matches!(s, Sym::Loop(_))) {
                return Err(reject(R::NonRectangular { var: var.clone(), bound: print::expr(e) }, loc));
            }
            Ok(a)
        };
        let (lower, upper) = (bound(lower)?, bound(upper)?);
        if *step < 1 {
            // `optimize` rewrites decreasing loops first (`crate::normalize`).
            return Err(reject(
                R::UnsupportedStatement { what: "loop step".into(), text: format!("{var} += {step}") },
                loc,
            ));
        }
        note_params(&lower, &mut used_params);
        note_params(&upper, &mut used_params);
        loops.push(Loop { var: var.clone(), lower, upper, step: *step, loc: loc.clone() });
    }
    // 4. Statements and accesses.
    let lookup = |n: &str| {
        if let Some(y) = loop_vars.iter().position(|v| v == n) {
            Some(Sym::Loop(y))
        } else {
            int_scalars.contains(&n).then(|| Sym::Param(n.to_string()))
        }
    };
    let names = SymNames { loops: loop_vars.clone(), tiles: Vec::new() };
    let mut statements = Vec::new();
    let mut accesses: Vec<Access> = Vec::new();
    let mut arrays: Vec<Array> = Vec::new();
    let (mut nr, mut nw) = (0, 0);
    for (sidx, s) in stmts.iter().enumerate() {
        let accumulates = reductions.iter().find(|r| r.statements.contains(&sidx)).map(|r| r.var.clone());
        // An accumulation `if (c) s = …`: the condition's reads, then the value's.
        let (cond, target, value, sloc) = match s {
            Stmt::If { cond, then, loc, .. } if accumulates.is_some() => match then.as_slice() {
                [Stmt::Assign { target, value, .. }] => (Some(cond), target, value, loc),
                _ => unreachable!("checked by reduction::accumulation"),
            },
            Stmt::Assign { target, value, loc } => (None, target, value, loc),
            Stmt::Let { name, .. } => {
                return Err(reject(
                    R::UnsupportedStatement { what: "local declaration".into(), text: name.clone() },
                    s.loc(),
                ))
            }
            Stmt::If { cond, .. } => {
                return Err(reject(
                    R::UnsupportedStatement { what: "if statement".into(), text: format!("if ({})", print::expr(cond)) },
                    s.loc(),
                ))
            }
            Stmt::Unsupported { what, text, .. } => {
                return Err(reject(R::UnsupportedStatement { what: what.clone(), text: text.clone() }, s.loc()))
            }
            Stmt::For { .. } => unreachable!("loops were split off above"),
        };
        if let Some(c) = cond {
            check_expr(c)?;
        }
        check_expr(value)?;
        let mut ids = Vec::new();
        let mut add = |array: &str,
                       index: &[Expr],
                       kind: AccessKind,
                       conditional: bool,
                       loc: &Loc,
                       accesses: &mut Vec<Access>,
                       arrays: &mut Vec<Array>,
                       used_params: &mut Vec<String>|
         -> Result<usize, PolyReject> {
            let var = region.var(array).filter(|v| v.kind != VarKind::Scalar).ok_or_else(|| {
                reject(R::BadArrayAccess { array: array.to_string(), what: "not an array of the region".into() }, loc)
            })?;
            if var.dims.len() != index.len() {
                return Err(reject(
                    R::BadArrayAccess {
                        array: array.to_string(),
                        what: format!("{} subscript(s) for {} dimension(s)", index.len(), var.dims.len()),
                    },
                    loc,
                ));
            }
            let mut subs = Vec::new();
            for e in index {
                let a = affine::from_expr_with(e, &lookup, &mut |x| derive(x)).ok_or_else(|| {
                    reject(R::NonAffineSubscript { array: array.to_string(), subscript: print::expr(e) }, loc)
                })?;
                note_params(&a, used_params);
                subs.push(a);
            }
            if !arrays.iter().any(|a| a.name == array) {
                // Extents from the type (the outermost may be unknown: only inner ones
                // matter, for row strides).
                let param = |n: &str| int_scalars.contains(&n).then(|| Sym::Param(n.into()));
                let extents = var
                    .dims
                    .iter()
                    .map(|e| e.as_ref().and_then(|e| affine::from_expr_with(e, &param, &mut |x| derive(x))))
                    .collect::<Vec<Option<Aff>>>();
                // Derived parameters of extents are parameters of the SCoP (plain
                // scalars only as far as bounds and subscripts name them).
                for t in extents.iter().flatten().flat_map(|a| &a.terms) {
                    if let Sym::Param(p) = &t.sym {
                        if !int_scalars.contains(&p.as_str()) && !used_params.contains(p) {
                            used_params.push(p.clone());
                        }
                    }
                }
                arrays.push(Array { name: array.to_string(), elem: var.elem, extents, read: false, written: false });
            }
            let arr = arrays.iter_mut().find(|a| a.name == array).expect("just added");
            match kind {
                AccessKind::Read => arr.read = true,
                AccessKind::Write => arr.written = true,
            }
            let id = accesses.len();
            let name = match kind {
                AccessKind::Read => {
                    nr += 1;
                    format!("R{}", nr - 1)
                }
                AccessKind::Write => {
                    nw += 1;
                    format!("W{}", nw - 1)
                }
            };
            let text = format!("{array}{}", subs.iter().map(|a| format!("[{}]", a.display(&names))).collect::<String>());
            accesses.push(Access {
                id,
                name,
                statement: sidx,
                array: array.to_string(),
                kind,
                subscripts: subs,
                relation: String::new(),
                text,
                loc: loc.clone(),
                conditional,
            });
            Ok(id)
        };
        // Reads, pre-order (the condition's first).
        let mut reads: Vec<(&str, &[Expr], &Loc, bool)> = Vec::new();
        if let Some(c) = cond {
            reads_of(c, false, &mut reads);
        }
        reads_of(value, cond.is_some(), &mut reads);
        for (array, index, loc, conditional) in reads {
            ids.push(add(array, index, AccessKind::Read, conditional, loc, &mut accesses, &mut arrays, &mut used_params)?);
        }
        match target {
            LValue::Element { array, index, loc, .. } => {
                for e in index {
                    check_expr(e)?;
                }
                ids.push(add(array, index, AccessKind::Write, false, loc, &mut accesses, &mut arrays, &mut used_params)?);
            }
            LValue::Scalar { name, .. } if accumulates.as_ref() == Some(name) => {}
            LValue::Local { name, .. } => return Err(reject(R::ScalarWrite { name: name.clone() }, sloc)),
            LValue::Scalar { name, loc, .. } => return Err(reject(R::ScalarWrite { name: name.clone() }, loc)),
        }
        let mut text = format!("{} = {}", print::lvalue(target), print::expr(value));
        if let Some(c) = cond {
            text = format!("if ({}) {text}", print::expr(c));
        }
        statements.push(Statement { name: format!("S{sidx}"), text, accesses: ids, loc: sloc.clone(), reduction: accumulates });
    }
    // Parameters in region order (stable), only those used.
    let mut params: Vec<String> =
        int_scalars.iter().filter(|p| used_params.iter().any(|u| u == *p)).map(|p| p.to_string()).collect();
    // The derived parameters in use (extents of arrays may name more), after them.
    let derived: Vec<Derived> = derived.into_inner().into_iter().filter(|d| used_params.contains(&d.name)).collect();
    params.extend(derived.iter().map(|d| d.name.clone()));
    // Tile origin names: `t<var>` unique against everything else.
    let mut used: HashSet<String> = loop_vars.iter().cloned().chain(params.iter().cloned()).collect();
    used.extend(region.vars.iter().map(|v| v.name.clone()));
    let tiles: Vec<String> = loop_vars.iter().map(|v| fresh(&mut used, &format!("t{v}"))).collect();
    let mut scop = Scop {
        params,
        derived,
        names: SymNames { loops: loop_vars, tiles },
        loops,
        statements,
        accesses,
        arrays,
        reductions: std::mem::take(&mut reductions),
        domain: String::new(),
        schedule: String::new(),
        loc: rloc.clone(),
    };
    // 5. isl text.
    let p = scop.isl_params();
    let dom: Vec<String> = (0..scop.statements.len()).map(|s| format!("{}{}", stmt_tuple(&scop, s), domain_constraints(&scop, None))).collect();
    scop.domain = format!("{p}{{ {} }}", dom.join("; "));
    let sch: Vec<String> = (0..scop.statements.len())
        .map(|s| format!("{} -> [{}, {s}]", stmt_tuple(&scop, s), loop_list(&scop)))
        .collect();
    scop.schedule = format!("{p}{{ {} }}", sch.join("; "));
    for a in 0..scop.accesses.len() {
        let acc = &scop.accesses[a];
        let subs: Vec<String> = acc.subscripts.iter().map(|e| e.format(&|s| isl_sym(&scop.loops, s))).collect();
        let rel = format!("{p}{{ {} -> {}[{}] }}", stmt_tuple(&scop, acc.statement), isl_ident(&acc.array), subs.join(", "));
        scop.accesses[a].relation = rel;
    }
    Ok(scop)
}

/// The reductions of a region whose perfect nest is `loops` around `stmts`: per
/// reduction variable the statements that accumulate into it ([`reduction`]'s
/// forms). A variable read anywhere else — another statement, a subscript, a loop
/// bound — or assigned another way makes the region untiled (`reduction`).
fn reductions(region: &Region, loops: &[&Stmt], stmts: &[Stmt]) -> Result<Vec<ScopReduction>, PolyReject> {
    let mut out = Vec::new();
    for r in region.reductions.iter().filter(|r| r.unsupported.is_none()) {
        let Some(v) = region.var(&r.var).filter(|v| v.kind == VarKind::Scalar) else { continue };
        let not_tiled = |why: String, loc: &Loc| reject(reduction::not_tiled(r.op, &r.var, why), loc);
        for l in loops {
            if let Stmt::For { var, lower, upper, loc, .. } = l {
                if reduction::reads(lower, &r.var) || reduction::reads(upper, &r.var) {
                    return Err(not_tiled(format!("'{}' is read by a bound of loop '{var}'", r.var), loc));
                }
            }
        }
        let mut red = ScopReduction { var: r.var.clone(), op: r.op, ty: v.elem, statements: Vec::new(), exact_in_any_order: true };
        for (i, st) in stmts.iter().enumerate() {
            match reduction::accumulation(st, &r.var, r.op, v.elem) {
                Ok(Some(acc)) => {
                    red.statements.push(i);
                    red.exact_in_any_order &= acc.exact_in_any_order;
                }
                Ok(None) => {
                    let mut read = false;
                    st.visit_exprs(&mut |e| read |= reduction::reads(e, &r.var));
                    if read {
                        return Err(not_tiled(format!("'{}' is read outside its accumulation", r.var), st.loc()));
                    }
                }
                Err(why) => return Err(not_tiled(why, st.loc())),
            }
        }
        out.push(red);
    }
    Ok(out)
}

/// A readable identifier for a derived parameter: `nx*ny` → `nx_ny`, `n / 2` →
/// `n_div_2`, `(n + 1) / 2` → `n_1_div_2`.
fn derived_name(e: &Expr) -> String {
    let text = print::expr(e);
    let mut out = String::new();
    let mut sep = false;
    for c in text.chars() {
        let word = match c {
            c if c.is_ascii_alphanumeric() || c == '_' => {
                if sep && !out.is_empty() {
                    out.push('_');
                }
                sep = false;
                out.push(c);
                continue;
            }
            '/' => "div",
            '%' => "mod",
            '-' => "sub",
            _ => {
                sep = true;
                continue;
            }
        };
        if !out.is_empty() {
            out.push('_');
        }
        out.push_str(word);
        sep = true;
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "p_");
    }
    out
}

/// `S0[i, j, k]`.
pub(crate) fn stmt_tuple(scop: &Scop, s: usize) -> String {
    format!("{}[{}]", scop.statements[s].name, loop_list(scop))
}

fn loop_list(scop: &Scop) -> String {
    scop.loops.iter().map(|l| isl_ident(&l.var)).collect::<Vec<_>>().join(", ")
}

/// ` : lb <= i < ub and …` for the domain; `pad = Some((x, padded_upper))` replaces the
/// upper bound of loop x (step 3 padding).
pub(crate) fn domain_constraints(scop: &Scop, pad: Option<(usize, &str)>) -> String {
    let f = |a: &Aff| a.format(&|s| isl_sym(&scop.loops, s));
    let cs: Vec<String> = scop
        .loops
        .iter()
        .enumerate()
        .map(|(x, l)| {
            let v = isl_ident(&l.var);
            let upper = match pad {
                Some((px, u)) if px == x => u.to_string(),
                _ => f(&l.upper),
            };
            let mut c = format!("{} <= {v} < {}", f(&l.lower), upper);
            if l.step > 1 {
                c.push_str(&format!(" and ({v} - ({})) mod {} = 0", f(&l.lower), l.step));
            }
            c
        })
        .collect();
    format!(" : {}", cs.join(" and "))
}

/// Rejects expression nodes the optimizer cannot model (defensive: the compiler's
/// check rejects them first).
fn check_expr(e: &Expr) -> Result<(), PolyReject> {
    let mut err = None;
    e.visit(&mut |n| {
        if err.is_none() {
            if let Expr::Unsupported { what, text, loc } = n {
                err = Some(reject(R::UnsupportedExpression { what: what.clone(), text: text.clone() }, loc));
            }
        }
    });
    err.map_or(Ok(()), Err)
}
