//! Quasi-affine and parametric bounds: `n/2`, `(n + 1)/2`, `128/2 + 1`, `nx*ny`
//! become parameters of the SCoP (or constants), with the expressions the kernel
//! computes them from.

use tessera_ir::{BinOp, Expr, LValue, Loc, MapKind, Region, ScalarType::*, Stmt, Var, VarKind};
use tessera_poly::{optimize, scop, PolyOptions, PolyRejectReason};

fn bin(op: BinOp, l: Expr, r: Expr) -> Expr {
    Expr::Binary { op, lhs: Box::new(l), rhs: Box::new(r), ty: I32 }
}
fn v(n: &str) -> Expr {
    Expr::var(n, I32)
}

/// `for (i = 0; i < u0; i++) for (j = 0; j < u1; j++) b[i][j] = a[i][j]` over
/// `float a[n][m]`, `b[n][m]` and the `int` scalars n, m, nx, ny.
fn region(u0: Expr, u1: Expr) -> Region {
    let idx = vec![v("i"), v("j")];
    let assign = Stmt::Assign {
        target: LValue::Element { array: "b".into(), index: idx.clone(), ty: F32, loc: Loc::default() },
        value: Expr::Read { array: "a".into(), index: idx, ty: F32, loc: Loc::default() },
        loc: Loc::default(),
    };
    let for_ = |var: &str, upper: Expr, body: Vec<Stmt>| Stmt::For {
        var: var.into(),
        ty: I32,
        lower: Expr::int(0),
        upper,
        step: 1,
        ne: false,
        body,
        loc: Loc::default(),
    };
    let arr = |name: &str, written| Var {
        name: name.into(),
        kind: VarKind::Pointer,
        elem: F32,
        dims: vec![Some(v("n")), Some(v("m"))],
        map: Some(MapKind::Tofrom),
        section: vec![],
        written,
        loc: Loc::default(),
    };
    let scalar = |name: &str| Var {
        name: name.into(),
        kind: VarKind::Scalar,
        elem: I32,
        dims: vec![],
        map: None,
        section: vec![],
        written: false,
        loc: Loc::default(),
    };
    Region { collapse: 2, ..Region::new(Loc::default(), vec![arr("a", false), arr("b", true), scalar("n"), scalar("m"), scalar("nx"), scalar("ny")], vec![for_("i", u0, vec![for_("j", u1, vec![assign])])]) }
}

#[test]
fn divisions_by_constants_and_products_are_parameters() {
    let half = bin(BinOp::Div, v("n"), Expr::int(2));
    let prod = bin(BinOp::Mul, v("nx"), v("ny"));
    let r = region(half.clone(), prod.clone());
    let s = scop::extract(&r).unwrap();
    assert_eq!(s.params, ["n_div_2", "nx_ny"]);
    assert_eq!(s.derived.iter().map(|d| (d.name.as_str(), &d.expr, d.ty)).collect::<Vec<_>>(), [
        ("n_div_2", &half, I32),
        ("nx_ny", &prod, I32)
    ]);
    assert_eq!(s.domain, "[n_div_2, nx_ny] -> { S0[i, j] : 0 <= i < n_div_2 and 0 <= j < nx_ny }");
    // The whole optimizer runs on them.
    let plan = optimize(&r, &PolyOptions::default()).unwrap();
    assert_eq!(plan.scop.derived.len(), 2);
}

#[test]
fn one_parameter_per_expression_and_constants_fold() {
    // (n + 1)/2 and n/2 are different parameters; the same one twice is one.
    let odd = bin(BinOp::Div, bin(BinOp::Add, v("n"), Expr::int(1)), Expr::int(2));
    let s = scop::extract(&region(odd.clone(), odd.clone())).unwrap();
    assert_eq!(s.params, ["n_1_div_2"]);
    assert_eq!(s.loops[0].upper, s.loops[1].upper);
    // 128/2 + 1 is 65; 2*(n/2) a multiple of the parameter n/2.
    let c = bin(BinOp::Add, bin(BinOp::Div, Expr::int(128), Expr::int(2)), Expr::int(1));
    let twice = bin(BinOp::Mul, Expr::int(2), bin(BinOp::Div, v("n"), Expr::int(2)));
    let s = scop::extract(&region(c, twice)).unwrap();
    assert_eq!(s.loops[0].upper.as_constant(), Some(65));
    assert_eq!(s.params, ["n_div_2"]);
    assert_eq!(s.loops[1].upper.terms[0].coeff, 2);
    assert!(s.derived.iter().all(|d| d.name != "p_128_div_2"));
    // n - n/2: the scalar and the parameter side by side.
    let rest = bin(BinOp::Sub, v("n"), bin(BinOp::Div, v("n"), Expr::int(2)));
    let s = scop::extract(&region(rest, v("m"))).unwrap();
    assert_eq!(s.params, ["n", "m", "n_div_2"]);
}

#[test]
fn division_by_a_variable_is_not_a_parameter() {
    let r = region(bin(BinOp::Div, v("n"), v("m")), v("m"));
    let e = scop::extract(&r).unwrap_err();
    assert!(matches!(e.reason, PolyRejectReason::NonAffineBound { .. }), "{e:?}");
    // Nor a product with a loop index.
    let r = region(v("n"), bin(BinOp::Mul, v("i"), v("m")));
    assert!(scop::extract(&r).is_err());
}
