//! The TaPaSCo backend end to end, without a board: the runtime is built with cargo
//! feature `tapasco` against `tests/tapasco-standin/` — Tessera's own minimal
//! stand-in for the part of TaPaSCo's C API the backend calls (NOT TaPaSCo; see its
//! README), installed into a prefix the way TaPaSCo installs (`include/tapasco/
//! tapasco.h`, `lib/libtapasco.a`) — into a target directory of its own
//! (`<target>/tapasco-standin/`); a C program runs two kernels through it, and
//! programs of `tests/programs/` compiled by `tessera cc` run every region on it.
//!
//! The stand-in keeps device memory apart from host memory, filled with garbage (a
//! missing copy shows as wrong data), places it above 4 GiB (an address passed as 32
//! bits shows), leaves the upper half of an argument register garbage on a 32-bit
//! write (a 64-bit scalar passed as 32 bits shows), and runs a "design": a shared
//! object listing its PEs (VLNV and kernel ID) with one function per PE, here the
//! manifests' own kernels compiled natively through Tessera's HLS shim (their
//! emulation entries), with device memory as their ports. The test is skipped, with
//! the reason printed, only when a tool it needs is absent (C and C++ compilers,
//! `ld`/`objcopy`/`ar`, libclang for bindgen).

mod common;

use common::cprog::{c_literal, CProgram};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use tessera_ir::manifest::{Arg, Manifest};
use tessera_ir::tapasco::{kernel_id, vlnv};
use tessera_ir::{Expr, MapKind, ScalarType, VarKind};

fn tool_on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

/// libclang for bindgen, as `build/tapasco.rs` looks for it.
fn libclang_available() -> bool {
    match std::env::var_os("LIBCLANG_PATH") {
        Some(p) => Path::new(&p).is_dir(),
        None => Path::new("/usr/lib/llvm-19/lib").is_dir(),
    }
}

/// Whether the tools the stand-in build needs are here (else the reason is printed).
fn standin_tools() -> bool {
    for t in ["cc", "c++", "rustc", "ld", "objcopy", "ar"] {
        if !tool_on_path(t) {
            eprintln!("skipped: no `{t}` on PATH (needed to build the TaPaSCo stand-in and link it)");
            return false;
        }
    }
    if !libclang_available() {
        eprintln!("skipped: no libclang for bindgen (set LIBCLANG_PATH, or install clang-19: `make setup`)");
        return false;
    }
    true
}

/// The workspace's target directory (this binary is `<target>/release/deps/…`).
fn target_dir() -> PathBuf {
    std::env::current_exe().unwrap().ancestors().nth(3).unwrap().to_path_buf()
}

fn cc(args: &[&str], extra: &[&Path]) {
    let out = Command::new("cc").args(args).args(extra).output().unwrap();
    assert!(out.status.success(), "cc {args:?} {extra:?}:\n{}", String::from_utf8_lossy(&out.stderr));
}

/// Installs the stand-in into `<root>/prefix` as TaPaSCo installs its runtime (the
/// header as `include/tapasco/tapasco.h`, a static `lib/libtapasco.a`) and builds the
/// runtime with feature `tapasco` against it into `<root>/build`; returns the
/// directory holding that `libtessera_rt.so`.
fn build_runtime_on_standin(root: &Path) -> PathBuf {
    // Once per process and root: the tests run in parallel, and a rebuild (a new
    // archive, then a relinked runtime) while another test's program loads the
    // runtime would race with it.
    static BUILT: std::sync::Mutex<Vec<(PathBuf, PathBuf)>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, lib)) = built.iter().find(|(r, _)| r == root) {
        return lib.clone();
    }
    let lib = build_runtime_on_standin_now(root);
    built.push((root.to_path_buf(), lib.clone()));
    lib
}

fn build_runtime_on_standin_now(root: &Path) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/tapasco-standin");
    let prefix = root.join("prefix");
    let include = prefix.join("include/tapasco");
    std::fs::create_dir_all(&include).unwrap();
    std::fs::create_dir_all(prefix.join("lib")).unwrap();
    let header = src.join("include/tapasco.h");
    // Copied only when changed, so cargo's build script is not rerun needlessly.
    if std::fs::read(include.join("tapasco.h")).ok() != std::fs::read(&header).ok() {
        std::fs::copy(&header, include.join("tapasco.h")).unwrap();
    }
    let obj = root.join("standin.o");
    cc(&["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-fPIC", "-c", "-I"], &[&src.join("include"), &src.join("standin.c"), Path::new("-o"), &obj]);
    // Like libtapasco, a Rust staticlib (with its own std) plus the C part.
    let archive = prefix.join("lib/libtapasco.a");
    let fresh = root.join("libtapasco.a.new");
    let out = Command::new("rustc")
        .args(["--edition", "2021", "-O", "--crate-type", "staticlib", "--crate-name", "tapasco_standin_rust"])
        .arg(src.join("rust_part.rs"))
        .arg("-o")
        .arg(&fresh)
        .output()
        .unwrap();
    assert!(out.status.success(), "rustc rust_part.rs: {}", String::from_utf8_lossy(&out.stderr));
    let out = Command::new("ar").arg("rs").arg(&fresh).arg(&obj).output().unwrap();
    assert!(out.status.success(), "ar: {}", String::from_utf8_lossy(&out.stderr));
    if std::fs::read(&archive).ok() != std::fs::read(&fresh).ok() {
        std::fs::rename(&fresh, &archive).unwrap();
    }
    let build = root.join("build");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["build", "--release", "-p", "tessera-rt", "--features", "tapasco", "--manifest-path"])
        .arg(workspace.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &build)
        .env("TAPASCO_PREFIX", &prefix)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo build --features tapasco against the stand-in failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = build.join("release");
    assert!(lib.join("libtessera_rt.so").is_file());
    // The stand-in is inside libtessera_rt.so with only its C API global.
    let nm = Command::new("nm").args(["-D", "--defined-only"]).arg(lib.join("libtessera_rt.so")).output();
    if let Ok(nm) = nm {
        let syms = String::from_utf8_lossy(&nm.stdout);
        assert!(!syms.contains("standin_log") && !syms.contains("arena_top"), "stand-in internals exported");
    }
    lib
}

