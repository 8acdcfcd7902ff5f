//! The input-class check: which regions Tessera offloads.
//!
//! A region is offloaded when every statement and expression is representable, every
//! array subscript and loop bound is affine (in loop indices and integer scalars of
//! the enclosing function that the region does not change), every math call is of an
//! exact function (or of any with `math=relaxed`, [`MathMode`]), every array's size is
//! known, every scalar it writes or reduces into has somewhere to go (mapped
//! `tofrom`/`from`: back to the host; no map clause: the region's own copy), and the
//! data environment is one Tessera implements. Reductions come first, then the body
//! in source order, then the variables; the first violation becomes the remark.
//! The rules are the input class of `docs/method.md`; the dependence and
//! tiling checks of the optimizer come on top of these.

use crate::options::MathMode;
use crate::reject::{RejectReason, Rejection};
use std::collections::HashSet;
use tessera_ir::{print, Expr, LValue, Loc, MapKind, MathFn, Region, ScalarType, Stmt, Var, VarKind};

fn reject(reason: RejectReason, loc: &Loc) -> Rejection {
    Rejection { reason, loc: loc.clone() }
}

/// Checks the region against the input class, with the default math mode (only exact
/// math functions).
pub fn check_region(region: &Region) -> Result<(), Rejection> {
    check_region_with(region, MathMode::Exact)
}

/// Checks the region against the input class; `math` says which math functions a
/// kernel may call.
pub fn check_region_with(region: &Region, math: MathMode) -> Result<(), Rejection> {
    check_region_view(region, region, math)
}

/// Checks a region whose statements the compiler rewrote into `view` (delinearised
/// subscripts): the statements of `view`, the clauses and variables of `region`
/// (what the runtime maps is the region as written).
pub fn check_region_view(region: &Region, view: &Region, math: MathMode) -> Result<(), Rejection> {
    if let Some(c) = region.unsupported_clauses.first() {
        return Err(reject(RejectReason::UnsupportedClause { clause: c.name.clone() }, &c.loc));
    }
    check_reductions(region)?;
    check_array_reductions(region)?;
    check_body(view, math)?;
    check_vars(region)
}

fn check_body(region: &Region, math: MathMode) -> Result<(), Rejection> {
    // Parameters are the integer scalars the region does not change: a scalar it
    // assigns, or a reduction variable (a private copy inside), varies.
    let params: HashSet<&str> = region
        .vars
        .iter()
        .filter(|v| v.kind == VarKind::Scalar && v.elem.is_integer() && !v.written && region.reduction(&v.name).is_none())
        .map(|v| v.name.as_str())
        .collect();
    let mut cx = Checker { region, params, indices: Vec::new(), math };
    cx.stmts(&region.body)
}

fn check_vars(region: &Region) -> Result<(), Rejection> {
    let returned: Vec<&str> = region.vars.iter().filter(|v| v.writes_back()).map(|v| v.name.as_str()).collect();
    for v in &region.vars {
        if v.kind == VarKind::Scalar {
            check_written_scalar(region, v)?;
            continue;
        }
        // The runtime evaluates sizes and sections from the scalars' values at the
        // directive; a scalar the region returns is not among them (it is a
        // one-element array argument, see `manifest_arg`).
        let mut uses_returned = None;
        for e in v.dims.iter().flatten().chain(v.section.iter().flat_map(|s| [&s.lower, &s.length])) {
            e.visit(&mut |n| {
                if let Expr::Var { name, .. } = n {
                    if uses_returned.is_none() && returned.contains(&name.as_str()) {
                        uses_returned = Some(name.clone());
                    }
                }
            });
        }
        if let Some(name) = uses_returned {
            return Err(reject(RejectReason::ScalarWrite { name }, &v.loc));
        }
        if let Some(m) = v.map {
            // Exit-only map types and the manifest-only `present` never come from a
            // target construct's map clause (clang rejects them).
            if !matches!(m.base(), MapKind::To | MapKind::From | MapKind::Tofrom | MapKind::Alloc) {
                return Err(reject(RejectReason::UnsupportedClause { clause: format!("map({}: …)", m.name()) }, &v.loc));
            }
        }
        if is_attached(v) {
            // OpenMP: a pointer without a map clause is a zero-length array section;
            // the data it points at must be present (mapped by an enclosing data
            // region), and its extent comes from that mapping at run time. The inner
            // extents, which subscripts need, must still be known.
            resolved_dims_from(v, &[], 1)?;
        } else {
            resolved_dims(v)?;
        }
        if v.written && v.map.map(MapKind::base) == Some(MapKind::To) {
            return Err(reject(RejectReason::WriteToInput { array: v.name.clone() }, &v.loc));
        }
    }
    Ok(())
}

