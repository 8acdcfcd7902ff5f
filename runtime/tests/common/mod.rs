//! Hand-written manifests and kernels shared by the runtime's integration tests.

#![allow(dead_code)]

pub mod cprog;

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
    Arg { name: name.into(), kind, elem: ScalarType::F32, array: Some(ArrayArg { map, dims, section, footprint: vec![], bank: 0, reduction: None, untouched: false }) }
}

/// An `int` scalar argument.
pub fn int_scalar(name: &str) -> Arg {
    Arg { name: name.into(), kind: VarKind::Scalar, elem: ScalarType::I32, array: None }
}

/// A manifest for kernel `kernel` with the given sources.
pub fn manifest(region: &str, kernel: &str, args: Vec<Arg>, kernel_source: &str, entry: &str) -> Manifest {
    Manifest {
        members: Vec::new(),
        member_checks: Vec::new(),
        version: MANIFEST_VERSION,
        region: region.into(),
        kernel: Some(kernel.into()),
        rejected: None,
        mode: tessera_ir::Mode::Baseline,
        args,
        kernel_source: kernel_source.into(),
        emu_entry_source: entry.into(),
        xclbin: format!("{kernel}.xclbin"),
        hash: String::new(), if_clause: false, device_clause: false, always_maps: false, guard: None, write_ports: vec![], interleave: None, size_params: vec![],
    }
}

/// 1D: `b[i] = 2 * a[i]` for `1 <= i < n-1`; `a` maps `to: a[1:n-2]`, `b` maps
/// `from: b[1:n-2]`; both pointers. Element-wise `tessera::maxi` ports: n-2 reads of
/// `a` and n-2 writes of `b`, each one 4-byte single-beat burst.
pub fn scale1d() -> Manifest {
    let kernel = r#"
#include "tessera_hls.h"
extern "C" void scale1d(tessera::maxi<const float> a, tessera::maxi<float> b, int n) {
#pragma HLS INTERFACE m_axi port=a bundle=gmem0
#pragma HLS INTERFACE m_axi port=b bundle=gmem1
  for (int i = 1; i < n - 1; i++) {
#pragma HLS PIPELINE II=1
    b[i] = 2.0f * a[i];
  }
}
"#;
    let entry = r#"#include "kernel.cpp"
extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports) {
  scale1d(tessera::maxi<const float>(ports[0]), tessera::maxi<float>(ports[1]), *(const int *)args[2]);
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

/// [`scale1d`] with `a` and `b` given as pointers without map clauses (`present`:
/// their data must be mapped by an enclosing data region).
pub fn scale1d_present() -> Manifest {
    let mut m = scale1d();
    for a in m.args.iter_mut().take(2) {
        let arr = a.array.as_mut().unwrap();
        arr.map = MapKind::Present;
        arr.dims = vec![Expr::int(0)];
        arr.section = vec![];
    }
    m
}

/// 2D: `b[i][j] = 2 * a[i][j] + b[i][j]` over the whole `n × m` index space; `a` maps
/// `to` whole, `b` maps `tofrom: b[1:n-2][1:m-2]`. `a` is passed as a pointer, `b` as
/// an array object (`float b[n][m]`).
/// Ports: n·m reads of `a`; n·m reads and n·m writes of `b`.
pub fn axpy2d() -> Manifest {
    let kernel = r#"
#include "tessera_hls.h"
extern "C" void axpy2d(tessera::maxi<const float> a, tessera::maxi<float> b, int n, int m) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++)
      b[i * m + j] = 2.0f * a[i * m + j] + b[i * m + j];
}
"#;
    let entry = r#"#include "kernel.cpp"
extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports) {
  axpy2d(tessera::maxi<const float>(ports[0]), tessera::maxi<float>(ports[1]), *(const int *)args[2],
         *(const int *)args[3]);
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

/// `from` pre-fill: `b[i] = -1` for even `i`; `b` maps `from` whole. Written the old
/// way (raw pointer, one-argument entry): the runtime still runs it, and its traffic
/// is reported as not counted.
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

/// A data directive descriptor at `region` for `op`: `args` are (name, kind) of `f32`
/// arrays and `int` scalars; `items` are (argument index, map, extents, section).
pub fn data_desc(
    region: &str,
    op: tessera_ir::data::DataOp,
    args: &[(&str, VarKind)],
    items: Vec<(usize, MapKind, Vec<Expr>, Vec<Section>)>,
) -> tessera_ir::data::DataDesc {
    use tessera_ir::data::{DataArg, DataDesc, DescItem, DATA_VERSION};
    DataDesc {
        version: DATA_VERSION,
        region: region.into(),
        op,
        rejected: None,
        args: args
            .iter()
            .map(|(n, k)| DataArg {
                name: n.to_string(),
                kind: *k,
                elem: if *k == VarKind::Scalar { ScalarType::I32 } else { ScalarType::F32 },
            })
            .collect(),
        items: items.into_iter().map(|(arg, map, dims, section)| DescItem { arg, map, dims, section, strides: vec![], present: false }).collect(),
        unlocated: 0,
        probes: vec![],
        condition: None,
        device: None,
    }
}

/// Address of a variable, as the rewritten call passes it.
pub fn addr<T>(v: &mut T) -> *mut c_void {
    v as *mut T as *mut c_void
}

/// Xilinx's ap_types headers for kernels that include `tessera_wide.h`:
/// `TESSERA_HLS_HEADERS` if set, else `target/hls-headers`, fetched with
/// `scripts/fetch-hls-headers.sh` (pip download of hls4ml) when missing.
pub fn hls_headers() -> std::path::PathBuf {
    static DIR: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(d) = std::env::var_os("TESSERA_HLS_HEADERS") {
            return d.into();
        }
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let dir = root.join("target/hls-headers");
        if !dir.join("ap_int.h").is_file() {
            let st = std::process::Command::new(root.join("scripts/fetch-hls-headers.sh"))
                .arg(&dir)
                .status()
                .expect("run scripts/fetch-hls-headers.sh");
            assert!(st.success(), "scripts/fetch-hls-headers.sh failed: the wide-word tests need hls4ml's ap_int.h");
        }
        dir
    })
    .clone()
}

/// Absolute path of the shim headers.
pub fn shim_include() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../host/include")
}

/// The kernel directories of an emulation cache (not the shared header directories
/// `include-*` and `hls-*`).
pub fn kernel_dirs(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut v: Vec<std::path::PathBuf> = std::fs::read_dir(root)
        .map(|d| d.map(|e| e.unwrap().path()).collect())
        .unwrap_or_default();
    v.retain(|p| {
        let n = p.file_name().unwrap().to_string_lossy();
        !n.starts_with("include-") && !n.starts_with("hls-") && !n.starts_with("pch-")
    });
    v.sort();
    v
}

/// The C++ compilers the emulation headers are checked with: `c++` (what the runtime
/// uses by default) plus `clang++-19` or `clang++` when present.
pub fn compilers() -> Vec<&'static str> {
    let mut v = vec!["c++"];
    for c in ["clang++-19", "clang++"] {
        if std::process::Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()) {
            v.push(c);
            break;
        }
    }
    v
}