fn scalar(name: &str, elem: ScalarType) -> Arg {
    Arg { name: name.into(), kind: VarKind::Scalar, elem, array: None }
}

/// `scale1d` (`b[i] = 2 a[i]`, `a` to, `b` from), with its hash.
fn scale() -> Manifest {
    scale1d().with_hash()
}

/// `y[i] = alpha * x[i] + y[i] + (float)k` for `0 <= i < n`: `x` to, `y` tofrom, a
/// `float`, a `long long` and an `int` scalar.
fn axpyk() -> Manifest {
    let whole = || vec![sec(Expr::int(0), var("n"))];
    manifest(
        "axpyk.c:7",
        "axpyk",
        vec![
            farray("x", VarKind::Pointer, MapKind::To, vec![var("n")], whole()),
            farray("y", VarKind::Pointer, MapKind::Tofrom, vec![var("n")], whole()),
            scalar("alpha", ScalarType::F32),
            scalar("k", ScalarType::I64),
            int_scalar("n"),
        ],
        AXPYK_KERNEL,
        AXPYK_ENTRY,
    )
    .with_hash()
}

const AXPYK_KERNEL: &str = r#"
#include "tessera_hls.h"
extern "C" void axpyk(tessera::maxi<const float> x, tessera::maxi<float> y, float alpha, long long k, int n) {
#pragma HLS INTERFACE m_axi port=x bundle=gmem0
#pragma HLS INTERFACE m_axi port=y bundle=gmem1
  for (int i = 0; i < n; i++) {
#pragma HLS PIPELINE II=1
    y[i] = alpha * x[i] + y[i] + (float)k;
  }
}
"#;

const AXPYK_ENTRY: &str = r#"#include "kernel.cpp"
extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports) {
  axpyk(tessera::maxi<const float>(ports[0]), tessera::maxi<float>(ports[1]), *(const float *)args[2],
        *(const long long *)args[3], *(const int *)args[4]);
}
"#;

/// What a PE of a stand-in design runs.
enum Pe<'a> {
    /// The manifest's kernel, through its emulation entry and Tessera's HLS shim (as
    /// the emulated device runs it): array registers become port descriptors over
    /// device memory, scalar registers the values' addresses.
    Kernel(&'a Manifest),
    /// C++ code over `const uint64_t *r` (the argument registers).
    Body(&'a str),
}

/// A stand-in design (the "bitstream" loaded on the board): PEs `(vlnv, id, what)`.
fn design(dir: &Path, name: &str, pes: &[(String, u32, Pe)]) -> PathBuf {
    let root = dir.join(format!("{name}-design"));
    std::fs::create_dir_all(&root).unwrap();
    let list: String = pes.iter().map(|(v, id, _)| format!("{v}={id}\\n")).collect();
    let mut units = vec![root.join("pes.cpp")];
    std::fs::write(&units[0], format!("extern \"C\" const char tapasco_standin_pes[] = \"{list}\";\n")).unwrap();
    for (_, id, pe) in pes {
        let sig = format!(
            "extern \"C\" void tapasco_standin_pe_{id}(const uint64_t *r, int nargs, void *(*M)(uint64_t, uint64_t), \
             uint64_t (*A)(uint64_t))"
        );
        let unit = match pe {
            Pe::Body(body) => format!(
                "#include <stdint.h>\n#include <time.h>\n{sig} {{\n(void)r; (void)nargs; (void)M; (void)A;\n{body}\n}}\n"
            ),
            Pe::Kernel(m) => {
                let kdir = root.join(format!("k{id}"));
                std::fs::create_dir_all(&kdir).unwrap();
                std::fs::write(kdir.join("kernel.cpp"), &m.kernel_source).unwrap();
                std::fs::write(kdir.join("entry.cpp"), &m.emu_entry_source).unwrap();
                let n = m.args.len();
                let mut c = format!(
                    "#include <stdint.h>\n#include <string.h>\n#define tessera_emu_entry tessera_emu_entry_{id}\n\
                     #include \"{}\"\n#undef tessera_emu_entry\n{sig} {{\n\
                     void *args[{n}]; tessera_port_desc ports[{n}]; static tessera_port_stats stats[{n}];\n\
                     memset(ports, 0, sizeof ports); memset(stats, 0, sizeof stats);\n",
                    kdir.join("entry.cpp").display()
                );
                for (i, a) in m.args.iter().enumerate() {
                    if a.array.is_some() {
                        let size = a.elem.size();
                        c.push_str(&format!(
                            "{{ uint64_t cap = A(r[{i}]); ports[{i}] = tessera_port_desc{{TESSERA_EMU_ABI_VERSION, {i}, \
                             M(r[{i}], cap), cap / {size}, {size}, cap, \"{}\", &stats[{i}], nullptr, nullptr}}; \
                             args[{i}] = ports[{i}].base; }}\n",
                            a.name
                        ));
                    } else {
                        c.push_str(&format!("ports[{i}].abi_version = TESSERA_EMU_ABI_VERSION; ports[{i}].index = {i}; \
                                             args[{i}] = (void *)&r[{i}];\n"));
                    }
                }
                c.push_str(&format!("(void)nargs;\ntessera_emu_entry_{id}(args, ports);\n}}\n"));
                c
            }
        };
        let path = root.join(format!("pe{id}.cpp"));
        std::fs::write(&path, unit).unwrap();
        units.push(path);
    }
    let so = dir.join(format!("{name}.so"));
    let mut cmd = Command::new("c++");
    cmd.args(["-std=c++17", "-O2", "-fPIC", "-shared", "-ffp-contract=off", "-fno-fast-math", "-Wno-unknown-pragmas"]);
    cmd.arg("-I").arg(shim_include());
    if pes.iter().any(|(_, _, pe)| matches!(pe, Pe::Kernel(m) if m.kernel_source.contains("tessera_wide.h"))) {
        // Wide ports need the vendor's ap_int.h, as on the emulated device.
        cmd.arg("-isystem").arg(hls_headers());
    }
    cmd.args(&units).arg("-o").arg(&so);
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "the design does not build:\n{}", String::from_utf8_lossy(&out.stderr));
    so
}

