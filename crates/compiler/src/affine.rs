//! Affine forms of IR expressions.
//!
//! An expression is affine when it is an integer-valued linear combination, with
//! integer constant coefficients, of loop indices and integer scalar parameters of
//! the region, plus a constant. Integer casts are looked through (the polyhedral model
//! works on mathematical integers; overflowing subscripts are undefined in C anyway).

use std::collections::BTreeMap;
use tessera_ir::{BinOp, Expr, UnOp};

/// `constant + Σ coeff·var`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Affine {
    /// Constant term.
    pub constant: i64,
    /// Coefficient per variable (no zero entries).
    pub terms: BTreeMap<String, i64>,
}

impl Affine {
    fn constant(c: i64) -> Affine {
        Affine { constant: c, terms: BTreeMap::new() }
    }

    fn is_constant(&self) -> bool {
        self.terms.is_empty()
    }

    fn scale(mut self, k: i64) -> Option<Affine> {
        self.constant = self.constant.checked_mul(k)?;
        for c in self.terms.values_mut() {
            *c = c.checked_mul(k)?;
        }
        self.terms.retain(|_, c| *c != 0);
        Some(self)
    }

    fn add(mut self, other: Affine) -> Option<Affine> {
        self.constant = self.constant.checked_add(other.constant)?;
        for (v, c) in other.terms {
            let e = self.terms.entry(v).or_insert(0);
            *e = e.checked_add(c)?;
        }
        self.terms.retain(|_, c| *c != 0);
        Some(self)
    }
}

/// The affine form of `e`, where `is_dim` says which variable names may appear
/// (loop indices and integer parameters). `None` if `e` is not affine.
pub fn affine_form(e: &Expr, is_dim: &dyn Fn(&str) -> bool) -> Option<Affine> {
    match e {
        Expr::Int { value, .. } => Some(Affine::constant(*value)),
        Expr::Var { name, ty } if ty.is_integer() && is_dim(name) => {
            Some(Affine { constant: 0, terms: BTreeMap::from([(name.clone(), 1)]) })
        }
        Expr::Cast { arg, ty } if ty.is_integer() && arg.ty().is_some_and(|t| t.is_integer()) => {
            affine_form(arg, is_dim)
        }
        Expr::Unary { op: UnOp::Plus, arg, .. } => affine_form(arg, is_dim),
        Expr::Unary { op: UnOp::Neg, arg, ty } if ty.is_integer() => affine_form(arg, is_dim)?.scale(-1),
        Expr::Binary { op, lhs, rhs, ty } if ty.is_integer() => {
            let (l, r) = (affine_form(lhs, is_dim)?, affine_form(rhs, is_dim)?);
            match op {
                BinOp::Add => l.add(r),
                BinOp::Sub => l.add(r.scale(-1)?),
                BinOp::Mul if r.is_constant() => l.scale(r.constant),
                BinOp::Mul if l.is_constant() => r.scale(l.constant),
                _ => None,
            }
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::ScalarType::*;

    fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary { op, lhs: Box::new(l), rhs: Box::new(r), ty: I32 }
    }

    #[test]
    fn linear_combinations() {
        let dims = |n: &str| n == "i" || n == "n";
        let e = bin(BinOp::Sub, bin(BinOp::Mul, Expr::int(2), Expr::var("i", I32)), bin(BinOp::Add, Expr::var("n", I32), Expr::int(1)));
        let a = affine_form(&e, &dims).unwrap();
        assert_eq!(a.constant, -1);
        assert_eq!(a.terms, BTreeMap::from([("i".to_string(), 2), ("n".to_string(), -1)]));
        assert!(affine_form(&bin(BinOp::Mul, Expr::var("i", I32), Expr::var("n", I32)), &dims).is_none());
        assert!(affine_form(&Expr::var("t", I32), &dims).is_none());
        assert!(affine_form(&bin(BinOp::Div, Expr::var("i", I32), Expr::int(2)), &dims).is_none());
        // i - i cancels to a constant.
        let z = affine_form(&bin(BinOp::Sub, Expr::var("i", I32), Expr::var("i", I32)), &dims).unwrap();
        assert_eq!(z, Affine::constant(0));
    }
}
