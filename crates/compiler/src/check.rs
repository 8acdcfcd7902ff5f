//! The input-class check: which regions Tessera offloads.
//!
//! A region is offloaded when every statement and expression is representable, every
//! array subscript and loop bound is affine (in loop indices and integer scalars of
//! the enclosing function), every array's size is known, and the data environment is
//! one Tessera implements. The first violation, in source order, becomes the remark.
//! The rules are the input class of `../shared/design/method.md`; the dependence and
//! tiling checks of the optimizer come on top of these.

use crate::affine::affine_form;
use crate::reject::{RejectReason, Rejection};
use std::collections::HashSet;
use tessera_ir::{print, Expr, LValue, Loc, MapKind, Region, Stmt, Var, VarKind};

fn reject(reason: RejectReason, loc: &Loc) -> Rejection {
    Rejection { reason, loc: loc.clone() }
}

/// Checks the region against the input class.
pub fn check_region(region: &Region) -> Result<(), Rejection> {
    if let Some(c) = region.unsupported_clauses.first() {
        return Err(reject(RejectReason::UnsupportedClause { clause: c.name.clone() }, &c.loc));
    }
    let params: HashSet<&str> = region
        .vars
        .iter()
        .filter(|v| v.kind == VarKind::Scalar && v.elem.is_integer())
        .map(|v| v.name.as_str())
        .collect();
    let mut cx = Checker { region, params, indices: Vec::new() };
    cx.stmts(&region.body)?;
    for v in &region.vars {
        if v.kind == VarKind::Scalar {
            continue;
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

/// Whether the runtime finds the variable's data in the present table (a pointer
/// without a map clause), rather than mapping it for the launch.
pub fn is_attached(v: &Var) -> bool {
    v.kind == VarKind::Pointer && v.map.is_none()
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

struct Checker<'a> {
    region: &'a Region,
    params: HashSet<&'a str>,
    /// Enclosing loop indices, outermost first.
    indices: Vec<&'a str>,
}

impl<'a> Checker<'a> {
    fn is_dim(&self, name: &str) -> bool {
        self.indices.contains(&name) || self.params.contains(name)
    }

    fn stmts(&mut self, body: &'a [Stmt]) -> Result<(), Rejection> {
        body.iter().try_for_each(|s| self.stmt(s))
    }

    fn stmt(&mut self, s: &'a Stmt) -> Result<(), Rejection> {
        match s {
            Stmt::For { var, lower, upper, body, loc, .. } => {
                for b in [lower, upper] {
                    self.expr(b)?;
                    if affine_form(b, &|n| self.is_dim(n)).is_none() {
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
                        return Err(reject(RejectReason::ScalarWrite { name: name.clone() }, loc))
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
                let reason = if what == "call" {
                    RejectReason::Call { text: text.clone() }
                } else {
                    RejectReason::UnsupportedStatement { what: what.clone(), text: text.clone() }
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
                Expr::Unsupported { what, text, loc } if what == "call" => {
                    Err(reject(RejectReason::Call { text: text.clone() }, loc))
                }
                Expr::Unsupported { what, text, loc } => {
                    Err(reject(RejectReason::UnsupportedExpression { what: what.clone(), text: text.clone() }, loc))
                }
                Expr::Read { array, index, loc, .. } => self.access(array, index, loc),
                _ => Ok(()),
            };
        });
        result
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
            if affine_form(i, &|n| self.is_dim(n)).is_none() {
                let reason = RejectReason::NonAffineSubscript { array: array.to_string(), subscript: print::expr(i) };
                return Err(reject(reason, loc));
            }
        }
        Ok(())
    }
}