/// The program: each kernel twice, with the CPU's result of the same computation
/// alongside; prints whether every result is bit-identical and how many regions ran
/// on the host.
fn program() -> String {
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera_rt.h"

static const char *const SCALE = {};
static const char *const AXPYK = {};

int main(void) {{
  int n = 1000, on_host = 0;
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float)), *rb = malloc(n * sizeof(float));
  float *x = malloc(n * sizeof(float)), *y = malloc(n * sizeof(float)), *ry = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) {{
    a[i] = 0.5f * i + 1.0f; b[i] = rb[i] = 7.0f; x[i] = 0.25f * i - 3.0f; y[i] = ry[i] = 1.0f / (i + 1);
  }}
  float alpha = -1.75f;
  long long k = -5000000000LL;
  for (int rep = 0; rep < 2; rep++) {{
    if (!__tessera_offload(SCALE, 3, &a, &b, &n)) {{
      on_host++;
      for (int i = 1; i < n - 1; i++) b[i] = 2.0f * a[i];
    }}
    for (int i = 1; i < n - 1; i++) rb[i] = 2.0f * a[i];
    if (!__tessera_offload(AXPYK, 5, &x, &y, &alpha, &k, &n)) {{
      on_host++;
      for (int i = 0; i < n; i++) y[i] = alpha * x[i] + y[i] + (float)k;
    }}
    for (int i = 0; i < n; i++) ry[i] = alpha * x[i] + ry[i] + (float)k;
  }}
  printf("scale=%d axpyk=%d on_host=%d\n", memcmp(b, rb, n * sizeof(float)) == 0,
         memcmp(y, ry, n * sizeof(float)) == 0, on_host);
  return 0;
}}
"#,
        c_literal(&scale().to_json()),
        c_literal(&axpyk().to_json())
    )
}

/// The program built against the runtime on the stand-in (compiled without
/// contraction, like the design, so host and "device" round alike).
fn standin_program() -> CProgram {
    standin_program_of(&program())
}

/// `source` built against the runtime on the stand-in.
fn standin_program_of(source: &str) -> CProgram {
    // Built once per test process (the tests run in parallel).
    static LIB: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let lib = LIB.get_or_init(|| build_runtime_on_standin(&target_dir().join("tapasco-standin")));
    CProgram::build_against(lib, "x", source)
}

fn id_of(m: &Manifest) -> u32 {
    kernel_id(&m.hash).unwrap()
}

/// The design `tessera bitstream --flow tapasco` would build for the program.
fn good_design(dir: &Path) -> PathBuf {
    design(
        dir,
        "good",
        &[(vlnv("scale1d"), id_of(&scale()), Pe::Kernel(&scale())), (vlnv("axpyk"), id_of(&axpyk()), Pe::Kernel(&axpyk()))],
    )
}

fn log_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(String::from).collect()
}

