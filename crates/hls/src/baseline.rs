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
use std::collections::HashMap;
use std::fmt::Write;
use tessera_ir::{Expr, LValue, Region, Stmt, VarKind};

struct RegionShapes(HashMap<String, Vec<Expr>>);

impl Shapes for RegionShapes {
    fn extents(&self, array: &str) -> &[Expr] {
        &self.0[array]
    }
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

/// The C++ parameter declaration of a region variable.
fn param(v: &tessera_ir::Var) -> String {
    match v.kind {
        VarKind::Scalar => format!("{} {}", v.elem.c_name(), ident(&v.name)),
        _ => format!("{} {}", port_type(v), ident(&v.name)),
    }
}

/// Generates the baseline kernel `name` for a region that passed the input check.
pub fn generate(region: &Region, name: &str) -> Kernel {
    let shapes = shapes(region);
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
    let params: Vec<String> = region.vars.iter().map(param).collect();
    writeln!(s, "extern \"C\" void {name}({}) {{", params.join(", ")).unwrap();
    for (bundle, v) in region.vars.iter().filter(|v| v.kind != VarKind::Scalar).enumerate() {
        writeln!(s, "#pragma HLS INTERFACE mode=m_axi port={} offset=slave bundle=gmem{bundle}", ident(&v.name)).unwrap();
    }
    for v in region.vars.iter().filter(|v| v.kind == VarKind::Scalar) {
        writeln!(s, "#pragma HLS INTERFACE mode=s_axilite port={}", ident(&v.name)).unwrap();
    }
    writeln!(s, "#pragma HLS INTERFACE mode=s_axilite port=return").unwrap();
    let mut body = String::new();
    for st in &region.body {
        stmt(&mut body, st, 1, &shapes);
    }
    // A variable only a map clause uses (e.g. an extent) is still a parameter; mark it
    // used so the kernel compiles warning-free (-Wall -Wextra -Werror).
    for v in region.vars.iter().filter(|v| !mentions(&body, &ident(&v.name))) {
        writeln!(s, "  (void){};", ident(&v.name)).unwrap();
    }
    s.push_str(&body);
    writeln!(s, "}}").unwrap();

    let e = crate::emu_entry(region, name, &port_type);
    Kernel { name: name.to_string(), source: s, emu_entry: e }
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
    use tessera_ir::{BinOp, Loc, MapKind, ScalarType, Var, IR_VERSION};

    fn var(name: &str, kind: VarKind, elem: ScalarType, written: bool) -> Var {
        let dims = if kind == VarKind::Scalar { vec![] } else { vec![Some(Expr::var("n", ScalarType::I32))] };
        let map = (kind != VarKind::Scalar).then_some(if written { MapKind::Tofrom } else { MapKind::To });
        Var { name: name.into(), kind, elem, dims, map, section: vec![], written, loc: Loc::default() }
    }

    fn region(vars: Vec<Var>, body: Vec<Stmt>) -> Region {
        Region {
            version: IR_VERSION,
            location: Loc { file: "t.c".into(), line: 3, col: 1 },
            source: None,
            function: "f".into(),
            index: 0,
            directive: "target".into(),
            collapse: 1,
            unsupported_clauses: vec![],
            tile: None,
            vars,
            body, if_clause: false,
        }
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

    #[test]
    fn mentions_whole_identifiers_only() {
        assert!(mentions("b[i] = a[i];", "a"));
        assert!(!mentions("b[i] = aa[i] + a_[i] + _a;", "a"));
        assert!(mentions("x = (long)i * m + j;", "m"));
        assert!(!mentions("", "m"));
    }
}
