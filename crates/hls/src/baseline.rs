//! The baseline kernel: the region's original loop nest as a Vitis HLS top function.
//!
//! This is what the paper compares against: Vitis' default treatment of the plain
//! code (one `m_axi` bundle per array, scalars and control over `s_axilite`, no
//! on-chip buffers, no manual bursts). Multi-dimensional arrays become flat pointers
//! with row-major linearised subscripts; arrays the region never writes are `const`.
//!
//! Array parameters are `tessera::maxi<T>` (`host/include/tessera_hls.h`): exactly
//! `T *` under Vitis (`__SYNTHESIS__`), and in emulation a bounds-checked port that
//! counts every element access as one single-beat DDR transaction. The emulation
//! entry builds the ports from the runtime's port descriptors:
//! `extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports)`.

use crate::cpp::{self, ident, Shapes};
use crate::Kernel;
use std::collections::{HashMap, HashSet};
use std::fmt::Write;
use tessera_ir::{Expr, LValue, ReductionOp, Region, ScalarType, Stmt, VarKind};

struct RegionShapes(HashMap<String, Vec<Expr>>, HashMap<String, Partial>);

impl Shapes for RegionShapes {
    fn extents(&self, array: &str) -> &[Expr] {
        &self.0[array]
    }
}

/// How many partial results a reassociated reduction keeps ([`generate_with`]): the
/// kernel cycles through them, so consecutive additions into one are this many
/// iterations apart — at least the latency of a pipelined floating-point adder or
/// multiplier (the model's `fp_op_ns`, 15 ns: 4–5 stages at about 300 MHz), with room
/// for double precision's deeper adder; the accumulation then allows an II of 1.
pub const PARTIAL_SUMS: usize = 8;

/// A reduction accumulated in [`PARTIAL_SUMS`] partial results: the array and the
/// index of the current one.
struct Partial {
    array: String,
    lane: String,
}

/// Reads of a reassociated reduction variable are reads of its current partial result.
struct PartialLeaves<'a> {
    shapes: &'a RegionShapes,
    name: &'a str,
    part: String,
}

impl cpp::Leaves for PartialLeaves<'_> {
    fn read(&self, array: &str, index: &[Expr]) -> String {
        cpp::element(array, index, self.shapes)
    }
    fn var(&self, name: &str) -> String {
        if name == self.name {
            self.part.clone()
        } else {
            ident(name)
        }
    }
}

/// Whether reduction variable `name` can be accumulated in partial results: every
/// assignment to it is `name = name op e` (with conversions around `name` and the
/// result, as compound assignments give them), `op` the reduction's, `e` not reading
/// it; and nothing else reads it. Then replacing it by any partial result in each
/// assignment only reassociates the reduction.
pub(crate) fn reassociable(region: &Region, name: &str, op: ReductionOp) -> bool {
    fn reads(e: &Expr, name: &str) -> usize {
        let mut n = 0;
        e.visit(&mut |x| n += usize::from(matches!(x, Expr::Var { name: v, .. } if v == name)));
        n
    }
    /// `e` is `[casts] (x op e')` with `x` `[casts] name` (either side).
    fn accumulates(e: &Expr, name: &str, op: tessera_ir::BinOp) -> bool {
        fn strip(mut e: &Expr) -> &Expr {
            while let Expr::Cast { arg, .. } = e {
                e = arg;
            }
            e
        }
        match strip(e) {
            Expr::Binary { op: o, lhs, rhs, .. } if *o == op => {
                let is_var = |x: &Expr| matches!(strip(x), Expr::Var { name: v, .. } if v == name);
                (is_var(lhs) && reads(rhs, name) == 0) || (is_var(rhs) && reads(lhs, name) == 0)
            }
            _ => false,
        }
    }
    let bin = match op {
        ReductionOp::Add => tessera_ir::BinOp::Add,
        ReductionOp::Mul => tessera_ir::BinOp::Mul,
        _ => return false,
    };
    let mut ok = true;
    let mut assigned = false;
    region.visit_stmts(&mut |st| {
        let Stmt::Assign { target, value, .. } = st else {
            // Bounds and conditions must not read it.
            let mut n = 0;
            match st {
                Stmt::For { lower, upper, .. } => n = reads(lower, name) + reads(upper, name),
                Stmt::If { cond, .. } => n = reads(cond, name),
                Stmt::Let { init: Some(e), .. } => n = reads(e, name),
                _ => {}
            }
            ok &= n == 0;
            return;
        };
        let to_it = matches!(target, LValue::Scalar { name: n, .. } | LValue::Local { name: n, .. } if n == name);
        if to_it {
            assigned = true;
            ok &= accumulates(value, name, bin);
        } else {
            let mut n = reads(value, name);
            if let LValue::Element { index, .. } = target {
                n += index.iter().map(|e| reads(e, name)).sum::<usize>();
            }
            ok &= n == 0;
        }
    });
    ok && assigned
}