#[test]
fn kernels_run_bit_exactly_through_the_tapasco_backend() {
    if !standin_tools() {
        return;
    }
    let p = standin_program();
    let d = good_design(p.dir.path());
    let log = p.dir.path().join("standin.log");
    let vars = [
        ("TESSERA_DEVICE", "tapasco"),
        ("TAPASCO_STANDIN_DESIGN", d.to_str().unwrap()),
        ("TAPASCO_STANDIN_LOG", log.to_str().unwrap()),
    ];
    let r = p.run(&vars);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), "scale=1 axpyk=1 on_host=0", "{}\n{:#?}", r.stderr, r.report);
    let ran: Vec<(&str, &str)> =
        r.report.iter().map(|l| (l["kernel"].as_str().unwrap(), l["device"].as_str().unwrap())).collect();
    assert_eq!(ran, [("scale1d", "tapasco"), ("axpyk", "tapasco"), ("scale1d", "tapasco"), ("axpyk", "tapasco")]);
    // What moved: the sections of a and b in (b's `from` section is pre-filled), b's
    // out; x and y in, y out.
    assert_eq!(r.report[0]["transfers"]["a"]["to_device"], 998 * 4);
    assert_eq!(r.report[0]["transfers"]["b"]["from_device"], 998 * 4);
    assert_eq!(r.report[1]["transfers"]["x"]["to_device"], 1000 * 4);
    assert_eq!(r.report[1]["transfers"]["x"]["from_device"], 0);
    assert_eq!(r.report[1]["transfers"]["y"]["to_device"], 1000 * 4);
    assert_eq!(r.report[1]["transfers"]["y"]["from_device"], 1000 * 4);

    let lines = log_lines(&log);
    // One device, opened once, with exclusive access; the Rust part of the archive ran.
    assert_eq!(lines.iter().filter(|l| l.starts_with("device_alloc ")).count(), 1, "{lines:#?}");
    assert_eq!(lines[0], "tlkm rust-part w1,w2,w3", "{lines:#?}");
    assert!(lines.contains(&"access 0".to_string()), "{lines:#?}");
    // The argument registers in kernel order: addresses above 4 GiB, the float's bits
    // as a 32-bit write, the long long as a 64-bit write, n as 32 bits.
    let starts: Vec<&String> = lines.iter().filter(|l| l.starts_with("start ")).collect();
    assert_eq!(starts.len(), 4, "{lines:#?}");
    let axpyk_start = format!("start {} addr:0x1", id_of(&axpyk()));
    let s = starts.iter().find(|l| l.starts_with(&axpyk_start)).expect("axpyk started");
    let regs: Vec<&str> = s.split(' ').skip(2).collect();
    assert_eq!(regs.len(), 5, "{s}");
    assert!(regs[0].starts_with("addr:0x1") && regs[1].starts_with("addr:0x1"), "{s}");
    assert_eq!(regs[2], format!("s32:{:#x}", (-1.75f32).to_bits()));
    assert_eq!(regs[3], format!("s64:{:#x}", -5_000_000_000i64 as u64));
    assert_eq!(regs[4], "s32:0x3e8");
    // Every buffer is freed after its launch.
    let allocs = lines.iter().filter(|l| l.starts_with("alloc ")).count();
    assert_eq!(allocs, 8, "{lines:#?}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("free ")).count(), allocs, "{lines:#?}");
    // Every array the report says moved went through libtapasco's copies (one copy
    // per array and direction, covering at least the bytes counted), and nothing else.
    let copies = |op: &str| -> Vec<u64> {
        lines.iter().filter_map(|l| l.strip_prefix(op)).map(|l| l.split(' ').nth(1).unwrap().parse().unwrap()).collect()
    };
    let moved = |dir: &str| -> Vec<u64> {
        r.report
            .iter()
            .flat_map(|l| l["transfers"].as_object().unwrap().values().map(|t| t[dir].as_u64().unwrap()))
            .filter(|&b| b > 0)
            .collect()
    };
    for (op, dir) in [("copy_to ", "to_device"), ("copy_from ", "from_device")] {
        let (c, m) = (copies(op), moved(dir));
        assert_eq!(c.len(), m.len(), "{op}: {lines:#?}");
        assert!(c.iter().zip(&m).all(|(c, m)| c >= m), "{op}: {c:?} {m:?}");
    }

    // MANDATORY accepts a run where every region was offloaded.
    let r = p.run(&[("OMP_TARGET_OFFLOAD", "MANDATORY"), vars[0], vars[1]]);
    assert_eq!((r.code, r.out()), (Some(0), "scale=1 axpyk=1 on_host=0"), "{}", r.stderr);
}

/// A design built from other manifests (stale: the PE of a kernel has another ID)
/// or for another program (no PE of the kernel) is refused: the region runs on the
/// host with a reason saying how to rebuild and load the bitstream, and under
/// MANDATORY the program stops with it.
#[test]
fn stale_and_foreign_designs_are_refused() {
    if !standin_tools() {
        return;
    }
    let p = standin_program();
    let old = kernel_id(&"0".repeat(64)).unwrap();
    assert_ne!(old, id_of(&scale()));
    let stale = design(
        p.dir.path(),
        "stale",
        &[(vlnv("scale1d"), old, Pe::Kernel(&scale())), (vlnv("axpyk"), id_of(&axpyk()), Pe::Kernel(&axpyk()))],
    );
    let log = p.dir.path().join("standin.log");
    let run = |d: &Path, extra: &[(&str, &str)]| {
        let _ = std::fs::remove_file(&log);
        let mut vars = vec![
            ("TESSERA_DEVICE", "tapasco"),
            ("TAPASCO_STANDIN_DESIGN", d.to_str().unwrap()),
            ("TAPASCO_STANDIN_LOG", log.to_str().unwrap()),
        ];
        vars.extend_from_slice(extra);
        p.run(&vars)
    };
    let r = run(&stale, &[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // CPU-identical results; both scale1d runs on the host, axpyk on the board.
    assert_eq!(r.out(), "scale=1 axpyk=1 on_host=2", "{}", r.stderr);
    let scale_line = r.report.iter().find(|l| l["kernel"] == "scale1d").unwrap();
    assert_eq!(scale_line["device"], "host");
    let why = scale_line["reason"].as_str().unwrap();
    assert!(
        why.starts_with(&format!(
            "the design loaded on the TaPaSCo device is stale or foreign: its PE of kernel scale1d has TaPaSCo kernel \
             ID {old}, this program's kernel has ID {}",
            id_of(&scale())
        )),
        "{why}"
    );
    assert!(why.contains(&format!("`tessera bitstream {}.tessera --flow tapasco --platform vcu118", p.exe.display())), "{why}");
    assert_eq!(r.report.iter().filter(|l| l["kernel"] == "axpyk" && l["device"] == "tapasco").count(), 2);
    // The stale PE never ran.
    assert!(!log_lines(&log).iter().any(|l| l.starts_with(&format!("start {old} "))), "{:#?}", log_lines(&log));
    // The warning names the region once.
    assert_eq!(r.stderr.matches("scale.c:10: target region runs on the host").count(), 1, "{}", r.stderr);

    // MANDATORY: fatal, with that reason.
    let r = run(&stale, &[("OMP_TARGET_OFFLOAD", "MANDATORY")]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.lines().any(|l| l
            .starts_with("tessera: fatal: scale.c:10: OMP_TARGET_OFFLOAD=MANDATORY but the region cannot be offloaded: ")
            && l.contains("is stale or foreign")),
        "{}",
        r.stderr
    );

    // Foreign: a design without scale1d's PE.
    let foreign = design(p.dir.path(), "foreign", &[(vlnv("axpyk"), id_of(&axpyk()), Pe::Kernel(&axpyk()))]);
    let r = run(&foreign, &[]);
    assert_eq!(r.out(), "scale=1 axpyk=1 on_host=2", "{}", r.stderr);
    let why = r.report.iter().find(|l| l["kernel"] == "scale1d").unwrap()["reason"].as_str().unwrap().to_string();
    assert!(
        why.starts_with(
            "the design loaded on the TaPaSCo device has no PE of kernel scale1d (esa.cs.tu-darmstadt.de:hls:scale1d:1.0; \
             libtapasco: tapasco_device_get_pe_id failed: "
        ),
        "{why}"
    );
}

/// A PE that never finishes: after `TESSERA_TAPASCO_TIMEOUT_MS` the region runs on the
/// host with the reason, and the board is not used again (its memory may still be
/// written); the program's results are the CPU's.
#[test]
fn a_job_that_never_ends_times_out() {
    if !standin_tools() {
        return;
    }
    let p = standin_program();
    let forever = "struct timespec t = {0, 1000000}; for (;;) nanosleep(&t, 0);";
    let hung = design(
        p.dir.path(),
        "hung",
        &[(vlnv("scale1d"), id_of(&scale()), Pe::Body(forever)), (vlnv("axpyk"), id_of(&axpyk()), Pe::Kernel(&axpyk()))],
    );
    let vars = [
        ("TESSERA_DEVICE", "tapasco"),
        ("TAPASCO_STANDIN_DESIGN", hung.to_str().unwrap()),
        ("TESSERA_TAPASCO_TIMEOUT_MS", "300"),
    ];
    let r = p.run(&vars);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), "scale=1 axpyk=1 on_host=4", "{}", r.stderr);
    let why = |i: usize| r.report[i]["reason"].as_str().unwrap().to_string();
    let first = "kernel scale1d did not finish within 300 ms (TESSERA_TAPASCO_TIMEOUT_MS); the TaPaSCo device is not \
                 used again in this process";
    assert_eq!(why(0), first);
    assert_eq!(why(1), format!("TESSERA_DEVICE=tapasco but {first}"));
    assert!(r.report.iter().all(|l| l["device"] == "host"));
    // MANDATORY: fatal at the first region.
    let r = p.run(&[vars[0], vars[1], vars[2], ("OMP_TARGET_OFFLOAD", "MANDATORY")]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(r.stderr.contains(&format!("scale.c:10: OMP_TARGET_OFFLOAD=MANDATORY but the region cannot be offloaded: {first}")), "{}", r.stderr);
}

/// Without a board (no tlkm driver) every region runs on the host with the reason;
/// MANDATORY stops the program. A runtime built without the feature says so.
#[test]
fn no_device_and_no_backend() {
    if standin_tools() {
        let p = standin_program();
        let r = p.run(&[("TESSERA_DEVICE", "tapasco"), ("TAPASCO_STANDIN_NO_DEVICE", "1")]);
        assert_eq!(r.code, Some(0), "{}", r.stderr);
        assert_eq!(r.out(), "scale=1 axpyk=1 on_host=4", "{}", r.stderr);
        assert!(r.report.iter().all(|l| l["device"] == "host"));
        let why = r.report[0]["reason"].as_str().unwrap();
        assert!(
            why.starts_with("TESSERA_DEVICE=tapasco but no TaPaSCo device (tapasco_tlkm_new failed: ")
                && why.contains("/dev/tlkm"),
            "{why}"
        );
        let r = p.run(&[("TESSERA_DEVICE", "tapasco"), ("TAPASCO_STANDIN_NO_DEVICE", "1"), ("OMP_TARGET_OFFLOAD", "MANDATORY")]);
        assert_eq!(r.code, Some(1), "{}", r.stderr);
        assert!(r.stderr.contains("OMP_TARGET_OFFLOAD=MANDATORY but the region cannot be offloaded: TESSERA_DEVICE=tapasco but no TaPaSCo device"), "{}", r.stderr);
    }
    // The runtime this test was built with has no `tapasco` feature.
    let p = CProgram::build("x", &program());
    let r = p.run(&[("TESSERA_DEVICE", "tapasco")]);
    assert_eq!(r.out(), "scale=1 axpyk=1 on_host=4", "{}", r.stderr);
    assert_eq!(r.report[0]["reason"], tessera_rt::tapasco::TAPASCO_NOT_BUILT);
}

/// Programs compiled by `tessera cc` run their regions on the stand-in with the
/// design built from their own manifests, under `OMP_TARGET_OFFLOAD=MANDATORY`, and
/// print what they print when every region runs on the host; four of them keep their
/// data on the board across regions (`target data`, `enter/exit data`, `update`),
/// whose directives map on the TaPaSCo device too, and two of those run some regions
/// on the host in between (host fallbacks, regions of unknown footprint), with the
/// board's data copied around them. Needs `make build`
/// (the `tessera` driver and its plugin in `target/release/`); skipped with the reason
/// otherwise.
#[test]
fn tessera_compiled_programs_run_on_the_stand_in() {
    if !standin_tools() {
        return;
    }
    let release = target_dir().join("release");
    let tessera = release.join("tessera");
    if !tessera.is_file() || !release.join("tessera_plugin.so").is_file() {
        eprintln!("skipped: no target/release/tessera with its plugin (run `make build`)");
        return;
    }
    static LIB: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let lib = LIB.get_or_init(|| build_runtime_on_standin(&target_dir().join("tapasco-standin"))).clone();
    let programs = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/programs");
    // The last two run regions on the host inside data regions held on the board
    // (not under MANDATORY): the copies around those host runs go through the
    // TaPaSCo device's present table.
    for (name, mandatory) in [
        ("stencil2d", true),
        ("stencil1d", true),
        ("flat_jacobi2d", true),
        ("data_time_loop", true),
        ("data_enter_exit", true),
        ("data_fallback", false),
        ("data_opaque", false),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let exe = dir.path().join(name);
        let out = Command::new(&tessera)
            .args(["cc", "-O2"])
            .arg(programs.join(format!("{name}.c")))
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(out.status.success(), "tessera cc {name}.c:\n{}", String::from_utf8_lossy(&out.stderr));
        let mut manifests = Vec::new();
        let mut files: Vec<PathBuf> = std::fs::read_dir(dir.path().join(format!("{name}.tessera")))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_str().unwrap().ends_with(".manifest.json"))
            .collect();
        files.sort();
        for f in files {
            let m = Manifest::from_json(&std::fs::read_to_string(f).unwrap()).unwrap();
            let fallback = m.fallback();
            manifests.extend(std::iter::once(m).chain(fallback).filter(|m| m.kernel.is_some()));
        }
        assert!(!manifests.is_empty(), "{name}: no kernel");
        let pes: Vec<(String, u32, Pe)> =
            manifests.iter().map(|m| (vlnv(m.kernel.as_deref().unwrap()), id_of(m), Pe::Kernel(m))).collect();
        let d = design(dir.path(), name, &pes);
        let run = |vars: &[(&str, &Path)]| {
            let mut cmd = Command::new(&exe);
            cmd.env_clear().env("PATH", std::env::var_os("PATH").unwrap_or_default());
            for (k, v) in vars {
                cmd.env(k, v);
            }
            cmd.output().unwrap()
        };
        let report = dir.path().join("report.jsonl");
        let host = run(&[("TESSERA_DEVICE", Path::new("host"))]);
        assert!(host.status.success(), "{name} on the host: {}", String::from_utf8_lossy(&host.stderr));
        let policy = if mandatory { "MANDATORY" } else { "DEFAULT" };
        let board = run(&[
            ("TESSERA_DEVICE", Path::new("tapasco")),
            ("OMP_TARGET_OFFLOAD", Path::new(policy)),
            ("LD_LIBRARY_PATH", &lib),
            ("TAPASCO_STANDIN_DESIGN", &d),
            ("TESSERA_REPORT", &report),
        ]);
        assert!(board.status.success(), "{name} on the stand-in: {}", String::from_utf8_lossy(&board.stderr));
        assert_eq!(String::from_utf8_lossy(&board.stdout), String::from_utf8_lossy(&host.stdout), "{name}");
        let lines = std::fs::read_to_string(&report).unwrap();
        let devices: Vec<String> = lines
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["device"].as_str().unwrap().to_string())
            .collect();
        if mandatory {
            assert!(!devices.is_empty() && devices.iter().all(|d| d == "tapasco"), "{name}: {devices:?}");
        } else {
            assert!(devices.iter().any(|d| d == "tapasco") && devices.iter().any(|d| d == "host"), "{name}: {devices:?}");
            assert!(devices.iter().all(|d| d == "tapasco" || d == "host"), "{name}: {devices:?}");
        }
    }
}

