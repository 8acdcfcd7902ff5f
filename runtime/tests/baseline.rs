//! Generated baseline kernels (`tessera_hls::baseline`) against the shim: for a few
//! hand-written region IRs the kernel and its emulation entry compile with
//! `-std=c++17 -Wall -Wextra -Werror` (every available compiler), the kernel alone
//! compiles as Vitis would see it (`__SYNTHESIS__`: ports are plain pointers), and a
//! generated kernel run on the emulated device reports the hand-computed traffic.

mod common;

use common::*;
use std::process::Command;
use tessera_ir::manifest::{Arg, ArrayArg, Manifest, MANIFEST_VERSION};
use tessera_ir::{BinOp, Expr, LValue, Loc, MapKind, Region, ScalarType, Section, Stmt, UnOp, Var, VarKind, IR_VERSION};
use tessera_rt::config::Config;
use tessera_rt::offload_with;

use ScalarType::*;

fn v(name: &str, ty: ScalarType) -> Expr {
    Expr::var(name, ty)
}
fn int(k: i64) -> Expr {
    Expr::int(k)
}
fn bin(op: BinOp, l: Expr, r: Expr, ty: ScalarType) -> Expr {
    Expr::Binary { op, lhs: Box::new(l), rhs: Box::new(r), ty }
}
fn cast(e: Expr, ty: ScalarType) -> Expr {
    Expr::Cast { arg: Box::new(e), ty }
}
fn read(array: &str, index: Vec<Expr>, ty: ScalarType) -> Expr {
    Expr::Read { array: array.into(), index, ty, loc: Loc::default() }
}
fn store(array: &str, index: Vec<Expr>, ty: ScalarType, value: Expr) -> Stmt {
    Stmt::Assign {
        target: LValue::Element { array: array.into(), index, ty, loc: Loc::default() },
        value,
        loc: Loc::default(),
    }
}
fn for_(var: &str, ty: ScalarType, lower: Expr, upper: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::For { var: var.into(), ty, lower, upper, step: 1, ne: false, body, loc: Loc::default() }
}
fn array(name: &str, kind: VarKind, elem: ScalarType, dims: Vec<Expr>, map: MapKind, written: bool) -> Var {
    Var {
        name: name.into(),
        kind,
        elem,
        dims: dims.into_iter().map(Some).collect(),
        map: Some(map),
        section: vec![],
        written,
        loc: Loc::default(),
    }
}
fn scalar(name: &str, elem: ScalarType) -> Var {
    Var { name: name.into(), kind: VarKind::Scalar, elem, dims: vec![], map: None, section: vec![], written: false, loc: Loc::default() }
}
fn region(line: u32, vars: Vec<Var>, body: Vec<Stmt>) -> Region {
    Region {
        members: Vec::new(),
        checked_members: Vec::new(),
        version: IR_VERSION,
        location: Loc { file: "t.c".into(), line, col: 1 },
        source: None,
        function: "f".into(),
        index: 0,
        directive: "target teams distribute parallel for".into(),
        collapse: 1,
        unsupported_clauses: vec![],
        tile: None,
        vars,
        body, if_clause: false, device_clause: false, reductions: vec![], array_reductions: vec![],
    }
}

/// 1D three-point stencil, pointers: `b[i] = 0.25f * (a[i-1] + 2*a[i] + a[i+1])`.
fn stencil1d() -> Region {
    let i = || v("i", I32);
    let a = |d: i64| read("a", vec![bin(BinOp::Add, i(), int(d), I32)], F32);
    let sum = bin(
        BinOp::Add,
        bin(BinOp::Add, a(-1), bin(BinOp::Mul, Expr::Float { bits: 2.0f64.to_bits(), ty: F32 }, a(0), F32), F32),
        a(1),
        F32,
    );
    let value = bin(BinOp::Mul, Expr::Float { bits: 0.25f64.to_bits(), ty: F32 }, sum, F32);
    region(
        10,
        vec![
            array("a", VarKind::Pointer, F32, vec![v("n", I32)], MapKind::To, false),
            array("b", VarKind::Pointer, F32, vec![v("n", I32)], MapKind::Tofrom, true),
            scalar("n", I32),
        ],
        vec![for_("i", I32, int(1), bin(BinOp::Sub, v("n", I32), int(1), I32), vec![store("b", vec![i()], F32, value)])],
    )
}

