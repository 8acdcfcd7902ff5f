//! Printing IR as C++ for generated kernels.
//!
//! Unlike `tessera_ir::print` (which reads like the user's source), this printer keeps
//! every cast, prints literals in their exact type, and linearises multi-dimensional
//! subscripts over the flat `m_axi` pointers, so the kernel computes bit for bit what
//! the host code computes.

use tessera_ir::{BinOp, Expr, MathFn, Region, ScalarType, UnOp};

/// The header a kernel that calls math functions includes (`host/include/`): Vitis
/// HLS' `hls_math.h` under Vitis, in emulation the `hls::` overloads as the host's C
/// library functions.
pub const MATH_HEADER: &str = "tessera_math.h";

/// Whether the region calls a math function ([`Expr::Call`]); its kernel then
/// includes [`MATH_HEADER`].
pub fn uses_math(region: &Region) -> bool {
    let mut found = false;
    region.visit_stmts(&mut |s| {
        s.visit_exprs(&mut |e| found |= matches!(e, Expr::Call { .. }));
    });
    found
}

/// The kernel spelling of a math call's function: the `hls::` overload of Vitis HLS'
/// math library (`hls::sqrt(float)` is `sqrtf`), the same name for both types — except
/// `fmin` and `fmax`, whose result for `±0.0` operands C leaves to the library:
/// `tessera::fmin` / `tessera::fmax` of [`MATH_HEADER`] return what the host binary
/// (clang 19) returns, the first argument unless the second is smaller / larger or the
/// first is a NaN.
pub fn math_function(f: MathFn) -> String {
    match f {
        MathFn::Fmin | MathFn::Fmax => format!("tessera::{}", f.name()),
        _ => format!("hls::{}", f.name()),
    }
}

/// Names that are keywords in C++ but may be identifiers in C; renamed with a `_`.
const CXX_KEYWORDS: &[&str] = &[
    "alignas", "alignof", "and", "and_eq", "asm", "bitand", "bitor", "bool", "catch", "char16_t", "char32_t", "char8_t",
    "class", "compl", "concept", "consteval", "constexpr", "constinit", "const_cast", "co_await", "co_return",
    "co_yield", "decltype", "delete", "dynamic_cast", "explicit", "export", "false", "friend", "mutable",
    "namespace", "new", "noexcept", "not", "not_eq", "nullptr", "operator", "or", "or_eq", "private", "protected",
    "public", "reinterpret_cast", "requires", "static_assert", "static_cast", "template", "this", "thread_local",
    "throw", "true", "try", "typeid", "typename", "using", "virtual", "wchar_t", "xor", "xor_eq",
];

/// A C identifier made safe for C++.
pub fn ident(name: &str) -> String {
    if CXX_KEYWORDS.contains(&name) {
        format!("{name}_")
    } else {
        name.to_string()
    }
}

/// How array subscripts are printed: `shape(array)` gives the extents of the array's
/// dimensions (outermost first) as expressions.
pub trait Shapes {
    /// Extents of `array`, outermost first.
    fn extents(&self, array: &str) -> &[Expr];
}

/// How the leaves of an expression that depend on where the data lives are printed:
/// array element reads and variable references. Everything else (literals, casts,
/// operators, parentheses) is printed the same way for every kernel, so two kernels
/// with different leaves compute with the same expression tree and the same types.
///
/// The baseline kernel reads the flat `m_axi` pointers ([`Flat`]); the paper's kernel
/// reads its cache buffers and spells loop indices as tile origin plus intra-tile index.
pub trait Leaves {
    /// An array element read, `array[index…]` in the source (pre-order: the reads of
    /// an expression are printed in the order `Expr::visit` visits them).
    fn read(&self, array: &str, index: &[Expr]) -> String;
    /// A reference to variable `name`.
    fn var(&self, name: &str) -> String {
        ident(name)
    }
}

/// Flat arrays: every read is `array[linear index]` over the region's shapes.
pub struct Flat<'a>(pub &'a dyn Shapes);

impl Leaves for Flat<'_> {
    fn read(&self, array: &str, index: &[Expr]) -> String {
        element(array, index, self.0)
    }
}

/// Prints `e` as a C++ expression over flat arrays.
pub fn expr(e: &Expr, shapes: &dyn Shapes) -> String {
    expr_with(e, &Flat(shapes))
}

/// Prints `e` as a C++ expression with the given leaves.
pub fn expr_with(e: &Expr, leaves: &dyn Leaves) -> String {
    let mut s = String::new();
    write(&mut s, e, 0, leaves);
    s
}

/// Prints `array[linear index]` for a subscript list.
pub fn element(array: &str, index: &[Expr], shapes: &dyn Shapes) -> String {
    format!("{}[{}]", ident(array), linear_index(array, index, shapes))
}