/// A kernel with a write port (`Manifest::write_ports`: a dataflow kernel's in-place
/// array): the PE gets the array's device address in its own register and again in the
/// register after the arguments. The PE updates `ey` in place through the second one
/// only when both hold the same address (else it does nothing, and the results differ).
#[test]
fn write_ports_get_the_array_address_again() {
    if !standin_tools() {
        return;
    }
    let whole = || vec![sec(Expr::int(0), var("n"))];
    let ey = farray("ey", VarKind::Pointer, MapKind::Tofrom, vec![var("n")], whole());
    let mut m = manifest("w.c:10", "inplace", vec![ey, int_scalar("n")], "/* design only */", "/* design only */");
    m.write_ports = vec![0];
    let m = m.with_hash();
    let source = format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include "tessera_rt.h"

static const char *const K = {};

int main(void) {{
  int n = 1000, on_host = 0, good = 1;
  float *ey = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) ey[i] = 0.25f * i;
  if (!__tessera_offload(K, 2, &ey, &n)) {{ on_host++; for (int i = 0; i < n; i++) ey[i] = 2.0f * ey[i] + 1.0f; }}
  for (int i = 0; i < n; i++) good &= ey[i] == 2.0f * (0.25f * i) + 1.0f;
  printf("good=%d on_host=%d\n", good, on_host);
  return 0;
}}
"#,
        c_literal(&m.to_json())
    );
    let p = standin_program_of(&source);
    let body = "if (nargs != 3 || r[0] != r[2]) return;\n\
                float *w = (float *)M(r[2], A(r[2])); const float *rd = (const float *)M(r[0], A(r[0]));\n\
                for (int i = 0; i < (int)r[1]; i++) w[i] = 2.0f * rd[i] + 1.0f;";
    let d = design(p.dir.path(), "wp", &[(vlnv("inplace"), id_of(&m), Pe::Body(body))]);
    let r = p.run(&[("TESSERA_DEVICE", "tapasco"), ("TAPASCO_STANDIN_DESIGN", d.to_str().unwrap())]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), "good=1 on_host=0", "{}", r.stderr);
    assert_eq!(r.report[0]["device"], "tapasco", "{}", r.report[0]);
}