/// 2D arrays (`double A[n][m]`), a local, an if/else and a select, in-place update.
fn update2d() -> Region {
    let (i, j) = (|| v("i", I32), || v("j", I32));
    let at = |name: &str, di: i64, dj: i64| {
        read(name, vec![bin(BinOp::Add, i(), int(di), I32), bin(BinOp::Add, j(), int(dj), I32)], F64)
    };
    let cond = bin(BinOp::LAnd, bin(BinOp::Gt, i(), int(0), I32), bin(BinOp::Gt, j(), int(0), I32), I32);
    let sel = Expr::Select {
        cond: Box::new(bin(BinOp::Eq, i(), j(), I32)),
        then: Box::new(v("t", F64)),
        otherwise: Box::new(Expr::Unary { op: UnOp::Neg, arg: Box::new(v("t", F64)), ty: F64 }),
        ty: F64,
    };
    let body = vec![
        Stmt::Let { name: "t".into(), ty: F64, init: Some(at("B", 0, 0)), loc: Loc::default() },
        Stmt::If {
            cond,
            then: vec![store("A", vec![i(), j()], F64, bin(BinOp::Add, v("t", F64), at("A", -1, -1), F64))],
            otherwise: vec![store("A", vec![i(), j()], F64, sel)],
            loc: Loc::default(),
        },
    ];
    region(
        20,
        vec![
            array("A", VarKind::Array, F64, vec![v("n", I32), v("m", I32)], MapKind::Tofrom, true),
            array("B", VarKind::Array, F64, vec![v("n", I32), v("m", I32)], MapKind::To, false),
            scalar("n", I32),
            scalar("m", I32),
        ],
        vec![for_("i", I32, int(0), v("n", I32), vec![for_("j", I32, int(0), v("m", I32), body)])],
    )
}

/// 3D ints named with a C++ keyword, unsigned long indices, a bool array, integer
/// casts and bit operations; a map-only array and scalar the body never mentions.
fn keywords3d() -> Region {
    let idx = || vec![v("i", U64), cast(v("j", I32), U64), cast(v("l", I32), U64)];
    let value = Expr::Select {
        cond: Box::new(cast(read("flags", vec![v("i", U64)], Bool), I32)),
        then: Box::new(cast(bin(BinOp::Rem, v("k", I64), Expr::Int { value: 7, ty: I64 }, I64), I32)),
        otherwise: Box::new(Expr::Unary { op: UnOp::BitNot, arg: Box::new(read("new", idx(), I32)), ty: I32 }),
        ty: I32,
    };
    let inner = for_("l", I32, int(0), int(6), vec![store("new", idx(), I32, value)]);
    region(
        30,
        vec![
            array("new", VarKind::Pointer, I32, vec![int(4), int(5), int(6)], MapKind::Tofrom, true),
            array("flags", VarKind::Pointer, Bool, vec![int(4)], MapKind::To, false),
            array("unused", VarKind::Pointer, U8, vec![v("len", I32)], MapKind::To, false),
            scalar("k", I64),
            scalar("len", I32),
        ],
        vec![for_(
            "i",
            U64,
            Expr::Int { value: 0, ty: U64 },
            Expr::Int { value: 4, ty: U64 },
            vec![for_("j", I32, int(0), int(5), vec![inner])],
        )],
    )
}

