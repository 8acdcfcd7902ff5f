//! Test support for the rewrites (`fold`, `branches`): a small integer interpreter
//! of the region IR (wrapping 64-bit arithmetic, arrays of 16 elements indexed modulo
//! 16, `?:` evaluating only the branch it picks), builders of `long` IR and a
//! deterministic generator.

use std::collections::HashMap;
use tessera_ir::{BinOp, Expr, LValue, Loc, Region, ScalarType, Stmt, Var, VarKind, IR_VERSION};

/// The type of every generated value and index.
pub const I: ScalarType = ScalarType::I64;

pub fn v(name: &str) -> Expr {
    Expr::var(name, I)
}
pub fn c(value: i64) -> Expr {
    Expr::Int { value, ty: I }
}
pub fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
    Expr::Binary { op, lhs: Box::new(a), rhs: Box::new(b), ty: I }
}
pub fn rd(a: &str, index: Vec<Expr>) -> Expr {
    Expr::Read { array: a.into(), index, ty: I, loc: Loc::default() }
}
pub fn el(a: &str, index: Vec<Expr>) -> LValue {
    LValue::Element { array: a.into(), index, ty: I, loc: Loc::default() }
}
pub fn set(target: LValue, value: Expr) -> Stmt {
    Stmt::Assign { target, value, loc: Loc::default() }
}
pub fn for_(var: &str, lower: Expr, upper: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::For { var: var.into(), ty: I, lower, upper, step: 1, ne: false, body, loc: Loc::default() }
}

/// A region over the pointers `arrays` and the `long` scalars `scalars`.
pub fn region(arrays: &[&str], scalars: &[&str], body: Vec<Stmt>) -> Region {
    let var = |name: &str, kind: VarKind| Var {
        name: name.into(),
        kind,
        elem: I,
        dims: if kind == VarKind::Scalar { vec![] } else { vec![None] },
        map: None,
        section: vec![],
        written: kind != VarKind::Scalar,
        loc: Loc::default(),
    };
    Region {
        members: Vec::new(),
        checked_members: Vec::new(),
        version: IR_VERSION,
        location: Loc { file: "f.c".into(), line: 1, col: 1 },
        source: None,
        function: "f".into(),
        index: 0,
        directive: "target".into(),
        collapse: 1,
        unsupported_clauses: vec![],
        tile: None,
        if_clause: false,
        device_clause: false,
        vars: arrays.iter().map(|a| var(a, VarKind::Pointer)).chain(scalars.iter().map(|s| var(s, VarKind::Scalar))).collect(),
        reductions: vec![],
        array_reductions: vec![],
        body,
    }
}

/// xorshift: deterministic numbers for the generators.
pub struct Rng(pub u64);

impl Rng {
    pub fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

struct M {
    vars: HashMap<String, i64>,
    arrays: HashMap<String, Vec<i64>>,
    /// Every array access, in order: array, subscript (before it wraps), whether it writes.
    trace: std::cell::RefCell<Vec<(String, i64, bool)>>,
}

fn ev(e: &Expr, m: &M) -> i64 {
    match e {
        Expr::Int { value, .. } => *value,
        Expr::Var { name, .. } => m.vars[name],
        Expr::Read { array, index, .. } => {
            let k = ev(&index[0], m);
            m.trace.borrow_mut().push((array.clone(), k, false));
            m.arrays[array][k.rem_euclid(16) as usize]
        }
        Expr::Binary { op, lhs, rhs, .. } => {
            let x = ev(lhs, m);
            // `&&` and `||` evaluate their right operand only when needed.
            match op {
                BinOp::LAnd => return (x != 0 && ev(rhs, m) != 0) as i64,
                BinOp::LOr => return (x != 0 || ev(rhs, m) != 0) as i64,
                _ => {}
            }
            let y = ev(rhs, m);
            match op {
                BinOp::Add => x.wrapping_add(y),
                BinOp::Sub => x.wrapping_sub(y),
                BinOp::Mul => x.wrapping_mul(y),
                BinOp::Eq => (x == y) as i64,
                BinOp::Ne => (x != y) as i64,
                BinOp::Lt => (x < y) as i64,
                BinOp::Le => (x <= y) as i64,
                BinOp::Gt => (x > y) as i64,
                BinOp::Ge => (x >= y) as i64,
                other => panic!("not generated: {other:?}"),
            }
        }
        Expr::Cast { arg, .. } => ev(arg, m),
        Expr::Select { cond, then, otherwise, .. } => {
            if ev(cond, m) != 0 {
                ev(then, m)
            } else {
                ev(otherwise, m)
            }
        }
        other => panic!("not generated: {other:?}"),
    }
}

fn exec(ss: &[Stmt], m: &mut M) {
    for s in ss {
        match s {
            Stmt::Let { name, init, .. } => {
                let x = ev(init.as_ref().expect("initialised"), m);
                m.vars.insert(name.clone(), x);
            }
            Stmt::Assign { target, value, .. } => {
                let x = ev(value, m);
                match target {
                    LValue::Element { array, index, .. } => {
                        let k = ev(&index[0], m);
                        m.trace.borrow_mut().push((array.clone(), k, true));
                        m.arrays.get_mut(array).expect("an array")[k.rem_euclid(16) as usize] = x;
                    }
                    LValue::Local { name, .. } | LValue::Scalar { name, .. } => {
                        m.vars.insert(name.clone(), x);
                    }
                }
            }
            Stmt::If { cond, then, otherwise, .. } => {
                if ev(cond, m) != 0 {
                    exec(then, m)
                } else {
                    exec(otherwise, m)
                }
            }
            Stmt::For { var, lower, upper, body, .. } => {
                let (lo, hi) = (ev(lower, m), ev(upper, m));
                for k in lo..hi {
                    m.vars.insert(var.clone(), k);
                    exec(body, m);
                }
            }
            other => panic!("not generated: {other:?}"),
        }
    }
}

/// Runs `r` with the integer `scalars` and the arrays `arrays` (16 elements each,
/// array `j` starting as `k·(j + 2) − 5`); returns the arrays' final contents.
pub fn run(r: &Region, scalars: &[(&str, i64)], arrays: &[&str]) -> Vec<Vec<i64>> {
    run_traced(r, scalars, arrays).0
}

/// [`run`], with every array access it made: array, subscript (before the interpreter
/// wraps it into the 16 elements), whether it writes.
pub fn run_traced(r: &Region, scalars: &[(&str, i64)], arrays: &[&str]) -> (Vec<Vec<i64>>, Vec<(String, i64, bool)>) {
    run_from(r, scalars, arrays, initial(arrays.len()))
}

/// The arrays [`run`] starts from: array `j` holds `k·(j + 2) − 5` at `k`.
pub fn initial(arrays: usize) -> Vec<Vec<i64>> {
    (0..arrays).map(|j| (0..16).map(|k| k * (j as i64 + 2) - 5).collect()).collect()
}

/// [`run_traced`] from the arrays' contents `init` (16 elements each).
pub fn run_from(r: &Region, scalars: &[(&str, i64)], arrays: &[&str], init: Vec<Vec<i64>>) -> (Vec<Vec<i64>>, Vec<(String, i64, bool)>) {
    let mut m = M {
        vars: scalars.iter().map(|(n, v)| (n.to_string(), *v)).collect(),
        arrays: arrays.iter().map(|a| a.to_string()).zip(init).collect(),
        trace: Default::default(),
    };
    exec(&r.body, &mut m);
    (arrays.iter().map(|a| m.arrays[*a].clone()).collect(), m.trace.into_inner())
}
