//! Affine expressions: the form in which every subscript, loop bound, box offset,
//! shift and redirected subscript leaves this crate.
//!
//! The paper (Sec. 2) works with affine subscripts and bounds "in runtime constants
//! and loop indices"; after tiling (Sec. 2, `T(SZ, p, δ)`) the same expressions are
//! rewritten over the tile origins `ti` (the inter-tile loop values) and the
//! intra-tile indices `i` that start at 0 after the shift `δ^i = −ti` (Sec. 4, step 3).
//! [`Sym`] names those four kinds of variables; [`Aff`] is a constant plus integer
//! multiples of them. The code generator prints an [`Aff`] with its own spelling of
//! the variables; [`Aff::display`] uses the paper's (`ti`, `i`, `N`).
//!
//! Conversion from the region IR follows the compiler's input-class check
//! (`crates/compiler/src/affine.rs`): integer casts are looked through, products need
//! a constant factor, anything else is not affine.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use tessera_ir::{BinOp, Expr, UnOp};

/// A variable an affine expression can mention.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sym {
    /// The (absolute) index of loop `x` of the original nest, 0 = outermost.
    Loop(usize),
    /// The tile origin of loop `x`: the value of its inter-tile loop (`ti` in the paper),
    /// `lb_x + m·SZ_x` for the tile number `m ≥ 0`.
    Tile(usize),
    /// The intra-tile index of loop `x` relative to the tile origin (after `δ^i = −ti`):
    /// `0 ≤ · < SZ_x`. The original index is `Tile(x) + Intra(x)`.
    Intra(usize),
    /// An integer scalar of the region (a symbolic size), by name.
    Param(String),
}

/// One term `coeff · sym`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Term {
    /// The variable.
    pub sym: Sym,
    /// Its coefficient (never 0).
    pub coeff: i64,
}

/// `constant + Σ coeff·sym`, terms sorted by [`Sym`] with no zero coefficients, so two
/// equal expressions compare equal.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Aff {
    /// Constant term.
    pub constant: i64,
    /// Variable terms.
    pub terms: Vec<Term>,
}

/// How to spell the variables of an [`Aff`] in dumps: loop variable names, outer to
/// inner, and the names of their tile origins.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SymNames {
    /// Loop index names (also used for the intra-tile indices, as in the paper).
    pub loops: Vec<String>,
    /// Tile origin names (`ti` for loop `i`, made unique against every other name).
    pub tiles: Vec<String>,
}

impl SymNames {
    /// The spelling of one variable.
    pub fn name(&self, s: &Sym) -> String {
        match s {
            Sym::Loop(x) | Sym::Intra(x) => self.loops.get(*x).cloned().unwrap_or_else(|| format!("x{x}")),
            Sym::Tile(x) => self.tiles.get(*x).cloned().unwrap_or_else(|| format!("t{x}")),
            Sym::Param(p) => p.clone(),
        }
    }
}

impl Aff {
    /// The constant `c`.
    pub fn constant(c: i64) -> Aff {
        Aff { constant: c, terms: Vec::new() }
    }

    /// The variable `s`.
    pub fn sym(s: Sym) -> Aff {
        Aff { constant: 0, terms: vec![Term { sym: s, coeff: 1 }] }
    }

    fn from_map(constant: i64, m: BTreeMap<Sym, i64>) -> Aff {
        Aff { constant, terms: m.into_iter().filter(|(_, c)| *c != 0).map(|(sym, coeff)| Term { sym, coeff }).collect() }
    }

    fn to_map(&self) -> BTreeMap<Sym, i64> {
        self.terms.iter().map(|t| (t.sym.clone(), t.coeff)).collect()
    }

    /// Whether the expression has no variable terms.
    pub fn is_constant(&self) -> bool {
        self.terms.is_empty()
    }

    /// The constant value, if the expression is constant.
    pub fn as_constant(&self) -> Option<i64> {
        self.is_constant().then_some(self.constant)
    }

    /// The coefficient of `s` (0 if absent).
    pub fn coeff(&self, s: &Sym) -> i64 {
        self.terms.iter().find(|t| &t.sym == s).map_or(0, |t| t.coeff)
    }

    /// Whether any term satisfies `f`.
    pub fn mentions(&self, f: impl Fn(&Sym) -> bool) -> bool {
        self.terms.iter().any(|t| f(&t.sym))
    }

    /// `self + other`, `None` on overflow.
    pub fn checked_add(&self, other: &Aff) -> Option<Aff> {
        let mut m = self.to_map();
        for t in &other.terms {
            let e = m.entry(t.sym.clone()).or_insert(0);
            *e = e.checked_add(t.coeff)?;
        }
        Some(Aff::from_map(self.constant.checked_add(other.constant)?, m))
    }

    /// `k · self`, `None` on overflow.
    pub fn checked_scale(&self, k: i64) -> Option<Aff> {
        let mut m = BTreeMap::new();
        for t in &self.terms {
            m.insert(t.sym.clone(), t.coeff.checked_mul(k)?);
        }
        Some(Aff::from_map(self.constant.checked_mul(k)?, m))
    }