fn run(cmd: &mut Command) {
    let o = cmd.output().unwrap();
    assert!(o.status.success(), "{cmd:?}\n{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn generated_kernels_compile_warning_free() {
    let tmp = tempfile::tempdir().unwrap();
    // Vitis' header, stubbed: under __SYNTHESIS__ only maxi<T> = T * is used.
    std::fs::write(tmp.path().join("hls_burst_maxi.h"), "#pragma once\n").unwrap();
    for (n, r) in [stencil1d(), update2d(), keywords3d()].iter().enumerate() {
        let k = tessera_hls::baseline::generate(r, &format!("tessera_k{n}"));
        let dir = tmp.path().join(format!("k{n}"));
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("kernel.cpp"), &k.source).unwrap();
        std::fs::write(dir.join("entry.cpp"), &k.emu_entry).unwrap();
        for cxx in compilers() {
            // Emulation: the entry (which includes the kernel) as a shared library.
            run(Command::new(cxx)
                .args(["-std=c++17", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas"])
                .arg("-I")
                .arg(&dir)
                .arg("-I")
                .arg(shim_include())
                .arg("-o")
                .arg(dir.join(format!("k.{cxx}.so")))
                .arg(dir.join("entry.cpp")));
            // Synthesis view: the kernel alone, ports as plain pointers.
            run(Command::new(cxx)
                .args(["-std=c++17", "-c", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas", "-D__SYNTHESIS__"])
                .arg("-I")
                .arg(tmp.path())
                .arg("-I")
                .arg(shim_include())
                .arg("-o")
                .arg(dir.join(format!("k.{cxx}.o")))
                .arg(dir.join("kernel.cpp")));
        }
    }
}

/// The manifest the compiler would build for a region (arrays mapped whole).
fn manifest_for(r: &Region, name: &str) -> Manifest {
    let k = tessera_hls::baseline::generate(r, name);
    let args = r
        .vars
        .iter()
        .map(|var| Arg {
            name: var.name.clone(),
            kind: var.kind,
            elem: var.elem,
            array: var.map.map(|map| ArrayArg {
                map,
                dims: var.dims.iter().map(|d| d.clone().unwrap()).collect(),
                section: Vec::<Section>::new(), footprint: vec![], bank: 0, reduction: None, untouched: false
            }),
        })
        .collect();
    Manifest {
        members: Vec::new(),
        member_checks: Vec::new(),
        version: MANIFEST_VERSION,
        region: r.location.file_line(),
        kernel: Some(name.into()),
        rejected: None,
        mode: tessera_ir::Mode::Baseline,
        args,
        kernel_source: k.source,
        emu_entry_source: k.emu_entry,
        xclbin: format!("{name}.xclbin"),
        hash: String::new(), if_clause: false, device_clause: false, always_maps: false, guard: None, write_ports: vec![], interleave: None, size_params: vec![],
    }
}

#[test]
fn generated_stencil_reports_one_beat_per_access() {
    let cache = tempfile::tempdir().unwrap();
    let m = manifest_for(&stencil1d(), "tessera_stencil1d");
    let n = 1000usize;
    let mut a: Vec<f32> = (0..n).map(|i| (i as f32 * 0.1).cos()).collect();
    let mut b = vec![9f32; n];
    let (mut pa, mut pb, mut nv) = (a.as_mut_ptr(), b.as_mut_ptr(), n as i32);
    let r = unsafe { offload_with(&Config::emu(cache.path()), &m, &[addr(&mut pa), addr(&mut pb), addr(&mut nv)]) };
    assert!(r.offloaded(), "{:?}", r.reason);
    for i in 1..n - 1 {
        let want = 0.25f32 * (a[i - 1] + 2.0f32 * a[i] + a[i + 1]);
        assert_eq!(b[i].to_bits(), want.to_bits(), "b[{i}]");
    }
    assert_eq!((b[0], b[n - 1]), (9.0, 9.0));
    // Baseline: three single-beat reads of a and one single-beat write of b per point.
    let pts = (n - 2) as u64;
    assert_eq!((r.ddr_read_bytes, r.ddr_write_bytes, r.bursts), (Some(3 * pts * 4), Some(pts * 4), Some(4 * pts)));
    let arrays = &r.arrays.as_ref().unwrap().0;
    assert_eq!(arrays[0].1.as_ref().unwrap().read_burst_lengths.get(&1), Some(&(3 * pts)));
    assert_eq!(arrays[1].1.as_ref().unwrap().write_burst_lengths.get(&1), Some(&pts));
}