/// Extents known to the kernel: inner dimensions from the types (the outermost is
/// never needed to linearise a subscript).
fn shapes(region: &Region) -> RegionShapes {
    RegionShapes(
        region
            .vars
            .iter()
            .filter(|v| v.kind != VarKind::Scalar)
            .map(|v| {
                let dims = v.dims.iter().map(|d| d.clone().unwrap_or(Expr::int(0))).collect();
                (v.name.clone(), dims)
            })
            .collect(),
        HashMap::new(),
    )
}

/// The memory-port type of an array variable: `tessera::maxi<T>`, or
/// `tessera::maxi<const T>` when the region never writes it.
fn port_type(v: &tessera_ir::Var) -> String {
    let ty = v.elem.c_name();
    if v.written {
        format!("tessera::maxi<{ty}>")
    } else {
        format!("tessera::maxi<const {ty}>")
    }
}

/// The C++ parameter declaration of a region variable, named `pname`.
fn param(v: &tessera_ir::Var, pname: &str) -> String {
    match v.kind {
        VarKind::Scalar if !v.writes_back() => format!("{} {pname}", v.elem.c_name()),
        _ => format!("{} {pname}", port_type(v)),
    }
}

/// Every identifier the region's code may use: variables, locals, loop indices.
fn names(region: &Region) -> HashSet<String> {
    let mut used: HashSet<String> = region.vars.iter().map(|v| ident(&v.name)).collect();
    region.visit_stmts(&mut |st| match st {
        Stmt::For { var, .. } => {
            used.insert(ident(var));
        }
        Stmt::Let { name, .. } => {
            used.insert(ident(name));
        }
        _ => {}
    });
    used
}

/// `base`, or `base` with `_` appended until it is not in `used` (then added to it).
fn fresh(base: String, used: &mut HashSet<String>) -> String {
    let mut n = base;
    while used.contains(&n) {
        n.push('_');
    }
    used.insert(n.clone());
    n
}

/// The name of each variable's kernel parameter. Inside the kernel the code uses the
/// variable's own name; a scalar whose value the kernel keeps in a local of that name
/// (a reduction's private copy, a scalar returned to the host) has its parameter
/// renamed: `<name>_port` for the one-element memory port of a returned scalar,
/// `<name>_in` for the (unused) value of a firstprivate reduction variable.
fn param_names(region: &Region) -> Vec<String> {
    let mut used = names(region);
    region
        .vars
        .iter()
        .map(|v| {
            if v.writes_back() {
                fresh(format!("{}_port", ident(&v.name)), &mut used)
            } else if v.kind == VarKind::Scalar && region.reduction(&v.name).is_some() {
                fresh(format!("{}_in", ident(&v.name)), &mut used)
            } else {
                ident(&v.name)
            }
        })
        .collect()
}

/// The identity of reduction `op` for type `ty` as a C++ literal (OpenMP 5.2, table
/// 5.11, with clang's choices: the largest finite value, not infinity, for floating
/// `min` and `max`).
pub(crate) fn identity(op: ReductionOp, ty: ScalarType) -> String {
    let int = |v: i64| cpp::int_literal(v, ty);
    let float = |v: f64| cpp::float_literal(v.to_bits(), ty);
    let (max, min): (i64, i64) = match ty {
        ScalarType::Bool => (1, 0),
        ScalarType::I8 => (i8::MAX as i64, i8::MIN as i64),
        ScalarType::U8 => (u8::MAX as i64, 0),
        ScalarType::I16 => (i16::MAX as i64, i16::MIN as i64),
        ScalarType::U16 => (u16::MAX as i64, 0),
        ScalarType::I32 => (i32::MAX as i64, i32::MIN as i64),
        ScalarType::U32 => (u32::MAX as i64, 0),
        ScalarType::I64 => (i64::MAX, i64::MIN),
        // Stored wrapped, printed as `18446744073709551615UL`.
        ScalarType::U64 => (-1, 0),
        ScalarType::F32 | ScalarType::F64 => (0, 0),
    };
    let largest = if ty == ScalarType::F32 { f32::MAX as f64 } else { f64::MAX };
    match (op, ty.is_float()) {
        (ReductionOp::Add | ReductionOp::BitOr | ReductionOp::BitXor | ReductionOp::LOr, false) => int(0),
        (ReductionOp::Add | ReductionOp::BitOr | ReductionOp::BitXor | ReductionOp::LOr, true) => float(0.0),
        (ReductionOp::Mul | ReductionOp::LAnd, false) => int(1),
        (ReductionOp::Mul | ReductionOp::LAnd, true) => float(1.0),
        (ReductionOp::BitAnd, _) => int(-1),
        (ReductionOp::Min, false) => int(max),
        (ReductionOp::Min, true) => float(largest),
        (ReductionOp::Max, false) => int(min),
        (ReductionOp::Max, true) => float(-largest),
    }
}

