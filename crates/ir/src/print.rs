//! Source-like printing of IR expressions, for diagnostics and dumps.
//!
//! The output reads like the C the user wrote (`a[i][j + 1]`), with the plugin's
//! implicit casts left out; it is for people, not for compilers (the HLS generator
//! has its own printer that keeps every cast).

use crate::{Expr, LValue, UnOp};

/// Prints an expression the way a user would write it.
pub fn expr(e: &Expr) -> String {
    let mut s = String::new();
    write_expr(&mut s, e, 0);
    s
}

/// Prints an assignment target.
pub fn lvalue(l: &LValue) -> String {
    match l {
        LValue::Element { array, index, .. } => subscripted(array, index),
        LValue::Local { name, .. } | LValue::Scalar { name, .. } => name.clone(),
    }
}

/// Prints `array[i][j]`.
pub fn subscripted(array: &str, index: &[Expr]) -> String {
    let mut s = array.to_string();
    for i in index {
        s.push('[');
        write_expr(&mut s, i, 0);
        s.push(']');
    }
    s
}

fn precedence(e: &Expr) -> u8 {
    use crate::BinOp::*;
    match e {
        Expr::Select { .. } => 1,
        Expr::Binary { op, .. } => match op {
            LOr => 2,
            LAnd => 3,
            BitOr => 4,
            BitXor => 5,
            BitAnd => 6,
            Eq | Ne => 7,
            Lt | Le | Gt | Ge => 8,
            Shl | Shr => 9,
            Add | Sub => 10,
            Mul | Div | Rem => 11,
        },
        Expr::Unary { .. } => 12,
        Expr::Cast { arg, .. } => precedence(arg),
        _ => 13,
    }
}

fn write_expr(s: &mut String, e: &Expr, outer: u8) {
    let p = precedence(e);
    let paren = p < outer;
    if paren {
        s.push('(');
    }
    match e {
        Expr::Int { value, .. } => s.push_str(&value.to_string()),
        Expr::Float { bits, ty } => {
            let v = f64::from_bits(*bits);
            s.push_str(&format!("{v:?}"));
            if *ty == crate::ScalarType::F32 {
                s.push('f');
            }
        }
        Expr::Var { name, .. } => s.push_str(name),
        Expr::Read { array, index, .. } => s.push_str(&subscripted(array, index)),
        Expr::Unary { op, arg, .. } => {
            s.push_str(match op {
                UnOp::Neg => "-",
                UnOp::Plus => "+",
                UnOp::Not => "!",
                UnOp::BitNot => "~",
            });
            write_expr(s, arg, 12);
        }
        Expr::Binary { op, lhs, rhs, .. } => {
            write_expr(s, lhs, p);
            s.push(' ');
            s.push_str(op.c_op());
            s.push(' ');
            write_expr(s, rhs, p + 1);
        }
        // Implicit conversions are invisible in the source; print the operand (in
        // the parentheses just opened, if any).
        Expr::Cast { arg, .. } => write_expr(s, arg, if paren { 0 } else { outer }),
        Expr::Select { cond, then, otherwise, .. } => {
            write_expr(s, cond, 2);
            s.push_str(" ? ");
            write_expr(s, then, 1);
            s.push_str(" : ");
            write_expr(s, otherwise, 1);
        }
        Expr::Call { func, args, ty, .. } => {
            s.push_str(&func.c_name(*ty));
            s.push('(');
            for (k, a) in args.iter().enumerate() {
                if k > 0 {
                    s.push_str(", ");
                }
                write_expr(s, a, 0);
            }
            s.push(')');
        }
        Expr::Unsupported { text, .. } => s.push_str(text),
    }
    if paren {
        s.push(')');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{BinOp, ScalarType::*};

    fn b(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary { op, lhs: Box::new(l), rhs: Box::new(r), ty: I32 }
    }

    #[test]
    fn prints_like_source() {
        let i = Expr::var("i", I32);
        let e = b(BinOp::Mul, b(BinOp::Add, i.clone(), Expr::int(1)), Expr::var("n", I32));
        assert_eq!(expr(&e), "(i + 1) * n");
        let e = b(BinOp::Sub, i.clone(), b(BinOp::Sub, Expr::int(1), Expr::int(2)));
        assert_eq!(expr(&e), "i - (1 - 2)");
        let r = Expr::Read {
            array: "idx".into(),
            index: vec![Expr::Cast { arg: Box::new(i), ty: I64 }],
            ty: I32,
            loc: Default::default(),
        };
        assert_eq!(expr(&r), "idx[i]");
        let c = Expr::Cast { arg: Box::new(b(BinOp::Sub, Expr::var("n", I32), Expr::int(2))), ty: I64 };
        assert_eq!(expr(&Expr::Unary { op: UnOp::Neg, arg: Box::new(c), ty: I64 }), "-(n - 2)");
    }
}
