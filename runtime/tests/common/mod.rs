//! Hand-written manifests and kernels shared by the runtime's integration tests.

#![allow(dead_code)]

use std::ffi::c_void;
use tessera_ir::manifest::{Arg, ArrayArg, Manifest, MANIFEST_VERSION};
use tessera_ir::{BinOp, Expr, MapKind, ScalarType, Section, VarKind};

/// An `int` variable reference.
pub fn var(name: &str) -> Expr {
    Expr::var(name, ScalarType::I32)
}

/// `e - k` in `int`.
pub fn minus(e: Expr, k: i64) -> Expr {
    Expr::Binary { op: BinOp::Sub, lhs: Box::new(e), rhs: Box::new(Expr::int(k)), ty: ScalarType::I32 }
}

/// `[lower : length]`.
pub fn sec(lower: Expr, length: Expr) -> Section {
    Section { lower, length }
}

/// A `float` array argument.
pub fn farray(name: &str, kind: VarKind, map: MapKind, dims: Vec<Expr>, section: Vec<Section>) -> Arg {
    Arg { name: name.into(), kind, elem: ScalarType::F32, array: Some(ArrayArg { map, dims, section }) }
}

/// An `int` scalar argument.
pub fn int_scalar(name: &str) -> Arg {
    Arg { name: name.into(), kind: VarKind::Scalar, elem: ScalarType::I32, array: None }
}

/// A manifest for kernel `kernel` with the given sources.
pub fn manifest(region: &str, kernel: &str, args: Vec<Arg>, kernel_source: &str, entry: &str) -> Manifest {
    Manifest {
        version: MANIFEST_VERSION,
        region: region.into(),
        kernel: Some(kernel.into()),
        rejected: None,
        mode: "baseline".into(),
        args,
        kernel_source: kernel_source.into(),
        emu_entry_source: entry.into(),
        xclbin: format!("{kernel}.xclbin"),
    }
}

/// 1D: `b[i] = 2 * a[i]` for `1 <= i < n-1`; `a` maps `to: a[1:n-2]`, `b` maps
/// `from: b[1:n-2]`; both pointers.
pub fn scale1d() -> Manifest {
    let kernel = r#"
extern "C" void scale1d(const float *a, float *b, int n) {
#pragma HLS INTERFACE m_axi port=a bundle=gmem0
#pragma HLS INTERFACE m_axi port=b bundle=gmem1
  for (int i = 1; i < n - 1; i++) {
#pragma HLS PIPELINE II=1
    b[i] = 2.0f * a[i];
  }
}
"#;
    let entry = r#"#include "kernel.cpp"
extern "C" void tessera_emu_entry(void **args) {
  scale1d((const float *)args[0], (float *)args[1], *(const int *)args[2]);
}
"#;
    let s = || vec![sec(Expr::int(1), minus(var("n"), 2))];
    manifest(
        "scale.c:10",
        "scale1d",
        vec![
            farray("a", VarKind::Pointer, MapKind::To, vec![var("n")], s()),
            farray("b", VarKind::Pointer, MapKind::From, vec![var("n")], s()),
            int_scalar("n"),
        ],
        kernel,
        entry,
    )
}

/// 2D: `b[i][j] = 2 * a[i][j] + b[i][j]` over the whole `n × m` index space; `a` maps
/// `to` whole, `b` maps `tofrom: b[1:n-2][1:m-2]`. `a` is passed as a pointer, `b` as
/// an array object (`float b[n][m]`).
pub fn axpy2d() -> Manifest {
    let kernel = r#"
extern "C" void axpy2d(const float *a, float *b, int n, int m) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      b[i * m + j] = 2.0f * a[i * m + j] + b[i * m + j];
}
"#;
    let entry = r#"#include "kernel.cpp"
extern "C" void tessera_emu_entry(void **args) {
  axpy2d((const float *)args[0], (float *)args[1], *(const int *)args[2], *(const int *)args[3]);
}
"#;
    manifest(
        "axpy.c:20",
        "axpy2d",
        vec![
            farray("a", VarKind::Pointer, MapKind::To, vec![var("n"), var("m")], vec![]),
            farray(
                "b",
                VarKind::Array,
                MapKind::Tofrom,
                vec![var("n"), var("m")],
                vec![sec(Expr::int(1), minus(var("n"), 2)), sec(Expr::int(1), minus(var("m"), 2))],
            ),
            int_scalar("n"),
            int_scalar("m"),
        ],
        kernel,
        entry,
    )
}

/// `from` pre-fill: `b[i] = -1` for even `i`; `b` maps `from` whole.
pub fn evens() -> Manifest {
    let kernel = r#"
extern "C" void evens(float *b, int n) {
  for (int i = 0; i < n; i += 2) b[i] = -1.0f;
}
"#;
    let entry = r#"#include "kernel.cpp"
extern "C" void tessera_emu_entry(void **args) { evens((float *)args[0], *(const int *)args[1]); }
"#;
    manifest(
        "evens.c:5",
        "evens",
        vec![farray("b", VarKind::Pointer, MapKind::From, vec![var("n")], vec![]), int_scalar("n")],
        kernel,
        entry,
    )
}

/// Address of a variable, as the rewritten call passes it.
pub fn addr<T>(v: &mut T) -> *mut c_void {
    v as *mut T as *mut c_void
}