/// The combiner `orig op private` of reduction `op` as clang builds it, as a C++
/// expression of type `ty` (`(T)(o + p)`; `o < p ? o : p` for `min`).
pub(crate) fn combine(op: ReductionOp, ty: ScalarType, orig: &str, private: &str) -> String {
    let c = |o: &str| format!("({})({orig} {o} {private})", ty.c_name());
    match op {
        ReductionOp::Add => c("+"),
        ReductionOp::Mul => c("*"),
        ReductionOp::BitAnd => c("&"),
        ReductionOp::BitOr => c("|"),
        ReductionOp::BitXor => c("^"),
        ReductionOp::LAnd => c("&&"),
        ReductionOp::LOr => c("||"),
        ReductionOp::Min => format!("{orig} < {private} ? {orig} : {private}"),
        ReductionOp::Max => format!("{orig} > {private} ? {orig} : {private}"),
    }
}

/// Generates the baseline kernel `name` for a region that passed the input check,
/// every reduction in the loop's order ([`generate_with`] without reassociation).
pub fn generate(region: &Region, name: &str) -> Kernel {
    generate_with(region, name, false)
}

/// Generates the baseline kernel `name` for a region that passed the input check.
///
/// With `reassociate` (`-fplugin-arg-tessera-reassociate`), a floating `+` or `*`
/// reduction whose variable the region only accumulates into
/// ([`reassociable`]) keeps [`PARTIAL_SUMS`] partial results, used in turn, and adds
/// them up pairwise at the end: no addition waits for the previous one (II = 1), and
/// the result is rounded differently from the loop's order, as `-ffast-math` would
/// allow. Reductions exact in any order are unaffected.
///
/// Scalars the region writes: a firstprivate one (no map clause) is the by-value
/// parameter, which the kernel may change; one returned to the host
/// ([`tessera_ir::Var::writes_back`]) is a one-element memory port, read into a local
/// of its name at the start and written back at the end. A reduction variable is a
/// local starting at the operator's identity, the loop accumulating into it in the
/// source's order (a floating sum is exactly the host's with one thread; the
/// loop-carried addition bounds the pipeline's II by the adder's latency), and at
/// the end the port receives `original op private` — clang's combiner.
pub fn generate_with(region: &Region, name: &str, reassociate: bool) -> Kernel {
    let mut shapes = shapes(region);
    let pnames = param_names(region);
    let mut s = String::new();
    let loc = &region.location;
    writeln!(s, "// Tessera kernel {name}").unwrap();
    writeln!(s, "// Region: {} in {}(), `#pragma omp {}`.", loc, region.function, region.directive).unwrap();
    writeln!(s, "// Mode: baseline — the original loop nest as a Vitis HLS top function with").unwrap();
    writeln!(s, "// default settings (one m_axi bundle per array, no on-chip buffers).").unwrap();
    writeln!(s, "// Multi-dimensional arrays are flat, row-major; every implicit conversion of the").unwrap();
    writeln!(s, "// source is an explicit cast, so results match the host bit for bit.").unwrap();
    writeln!(s, "// tessera::maxi<T> is `T *` for Vitis; in emulation it counts DDR traffic.").unwrap();
    writeln!(s).unwrap();
    writeln!(s, "#include \"tessera_hls.h\"").unwrap();
    if crate::cpp::uses_math(region) {
        writeln!(s, "#include \"{}\"", crate::cpp::MATH_HEADER).unwrap();
    }
    writeln!(s).unwrap();
    let params: Vec<String> = region.vars.iter().zip(&pnames).map(|(v, p)| param(v, p)).collect();
    writeln!(s, "extern \"C\" void {name}({}) {{", params.join(", ")).unwrap();
    let is_port = |v: &tessera_ir::Var| v.kind != VarKind::Scalar || v.writes_back();
    for (bundle, (_, p)) in region.vars.iter().zip(&pnames).filter(|(v, _)| is_port(v)).enumerate() {
        writeln!(s, "#pragma HLS INTERFACE mode=m_axi port={p} offset=slave bundle=gmem{bundle}").unwrap();
    }
    for (_, p) in region.vars.iter().zip(&pnames).filter(|(v, _)| !is_port(v)) {
        writeln!(s, "#pragma HLS INTERFACE mode=s_axilite port={p}").unwrap();
    }
    writeln!(s, "#pragma HLS INTERFACE mode=s_axilite port=return").unwrap();
    let mut body = String::new();
    // The locals of scalars the kernel keeps: private copies of reduction variables,
    // the values of scalars it returns.
    let mut used = names(region);
    pnames.iter().for_each(|p| {
        used.insert(p.clone());
    });
    let mut epilogue = String::new();
    for (v, p) in region.vars.iter().zip(&pnames) {
        let (ty, local) = (v.elem.c_name(), ident(&v.name));
        match region.reduction(&v.name) {
            Some(r) if reassociate && r.op.order_sensitive(v.elem) && reassociable(region, &v.name, r.op) => {
                let (array, lane) = (fresh(format!("{local}_part"), &mut used), fresh(format!("{local}_lane"), &mut used));
                let id = identity(r.op, v.elem);
                writeln!(body, "  // reduction({}: {}), reassociated (-fplugin-arg-tessera-reassociate): {PARTIAL_SUMS} partial", r.op.name(), v.name).unwrap();
                writeln!(body, "  // results used in turn, each starting at the identity, combined pairwise at the end.").unwrap();
                let ids = vec![id; PARTIAL_SUMS].join(", ");
                writeln!(body, "  {ty} {array}[{PARTIAL_SUMS}] = {{{ids}}};").unwrap();
                writeln!(body, "#pragma HLS ARRAY_PARTITION variable={array} type=complete").unwrap();
                writeln!(body, "  int {lane} = 0;").unwrap();
                let mut level: Vec<String> = (0..PARTIAL_SUMS).map(|k| format!("{array}[{k}]")).collect();
                while level.len() > 1 {
                    level = level.chunks(2).map(|p| combine(r.op, v.elem, &p[0], &p[1])).collect();
                }
                let mut tail = format!("  {ty} {local} = {};\n", level[0]);
                if v.writes_back() {
                    let orig = fresh(format!("{local}_orig"), &mut used);
                    writeln!(tail, "  // The result: the original value combined with the private copy.").unwrap();
                    writeln!(tail, "  {ty} {orig} = {p}[0];").unwrap();
                    writeln!(tail, "  {p}[0] = {};", combine(r.op, v.elem, &orig, &local)).unwrap();
                } else {
                    writeln!(tail, "  (void){local};").unwrap();
                }
                epilogue.push_str(&tail);
                shapes.1.insert(v.name.clone(), Partial { array, lane });
            }
            Some(r) => {
                let why = if r.op.order_sensitive(v.elem) { ", accumulated in the loop's order" } else { "" };
                writeln!(body, "  // reduction({}: {}): the private copy starts at the identity{why}.", r.op.name(), v.name).unwrap();
                writeln!(body, "  {ty} {local} = {};", identity(r.op, v.elem)).unwrap();
                if v.writes_back() {
                    let orig = fresh(format!("{local}_orig"), &mut used);
                    writeln!(epilogue, "  // The result: the original value combined with the private copy.").unwrap();
                    writeln!(epilogue, "  {ty} {orig} = {p}[0];").unwrap();
                    writeln!(epilogue, "  {p}[0] = {};", combine(r.op, v.elem, &orig, &local)).unwrap();
                }
            }
            None if v.writes_back() => {
                writeln!(body, "  {ty} {local} = {p}[0];").unwrap();
                writeln!(epilogue, "  {p}[0] = {local};").unwrap();
            }
            None => {}
        }
    }
    for st in &region.body {
        stmt(&mut body, st, 1, &shapes);
    }
    body.push_str(&epilogue);
    // A variable only a map clause uses (e.g. an extent) is still a parameter; mark it
    // used so the kernel compiles warning-free (-Wall -Wextra -Werror).
    for p in pnames.iter().filter(|p| !mentions(&body, p)) {
        writeln!(s, "  (void){p};").unwrap();
    }
    s.push_str(&body);
    writeln!(s, "}}").unwrap();

    let e = crate::emu_entry(region, name, &port_type, &[], &[], &[]);
    Kernel { name: name.to_string(), source: s, emu_entry: e, write_ports: Vec::new(), interleave: None, size_params: Vec::new() }
}