/// The reductions name scalar variables of the region, each once.
fn check_reductions(region: &Region) -> Result<(), Rejection> {
    for r in &region.reductions {
        let Some(what) = &r.unsupported else { continue };
        let (why, hint) = match what.as_str() {
            "strided array section" => (
                "Tessera reduces contiguous array sections, not strided ones".to_string(),
                "reduce the whole section, or one section per stride class",
            ),
            "array section that is not of a variable" => (
                "Tessera reduces arrays and sections of variables, not of members or expressions".to_string(),
                "reduce a local array, or a section of a pointer variable that points to the data",
            ),
            "declared in the region" => (
                "a reduction variable declared inside the target region is not supported".to_string(),
                "declare it before the directive and map it 'tofrom'",
            ),
            "part of the region" => (
                "a reduction on a construct that is only part of the target region is not supported".to_string(),
                "put the clause on the target construct, or make the construct the region's only statement",
            ),
            "second operator" => {
                ("a variable reduced with two operators is not supported".to_string(), "reduce into two variables")
            }
            other => (format!("a reduction on a {other} is not supported"), "reduce a scalar variable"),
        };
        let text = format!("reduction({}: {})", r.op.name(), r.var);
        return Err(reject(RejectReason::UnsupportedReduction { text, why, hint: hint.to_string() }, &r.loc));
    }
    for (i, r) in region.reductions.iter().enumerate() {
        let what = match region.var(&r.var) {
            None => Some("reduction on an unknown variable"),
            Some(v) if v.kind != VarKind::Scalar => Some("reduction on an array"),
            Some(_) if region.reductions[..i].iter().any(|o| o.var == r.var) => Some("second reduction of one variable"),
            Some(_) => None,
        };
        if let Some(what) = what {
            let text = format!("reduction({}: {})", r.op.name(), r.var);
            return Err(reject(RejectReason::UnsupportedExpression { what: what.into(), text }, &r.loc));
        }
    }
    Ok(())
}

/// The array reductions name array variables that the target construct maps (the
/// runtime turns the reduced elements of that mapping into the private copy).
fn check_array_reductions(region: &Region) -> Result<(), Rejection> {
    for (i, r) in region.array_reductions.iter().enumerate() {
        let text = || format!("reduction({}: {})", r.op.name(), r.var);
        let what = match region.var(&r.var) {
            None => Some("array reduction on an unknown variable"),
            Some(v) if v.kind == VarKind::Scalar => Some("array reduction on a scalar"),
            Some(v) if r.section.len() > v.dims.len() => Some("array reduction with more subscripts than dimensions"),
            Some(_) if region.array_reductions[..i].iter().any(|o| o.var == r.var) => {
                Some("second array reduction of one variable")
            }
            Some(_) => None,
        };
        if let Some(what) = what {
            return Err(reject(RejectReason::UnsupportedExpression { what: what.into(), text: text() }, &r.loc));
        }
        let v = region.var(&r.var).expect("checked above");
        if is_attached(v) {
            return Err(reject(
                RejectReason::UnsupportedReduction {
                    text: text(),
                    why: "the reduced array is not mapped by the target construct".into(),
                    hint: format!("map it on the target construct, e.g. 'map(tofrom: {}[0:n])'", r.var),
                },
                &r.loc,
            ));
        }
    }
    Ok(())
}

/// A scalar the region writes (or reduces into) must have somewhere to go: mapped
/// `tofrom`/`from` it returns to the host ([`Var::writes_back`]); without a map
/// clause it is firstprivate, the region's own copy. Mapped `to` or `alloc`, the
/// device copy would be discarded while a run on the host keeps the writes.
fn check_written_scalar(region: &Region, v: &Var) -> Result<(), Rejection> {
    let reduction = region.reduction(&v.name);
    if !v.written && reduction.is_none() {
        return Ok(());
    }
    let loc = reduction.map_or(&v.loc, |r| &r.loc);
    match v.map.map(MapKind::base) {
        Some(MapKind::To) => Err(reject(RejectReason::WriteToInput { array: v.name.clone() }, loc)),
        Some(MapKind::Alloc) => {
            let clause = format!("map(alloc: {}) of a scalar the region assigns (use 'tofrom' or 'from')", v.name);
            Err(reject(RejectReason::UnsupportedClause { clause }, loc))
        }
        _ => Ok(()),
    }
}

