//! Integer evaluation of IR expressions over known scalar values.
//!
//! The runtime evaluates array extents and map-clause sections (expressions over the
//! region's scalar variables) with the values those variables have when the region is
//! encountered. Evaluation follows C's integer semantics for the operand types the
//! plugin recorded (wrapping where C wraps, errors where C has undefined behaviour).

use crate::{BinOp, Expr, ScalarType, UnOp};

/// Why an expression could not be evaluated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum EvalError {
    /// A variable without a value in the environment.
    Unbound(String),
    /// Something that is not an integer expression (a float, an array read, …).
    NotInteger(String),
    /// Division by zero or overflow of a signed type.
    Undefined(String),
}

impl std::fmt::Display for EvalError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EvalError::Unbound(v) => write!(f, "no value for '{v}'"),
            EvalError::NotInteger(e) => write!(f, "'{e}' is not an integer expression"),
            EvalError::Undefined(e) => write!(f, "'{e}' has undefined behaviour"),
        }
    }
}

impl std::error::Error for EvalError {}

/// Evaluates `e` with variable values from `env` (values already converted to `i128`
/// from their C types). The result is the value in `e`'s type, as `i128`.
pub fn eval_int(e: &Expr, env: &dyn Fn(&str) -> Option<i128>) -> Result<i128, EvalError> {
    let undefined = || EvalError::Undefined(crate::print::expr(e));
    let v = match e {
        Expr::Int { value, ty } => wrap(*value as i128, *ty),
        Expr::Var { name, ty } => {
            let v = env(name).ok_or_else(|| EvalError::Unbound(name.clone()))?;
            wrap(v, *ty)
        }
        Expr::Cast { arg, ty } if ty.is_integer() && arg.ty().is_some_and(ScalarType::is_integer) => {
            wrap(eval_int(arg, env)?, *ty)
        }
        Expr::Unary { op, arg, ty } if ty.is_integer() => {
            let a = eval_int(arg, env)?;
            match op {
                UnOp::Neg => checked(-a, *ty).ok_or_else(undefined)?,
                UnOp::Plus => a,
                UnOp::Not => (a == 0) as i128,
                UnOp::BitNot => wrap(!a, *ty),
            }
        }
        Expr::Binary { op, lhs, rhs, ty } if ty.is_integer() => {
            let a = eval_int(lhs, env)?;
            let b = eval_int(rhs, env)?;
            let exact = match op {
                BinOp::Add => a + b,
                BinOp::Sub => a - b,
                BinOp::Mul => a.checked_mul(b).ok_or_else(undefined)?,
                BinOp::Div => a.checked_div(b).ok_or_else(undefined)?,
                BinOp::Rem => a.checked_rem(b).ok_or_else(undefined)?,
                BinOp::Shl => a.checked_shl(u32::try_from(b).map_err(|_| undefined())?).ok_or_else(undefined)?,
                BinOp::Shr => a.checked_shr(u32::try_from(b).map_err(|_| undefined())?).ok_or_else(undefined)?,
                BinOp::BitAnd => a & b,
                BinOp::BitOr => a | b,
                BinOp::BitXor => a ^ b,
                BinOp::Lt => (a < b) as i128,
                BinOp::Le => (a <= b) as i128,
                BinOp::Gt => (a > b) as i128,
                BinOp::Ge => (a >= b) as i128,
                BinOp::Eq => (a == b) as i128,
                BinOp::Ne => (a != b) as i128,
                BinOp::LAnd => (a != 0 && b != 0) as i128,
                BinOp::LOr => (a != 0 || b != 0) as i128,
            };
            checked(exact, *ty).ok_or_else(undefined)?
        }
        Expr::Select { cond, then, otherwise, ty } if ty.is_integer() => {
            if eval_int(cond, env)? != 0 {
                eval_int(then, env)?
            } else {
                eval_int(otherwise, env)?
            }
        }
        _ => return Err(EvalError::NotInteger(crate::print::expr(e))),
    };
    Ok(v)
}

/// Range of an integer type, as `i128`.
fn range(ty: ScalarType) -> (i128, i128) {
    match ty {
        ScalarType::Bool => (0, 1),
        ScalarType::I8 => (i8::MIN as i128, i8::MAX as i128),
        ScalarType::U8 => (0, u8::MAX as i128),
        ScalarType::I16 => (i16::MIN as i128, i16::MAX as i128),
        ScalarType::U16 => (0, u16::MAX as i128),
        ScalarType::I32 => (i32::MIN as i128, i32::MAX as i128),
        ScalarType::U32 => (0, u32::MAX as i128),
        ScalarType::I64 => (i64::MIN as i128, i64::MAX as i128),
        ScalarType::U64 | ScalarType::F32 | ScalarType::F64 => (0, u64::MAX as i128),
    }
}

/// Conversion to `ty` as C does it (modular for unsigned and, on every target Tessera
/// supports, for signed narrowing; `bool` is `!= 0`).
fn wrap(v: i128, ty: ScalarType) -> i128 {
    if ty == ScalarType::Bool {
        return (v != 0) as i128;
    }
    let bits = 8 * ty.size() as u32;
    let m = v.rem_euclid(1i128 << bits);
    if ty.is_signed() && m >= 1i128 << (bits - 1) {
        m - (1i128 << bits)
    } else {
        m
    }
}

/// Result of an arithmetic operation in `ty`: unsigned types wrap, signed overflow is
/// undefined (`None`).
fn checked(v: i128, ty: ScalarType) -> Option<i128> {
    if ty.is_signed() {
        let (lo, hi) = range(ty);
        (lo..=hi).contains(&v).then_some(v)
    } else {
        Some(wrap(v, ty))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    fn bin(op: BinOp, l: Expr, r: Expr, ty: ScalarType) -> Expr {
        Expr::Binary { op, lhs: Box::new(l), rhs: Box::new(r), ty }
    }

    #[test]
    fn evaluates_c_integer_semantics() {
        let env = |n: &str| (n == "n").then_some(10);
        let e = bin(BinOp::Sub, Expr::var("n", I32), Expr::int(2), I32);
        assert_eq!(eval_int(&e, &env), Ok(8));
        let u = bin(BinOp::Sub, Expr::Int { value: 0, ty: U32 }, Expr::Int { value: 1, ty: U32 }, U32);
        assert_eq!(eval_int(&u, &env), Ok(u32::MAX as i128));
        let of = bin(BinOp::Mul, Expr::Int { value: i32::MAX as i64, ty: I32 }, Expr::int(2), I32);
        assert!(matches!(eval_int(&of, &env), Err(EvalError::Undefined(_))));
        assert_eq!(eval_int(&Expr::var("m", I32), &env), Err(EvalError::Unbound("m".into())));
        let narrowing = Expr::Cast { arg: Box::new(Expr::Int { value: 300, ty: I32 }), ty: I8 };
        assert_eq!(eval_int(&narrowing, &env), Ok(44));
    }
}
