//! Shared by the paper-mode generator tests: fixture loading, the kernel compile
//! check, and running a kernel on the emulated device with reproducible inputs.

#![allow(dead_code)]

use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::Command;
use tessera_hls::Kernel;
use tessera_ir::eval::eval_int;
use tessera_ir::manifest::{Arg, ArrayArg, Manifest, MANIFEST_VERSION};
use tessera_ir::{BinOp, Expr, MapKind, Region, ScalarType, Section, VarKind};
use tessera_rt::config::Config;
use tessera_rt::report::Record;

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Compares `text` with the snapshot file `path`, or writes it there when
/// `TESSERA_BLESS` is set. A mismatch comes back as the path and the first line that
/// differs (snapshot, then new), for the caller's list of stale snapshots.
#[allow(dead_code)] // not every test binary has snapshots
pub fn snapshot(path: &Path, text: &str) -> Option<String> {
    if std::env::var_os("TESSERA_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().expect("a snapshot file")).unwrap();
        std::fs::write(path, text).unwrap();
        return None;
    }
    let want = std::fs::read_to_string(path).unwrap_or_default();
    if want == text {
        return None;
    }
    let (old, new): (Vec<&str>, Vec<&str>) = (want.lines().collect(), text.lines().collect());
    let at = old.iter().zip(&new).position(|(a, b)| a != b).unwrap_or(old.len().min(new.len()));
    Some(format!(
        "{} (line {}):
  - {}
  + {}",
        path.display(),
        at + 1,
        old.get(at).unwrap_or(&"<end>"),
        new.get(at).unwrap_or(&"<end>")
    ))
}

/// A region IR file, relative to the repository root.
pub fn load(rel: &str) -> Region {
    let p = repo().join(rel);
    let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Region::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// The ten benchmark stencils at small, odd sizes (`tests/ir/small/regen.sh`).
pub const SMALL: &[&str] = &[
    "1D-jacobi",
    "2D-5p",
    "2D-9p",
    "2D-fdtd0",
    "2D-fdtd1",
    "2D-fdtd2",
    "2D-jacobi",
    "3D-19p",
    "3D-27p",
    "3D-heat",
];

pub use tessera_hls::paper::Variant;

/// `tests/ir/small/<name>.ir.json`.
pub fn small(name: &str) -> Region {
    load(&format!("tests/ir/small/{name}.ir.json"))
}

/// The optimizer's plan and the tiled kernel (`variant`) for `region` at port width `w`.
pub fn tiled(region: &Region, tile: Option<Vec<i64>>, w: u32, name: &str, variant: Variant) -> Kernel {
    let plan = tessera_poly::optimize(region, &tessera_poly::PolyOptions { tile, port_width: w, ..Default::default() })
        .unwrap_or_else(|r| panic!("{}: {}", region.location, r.message()));
    tessera_hls::paper::generate(region, &plan, name, w, variant).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Xilinx's ap_types headers: `TESSERA_HLS_HEADERS`, else `target/hls-headers`
/// (fetched with `scripts/fetch-hls-headers.sh` when missing).
pub fn hls_headers() -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        if let Some(d) = std::env::var_os("TESSERA_HLS_HEADERS") {
            return d.into();
        }
        let dir = repo().join("target/hls-headers");
        if !dir.join("ap_int.h").is_file() {
            let st = Command::new(repo().join("scripts/fetch-hls-headers.sh")).arg(&dir).status().expect("run fetch-hls-headers.sh");
            assert!(st.success(), "scripts/fetch-hls-headers.sh failed: paper kernels need hls4ml's ap_int.h");
        }
        dir
    })
    .clone()
}

/// The HLS shim headers.
pub fn shim_include() -> PathBuf {
    repo().join("host/include")
}

/// C++ compilers to check kernels with: `c++` and a clang++ when there is one.
pub fn compilers() -> Vec<&'static str> {
    let mut v = vec!["c++"];
    for c in ["clang++-19", "clang++"] {
        if Command::new(c).arg("--version").output().is_ok_and(|o| o.status.success()) {
            v.push(c);
            break;
        }
    }
    v
}

/// Vitis' `hls_burst_maxi.h`, reduced to the declarations a kernel calls (UG1399,
/// "Using Manual Burst"), for compiling the kernel as Vitis sees it. `TESSERA_VITIS`
/// selects the shim's Vitis side (`v++ -c` defines it); `__SYNTHESIS__` cannot be
/// used natively, the open-source ap_types refuse it.
pub const VITIS_BURST_MAXI_STUB: &str = r#"#pragma once
#include <cstddef>
#include <ap_int.h>
namespace hls {
template <typename T> class burst_maxi {
 public:
  burst_maxi(T *p);
  burst_maxi(const burst_maxi &b);
  void read_request(std::size_t offset, std::size_t len);
  T read();
  void write_request(std::size_t offset, std::size_t len);
  void write(const T &val, ap_int<T::width / 8> byteenable_mask = -1);
  void write_response();
};
}  // namespace hls
"#;