/// Whether the runtime finds the variable's data in the present table (a pointer
/// without a map clause), rather than mapping it for the launch.
pub fn is_attached(v: &Var) -> bool {
    v.kind == VarKind::Pointer
        && (v.map.is_none()
            // A zero-length section (`map(p[:0])`): OpenMP looks the pointer's data up
            // in the device data environment, like a pointer without a map clause.
            || v.section.first().is_some_and(|s| matches!(s.length, tessera_ir::Expr::Int { value: 0, .. })))
}

/// The extent of every dimension of an array variable: from its type, or for the
/// outermost dimension from its map-clause section (`lower + length`).
pub fn resolved_dims(v: &Var) -> Result<Vec<Expr>, Rejection> {
    resolved_dims_from(v, &v.section, 0)
}

/// The extents of dimensions `from..` of `v` (all of them with `from = 0`), the
/// outermost one taken from `section` when the type does not give it.
pub fn resolved_dims_from(v: &Var, section: &[tessera_ir::Section], from: usize) -> Result<Vec<Expr>, Rejection> {
    v.dims
        .iter()
        .enumerate()
        .skip(from)
        .map(|(d, e)| match (e, section.get(d)) {
            (Some(e), _) => Ok(e.clone()),
            (None, Some(s)) if d == 0 => {
                let ty = match (s.lower.ty(), s.length.ty()) {
                    (Some(a), Some(b)) if a.size() >= b.size() => a,
                    (_, Some(b)) => b,
                    _ => tessera_ir::ScalarType::I64,
                };
                Ok(Expr::Binary { op: tessera_ir::BinOp::Add, lhs: Box::new(s.lower.clone()), rhs: Box::new(s.length.clone()), ty })
            }
            _ => Err(reject(RejectReason::UnknownExtent { array: v.name.clone() }, &v.loc)),
        })
        .collect()
}

/// The category of the plugin's unsupported statement for a `for` loop outside the
/// canonical form: `non-canonical loop: <why>`.
const NON_CANONICAL: &str = "non-canonical loop";

/// The category of the plugin's unsupported call: `call: <why>` (plain `call` in IR
/// written before the plugin said why).
const CALL: &str = "call";

/// The category of a floating multiply-add the host compilation may fuse (see
/// `tessera_ir::Expr::Unsupported`).
const FP_CONTRACTION: &str = "fp-contraction";

/// The reason for an unsupported node of category `what`.
fn unsupported_reason(what: &str, text: &str) -> RejectReason {
    if let Some(why) = what.strip_prefix(CALL).filter(|w| w.is_empty() || w.starts_with(':')) {
        let why = why.trim_start_matches(':').trim();
        let why = if why.is_empty() { "Tessera cannot see what it does" } else { why };
        RejectReason::Call { text: text.to_string(), why: why.to_string() }
    } else if what == FP_CONTRACTION {
        RejectReason::HostContraction { text: text.to_string() }
    } else if let Some(why) = what.strip_prefix(NON_CANONICAL) {
        RejectReason::NonCanonicalLoop { text: text.to_string(), why: why.trim_start_matches(": ").to_string() }
    } else {
        RejectReason::UnsupportedExpression { what: what.to_string(), text: text.to_string() }
    }
}

struct Checker<'a> {
    region: &'a Region,
    params: HashSet<&'a str>,
    /// Enclosing loop indices, outermost first.
    indices: Vec<&'a str>,
    /// Which math functions a kernel may call.
    math: MathMode,
}

impl<'a> Checker<'a> {
    /// Whether `e` is affine in the enclosing loop indices and the integer scalars,
    /// counting loop-invariant expressions of the scalars (`n/2`, `nx*ny`) as
    /// parameters, as the optimizer does (`tessera_poly::affine::from_expr_with`).
    fn is_affine(&self, e: &Expr) -> bool {
        use tessera_poly::Sym;
        let lookup = |n: &str| {
            if let Some(x) = self.indices.iter().position(|i| *i == n) {
                Some(Sym::Loop(x))
            } else {
                self.params.contains(n).then(|| Sym::Param(n.to_string()))
            }
        };
        tessera_poly::affine::from_expr_with(e, &lookup, &mut |x| Some(Sym::Param(print::expr(x)))).is_some()
    }