/// Interleaved arrays (`Manifest::interleave`, segments of 64 bytes = 16 floats) on
/// TaPaSCo: the PE gets the device addresses of two allocations of their own, half 0
/// in the array's register (and its write port's), half 1 in the second-bank
/// registers after the arguments; segment `k` of the array lives in half `k % 2` at
/// element `(k / 2) * 16`. `il` (`x[i] = 3 x[i] + i`, `x` tofrom) and `ilw` (`x[i] = 2
/// x[i] + 1` through read and write ports of both halves, on `x` present in a data
/// region, whole and on a window 32 bytes into it): a wrong layout or swapped halves
/// give element `i` another element's value.
#[test]
fn interleaved_arrays_get_two_allocations() {
    if !standin_tools() {
        return;
    }
    let interleaved = |line: u32, kernel: &str, map: MapKind| {
        let (dims, section) = if map == MapKind::Present { (vec![Expr::int(0)], vec![]) } else { (vec![var("n")], vec![sec(Expr::int(0), var("n"))]) };
        let x = farray("x", VarKind::Pointer, map, dims, section);
        let mut m = manifest(&format!("i.c:{line}"), kernel, vec![x, int_scalar("n")], "/* design only */", "/* design only */");
        if map == MapKind::Present {
            m.write_ports = vec![0];
        }
        m.interleave = Some(tessera_ir::manifest::Interleave { args: vec![0], segment_bytes: 64 });
        m.with_hash()
    };
    let (il, ilw) = (interleaved(10, "il", MapKind::Tofrom), interleaved(20, "ilw", MapKind::Present));
    let region = data_desc(
        "i.c:5",
        tessera_ir::data::DataOp::Region,
        &[("x", VarKind::Pointer), ("n", VarKind::Scalar)],
        vec![(0, MapKind::Tofrom, vec![var("n")], vec![sec(Expr::int(0), var("n"))])],
    );
    let n = 3000;
    let source = format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include "tessera_rt.h"

static const char *const REGION = {};
static const char *const IL = {};
static const char *const ILW = {};

int main(void) {{
  int n = {n}, m = 1000, on_host = 0;
  float *x = malloc(n * sizeof(float)), *r = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) x[i] = r[i] = 0.5f * i + 1.0f;
  if (!__tessera_offload(IL, 2, &x, &n)) {{ on_host++; for (int i = 0; i < n; i++) x[i] = 3.0f * x[i] + (float)i; }}
  for (int i = 0; i < n; i++) r[i] = 3.0f * r[i] + (float)i;
  void *h = __tessera_data_begin(REGION, 2, &x, &n);
  if (!__tessera_offload(ILW, 2, &x, &n)) {{ on_host++; for (int i = 0; i < n; i++) x[i] = 2.0f * x[i] + 1.0f; __tessera_host_end(ILW); }}
  for (int i = 0; i < n; i++) r[i] = 2.0f * r[i] + 1.0f;
  float *w = x + 8;
  if (!__tessera_offload(ILW, 2, &w, &m)) {{ on_host++; for (int i = 0; i < m; i++) w[i] = 2.0f * w[i] + 1.0f; __tessera_host_end(ILW); }}
  for (int i = 0; i < m; i++) r[8 + i] = 2.0f * r[8 + i] + 1.0f;
  __tessera_data_end(h);
  int bad = -1;
  for (int i = 0; i < n && bad < 0; i++) if (x[i] != r[i]) bad = i;
  printf("ok=%d first_bad=%d on_host=%d\n", bad < 0, bad, on_host);
  return 0;
}}
"#,
        c_literal(&region.to_json()),
        c_literal(&il.to_json()),
        c_literal(&ilw.to_json())
    );
    let p = standin_program_of(&source);
    let elem = "#define ELEM(h, i) (&(h)[((i) / 16) % 2][((i) / 16 / 2) * 16 + (i) % 16])\n";
    let il_body = format!(
        "{elem}if (nargs != 3 || r[0] == r[2]) return;\n\
         float *h[2] = {{(float *)M(r[0], A(r[0])), (float *)M(r[2], A(r[2]))}};\n\
         for (int i = 0; i < (int)r[1]; i++) {{ float *p = ELEM(h, i); *p = 3.0f * *p + (float)i; }}"
    );
    let ilw_body = format!(
        "{elem}if (nargs != 5 || r[0] != r[2] || r[3] != r[4] || r[0] == r[3]) return;\n\
         const float *rd[2] = {{(const float *)M(r[0], A(r[0])), (const float *)M(r[3], A(r[3]))}};\n\
         float *wr[2] = {{(float *)M(r[2], A(r[2])), (float *)M(r[4], A(r[4]))}};\n\
         for (int i = 0; i < (int)r[1]; i++) *ELEM(wr, i) = 2.0f * *ELEM(rd, i) + 1.0f;"
    );
    let d = design(
        p.dir.path(),
        "il",
        &[(vlnv("il"), id_of(&il), Pe::Body(&il_body)), (vlnv("ilw"), id_of(&ilw), Pe::Body(&ilw_body))],
    );
    let log = p.dir.path().join("standin.log");
    let r = p.run(&[
        ("TESSERA_DEVICE", "tapasco"),
        ("TAPASCO_STANDIN_DESIGN", d.to_str().unwrap()),
        ("TAPASCO_STANDIN_LOG", log.to_str().unwrap()),
    ]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), "ok=1 first_bad=-1 on_host=0", "{}\n{:#?}", r.stderr, r.report);
    let lines = log_lines(&log);
    // Per launch: the array's buffer, then its halves (whole pages of half_bytes).
    let allocs: Vec<(String, usize)> = lines
        .iter()
        .filter_map(|l| l.strip_prefix("alloc "))
        .map(|l| (l.split(' ').next().unwrap().to_string(), l.split(' ').nth(1).unwrap().parse().unwrap()))
        .collect();
    let ilv = tessera_ir::manifest::Interleave { args: vec![0], segment_bytes: 64 };
    let pages = |bytes: usize| ilv.half_bytes(bytes).map(|h| h.max(1).next_multiple_of(4096));
    let sizes: Vec<usize> = allocs.iter().map(|a| a.1).collect();
    let (whole, window) = (pages(n * 4), pages(n * 4 - 32));
    assert_eq!(sizes, [12288, whole[0], whole[1], 12288, whole[0], whole[1], window[0], window[1]], "{lines:#?}");
    // The registers: half 0's address for x (and tdf_w_x), half 1's for the second
    // half (and tdf_w_b1_x), not the array's buffer.
    let starts: Vec<Vec<&str>> = lines.iter().filter(|l| l.starts_with("start ")).map(|l| l.split(' ').skip(2).collect()).collect();
    assert_eq!(starts.len(), 3, "{lines:#?}");
    let addr = |i: usize| format!("addr:{}", allocs[i].0);
    assert_eq!(starts[0], [addr(1).as_str(), "s32:0xbb8", addr(2).as_str()], "{lines:#?}");
    assert_eq!(starts[1], [addr(4).as_str(), "s32:0xbb8", addr(4).as_str(), addr(5).as_str(), addr(5).as_str()], "{lines:#?}");
    assert_eq!(starts[2][0], addr(6), "{lines:#?}");
    // Every allocation is freed.
    assert_eq!(lines.iter().filter(|l| l.starts_with("free ")).count(), allocs.len(), "{lines:#?}");
}