    /// `self + other` (panics on overflow: only used on small, checked values).
    pub fn add(&self, other: &Aff) -> Aff {
        self.checked_add(other).expect("affine overflow")
    }

    /// `self − other`.
    pub fn sub(&self, other: &Aff) -> Aff {
        self.add(&other.scale(-1))
    }

    /// `k · self`.
    pub fn scale(&self, k: i64) -> Aff {
        self.checked_scale(k).expect("affine overflow")
    }

    /// `self + c`.
    pub fn add_constant(&self, c: i64) -> Aff {
        self.add(&Aff::constant(c))
    }

    /// Replaces every variable for which `f` returns an expression by that expression.
    pub fn substitute(&self, f: &dyn Fn(&Sym) -> Option<Aff>) -> Aff {
        let mut out = Aff::constant(self.constant);
        for t in &self.terms {
            let part = match f(&t.sym) {
                Some(e) => e.scale(t.coeff),
                None => Aff { constant: 0, terms: vec![t.clone()] },
            };
            out = out.add(&part);
        }
        out
    }

    /// Text with the given variable spelling: `2*i - N + 3`, `ti + i`, `0`.
    pub fn format(&self, name: &dyn Fn(&Sym) -> String) -> String {
        let mut s = String::new();
        // Positive terms first (`N - ti - 1`, not `-ti + N - 1`), each part in Sym order;
        // a positive constant leads when every term is negative (`255 - ti`).
        let lead = self.constant > 0 && self.terms.iter().all(|t| t.coeff < 0);
        if lead {
            s = self.constant.to_string();
        }
        let ordered = self.terms.iter().filter(|t| t.coeff > 0).chain(self.terms.iter().filter(|t| t.coeff < 0));
        for t in ordered {
            let n = name(&t.sym);
            match (s.is_empty(), t.coeff) {
                (true, 1) => s.push_str(&n),
                (true, -1) => {
                    let _ = write!(s, "-{n}");
                }
                (true, c) => {
                    let _ = write!(s, "{c}*{n}");
                }
                (false, 1) => {
                    let _ = write!(s, " + {n}");
                }
                (false, -1) => {
                    let _ = write!(s, " - {n}");
                }
                (false, c) if c < 0 => {
                    let _ = write!(s, " - {}*{n}", -c);
                }
                (false, c) => {
                    let _ = write!(s, " + {c}*{n}");
                }
            }
        }
        match (s.is_empty(), self.constant) {
            _ if lead => {}
            (true, c) => s = c.to_string(),
            (false, 0) => {}
            (false, c) if c < 0 => {
                let _ = write!(s, " - {}", -c);
            }
            (false, c) => {
                let _ = write!(s, " + {c}");
            }
        }
        s
    }

    /// Text with the paper's spelling (see [`SymNames`]).
    pub fn display(&self, names: &SymNames) -> String {
        self.format(&|s| names.name(s))
    }
}

/// The affine form of an IR expression. `var` maps a variable name to its [`Sym`]
/// (loop index or integer parameter) or `None` if the name may not appear. Returns
/// `None` when `e` is not affine.
pub fn from_expr(e: &Expr, var: &dyn Fn(&str) -> Option<Sym>) -> Option<Aff> {
    from_expr_with(e, var, &mut |_| None)
}

/// As [`from_expr`], with quasi-affine and parametric terms: a division or remainder
/// of two constants is folded (C's truncation); any other integer sub-expression over
/// parameters only that is not affine — a product of parameters `nx*ny`, a division
/// by a nonzero constant `n/2`, `(n + 1) % 4` — is passed to `invariant`, which may
/// name it as a new parameter ([`invariant_subexpression`] says which qualify). The
/// new parameter's value is the sub-expression's value in its own C type, computed
/// as the source computes it.
pub fn from_expr_with(
    e: &Expr,
    var: &dyn Fn(&str) -> Option<Sym>,
    invariant: &mut dyn FnMut(&Expr) -> Option<Sym>,
) -> Option<Aff> {
    let folded = fold_constant_division(e);
    if folded.is_some() {
        return folded.map(Aff::constant);
    }
    match e {
        Expr::Int { value, .. } => Some(Aff::constant(*value)),
        Expr::Var { name, ty } if ty.is_integer() => var(name).map(Aff::sym),
        Expr::Cast { arg, ty } if ty.is_integer() && arg.ty().is_some_and(|t| t.is_integer()) => {
            from_expr_with(arg, var, invariant)
        }
        Expr::Unary { op: UnOp::Plus, arg, .. } => from_expr_with(arg, var, invariant),
        Expr::Unary { op: UnOp::Neg, arg, ty } if ty.is_integer() => from_expr_with(arg, var, invariant)?.checked_scale(-1),
        Expr::Binary { op, lhs, rhs, ty } if ty.is_integer() => {
            let affine = (|| {
                let (l, r) = (from_expr(lhs, var)?, from_expr(rhs, var)?);
                match op {
                    BinOp::Mul if r.is_constant() => l.checked_scale(r.constant),
                    BinOp::Mul if l.is_constant() => r.checked_scale(l.constant),
                    _ => None,
                }
            })();
            match op {
                BinOp::Add | BinOp::Sub => {
                    let (l, r) = (from_expr_with(lhs, var, invariant)?, from_expr_with(rhs, var, invariant)?);
                    if *op == BinOp::Add { l.checked_add(&r) } else { l.checked_add(&r.checked_scale(-1)?) }
                }
                BinOp::Mul if affine.is_some() => affine,
                BinOp::Mul => {
                    // `c * (n/2)`: a constant factor of a quasi-affine term.
                    let lc = from_expr(lhs, var).and_then(|a| a.as_constant());
                    let rc = from_expr(rhs, var).and_then(|a| a.as_constant());
                    match (lc, rc) {
                        (Some(c), _) => from_expr_with(rhs, var, invariant)?.checked_scale(c),
                        (_, Some(c)) => from_expr_with(lhs, var, invariant)?.checked_scale(c),
                        _ if invariant_subexpression(e, var) => invariant(e).map(Aff::sym),
                        _ => None,
                    }
                }
                _ if invariant_subexpression(e, var) => invariant(e).map(Aff::sym),
                _ => None,
            }
        }
        _ => None,
    }
}