    fn stmts(&mut self, body: &'a [Stmt]) -> Result<(), Rejection> {
        body.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &'a Stmt) -> Result<(), Rejection> {
        match s {
            Stmt::For { var, lower, upper, step, body, loc, .. } => {
                if *step == 0 {
                    // The plugin never writes one; an IR file might.
                    let reason = RejectReason::NonCanonicalLoop { text: format!("for ({var} …)"), why: "its step is 0".into() };
                    return Err(reject(reason, loc));
                }
                for b in [lower, upper] {
                    self.expr(b)?;
                    if !self.is_affine(b) {
                        let reason = RejectReason::NonAffineBound { var: var.clone(), bound: print::expr(b) };
                        return Err(reject(reason, loc));
                    }
                }
                self.indices.push(var);
                let r = self.stmts(body);
                self.indices.pop();
                r
            }
            Stmt::Assign { target, value, .. } => {
                match target {
                    LValue::Element { array, index, loc, .. } => self.access(array, index, loc)?,
                    LValue::Scalar { name, loc, .. } => {
                        if self.region.var(name).is_none_or(|v| v.kind != VarKind::Scalar || !v.written) {
                            // The plugin lists every assigned scalar, written.
                            let what = "assignment to an unknown scalar".to_string();
                            return Err(reject(RejectReason::UnsupportedExpression { what, text: name.clone() }, loc));
                        }
                    }
                    LValue::Local { .. } => {}
                }
                self.expr(value)
            }
            Stmt::Let { init, .. } => init.as_ref().map_or(Ok(()), |e| self.expr(e)),
            Stmt::If { cond, then, otherwise, .. } => {
                self.expr(cond)?;
                self.stmts(then)?;
                self.stmts(otherwise)
            }
            Stmt::Unsupported { what, text, loc } => {
                let reason = match unsupported_reason(what, text) {
                    RejectReason::UnsupportedExpression { what, text } => RejectReason::UnsupportedStatement { what, text },
                    r => r,
                };
                Err(reject(reason, loc))
            }
        }
    }

    /// Checks an expression tree: representable, and affine subscripts.
    fn expr(&self, e: &'a Expr) -> Result<(), Rejection> {
        let mut result = Ok(());
        e.visit(&mut |n| {
            if result.is_err() {
                return;
            }
            result = match n {
                Expr::Unsupported { what, text, loc } => Err(reject(unsupported_reason(what, text), loc)),
                Expr::Read { array, index, loc, .. } => self.access(array, index, loc),
                Expr::Call { func, args, ty, loc } => self.call(*func, args, *ty, loc, n),
                _ => Ok(()),
            };
        });
        result
    }

    /// Checks a math call (its arguments are visited on their own): well formed, and a
    /// function the math mode admits.
    fn call(&self, func: MathFn, args: &[Expr], ty: ScalarType, loc: &Loc, whole: &Expr) -> Result<(), Rejection> {
        // The plugin writes every call in this form; anything else is a malformed IR file.
        if !ty.is_float() || args.len() != func.arity() || args.iter().any(|a| a.ty().is_some_and(|t| t != ty)) {
            let what = format!("call of '{}' with arguments not of its type", func.c_name(ty));
            return Err(reject(RejectReason::UnsupportedExpression { what, text: print::expr(whole) }, loc));
        }
        if !func.is_exact() && self.math == MathMode::Exact {
            return Err(reject(RejectReason::InexactMath { func: func.c_name(ty) }, loc));
        }
        Ok(())
    }