/// Vitis' `hls_math.h`, reduced to declarations of the float and double overloads a
/// kernel calls (UG1399, *HLS Math Library*: every function in `hls::` for `half`,
/// `float` and `double`), for compiling a math kernel as Vitis sees it.
pub const VITIS_HLS_MATH_STUB: &str = r#"#pragma once
namespace hls {
#define STUB1(f) float f(float); double f(double);
#define STUB2(f) float f(float, float); double f(double, double);
STUB1(sqrt) STUB1(fabs) STUB2(fmin) STUB2(fmax) STUB1(floor) STUB1(ceil) STUB1(trunc) STUB1(round)
STUB2(copysign) float fma(float, float, float); double fma(double, double, double);
STUB1(exp) STUB1(exp2) STUB1(expm1) STUB1(log) STUB1(log2) STUB1(log10) STUB1(log1p) STUB2(pow)
STUB1(sin) STUB1(cos) STUB1(tan) STUB1(asin) STUB1(acos) STUB1(atan) STUB2(atan2) STUB1(sinh)
STUB1(cosh) STUB1(tanh) STUB1(cbrt) STUB2(hypot)
#undef STUB1
#undef STUB2
}  // namespace hls
"#;

/// Compiles a kernel as the emulated device does (`-Wall -Wextra -Werror`, every
/// compiler) and as Vitis sees it (`TESSERA_VITIS`, against the stub of Vitis' burst
/// class; object only). Panics with the compiler's messages.
pub fn compile_check(k: &Kernel, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("kernel.cpp"), &k.source).unwrap();
    std::fs::write(dir.join("entry.cpp"), &k.emu_entry).unwrap();
    let stub = dir.join("vitis");
    std::fs::create_dir_all(&stub).unwrap();
    std::fs::write(stub.join("hls_burst_maxi.h"), VITIS_BURST_MAXI_STUB).unwrap();
    std::fs::write(stub.join("hls_math.h"), VITIS_HLS_MATH_STUB).unwrap();
    let run = |cmd: &mut Command| {
        let o = cmd.output().unwrap();
        assert!(o.status.success(), "{}: {cmd:?}\n{}", k.name, String::from_utf8_lossy(&o.stderr));
    };
    for cxx in compilers() {
        run(Command::new(cxx)
            .args(["-std=c++17", "-O2", "-fPIC", "-shared", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas"])
            .arg("-I")
            .arg(dir)
            .arg("-I")
            .arg(shim_include())
            .arg("-isystem")
            .arg(hls_headers())
            .arg("-o")
            .arg(dir.join(format!("k.{cxx}.so")))
            .arg(dir.join("entry.cpp")));
        run(Command::new(cxx)
            .args(["-std=c++17", "-c", "-Wall", "-Wextra", "-Werror", "-Wno-unknown-pragmas", "-DTESSERA_VITIS"])
            .arg("-I")
            .arg(&stub)
            .arg("-I")
            .arg(shim_include())
            .arg("-isystem")
            .arg(hls_headers())
            .arg("-o")
            .arg(dir.join(format!("k.{cxx}.o")))
            .arg(dir.join("kernel.cpp")));
    }
}

/// The extent of every dimension of an array variable (the compiler's rule: from the
/// type, the outermost from the map-clause section).
fn resolved_dims(v: &tessera_ir::Var) -> Vec<Expr> {
    v.dims
        .iter()
        .enumerate()
        .map(|(d, e)| match (e, v.section.get(d)) {
            (Some(e), _) => e.clone(),
            (None, Some(s)) if d == 0 => Expr::Binary {
                op: BinOp::Add,
                lhs: Box::new(s.lower.clone()),
                rhs: Box::new(s.length.clone()),
                ty: ScalarType::I64,
            },
            _ => panic!("unknown extent of {}", v.name),
        })
        .collect()
}

/// The manifest the compiler builds for a region and kernel.
pub fn manifest(region: &Region, k: &Kernel, mode: &str) -> Manifest {
    let one = || Expr::Int { value: 1, ty: ScalarType::I64 };
    let args = region
        .vars
        .iter()
        .map(|v| if v.writes_back() {
            // A scalar the region returns is a one-element array (the compiler's `manifest_arg`).
            let section = vec![Section { lower: Expr::Int { value: 0, ty: ScalarType::I64 }, length: one() }];
            let array = ArrayArg { map: v.map.expect("writes_back needs a map"), dims: vec![one()], section, footprint: vec![], bank: 0, reduction: None, untouched: false };
            Arg { name: v.name.clone(), kind: VarKind::Array, elem: v.elem, array: Some(array) }
        } else { Arg {
            name: v.name.clone(),
            kind: v.kind,
            elem: v.elem,
            array: (v.kind != VarKind::Scalar).then(|| {
                let dims = resolved_dims(v);
                let section = (0..dims.len())
                    .map(|d| match v.section.get(d) {
                        Some(s) => s.clone(),
                        None => Section { lower: Expr::Int { value: 0, ty: ScalarType::I64 }, length: dims[d].clone() },
                    })
                    .collect();
                ArrayArg { map: v.map.unwrap_or(MapKind::Tofrom), dims, section, footprint: vec![], bank: 0, reduction: None, untouched: false }
            }),
        } })
        .collect();
    Manifest {
        members: Vec::new(),
        member_checks: Vec::new(),
        version: MANIFEST_VERSION,
        region: region.location.file_line(),
        kernel: Some(k.name.clone()),
        rejected: None,
        mode: mode.parse().unwrap(),
        args,
        kernel_source: k.source.clone(),
        emu_entry_source: k.emu_entry.clone(),
        xclbin: format!("{}.xclbin", k.name),
        hash: String::new(), if_clause: false, device_clause: false, always_maps: false, guard: None,
        write_ports: k.write_ports.clone(),
        interleave: k.interleave.clone(),
        size_params: k.size_params.clone(),
    }
}

/// Reproducible pseudo-random numbers (the benchmarks' LCG).
struct Lcg(u32);

impl Lcg {
    fn next(&mut self) -> u32 {
        self.0 = self.0.wrapping_mul(1664525).wrapping_add(1013904223);
        self.0
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 8) as f64 / 16777216.0 - 0.5
    }
}