/// `a / b` or `a % b` of two integer constants (after looking through casts), as C
/// computes it (truncation), when both are nonnegative or the type is signed, `b ≠ 0`,
/// and the result fits the type.
fn fold_constant_division(e: &Expr) -> Option<i64> {
    let Expr::Binary { op: op @ (BinOp::Div | BinOp::Rem), lhs, rhs, ty } = e else { return None };
    let value = |x: &Expr| from_expr(x, &|_| None).and_then(|a| a.as_constant());
    let (a, b) = (value(lhs)?, value(rhs)?);
    if b == 0 || (!ty.is_signed() && (a < 0 || b < 0)) {
        return None;
    }
    let v = if *op == BinOp::Div { a.checked_div(b)? } else { a.checked_rem(b)? };
    let fits = match ty.size() {
        8 => true,
        n => {
            let bits = 8 * n as u32;
            if ty.is_signed() { v >= -(1i64 << (bits - 1)) && v < (1i64 << (bits - 1)) } else { v < (1i64 << bits) }
        }
    };
    fits.then_some(v)
}

/// Whether `e` is a loop-invariant integer expression the optimizer may treat as one
/// parameter: integer arithmetic (`+ - *`, `/` and `%` by a nonzero constant, casts
/// between integer types, negation) over integer constants and variables `var` maps
/// to [`Sym::Param`], naming at least one of them. Division by a variable is not (the
/// kernel computes such parameters before the loops, where the source might never
/// divide by zero).
pub fn invariant_subexpression(e: &Expr, var: &dyn Fn(&str) -> Option<Sym>) -> bool {
    let mut ok = true;
    let mut named = false;
    e.visit(&mut |n| {
        ok &= match n {
            Expr::Int { ty, .. } => ty.is_integer(),
            Expr::Var { name, ty } => {
                let p = ty.is_integer() && matches!(var(name), Some(Sym::Param(_)));
                named |= p;
                p
            }
            Expr::Cast { arg, ty } => ty.is_integer() && arg.ty().is_some_and(|t| t.is_integer()),
            Expr::Unary { op: UnOp::Neg | UnOp::Plus, ty, .. } => ty.is_integer(),
            Expr::Binary { op: BinOp::Add | BinOp::Sub | BinOp::Mul, ty, .. } => ty.is_integer(),
            Expr::Binary { op: BinOp::Div | BinOp::Rem, rhs, ty, .. } => {
                ty.is_integer() && from_expr(rhs, &|_| None).and_then(|a| a.as_constant()).is_some_and(|c| c != 0)
            }
            _ => false,
        };
    });
    ok && named
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_the_paper() {
        let names = SymNames { loops: vec!["i".into(), "j".into()], tiles: vec!["ti".into(), "tj".into()] };
        let a = Aff::sym(Sym::Tile(0)).add(&Aff::sym(Sym::Intra(0))).add_constant(1);
        assert_eq!(a.display(&names), "ti + i + 1");
        let b = Aff::sym(Sym::Param("N".into())).scale(-1).add(&Aff::sym(Sym::Loop(1)).scale(2)).add_constant(-3);
        assert_eq!(b.display(&names), "2*j - N - 3");
        assert_eq!(a.sub(&a).display(&names), "0");
        assert_eq!(Aff::constant(255).sub(&Aff::sym(Sym::Tile(0))).display(&names), "255 - ti");
        let c = a.substitute(&|s| matches!(s, Sym::Tile(0)).then(|| Aff::constant(5)));
        assert_eq!(c.display(&names), "i + 6");
    }
}
