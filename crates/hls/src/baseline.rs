//! The baseline kernel: the region's original loop nest as a Vitis HLS top function.
//!
//! This is what the paper compares against: Vitis' default treatment of the plain
//! code (one `m_axi` bundle per array, scalars and control over `s_axilite`, no
//! on-chip buffers, no manual bursts). Multi-dimensional arrays become flat pointers
//! with row-major linearised subscripts; arrays the region never writes are `const`.

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

/// The C++ parameter declaration of a region variable.
fn param(v: &tessera_ir::Var) -> String {
    let ty = v.elem.c_name();
    match v.kind {
        VarKind::Scalar => format!("{ty} {}", ident(&v.name)),
        _ if v.written => format!("{ty} *{}", ident(&v.name)),
        _ => format!("const {ty} *{}", ident(&v.name)),
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
    for st in &region.body {
        stmt(&mut s, st, 1, &shapes);
    }
    writeln!(s, "}}").unwrap();

    let mut e = String::new();
    writeln!(e, "// Emulation entry for {name}: unpacks the runtime's argument vector").unwrap();
    writeln!(e, "// (device buffer pointers for arrays, value pointers for scalars).").unwrap();
    writeln!(e, "#include \"kernel.cpp\"").unwrap();
    writeln!(e).unwrap();
    writeln!(e, "extern \"C\" void tessera_emu_entry(void **args) {{").unwrap();
    let casts: Vec<String> = region
        .vars
        .iter()
        .enumerate()
        .map(|(i, v)| {
            let ty = v.elem.c_name();
            match v.kind {
                VarKind::Scalar => format!("*static_cast<const {ty} *>(args[{i}])"),
                _ if v.written => format!("static_cast<{ty} *>(args[{i}])"),
                _ => format!("static_cast<const {ty} *>(args[{i}])"),
            }
        })
        .collect();
    writeln!(e, "  {name}({});", casts.join(",\n    ")).unwrap();
    writeln!(e, "}}").unwrap();
    Kernel { name: name.to_string(), source: s, emu_entry: e }
}

fn indent(s: &mut String, depth: usize) {
    for _ in 0..depth {
        s.push_str("  ");
    }
}

fn stmt(s: &mut String, st: &Stmt, depth: usize, shapes: &RegionShapes) {
    match st {
        Stmt::For { var, ty, lower, upper, step, body, .. } => {
            indent(s, depth);
            let v = ident(var);
            let (lo, hi) = (cpp::expr(lower, shapes), cpp::expr(upper, shapes));
            let _ = writeln!(s, "for ({} {v} = {lo}; {v} < {hi}; {v} += {step}) {{", ty.c_name());
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