/// Host data of one region: arrays filled with reproducible values, scalars set.
pub struct Inputs {
    /// Per region variable: the bytes of an array, or the 8-byte slot of a scalar.
    pub data: Vec<Vec<u8>>,
}

impl Inputs {
    /// Integer scalars from `ints` (by name; others 3), float scalars 0.125; arrays of
    /// the evaluated extents, filled from `seed`.
    pub fn new(region: &Region, ints: &[(&str, i64)], seed: u32) -> Inputs {
        let int_of = |name: &str| ints.iter().find(|(n, _)| *n == name).map_or(3, |(_, v)| *v);
        let env = |name: &str| region.var(name).filter(|v| v.kind == VarKind::Scalar).map(|v| int_of(&v.name) as i128);
        let mut rng = Lcg(seed);
        let data = region
            .vars
            .iter()
            .map(|v| {
                if v.kind == VarKind::Scalar {
                    let mut slot = vec![0u8; 8];
                    match v.elem {
                        ScalarType::F32 => slot[..4].copy_from_slice(&0.125f32.to_ne_bytes()),
                        ScalarType::F64 => slot.copy_from_slice(&0.125f64.to_ne_bytes()),
                        t => slot[..t.size()].copy_from_slice(&int_of(&v.name).to_ne_bytes()[..t.size()]),
                    }
                    return slot;
                }
                let n: i128 = resolved_dims(v).iter().map(|e| eval_int(e, &env).unwrap()).product();
                let mut bytes = Vec::with_capacity(n as usize * v.elem.size());
                for _ in 0..n {
                    match v.elem {
                        ScalarType::F32 => bytes.extend_from_slice(&(rng.unit() as f32).to_ne_bytes()),
                        ScalarType::F64 => bytes.extend_from_slice(&rng.unit().to_ne_bytes()),
                        t => bytes.extend_from_slice(&rng.next().to_ne_bytes()[..t.size().min(4)]),
                    }
                    if v.elem.size() == 8 && v.elem.is_integer() {
                        bytes.extend_from_slice(&rng.next().to_ne_bytes());
                    }
                }
                bytes
            })
            .collect();
        Inputs { data }
    }
}

/// Runs `m` on the emulated device over a copy of `inputs`; returns the host data
/// afterwards and the runtime's record (which must say offloaded).
pub fn run(region: &Region, m: &Manifest, inputs: &Inputs, cache: &Path) -> (Vec<Vec<u8>>, Record) {
    run_at(region, m, inputs, cache, tessera_rt::config::DEFAULT_EMU_OPT)
}

/// The optimisation level of the generated-region tests' kernels (`TESSERA_EMU_OPT`):
/// they check the generator's plans against the baseline kernel's results, which do
/// not depend on it, and compile two kernels per case, so -O1 saves a quarter of their
/// time. The benchmark and fixture tests keep the default -O3.
pub const GENERATED_EMU_OPT: u8 = 1;

/// [`run`] with the kernel compiled at optimisation level `opt`.
pub fn run_at(region: &Region, m: &Manifest, inputs: &Inputs, cache: &Path, opt: u8) -> (Vec<Vec<u8>>, Record) {
    let mut data = inputs.data.clone();
    let mut ptrs: Vec<*mut u8> = data.iter_mut().map(|d| d.as_mut_ptr()).collect();
    let args: Vec<*mut c_void> = region
        .vars
        .iter()
        .enumerate()
        .map(|(i, v)| match v.kind {
            VarKind::Pointer => &mut ptrs[i] as *mut *mut u8 as *mut c_void,
            _ => ptrs[i] as *mut c_void,
        })
        .collect();
    let mut config = Config::emu(cache);
    config.hls_headers = Some(hls_headers());
    config.emu_opt = opt;
    // SAFETY: every address points at live data of the manifest's shape for the call.
    let record = unsafe { tessera_rt::offload_with(&config, m, &args) };
    assert!(record.offloaded(), "{}: {:?}", m.region, record.reason);
    (data, record)
}