/// The flat index of `array[i0][i1]…` in row-major order, computed in `long` so that
/// large arrays do not overflow `int`: `((long)(i0) * e1 + i1) * e2 + i2`.
pub fn linear_index(array: &str, index: &[Expr], shapes: &dyn Shapes) -> String {
    let extents = shapes.extents(array);
    let flat = Flat(shapes);
    let mut s = String::new();
    for (d, i) in index.iter().enumerate() {
        if d == 0 {
            if index.len() == 1 {
                write(&mut s, i, 0, &flat);
            } else {
                s.push_str("(long)");
                write(&mut s, i, PREC_UNARY, &flat);
            }
        } else {
            let lhs = if d == 1 { s.clone() } else { format!("({s})") };
            s = format!("{lhs} * ");
            write(&mut s, &extents[d], PREC_MUL + 1, &flat);
            s.push_str(" + ");
            write(&mut s, i, PREC_ADD + 1, &flat);
        }
    }
    s
}

const PREC_ADD: u8 = 10;
const PREC_MUL: u8 = 11;
const PREC_UNARY: u8 = 12;
const PREC_ATOM: u8 = 13;

fn precedence(e: &Expr) -> u8 {
    match e {
        Expr::Select { .. } => 1,
        Expr::Binary { op, .. } => match op {
            BinOp::LOr => 2,
            BinOp::LAnd => 3,
            BinOp::BitOr => 4,
            BinOp::BitXor => 5,
            BinOp::BitAnd => 6,
            BinOp::Eq | BinOp::Ne => 7,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 8,
            BinOp::Shl | BinOp::Shr => 9,
            BinOp::Add | BinOp::Sub => PREC_ADD,
            BinOp::Mul | BinOp::Div | BinOp::Rem => PREC_MUL,
        },
        Expr::Unary { .. } | Expr::Cast { .. } => PREC_UNARY,
        Expr::Int { value, .. } if *value < 0 => PREC_UNARY,
        Expr::Float { bits, .. } if f64::from_bits(*bits).is_sign_negative() => PREC_UNARY,
        _ => PREC_ATOM,
    }
}

/// An integer literal of type `ty`.
pub fn int_literal(value: i64, ty: ScalarType) -> String {
    match ty {
        ScalarType::I32 if value == i32::MIN as i64 => "(-2147483647 - 1)".to_string(),
        ScalarType::I32 => value.to_string(),
        ScalarType::I64 if value == i64::MIN => "(-9223372036854775807L - 1)".to_string(),
        ScalarType::I64 => format!("{value}L"),
        ScalarType::U32 => format!("{}U", value as u32),
        ScalarType::U64 => format!("{}UL", value as u64),
        ScalarType::Bool => (if value != 0 { "true" } else { "false" }).to_string(),
        other => format!("({}){value}", other.c_name()),
    }
}

/// A floating literal that denotes exactly the stored value: the shortest decimal
/// that round-trips in the literal's type (C and C++ round decimal literals
/// correctly, so the compiler reads back the same bits).
pub fn float_literal(bits: u64, ty: ScalarType) -> String {
    let v = f64::from_bits(bits);
    if v.is_nan() {
        return format!("(({})__builtin_nan(\"\"))", ty.c_name());
    }
    if v.is_infinite() {
        let sign = if v < 0.0 { "-" } else { "" };
        return format!("({sign}({})__builtin_inf())", ty.c_name());
    }
    match ty {
        ScalarType::F32 => {
            let s = format!("{:?}", v as f32);
            format!("{s}f")
        }
        _ => format!("{v:?}"),
    }
}