/// Whether C++ text `text` contains the identifier `id` as a whole token.
pub(crate) fn mentions(text: &str, id: &str) -> bool {
    let is_ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    text.match_indices(id).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + id.len()..].chars().next();
        !before.is_some_and(is_ident) && !after.is_some_and(is_ident)
    })
}

fn indent(s: &mut String, depth: usize) {
    for _ in 0..depth {
        s.push_str("  ");
    }
}

fn stmt(s: &mut String, st: &Stmt, depth: usize, shapes: &RegionShapes) {
    match st {
        Stmt::For { var, ty, lower, upper, step, ne, body, .. } => {
            indent(s, depth);
            let v = ident(var);
            let (lo, hi) = (cpp::expr(lower, shapes), cpp::expr(upper, shapes));
            // The source's direction, order and (for `!=`) test: the loop runs exactly
            // as on the host, including an index that wraps around.
            let test = match (*ne, *step > 0) {
                (true, _) => "!=",
                (false, true) => "<",
                (false, false) => ">",
            };
            let incr = if *step > 0 { format!("+= {step}") } else { format!("-= {}", step.unsigned_abs()) };
            let _ = writeln!(s, "for ({} {v} = {lo}; {v} {test} {hi}; {v} {incr}) {{", ty.c_name());
            body.iter().for_each(|b| stmt(s, b, depth + 1, shapes));
            indent(s, depth);
            s.push_str("}\n");
        }
        Stmt::Assign { target: LValue::Scalar { name, .. }, value, .. } if shapes.1.contains_key(name) => {
            // A reassociated reduction: into the current partial result, then the next.
            let Partial { array, lane } = &shapes.1[name];
            let part = format!("{array}[{lane}]");
            let leaves = PartialLeaves { shapes, name, part: part.clone() };
            indent(s, depth);
            let _ = writeln!(s, "{part} = {};", cpp::expr_with(value, &leaves));
            indent(s, depth);
            let _ = writeln!(s, "#pragma HLS DEPENDENCE variable={array} type=inter direction=RAW distance={PARTIAL_SUMS} dependent=true");
            indent(s, depth);
            let _ = writeln!(s, "{lane} = {lane} == {} ? 0 : {lane} + 1;", PARTIAL_SUMS - 1);
        }
        Stmt::Assign { target, value, .. } => {
            indent(s, depth);
            let t = match target {
                LValue::Element { array, index, .. } => cpp::element(array, index, shapes),
                LValue::Local { name, .. } | LValue::Scalar { name, .. } => ident(name),
            };
            let _ = writeln!(s, "{t} = {};", cpp::expr(value, shapes));
        }
        Stmt::Let { name, ty, init, .. } => {
            indent(s, depth);
            match init {
                Some(e) => writeln!(s, "{} {} = {};", ty.c_name(), ident(name), cpp::expr(e, shapes)),
                None => writeln!(s, "{} {};", ty.c_name(), ident(name)),
            }
            .unwrap();
        }
        Stmt::If { cond, then, otherwise, .. } => {
            indent(s, depth);
            let _ = writeln!(s, "if ({}) {{", cpp::expr(cond, shapes));
            then.iter().for_each(|b| stmt(s, b, depth + 1, shapes));
            indent(s, depth);
            if otherwise.is_empty() {
                s.push_str("}\n");
            } else {
                s.push_str("} else {\n");
                otherwise.iter().for_each(|b| stmt(s, b, depth + 1, shapes));
                indent(s, depth);
                s.push_str("}\n");
            }
        }
        Stmt::Unsupported { text, .. } => {
            unreachable!("unsupported statement '{text}' reached the code generator")
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::{BinOp, Loc, MapKind, ScalarType, Var};

    fn var(name: &str, kind: VarKind, elem: ScalarType, written: bool) -> Var {
        let dims = if kind == VarKind::Scalar { vec![] } else { vec![Some(Expr::var("n", ScalarType::I32))] };
        let map = (kind != VarKind::Scalar).then_some(if written { MapKind::Tofrom } else { MapKind::To });
        Var { name: name.into(), kind, elem, dims, map, section: vec![], written, loc: Loc::default() }
    }

    fn region(vars: Vec<Var>, body: Vec<Stmt>) -> Region {
        Region::new(Loc { file: "t.c".into(), line: 3, col: 1 }, vars, body)
    }

    #[test]
    fn arrays_are_maxi_ports_and_the_entry_binds_descriptors() {
        let i = Expr::var("i", ScalarType::I32);
        let read = Expr::Read { array: "a".into(), index: vec![i.clone()], ty: ScalarType::F32, loc: Loc::default() };
        let body = vec![Stmt::For {
            var: "i".into(),
            ty: ScalarType::I32,
            lower: Expr::int(0),
            upper: Expr::var("n", ScalarType::I32),
            step: 1,
            ne: false,
            body: vec![Stmt::Assign {
                target: LValue::Element { array: "b".into(), index: vec![i.clone()], ty: ScalarType::F32, loc: Loc::default() },
                value: Expr::Binary { op: BinOp::Add, lhs: Box::new(read.clone()), rhs: Box::new(read), ty: ScalarType::F32 },
                loc: Loc::default(),
            }],
            loc: Loc::default(),
        }];
        let r = region(
            vec![
                var("a", VarKind::Pointer, ScalarType::F32, false),
                var("b", VarKind::Array, ScalarType::F32, true),
                var("n", VarKind::Scalar, ScalarType::I32, false),
            ],
            body,
        );
        let k = generate(&r, "k0");
        assert!(k.source.contains("\n#include \"tessera_hls.h\"\n"), "{}", k.source);
        assert!(
            k.source.contains("extern \"C\" void k0(tessera::maxi<const float> a, tessera::maxi<float> b, int n) {"),
            "{}",
            k.source
        );
        assert!(k.source.contains("#pragma HLS INTERFACE mode=m_axi port=a offset=slave bundle=gmem0"));
        assert!(k.source.contains("b[i] = a[i] + a[i];"), "{}", k.source);
        assert!(k.emu_entry.contains("extern \"C\" void tessera_emu_entry(void **args, const tessera_port_desc *ports) {"));
        assert!(
            k.emu_entry.contains(
                "  k0(tessera::maxi<const float>(ports[0]),\n    tessera::maxi<float>(ports[1]),\n    *static_cast<const int *>(args[2]));"
            ),
            "{}",
            k.emu_entry
        );

        // Unused entry parameters are unnamed (the entry compiles with -Wextra -Werror).
        let only_arrays = region(vec![var("b", VarKind::Pointer, ScalarType::I64, true)], vec![]);
        let k = generate(&only_arrays, "k1");
        assert!(k.emu_entry.contains("tessera_emu_entry(void **, const tessera_port_desc *ports)"), "{}", k.emu_entry);
        let only_scalars = region(vec![var("n", VarKind::Scalar, ScalarType::I32, false)], vec![]);
        let k = generate(&only_scalars, "k2");
        assert!(k.emu_entry.contains("tessera_emu_entry(void **args, const tessera_port_desc *)"), "{}", k.emu_entry);
        // Parameters the body never mentions are marked used.
        assert!(k.source.contains("#pragma HLS INTERFACE mode=s_axilite port=return\n  (void)n;\n}"), "{}", k.source);
    }

    /// Loops run in the source's direction with its test: `<`, `>` (negative step) or
    /// `!=` (an unsigned char index that wraps around stays exact).
    #[test]
    fn loops_keep_direction_and_test() {
        let write = |v: &str, ty: ScalarType| Stmt::Assign {
            target: LValue::Element { array: "b".into(), index: vec![Expr::var(v, ty)], ty: ScalarType::F32, loc: Loc::default() },
            value: Expr::Float { bits: 1.0f64.to_bits(), ty: ScalarType::F32 },
            loc: Loc::default(),
        };
        let for_ = |v: &str, ty: ScalarType, lower: Expr, upper: Expr, step: i64, ne: bool| Stmt::For {
            var: v.into(),
            ty,
            lower,
            upper,
            step,
            ne,
            body: vec![write(v, ty)],
            loc: Loc::default(),
        };
        let n = Expr::var("n", ScalarType::I32);
        let body = vec![
            for_("i", ScalarType::I32, Expr::int(0), n.clone(), 2, false),
            for_("j", ScalarType::I32, n.clone(), Expr::int(-1), -3, false),
            for_("u", ScalarType::U8, Expr::Int { value: 250, ty: ScalarType::U8 }, Expr::int(4), 1, true),
            for_("k", ScalarType::I64, Expr::Int { value: 9, ty: ScalarType::I64 }, Expr::Int { value: 0, ty: ScalarType::I64 }, -1, true),
        ];
        let vars = vec![var("b", VarKind::Array, ScalarType::F32, true), var("n", VarKind::Scalar, ScalarType::I32, false)];
        let k = generate(&region(vars, body), "k");
        for header in [
            "for (int i = 0; i < n; i += 2) {",
            "for (int j = n; j > -1; j -= 3) {",
            "for (unsigned char u = (unsigned char)250; u != 4; u += 1) {",
            "for (long k = 9L; k != 0L; k -= 1) {",
        ] {
            assert!(k.source.contains(header), "{header}\n{}", k.source);
        }
    }

    /// OpenMP's identities (clang's for floating min/max: the largest finite value)
    /// and clang's combiners, as C++ of the variable's type.
    #[test]
    fn reduction_identities_and_combiners() {
        use ReductionOp::*;
        use ScalarType::*;
        let cases = [
            (Add, F32, "0.0f"),
            (Mul, F64, "1.0"),
            (Min, F32, "3.4028235e38f"),
            (Max, F64, &format!("{:?}", -f64::MAX)),
            (Min, I32, "2147483647"),
            (Max, I32, "(-2147483647 - 1)"),
            (Max, U8, "(unsigned char)0"),
            (Min, U64, "18446744073709551615UL"),
            (BitAnd, U32, "4294967295U"),
            (BitAnd, I16, "(short)-1"),
            (LAnd, I32, "1"),
            (LOr, I32, "0"),
        ];
        for (op, ty, want) in cases {
            assert_eq!(identity(op, ty), want, "{op:?} {ty:?}");
        }
        assert_eq!(combine(Add, I16, "o", "p"), "(short)(o + p)");
        assert_eq!(combine(LOr, F32, "o", "p"), "(float)(o || p)");
        assert_eq!(combine(Min, F32, "o", "p"), "o < p ? o : p");
        assert_eq!(combine(Max, I64, "o", "p"), "o > p ? o : p");
    }

    /// A reduction variable is a local at the identity; one the host gets back is a
    /// one-element port combined at the end, one it does not (firstprivate) leaves
    /// its value parameter unused; a mapped scalar the region assigns is read from
    /// and written to its port.
    #[test]
    fn reductions_and_returned_scalars() {
        let i = Expr::var("i", ScalarType::I32);
        let read = Expr::Read { array: "a".into(), index: vec![i.clone()], ty: ScalarType::F32, loc: Loc::default() };
        let assign = |v: &str, value: Expr| Stmt::Assign {
            target: LValue::Scalar { name: v.into(), ty: ScalarType::F32, loc: Loc::default() },
            value,
            loc: Loc::default(),
        };
        let bin = |op, l: Expr, r: Expr| Expr::Binary { op, lhs: Box::new(l), rhs: Box::new(r), ty: ScalarType::F32 };
        let body = vec![Stmt::For {
            var: "i".into(),
            ty: ScalarType::I32,
            lower: Expr::int(0),
            upper: Expr::var("n", ScalarType::I32),
            step: 1,
            ne: false,
            body: vec![
                assign("hi", bin(BinOp::Add, Expr::var("hi", ScalarType::F32), read.clone())),
                assign("t", bin(BinOp::Add, Expr::var("t", ScalarType::F32), read.clone())),
                assign("err", read),
            ],
            loc: Loc::default(),
        }];
        let scalar = |name: &str, map| Var { map, written: true, ..var(name, VarKind::Scalar, ScalarType::F32, true) };
        let mut r = region(
            vec![
                var("a", VarKind::Pointer, ScalarType::F32, false),
                var("n", VarKind::Scalar, ScalarType::I32, false),
                scalar("hi", Some(MapKind::Tofrom)),
                scalar("t", None),
                scalar("err", Some(MapKind::From)),
                // A variable named like a port: the port's name moves aside.
                var("hi_port", VarKind::Scalar, ScalarType::I32, false),
            ],
            body,
        );
        let red = |op, v: &str| tessera_ir::Reduction { op, var: v.into(), loc: Loc::default(), unsupported: None };
        r.reductions = vec![red(ReductionOp::Max, "hi"), red(ReductionOp::Add, "t")];
        let k = generate(&r, "k");
        for line in [
            "extern \"C\" void k(tessera::maxi<const float> a, int n, tessera::maxi<float> hi_port_, float t_in, tessera::maxi<float> err_port, int hi_port) {",
            "#pragma HLS INTERFACE mode=m_axi port=hi_port_ offset=slave bundle=gmem1",
            "#pragma HLS INTERFACE mode=m_axi port=err_port offset=slave bundle=gmem2",
            "#pragma HLS INTERFACE mode=s_axilite port=t_in",
            "  (void)t_in;",
            "  float hi = -3.4028235e38f;",
            "  float t = 0.0f;",
            "  float err = err_port[0];",
            "    hi = hi + a[i];",
            "  float hi_orig = hi_port_[0];\n  hi_port_[0] = hi_orig > hi ? hi_orig : hi;",
            "  err_port[0] = err;\n}",
        ] {
            assert!(k.source.contains(line), "{line}\n{}", k.source);
        }
        assert!(!k.source.contains("t_in[0]") && !k.source.contains("t_port"), "{}", k.source);
        assert!(
            k.emu_entry.contains(
                "tessera::maxi<float>(ports[2]),\n    *static_cast<const float *>(args[3]),\n    tessera::maxi<float>(ports[4]),"
            ),
            "{}",
            k.emu_entry
        );
    }

    /// With reassociation a floating sum the loop only accumulates into uses partial
    /// results in turn and adds them pairwise; a sum the loop also reads otherwise,
    /// and reductions exact in any order, keep the loop's order.
    #[test]
    fn reassociated_sums_use_partial_results() {
        let i = Expr::var("i", ScalarType::I32);
        let read = Expr::Read { array: "a".into(), index: vec![i.clone()], ty: ScalarType::F32, loc: Loc::default() };
        let f64_ = |e: Expr| Expr::Cast { arg: Box::new(e), ty: ScalarType::F64 };
        let acc = |v: &str, op, ty: ScalarType, rhs: Expr| Stmt::Assign {
            target: LValue::Scalar { name: v.into(), ty, loc: Loc::default() },
            value: Expr::Binary { op, lhs: Box::new(Expr::var(v, ty)), rhs: Box::new(rhs), ty },
            loc: Loc::default(),
        };
        let loop_ = |body| Stmt::For {
            var: "i".into(),
            ty: ScalarType::I32,
            lower: Expr::int(0),
            upper: Expr::var("n", ScalarType::I32),
            step: 1,
            ne: false,
            body,
            loc: Loc::default(),
        };
        let scalar = |name: &str, ty| Var { map: Some(MapKind::Tofrom), written: true, ..var(name, VarKind::Scalar, ty, true) };
        let red = |op, v: &str| tessera_ir::Reduction { op, var: v.into(), loc: Loc::default(), unsupported: None };
        let mut r = region(
            vec![
                var("a", VarKind::Pointer, ScalarType::F32, false),
                var("n", VarKind::Scalar, ScalarType::I32, false),
                scalar("d", ScalarType::F64),
                scalar("m", ScalarType::F32),
            ],
            vec![loop_(vec![acc("d", BinOp::Add, ScalarType::F64, f64_(read.clone())), acc("m", BinOp::Mul, ScalarType::F32, read)])],
        );
        r.reductions = vec![red(ReductionOp::Add, "d"), red(ReductionOp::Mul, "m")];
        let k = generate_with(&r, "k", true);
        for line in [
            "  double d_part[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};",
            "#pragma HLS ARRAY_PARTITION variable=d_part type=complete",
            "    d_part[d_lane] = d_part[d_lane] + (double)a[i];",
            "    d_lane = d_lane == 7 ? 0 : d_lane + 1;",
            "  double d = (double)((double)((double)(d_part[0] + d_part[1]) + (double)(d_part[2] + d_part[3])) + (double)((double)(d_part[4] + d_part[5]) + (double)(d_part[6] + d_part[7])));",
            "  float m_part[8] = {1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f, 1.0f};",
            "    m_part[m_lane] = m_part[m_lane] * a[i];",
            "  m_port[0] = (float)(m_orig * m);",
        ] {
            assert!(k.source.contains(line), "{line}\n{}", k.source);
        }
        assert_eq!(k.source, generate_with(&r, "k", true).source, "deterministic");
        // Without the option: the loop's order.
        assert!(!generate(&r, "k").source.contains("_part"));
        // `m` also read by a condition: in order. An integer sum: exact anyway.
        let Stmt::For { body, .. } = &mut r.body[0] else { unreachable!() };
        body.push(Stmt::If {
            cond: Expr::Binary { op: BinOp::Lt, lhs: Box::new(Expr::var("m", ScalarType::F32)), rhs: Box::new(Expr::Float { bits: 0, ty: ScalarType::F32 }), ty: ScalarType::I32 },
            then: vec![],
            otherwise: vec![],
            loc: Loc::default(),
        });
        let k = generate_with(&r, "k", true);
        assert!(k.source.contains("d_part") && !k.source.contains("m_part"), "{}", k.source);
    }

    #[test]
    fn mentions_whole_identifiers_only() {
        assert!(mentions("b[i] = a[i];", "a"));
        assert!(!mentions("b[i] = aa[i] + a_[i] + _a;", "a"));
        assert!(mentions("x = (long)i * m + j;", "m"));
        assert!(!mentions("", "m"));
    }
}