    /// Checks one array access `array[index…]`.
    fn access(&self, array: &str, index: &'a [Expr], loc: &Loc) -> Result<(), Rejection> {
        let v = self.region.var(array).filter(|v| v.kind != VarKind::Scalar);
        let Some(v) = v else {
            let what = "access to an unknown array".to_string();
            return Err(reject(RejectReason::UnsupportedExpression { what, text: print::subscripted(array, index) }, loc));
        };
        if index.len() != v.dims.len() {
            let what = format!("access with {} of {} subscripts", index.len(), v.dims.len());
            return Err(reject(RejectReason::UnsupportedExpression { what, text: print::subscripted(array, index) }, loc));
        }
        for i in index {
            self.expr(i)?;
            if !self.is_affine(i) {
                let reason = RejectReason::NonAffineSubscript { array: array.to_string(), subscript: print::expr(i) };
                return Err(reject(reason, loc));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{compile_region, Options};
    use tessera_ir::{BinOp, ScalarType::*};

    fn var(name: &str, kind: VarKind, written: bool) -> Var {
        let (elem, dims) = if kind == VarKind::Scalar { (I32, vec![]) } else { (F32, vec![Some(Expr::var("n", I32))]) };
        Var { name: name.into(), kind, elem, dims, map: Some(MapKind::Tofrom), section: vec![], written, loc: Loc::default() }
    }

    /// `for (int i = lower; i > upper; i += step) a[i] = b[i] + a[i + shift]` (or `<` for
    /// a positive step), over `float a[n]`, `float b[n]`.
    fn region(lower: Expr, upper: Expr, step: i64, shift: i64) -> Region {
        let i = Expr::var("i", I32);
        let at = |array: &str, d: i64| Expr::Read {
            array: array.into(),
            index: vec![Expr::Binary { op: BinOp::Add, lhs: Box::new(i.clone()), rhs: Box::new(Expr::int(d)), ty: I32 }],
            ty: F32,
            loc: Loc::default(),
        };
        let value = Expr::Binary { op: BinOp::Add, lhs: Box::new(at("b", 0)), rhs: Box::new(at("a", shift)), ty: F32 };
        let body = vec![Stmt::For {
            var: "i".into(),
            ty: I32,
            lower,
            upper,
            step,
            ne: false,
            body: vec![Stmt::Assign {
                target: LValue::Element { array: "a".into(), index: vec![i.clone()], ty: F32, loc: Loc::default() },
                value,
                loc: Loc::default(),
            }],
            loc: Loc { file: "l.c".into(), line: 4, col: 3 },
        }];
        Region::new(Loc { file: "l.c".into(), line: 3, col: 1 }, vec![var("a", VarKind::Pointer, true), var("b", VarKind::Pointer, false), var("n", VarKind::Scalar, false)], body)
    }

    /// `for (int i = 0; i < n; i++) s = s + b[i];` with `s` a float scalar of the
    /// enclosing function mapped `map`, optionally `reduction(op: s)`.
    fn accumulation(map: Option<MapKind>, op: Option<tessera_ir::ReductionOp>) -> Region {
        let mut r = region(Expr::int(0), Expr::var("n", I32), 1, 0);
        let i = Expr::var("i", I32);
        let b = Expr::Read { array: "b".into(), index: vec![i], ty: F32, loc: Loc::default() };
        let sum = Expr::Binary { op: BinOp::Add, lhs: Box::new(Expr::var("s", F32)), rhs: Box::new(b), ty: F32 };
        let Stmt::For { body, .. } = &mut r.body[0] else { unreachable!() };
        *body = vec![Stmt::Assign {
            target: LValue::Scalar { name: "s".into(), ty: F32, loc: Loc { file: "l.c".into(), line: 5, col: 5 } },
            value: sum,
            loc: Loc::default(),
        }];
        let s = Var { elem: F32, map, loc: Loc { file: "l.c".into(), line: 2, col: 9 }, ..var("s", VarKind::Scalar, true) };
        r.vars.push(s);
        if let Some(op) = op {
            let loc = Loc { file: "l.c".into(), line: 3, col: 40 };
            r.reductions.push(tessera_ir::Reduction { op, var: "s".into(), loc, unsupported: None });
        }
        r
    }

    /// A scalar the region writes comes back when it is mapped `tofrom` or `from`,
    /// is the region's own copy without a map clause, and keeps the region on the
    /// host when mapped `to` or `alloc` (a device would discard the writes).
    #[test]
    fn written_scalars_go_where_their_map_says() {
        use tessera_ir::ReductionOp::Add;
        for (map, op) in [(Some(MapKind::Tofrom), None), (Some(MapKind::From), None), (Some(MapKind::Tofrom), Some(Add))] {
            let r = accumulation(map, op);
            assert_eq!(check_region(&r), Ok(()));
            assert!(r.var("s").unwrap().writes_back());
            let out = compile_region(&r, &Options::default());
            // One element at the scalar's address, mapped as the clause says.
            let arg = out.manifest.args.iter().find(|a| a.name == "s").unwrap();
            assert_eq!(arg.kind, VarKind::Array);
            let a = arg.array.as_ref().unwrap();
            assert_eq!((a.map, a.dims.len(), a.section.len()), (map.unwrap(), 1, 1));
            assert_eq!(tessera_ir::eval::eval_int(&a.dims[0], &|_| None).ok(), Some(1));
            assert!(out.manifest.kernel_source.contains("tessera::maxi<float> s_port"), "{}", out.manifest.kernel_source);
        }
        // Without a map clause: firstprivate, a value parameter the kernel may change.
        let r = accumulation(None, None);
        assert_eq!(check_region(&r), Ok(()));
        let out = compile_region(&r, &Options::default());
        assert!(out.manifest.args.iter().any(|a| a.name == "s" && a.kind == VarKind::Scalar && a.array.is_none()));
        assert!(out.manifest.kernel_source.contains(", float s) {"), "{}", out.manifest.kernel_source);
        // Mapped `to` or `alloc`: host, located at the variable (or its reduction clause).
        let e = check_region(&accumulation(Some(MapKind::To), None)).unwrap_err();
        assert_eq!((e.reason.code(), e.loc.line), ("write-to-input", 2));
        let e = check_region(&accumulation(Some(MapKind::To), Some(Add))).unwrap_err();
        assert_eq!((e.reason.code(), e.loc.line), ("write-to-input", 3));
        let e = check_region(&accumulation(Some(MapKind::Alloc), None)).unwrap_err();
        assert_eq!(e.reason.code(), "unsupported-clause");
        assert_eq!(e.message(), "clause 'map(alloc: s) of a scalar the region assigns (use 'tofrom' or 'from')' is not supported");
    }

    /// A scalar the region changes is no parameter: not in bounds or subscripts (its
    /// value varies), and not in a size the runtime evaluates at the directive when
    /// it comes back from the device.
    #[test]
    fn changing_scalars_are_not_parameters() {
        let mut r = accumulation(Some(MapKind::Tofrom), None);
        r.vars[2].written = true; // `n` is assigned somewhere: the bound `i < n` varies.
        assert_eq!(check_region(&r).unwrap_err().reason.code(), "non-affine-bound");
        // An integer reduction variable (a private copy inside) likewise.
        let mut r = accumulation(Some(MapKind::Tofrom), None);
        r.reductions.push(tessera_ir::Reduction {
            op: tessera_ir::ReductionOp::Max,
            var: "n".into(),
            loc: Loc::default(),
            unsupported: None,
        });
        assert_eq!(check_region(&r).unwrap_err().reason.code(), "non-affine-bound");
        // `a[0:k]` with `k` returned by the region.
        let mut r = accumulation(Some(MapKind::Tofrom), None);
        r.vars[0].section = vec![tessera_ir::Section { lower: Expr::int(0), length: Expr::var("s", I32) }];
        let e = check_region(&r).unwrap_err();
        assert_eq!(e.reason, RejectReason::ScalarWrite { name: "s".into() });
    }

    /// Reduction list items Tessera does not reduce keep the region on the host,
    /// with what to change.
    #[test]
    fn unsupported_reductions_say_what_to_change() {
        let mut r = accumulation(Some(MapKind::Tofrom), Some(tessera_ir::ReductionOp::Add));
        let loc = Loc { file: "l.c".into(), line: 3, col: 60 };
        r.reductions.push(tessera_ir::Reduction {
            op: tessera_ir::ReductionOp::Add,
            var: "hist[0:4:2]".into(),
            loc: loc.clone(),
            unsupported: Some("strided array section".into()),
        });
        assert_eq!(r.reduction("hist[0:4:2]"), None);
        let e = check_region(&r).unwrap_err();
        assert_eq!((e.reason.code(), &e.loc), ("unsupported-reduction", &loc));
        assert_eq!(
            e.remark(),
            "[unsupported-reduction] Tessera reduces contiguous array sections, not strided ones: 'reduction(+: hist[0:4:2])'; reduce the whole section, or one section per stride class"
        );
        let mut r = accumulation(Some(MapKind::Tofrom), Some(tessera_ir::ReductionOp::Add));
        r.reductions[0].var = "b".into();
        assert_eq!(check_region(&r).unwrap_err().message(), "reduction on an array 'reduction(+: b)' is not supported");
    }

    /// `reduction(+: b[0:n])`: an array the target construct maps (explicitly, or
    /// implicitly through the clause) is reduced, its manifest argument carrying the
    /// operator and the reduced section; a pointer the target construct does not map
    /// (a nested construct's clause) is not, with a remark saying what to add.
    #[test]
    fn array_reductions_need_the_target_constructs_mapping() {
        let n = Expr::var("n", I32);
        let loc = Loc { file: "l.c".into(), line: 3, col: 40 };
        let mut r = region(Expr::int(0), n.clone(), 1, 0);
        let section = vec![tessera_ir::Section { lower: Expr::int(2), length: Expr::int(3) }];
        r.array_reductions.push(tessera_ir::ArrayReduction {
            op: tessera_ir::ReductionOp::Max,
            var: "b".into(),
            section: section.clone(),
            loc: loc.clone(),
        });
        assert_eq!(check_region(&r), Ok(()));
        let out = compile_region(&r, &Options::default());
        let b = out.manifest.args.iter().find(|a| a.name == "b").unwrap().array.as_ref().unwrap();
        let red = b.reduction.as_ref().expect("the argument carries the reduction");
        assert_eq!((red.op, &red.section), (tessera_ir::ReductionOp::Max, &section));
        // Without a map clause the pointer would be looked up as present data.
        let b = r.vars.iter_mut().find(|v| v.name == "b").unwrap();
        (b.kind, b.map, b.section) = (VarKind::Pointer, None, vec![]);
        let e = check_region(&r).unwrap_err();
        assert_eq!((e.reason.code(), &e.loc), ("unsupported-reduction", &loc));
        assert_eq!(
            e.remark(),
            "[unsupported-reduction] the reduced array is not mapped by the target construct: 'reduction(max: b)'; map it on the target construct, e.g. 'map(tofrom: b[0:n])'"
        );
    }

    /// The plugin's `non-canonical loop: <why>` is the reason `non-canonical-loop`, at the loop.
    #[test]
    fn non_canonical_loops_say_why() {
        let mut r = region(Expr::int(0), Expr::var("n", I32), 1, 0);
        let loc = Loc { file: "l.c".into(), line: 4, col: 3 };
        r.body = vec![Stmt::Unsupported {
            what: "non-canonical loop: 'i' decreases but its test 'i < n' needs it to increase".into(),
            text: "for (int i = n; i < n; i--)".into(),
            loc: loc.clone(),
        }];
        let e = check_region(&r).unwrap_err();
        assert_eq!((e.reason.code(), &e.loc), ("non-canonical-loop", &loc));
        assert_eq!(
            e.message(),
            "loop 'for (int i = n; i < n; i--)' is not in the canonical form Tessera offloads: 'i' decreases but its test 'i < n' needs it to increase"
        );
        // A step of 0 (never from the plugin) likewise.
        let e = check_region(&region(Expr::int(0), Expr::var("n", I32), 0, 0)).unwrap_err();
        assert_eq!(e.reason.code(), "non-canonical-loop");
    }

    /// A decreasing loop is offloaded in its order: the baseline kernel counts down; the
    /// tiled kernel runs it upwards when nothing depends on the order, and a recurrence
    /// keeps the baseline kernel (the tiled generator cannot write backwards).
    #[test]
    fn decreasing_loops_keep_their_order() {
        let lower = Expr::Binary { op: BinOp::Sub, lhs: Box::new(Expr::var("n", I32)), rhs: Box::new(Expr::int(1)), ty: I32 };
        let free = region(lower.clone(), Expr::int(0), -1, 0);
        assert_eq!(check_region(&free), Ok(()));
        let baseline = compile_region(&free, &Options::from_plugin_args(&["mode=baseline"]).unwrap());
        assert!(baseline.manifest.kernel_source.contains("for (int i = n - 1; i > 0; i -= 1) {"), "{}", baseline.manifest.kernel_source);
        let tiled = compile_region(&free, &Options::default());
        assert_eq!((tiled.manifest.mode, tiled.fallback), (crate::options::Mode::Tessera, None));
        let plan = &tiled.files.iter().find(|(f, _)| f.ends_with(".plan.txt")).unwrap().1;
        assert!(plan.contains("decreasing loops run upwards (the nest has no dependence): i"), "{plan}");
        // a[i] = b[i] + a[i + 1], downwards: each iteration reads what the previous one wrote.
        let recurrence = region(lower, Expr::int(0), -1, 1);
        let out = compile_region(&recurrence, &Options::default());
        assert_eq!(out.manifest.mode, crate::options::Mode::Baseline);
        let plan = &out.files.iter().find(|(f, _)| f.ends_with(".plan.txt")).unwrap().1;
        assert!(plan.contains("i_neg in [1 - n, 0) step 1"), "{plan}");
        assert!(plan.contains("flow W0 a[-i_neg] -> R1 a[1 - i_neg], distance (1)"), "{plan}");
        assert!(out.fallback.is_some_and(|w| w.contains("a[-i_neg]")));
    }

    /// `a[i] = f(b[i] + a[i + shift])` over the region above.
    fn with_call(func: MathFn) -> Region {
        let mut r = region(Expr::int(0), Expr::var("n", I32), 1, 0);
        let Stmt::For { body, .. } = &mut r.body[0] else { unreachable!() };
        let Stmt::Assign { value, .. } = &mut body[0] else { unreachable!() };
        let mut args = vec![value.clone()];
        args.resize(func.arity(), Expr::Float { bits: 2.0f64.to_bits(), ty: F32 });
        *value = Expr::Call { func, args, ty: F32, loc: Loc { file: "l.c".into(), line: 5, col: 12 } };
        r
    }

    /// Exact math functions are offloaded in every mode, as the `hls::` overloads of
    /// `tessera_math.h`; library-dependent ones stay on the host at the call unless
    /// `math=relaxed`.
    #[test]
    fn math_calls() {
        for f in MathFn::ALL.into_iter().filter(|f| f.is_exact()) {
            assert_eq!(check_region(&with_call(f)), Ok(()), "{}", f.name());
        }
        let sqrt = with_call(MathFn::Sqrt);
        for mode in ["baseline", "paper", "tessera"] {
            let out = compile_region(&sqrt, &Options::from_plugin_args(&[format!("mode={mode}")]).unwrap());
            assert_eq!((out.manifest.mode.name(), out.fallback.as_deref()), (mode, None));
            let k = &out.manifest.kernel_source;
            assert!(k.contains("#include \"tessera_math.h\"\n"), "{k}");
            assert!(k.contains("hls::sqrt("), "{k}");
        }
        let exp = with_call(MathFn::Exp);
        let e = check_region(&exp).unwrap_err();
        assert_eq!((e.reason.code(), e.loc.line, e.loc.col), ("inexact-math", 5, 12));
        assert_eq!(
            e.remark(),
            "[inexact-math] 'expf' is not correctly rounded in every math library; the kernel's results could differ from the host's; \
             use -fplugin-arg-tessera-math=relaxed to accept that"
        );
        let relaxed = Options::from_plugin_args(&["math=relaxed"]).unwrap();
        assert_eq!(check_region_with(&exp, relaxed.math), Ok(()));
        let out = compile_region(&exp, &relaxed);
        assert!(out.rejection.is_none() && out.manifest.kernel_source.contains("hls::exp("), "{}", out.manifest.kernel_source);
        assert_eq!(compile_region(&exp, &Options::default()).manifest.kernel, None);
        // A call whose arguments are not of its type is malformed IR.
        let mut bad = with_call(MathFn::Fmin);
        let Stmt::For { body, .. } = &mut bad.body[0] else { unreachable!() };
        let Stmt::Assign { value: Expr::Call { args, .. }, .. } = &mut body[0] else { unreachable!() };
        args[1] = Expr::Float { bits: 2.0f64.to_bits(), ty: F64 };
        assert_eq!(check_region(&bad).unwrap_err().reason.code(), "unsupported-expression");
        // A call in a subscript is not affine.
        let mut sub = region(Expr::int(0), Expr::var("n", I32), 1, 0);
        let Stmt::For { body, .. } = &mut sub.body[0] else { unreachable!() };
        let Stmt::Assign { target: LValue::Element { index, .. }, .. } = &mut body[0] else { unreachable!() };
        let f = Expr::Call { func: MathFn::Floor, args: vec![Expr::Cast { arg: Box::new(index[0].clone()), ty: F64 }], ty: F64, loc: Loc::default() };
        index[0] = Expr::Cast { arg: Box::new(f), ty: I32 };
        assert_eq!(check_region(&sub).unwrap_err().reason.code(), "non-affine-subscript");
    }

    /// The plugin's unsupported calls say why; a multiply-add the host fuses is its own reason.
    #[test]
    fn unsupported_calls_and_contraction() {
        let mut r = region(Expr::int(0), Expr::var("n", I32), 1, 0);
        let loc = Loc { file: "l.c".into(), line: 5, col: 9 };
        let node = |what: &str, text: &str| Expr::Unsupported { what: what.into(), text: text.into(), loc: loc.clone() };
        for (what, text, code, message) in [
            ("call: 'g' writes 'count', which is not its own", "g(a[i])", "call", "call 'g(a[i])' is not supported: 'g' writes 'count', which is not its own"),
            ("call", "h(x)", "call", "call 'h(x)' is not supported: Tessera cannot see what it does"),
            ("fp-contraction", "a[i] * b[i] + c", "host-fp-contraction", "the host compilation fuses 'a[i] * b[i] + c' into one multiply-add"),
            ("caller", "caller()", "unsupported-expression", "caller 'caller()' is not supported"),
        ] {
            let Stmt::For { body, .. } = &mut r.body[0] else { unreachable!() };
            let Stmt::Assign { value, .. } = &mut body[0] else { unreachable!() };
            *value = node(what, text);
            let e = check_region(&r).unwrap_err();
            assert_eq!((e.reason.code(), &e.loc), (code, &loc));
            assert!(e.message().starts_with(message), "{}", e.message());
        }
        // A call statement likewise.
        r.body = vec![Stmt::Unsupported { what: "call: its result is unused".into(), text: "g(1)".into(), loc: loc.clone() }];
        assert_eq!(check_region(&r).unwrap_err().message(), "call 'g(1)' is not supported: its result is unused");
    }
}