fn write(s: &mut String, e: &Expr, outer: u8, leaves: &dyn Leaves) {
    let p = precedence(e);
    let paren = p < outer;
    if paren {
        s.push('(');
    }
    match e {
        Expr::Int { value, ty } => s.push_str(&int_literal(*value, *ty)),
        Expr::Float { bits, ty } => s.push_str(&float_literal(*bits, *ty)),
        Expr::Var { name, .. } => s.push_str(&leaves.var(name)),
        Expr::Read { array, index, .. } => s.push_str(&leaves.read(array, index)),
        Expr::Unary { op, arg, .. } => {
            s.push_str(match op {
                UnOp::Neg => "-",
                UnOp::Plus => "+",
                UnOp::Not => "!",
                UnOp::BitNot => "~",
            });
            // Avoid `--x` / `- -1` being read as a decrement.
            if matches!(**arg, Expr::Unary { .. }) || precedence(arg) == PREC_UNARY {
                s.push('(');
                write(s, arg, 0, leaves);
                s.push(')');
            } else {
                write(s, arg, PREC_UNARY, leaves);
            }
        }
        Expr::Binary { op, lhs, rhs, .. } => {
            // Operands of bitwise and shift operators that are themselves binary
            // operations get parentheses: precedence there surprises readers (and
            // `-Wparentheses`).
            let bitwise = matches!(op, BinOp::BitAnd | BinOp::BitOr | BinOp::BitXor | BinOp::Shl | BinOp::Shr);
            let operand = |e: &Expr, min: u8| if bitwise && matches!(e, Expr::Binary { .. }) { PREC_ATOM } else { min };
            write(s, lhs, operand(lhs, p), leaves);
            s.push(' ');
            s.push_str(op.c_op());
            s.push(' ');
            write(s, rhs, operand(rhs, p + 1), leaves);
        }
        Expr::Cast { arg, ty } => {
            s.push('(');
            s.push_str(ty.c_name());
            s.push(')');
            write(s, arg, PREC_UNARY, leaves);
        }
        Expr::Select { cond, then, otherwise, .. } => {
            write(s, cond, 2, leaves);
            s.push_str(" ? ");
            write(s, then, 1, leaves);
            s.push_str(" : ");
            write(s, otherwise, 1, leaves);
        }
        Expr::Call { func, args, ty, .. } => {
            s.push_str(&math_function(*func));
            s.push('(');
            for (k, a) in args.iter().enumerate() {
                if k > 0 {
                    s.push_str(", ");
                }
                // Arguments are of the call's type (the checker makes sure), so the
                // overload is the one of that type; a literal keeps its suffix.
                debug_assert_eq!(a.ty(), Some(*ty), "argument of {} of another type", func.name());
                write(s, a, 0, leaves);
            }
            s.push(')');
        }
        Expr::Unsupported { text, .. } => {
            // The checker rejects regions with unsupported nodes before code generation.
            unreachable!("unsupported expression '{text}' reached the code generator")
        }
    }
    if paren {
        s.push(')');
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::*;

    struct Fixed(Vec<Expr>);
    impl Shapes for Fixed {
        fn extents(&self, _: &str) -> &[Expr] {
            &self.0
        }
    }

    fn bin(op: BinOp, l: Expr, r: Expr, ty: ScalarType) -> Expr {
        Expr::Binary { op, lhs: Box::new(l), rhs: Box::new(r), ty }
    }
    fn cast(e: Expr, ty: ScalarType) -> Expr {
        Expr::Cast { arg: Box::new(e), ty }
    }

    #[test]
    fn literals_are_exact() {
        assert_eq!(float_literal(0.2f64.to_bits(), F64), "0.2");
        assert_eq!(float_literal((0.1f32 as f64).to_bits(), F32), "0.1f");
        assert_eq!(float_literal(1.0f64.to_bits(), F64), "1.0");
        assert_eq!(float_literal(f64::INFINITY.to_bits(), F32), "((float)__builtin_inf())");
        assert_eq!(int_literal(-5, I32), "-5");
        assert_eq!(int_literal(i32::MIN as i64, I32), "(-2147483647 - 1)");
        assert_eq!(int_literal(i64::MIN, I64), "(-9223372036854775807L - 1)");
        assert_eq!(int_literal(7, U64), "7UL");
        assert_eq!(int_literal(3, I16), "(short)3");
    }

    /// Math calls are the `hls::` overloads of their type; reads inside arguments are
    /// leaves like any other.
    #[test]
    fn math_calls() {
        let shapes = Fixed(vec![Expr::var("n", I32), Expr::var("m", I32)]);
        let read = Expr::Read { array: "a".into(), index: vec![Expr::var("i", I32), Expr::var("j", I32)], ty: F32, loc: Default::default() };
        let sq = Expr::Call { func: MathFn::Sqrt, args: vec![bin(BinOp::Mul, read.clone(), read.clone(), F32)], ty: F32, loc: Default::default() };
        let e = Expr::Call { func: MathFn::Fmin, args: vec![sq, Expr::Float { bits: 1.0f64.to_bits(), ty: F32 }], ty: F32, loc: Default::default() };
        assert_eq!(expr(&e, &shapes), "tessera::fmin(hls::sqrt(a[(long)i * m + j] * a[(long)i * m + j]), 1.0f)");
        let neg = Expr::Unary { op: UnOp::Neg, arg: Box::new(Expr::Call { func: MathFn::Floor, args: vec![cast(read, F64)], ty: F64, loc: Default::default() }), ty: F64 };
        assert_eq!(expr(&neg, &shapes), "-hls::floor((double)a[(long)i * m + j])");
    }

    #[test]
    fn keeps_casts_and_linearises() {
        let shapes = Fixed(vec![Expr::var("n", I32), Expr::var("m", I32)]);
        let i = Expr::var("i", I32);
        let j = Expr::var("j", I32);
        let read = Expr::Read { array: "A".into(), index: vec![i.clone(), bin(BinOp::Add, j, Expr::int(1), I32)], ty: F32, loc: Default::default() };
        let e = cast(bin(BinOp::Mul, Expr::Float { bits: 0.2f64.to_bits(), ty: F64 }, cast(read, F64), F64), F32);
        assert_eq!(expr(&e, &shapes), "(float)(0.2 * (double)A[(long)i * m + (j + 1)])");
        let neg = Expr::Unary { op: UnOp::Neg, arg: Box::new(Expr::int(-1)), ty: I32 };
        assert_eq!(expr(&neg, &shapes), "-(-1)");
        let three = Fixed(vec![Expr::int(4), Expr::int(5), Expr::int(6)]);
        let r3 = Expr::Read { array: "new".into(), index: vec![Expr::var("i", I32), Expr::var("j", I32), Expr::var("k", I32)], ty: F32, loc: Default::default() };
        assert_eq!(expr(&r3, &three), "new_[((long)i * 5 + j) * 6 + k]");
    }
}
