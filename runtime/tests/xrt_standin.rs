//! The XRT backend end to end, without a board: the runtime is built with cargo
//! feature `xrt` against `tests/xrt-standin/` — Tessera's own minimal stand-in for
//! the part of XRT's C API the backend calls (NOT XRT; see its README) — into a
//! target directory of its own (`<target>/xrt-standin/`), and a C program runs
//! kernels and data directives through it.
//!
//! The stand-in keeps device memory apart from host memory (a missing sync shows as
//! wrong data), checks memory groups at `xrtRunSetArg`, refuses to load another
//! bitstream while buffer objects exist (as XRT's driver does), and logs every
//! allocation, sync and run, which the test reads to prove that resident data was not
//! copied, and that a program's xclbin holding two kernels is loaded once for a whole
//! time loop. The test is skipped, with the reason printed, only when a tool it needs is
//! absent (a C compiler, libclang for bindgen).

mod common;

use common::cprog::{c_literal, CProgram};
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use tessera_ir::data::DataOp;
use tessera_ir::manifest::{BitstreamRecord, Manifest, RecordedKernel, BITSTREAM_RECORD_VERSION};
use tessera_ir::{Expr, MapKind, VarKind};

/// libclang for bindgen, as `build.rs` looks for it.
fn libclang_available() -> bool {
    match std::env::var_os("LIBCLANG_PATH") {
        Some(p) => Path::new(&p).is_dir(),
        None => Path::new("/usr/lib/llvm-19/lib").is_dir(),
    }
}

fn tool_on_path(name: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(name).is_file()))
}

/// The workspace's target directory (this binary is `<target>/release/deps/…`).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    exe.ancestors().nth(3).unwrap().to_path_buf()
}

/// Builds the stand-in library into `<root>/prefix` (laid out like `$XILINX_XRT`) and
/// the runtime with feature `xrt` against it into `<root>/build`; returns the
/// directory holding that `libtessera_rt.so` and the prefix.
fn build_runtime_on_standin(root: &Path) -> (PathBuf, PathBuf) {
    // Once per process and root: the tests run in parallel, and rebuilding the
    // library in place while another test's program loads it fails ("file too short").
    static BUILT: std::sync::Mutex<Vec<(PathBuf, (PathBuf, PathBuf))>> = std::sync::Mutex::new(Vec::new());
    let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, r)) = built.iter().find(|(r, _)| r == root) {
        return r.clone();
    }
    let r = build_runtime_on_standin_now(root);
    built.push((root.to_path_buf(), r.clone()));
    r
}

fn build_runtime_on_standin_now(root: &Path) -> (PathBuf, PathBuf) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/xrt-standin");
    let prefix = root.join("prefix");
    std::fs::create_dir_all(prefix.join("lib")).unwrap();
    let include = prefix.join("include/xrt");
    std::fs::create_dir_all(&include).unwrap();
    for h in ["xrt_device.h", "xrt_kernel.h", "xrt_bo.h"] {
        let from = src.join("include/xrt").join(h);
        // Copied only when changed, so cargo's build script is not rerun needlessly.
        if std::fs::read(include.join(h)).ok() != std::fs::read(&from).ok() {
            std::fs::copy(&from, include.join(h)).unwrap();
        }
    }
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Wextra", "-Werror", "-O1", "-fPIC", "-shared", "-I"])
        .arg(src.join("include"))
        .arg(src.join("standin.c"))
        .arg("-o")
        .arg(prefix.join(format!("lib/.libxrt_coreutil.so.tmp.{}", std::process::id())))
        .args(["-ldl", "-lpthread"])
        .output()
        .unwrap();
    assert!(out.status.success(), "the stand-in does not build:\n{}", String::from_utf8_lossy(&out.stderr));
    // Renamed into place: a program of another process loading it sees a whole file.
    std::fs::rename(
        prefix.join(format!("lib/.libxrt_coreutil.so.tmp.{}", std::process::id())),
        prefix.join("lib/libxrt_coreutil.so"),
    )
    .unwrap();
    let build = root.join("build");
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = Command::new(env!("CARGO"))
        .args(["build", "--release", "-p", "tessera-rt", "--features", "xrt", "--manifest-path"])
        .arg(workspace.join("Cargo.toml"))
        .env("CARGO_TARGET_DIR", &build)
        .env("XILINX_XRT", &prefix)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "cargo build --features xrt against the stand-in failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lib = build.join("release");
    assert!(lib.join("libtessera_rt.so").is_file());
    (lib, prefix)
}

/// A stand-in bitstream: a shared object with `<kernel>_standin_args` and
/// `<kernel>_standin` (see standin.c).
fn bitstream(dir: &Path, kernel: &str, args: &str, body: &str) {
    program_bitstream(dir, &format!("{kernel}.xclbin"), &[(kernel, args, body)]);
}

/// A stand-in bitstream `dir/file` holding several kernels `(name, args, body)`, as
/// one `v++ -l` over several `.xo` makes one xclbin with several kernels.
fn program_bitstream(dir: &Path, file: &str, kernels: &[(&str, &str, &str)]) {
    let src = dir.join(format!("{file}.c"));
    let text: String = kernels
        .iter()
        .map(|(k, args, body)| {
            format!("const char {k}_standin_args[] = \"{args}\";\nvoid {k}_standin(void **args) {{\n{body}\n}}\n")
        })
        .collect();
    std::fs::write(&src, text).unwrap();
    let out = Command::new("cc")
        .args(["-std=c11", "-Wall", "-Werror", "-O1", "-fPIC", "-shared"])
        .arg(&src)
        .arg("-o")
        .arg(dir.join(file))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// `b[i] += 1` for `0 <= i < n`, `b` a pointer without map clause: kernel `addone`
/// in its own bitstream (`addone.xclbin`).
fn addone_present() -> Manifest {
    let arr = farray("b", VarKind::Pointer, MapKind::Present, vec![Expr::int(0)], vec![]);
    manifest("x.c:30", "addone", vec![arr, int_scalar("n")], "/* bitstream only */", "/* bitstream only */")
        .with_hash()
}

/// `scale1d` on present data, with its hash (as the compiler writes manifests).
fn scale1d_hashed() -> Manifest {
    scale1d_present().with_hash()
}

/// The build record `tessera bitstream` writes beside `<kernel>.xclbin`, for `hash`.
fn record(dir: &Path, m: &Manifest, hash: &str) {
    record_of(&dir.join(&m.xclbin), &[(m, hash)]);
}

/// The build record of bitstream `xclbin` holding kernels `(manifest, hash)`.
fn record_of(xclbin: &Path, kernels: &[(&Manifest, &str)]) {
    let r = BitstreamRecord {
        version: BITSTREAM_RECORD_VERSION,
        kernels: kernels
            .iter()
            .map(|(m, hash)| {
                let kernel = m.kernel.clone().unwrap();
                RecordedKernel {
                    manifest: format!("x.tessera/{kernel}.manifest.json"),
                    kernel,
                    hash: hash.to_string(),
                    region: m.region.clone(),
                }
            })
            .collect(),
        target: "hw".into(),
        platform: "standin".into(),
    };
    std::fs::write(BitstreamRecord::path_for(xclbin), r.to_json()).unwrap();
}

/// The program: a `target data` (to a, tofrom b) around two `scale1d` launches on
/// present data, an `addone` launch from another bitstream (the board reloads: the
/// resident data must survive), `target update from(b)`, `scale1d` on a window
/// starting 4096 bytes into the mapping (a sub-buffer) and on one starting 32 bytes in
/// (not page-aligned: host fallback with copies). It computes the CPU's result of the
/// same sequence alongside and prints whether the host copy matches it after the
/// update and at the end.
fn program() -> String {
    let whole = || vec![sec(Expr::int(0), var("n"))];
    let abn = [("a", VarKind::Pointer), ("b", VarKind::Pointer), ("n", VarKind::Scalar)];
    let region = data_desc(
        "x.c:10",
        DataOp::Region,
        &abn,
        vec![(0, MapKind::To, vec![var("n")], whole()), (1, MapKind::Tofrom, vec![var("n")], whole())],
    );
    let update = data_desc("x.c:40", DataOp::Update, &abn, vec![(1, MapKind::From, vec![var("n")], whole())]);
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera_rt.h"

static const char *const SCALE = {};
static const char *const ADDONE = {};
static const char *const REGION = {};
static const char *const UPDATE = {};

static void scale(const float *a, float *b, int n) {{ for (int i = 1; i < n - 1; i++) b[i] = 2.0f * a[i]; }}

int main(void) {{
  int n = 4096, on_host = 0;
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float)), *r = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) {{ a[i] = 0.5f * i + 1.0f; b[i] = 7.0f; r[i] = 7.0f; }}
  void *h = __tessera_data_begin(REGION, 3, &a, &b, &n);
  for (int rep = 0; rep < 2; rep++) {{
    if (!__tessera_offload(SCALE, 3, &a, &b, &n)) {{ on_host++; scale(a, b, n); __tessera_host_end(SCALE); }}
    scale(a, r, n);
  }}
  if (!__tessera_offload(ADDONE, 2, &b, &n)) {{
    on_host++;
    for (int i = 0; i < n; i++) b[i] += 1.0f;
    __tessera_host_end(ADDONE);
  }}
  for (int i = 0; i < n; i++) r[i] += 1.0f;
  __tessera_data(UPDATE, 3, &a, &b, &n);
  int after_update = memcmp(b, r, n * sizeof(float)) == 0;
  int los[2] = {{1024, 8}}, lens[2] = {{1024, 16}};
  for (int w = 0; w < 2; w++) {{
    float *pa = a + los[w], *pb = b + los[w];
    int m = lens[w];
    if (!__tessera_offload(SCALE, 3, &pa, &pb, &m)) {{ on_host++; scale(pa, pb, m); __tessera_host_end(SCALE); }}
    scale(a + los[w], r + los[w], m);
  }}
  __tessera_data_end(h);
  printf("after_update=%d final=%d on_host=%d\n", after_update, memcmp(b, r, n * sizeof(float)) == 0, on_host);
  return 0;
}}
"#,
        c_literal(&scale1d_hashed().to_json()),
        c_literal(&addone_present().to_json()),
        c_literal(&region.to_json()),
        c_literal(&update.to_json())
    )
}

/// One parsed line of the stand-in's log.
fn log_lines(path: &Path) -> Vec<String> {
    std::fs::read_to_string(path).unwrap_or_default().lines().map(String::from).collect()
}

/// Whether the tools the stand-in build needs are here (else the reason is printed).
fn standin_tools() -> bool {
    if !tool_on_path("cc") {
        eprintln!("skipped: no C compiler `cc` on PATH (needed to build the XRT stand-in)");
        return false;
    }
    if !libclang_available() {
        eprintln!("skipped: no libclang for bindgen (set LIBCLANG_PATH, or install clang-19: `make setup`)");
        return false;
    }
    true
}

/// The runtime on the stand-in, [`program`] built against it, and a directory with
/// the bitstreams of `scale1d` and `addone` and their build records.
fn program_and_bitstreams() -> (CProgram, tempfile::TempDir) {
    program_and_bitstreams_of(&program())
}

/// The runtime on the stand-in, `source` built against it, and the bitstreams of
/// `scale1d` and `addone` with their build records.
fn program_and_bitstreams_of(source: &str) -> (CProgram, tempfile::TempDir) {
    let root = target_dir().join("xrt-standin");
    let (lib, _prefix) = build_runtime_on_standin(&root);
    let bits = tempfile::tempdir().unwrap();
    bitstream(
        bits.path(),
        "scale1d",
        "buf@1,buf@2,i32",
        "const float *a = args[0]; float *b = args[1]; int n = *(const int *)args[2];\n\
         for (int i = 1; i < n - 1; i++) b[i] = 2.0f * a[i];",
    );
    bitstream(
        bits.path(),
        "addone",
        "buf@3,i32",
        "float *b = args[0]; int n = *(const int *)args[1];\nfor (int i = 0; i < n; i++) b[i] += 1.0f;",
    );
    for m in [scale1d_hashed(), addone_present()] {
        record(bits.path(), &m, &m.hash);
    }
    (CProgram::build_against(&lib, "x", source), bits)
}

/// OpenMP's device memory routines on the board: a block of `omp_target_alloc` is
/// device memory (a buffer object), `omp_target_memcpy` syncs into and out of it, and
/// a region whose pointer has no map clause (as with `is_device_ptr`) runs on it.
/// Without a board there are no devices and every routine works on host memory.
#[test]
fn device_memory_routines_through_the_xrt_backend() {
    if !standin_tools() {
        return;
    }
    let source = format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include "tessera_rt.h"

void *omp_target_alloc(size_t size, int device_num);
void omp_target_free(void *device_ptr, int device_num);
int omp_target_memcpy(void *dst, const void *src, size_t length, size_t dst_offset, size_t src_offset,
                      int dst_device_num, int src_device_num);
int omp_target_is_present(const void *ptr, int device_num);
int __tgt_get_num_devices(void);

static const char *const ADDONE = {};

int main(void) {{
  int n = 4096, on_host = 0, ok = 1;
  float *h = malloc(n * sizeof(float)), *back = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) h[i] = 0.25f * i;
  int devs = __tgt_get_num_devices(), host = devs;
  float *d = omp_target_alloc(n * sizeof(float), 0);
  int c1 = omp_target_memcpy(d, h, n * sizeof(float), 0, 0, 0, host);
  if (!__tessera_offload(ADDONE, 2, &d, &n)) {{
    on_host++;
    for (int i = 0; i < n; i++) d[i] += 1.0f;
    __tessera_host_end(ADDONE);
  }}
  int c2 = omp_target_memcpy(back, d, n * sizeof(float), 0, 0, host, 0);
  for (int i = 0; i < n; i++) ok &= back[i] == h[i] + 1.0f;
  int present = omp_target_is_present(d, 0);
  omp_target_free(d, 0);
  printf("devices=%d copies=%d,%d ok=%d on_host=%d present=%d\n", devs, c1, c2, ok, on_host, present);
  return 0;
}}
"#,
        c_literal(&addone_present().to_json())
    );
    let (p, bits) = program_and_bitstreams_of(&source);
    let bitdir = bits.path().to_str().unwrap();
    let log = p.dir.path().join("standin.log");
    let logs = log.to_str().unwrap();
    let r = p.run(&[("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bitdir), ("XRT_STANDIN_LOG", logs)]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), "devices=1 copies=0,0 ok=1 on_host=0 present=1", "{}", r.stderr);
    assert_eq!(r.report.len(), 1);
    assert_eq!((r.report[0]["kernel"].as_str(), r.report[0]["device"].as_str()), (Some("addone"), Some("xrt")));
    // The kernel ran on the block's buffer object: the copy in reached the device
    // (a sync to it) before the run, the copy out came from it (a sync from it) after.
    let lines = log_lines(&log);
    let run = lines.iter().position(|l| l.starts_with("run ")).expect("a run");
    assert!(lines[run..].iter().any(|l| l.starts_with("sync ") && l.contains(" from ")), "{lines:#?}");

    // No board: no devices, device 0 is the host, the region runs there.
    let r = p.run(&[("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bitdir), ("XRT_STANDIN_NO_DEVICE", "1")]);
    assert_eq!(r.out(), "devices=0 copies=0,0 ok=1 on_host=1 present=1", "{}", r.stderr);
}

#[test]
fn kernels_and_data_directives_through_the_xrt_backend() {
    if !standin_tools() {
        return;
    }
    let (p, bits) = program_and_bitstreams();
    let bitdir = bits.path().to_str().unwrap();
    let log = p.dir.path().join("standin.log");
    let logs = log.to_str().unwrap();

    let r = p.run(&[("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bitdir), ("XRT_STANDIN_LOG", logs)]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // CPU-identical results; only the window that is not page-aligned ran on the host.
    assert_eq!(r.out(), "after_update=1 final=1 on_host=1", "{}", r.stderr);
    let ops: Vec<String> = r
        .report
        .iter()
        .map(|l| format!("{}@{}", l["op"].as_str().or(l["kernel"].as_str()).unwrap(), l["device"].as_str().unwrap()))
        .collect();
    assert_eq!(
        ops,
        [
            "target data@xrt",
            "scale1d@xrt",
            "scale1d@xrt",
            "addone@xrt",
            "target update@xrt",
            "scale1d@xrt",
            "scale1d@host",
            "end target data@xrt"
        ]
    );
    // Launches on present data move nothing between host and device.
    for i in [1, 2, 3, 5] {
        assert!(r.report[i]["transfers"].is_null(), "line {i}: {}", r.report[i]);
    }
    let why = r.report[6]["reason"].as_str().unwrap();
    assert!(why.contains("array 'a' starts 32 bytes into the device buffer it is mapped in"), "{why}");
    assert!(why.contains("4 KiB page boundary"), "{why}");
    // The host fallback saw the device's data and gave its results back: copies counted.
    assert_eq!(r.report[6]["bytes_to_device"], r.report[6]["bytes_from_device"]);
    assert_eq!(r.report[7]["transfers"]["b"]["from_device"], 4096 * 4);

    let lines = log_lines(&log);
    let runs: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| l.starts_with("run ")).map(|(i, _)| i).collect();
    assert_eq!(runs.len(), 4, "{lines:#?}");
    // The first launch binds a (group 1) and b (group 2) and syncs them once; the second
    // uses the resident buffer objects: no allocation, no sync in between. Each buffer
    // is the 16 KiB of data and a page for the beat slack (`present::BEAT_SLACK`).
    let first: Vec<&String> = lines[..runs[0]].iter().filter(|l| l.starts_with("alloc ")).collect();
    assert_eq!(first.len(), 2, "{lines:#?}");
    assert!(first[0].ends_with("20480 group 1") && first[1].ends_with("20480 group 2"), "{first:?}");
    assert!(lines[runs[0] + 1..runs[1]].iter().all(|l| !l.starts_with("alloc") && !l.starts_with("sync")), "{lines:#?}");
    // Loading addone.xclbin: b (written by the kernel) is read back and every buffer
    // object freed before the load; b is then bound again in addone's bank, group 3.
    let load = lines.iter().position(|l| l.starts_with("load ") && l.ends_with("addone.xclbin")).unwrap();
    let before: Vec<&String> = lines[runs[1]..load].iter().collect();
    assert!(before.iter().any(|l| l.starts_with("sync 2 from 0 20480")), "{before:?}");
    assert_eq!(before.iter().filter(|l| l.starts_with("free ")).count(), 2, "{before:?}");
    assert!(lines[load..runs[2]].iter().any(|l| l.ends_with("20480 group 3")), "{lines:#?}");
    // The page-aligned window is a sub-buffer 4096 bytes into each mapping.
    assert_eq!(lines[..runs[3]].iter().filter(|l| l.starts_with("sub ") && l.contains(" at 4096 ")).count(), 2);

    // MANDATORY: the window XRT cannot run is fatal, with the reason.
    let r = p.run(&[
        ("OMP_TARGET_OFFLOAD", "MANDATORY"),
        ("TESSERA_DEVICE", "xrt"),
        ("TESSERA_BITSTREAM_DIR", bitdir),
    ]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.lines().any(|l| l
            .starts_with("tessera: fatal: scale.c:10: OMP_TARGET_OFFLOAD=MANDATORY but the region cannot be offloaded:")
            && l.contains("starts 32 bytes into the device buffer")),
        "{}",
        r.stderr
    );

    // TESSERA_DEVICE unset: a board that opens is used for data and kernels alike.
    let r = p.run(&[("TESSERA_BITSTREAM_DIR", bitdir)]);
    assert_eq!(r.out(), "after_update=1 final=1 on_host=1", "{}", r.stderr);
    assert_eq!(r.report[0]["device"], "xrt");

    // No board: every directive and region on the host, same results.
    let r = p.run(&[("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bitdir), ("XRT_STANDIN_NO_DEVICE", "1")]);
    assert_eq!(r.out(), "after_update=1 final=1 on_host=5", "{}", r.stderr);
    assert!(r.report.iter().all(|l| l["device"] == "host"));
    assert!(
        r.report[0]["reason"].as_str().unwrap().starts_with("TESSERA_DEVICE=xrt but no XRT device (xrtDeviceOpen(0) failed"),
        "{}",
        r.report[0]
    );
}

/// A bitstream whose build record has another hash (stale: built before the kernel
/// changed), names another kernel (foreign) or is missing is never loaded: the region
/// runs on the host with a reason that names the kernel and the rebuild command, and
/// under MANDATORY the program stops with it.
#[test]
fn stale_and_foreign_bitstreams_are_not_run() {
    if !standin_tools() {
        return;
    }
    let (p, bits) = program_and_bitstreams();
    let bitdir = bits.path().to_str().unwrap();
    let log = p.dir.path().join("standin.log");
    let logs = log.to_str().unwrap();
    let addone = addone_present();
    let run = || {
        let _ = std::fs::remove_file(&log);
        p.run(&[("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bitdir), ("XRT_STANDIN_LOG", logs)])
    };
    let addone_line = |r: &common::cprog::Ran| -> serde_json::Value {
        r.report.iter().find(|l| l["kernel"] == "addone").expect("addone reported").clone()
    };

    // Stale: the record of an older addone.
    record(bits.path(), &addone, &"0".repeat(64));
    let r = run();
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    // CPU-identical results; addone (and the unaligned window) on the host.
    assert_eq!(r.out(), "after_update=1 final=1 on_host=2", "{}", r.stderr);
    let line = addone_line(&r);
    assert_eq!(line["device"], "host");
    let why = line["reason"].as_str().unwrap();
    let xclbin = bits.path().join("addone.xclbin");
    assert!(
        why.starts_with(&format!(
            "TESSERA_DEVICE=xrt but bitstream {} of kernel addone is stale or foreign: it was built from a manifest \
             with hash 000000000000, this program's kernel has hash {}",
            xclbin.display(),
            &addone.hash[..12]
        )),
        "{why}"
    );
    assert!(why.contains("rebuild it with `tessera bitstream ") && why.contains(" --platform standin -t hw`"), "{why}");
    // The stale bitstream was never loaded; scale1d's still ran on the board.
    let lines = log_lines(&log);
    assert!(!lines.iter().any(|l| l.starts_with("load ") && l.ends_with("addone.xclbin")), "{lines:#?}");
    assert_eq!(r.report.iter().filter(|l| l["kernel"] == "scale1d" && l["device"] == "xrt").count(), 3);

    // MANDATORY: fatal, with that reason.
    let r = p.run(&[("OMP_TARGET_OFFLOAD", "MANDATORY"), ("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bitdir)]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.lines().any(|l| l
            .starts_with("tessera: fatal: x.c:30: OMP_TARGET_OFFLOAD=MANDATORY but the region cannot be offloaded: ")
            && l.contains("of kernel addone is stale or foreign")),
        "{}",
        r.stderr
    );

    // Foreign: scale1d's bitstream and record copied in as addone's.
    std::fs::copy(bits.path().join("scale1d.xclbin"), &xclbin).unwrap();
    std::fs::copy(bits.path().join("scale1d.xclbin.json"), bits.path().join("addone.xclbin.json")).unwrap();
    let r = run();
    assert_eq!(r.out(), "after_update=1 final=1 on_host=2", "{}", r.stderr);
    let why = addone_line(&r)["reason"].as_str().unwrap().to_string();
    assert!(why.contains("is foreign: its build record lists kernel(s) scale1d, not kernel addone"), "{why}");

    // Missing record: nothing shows what the bitstream is.
    std::fs::remove_file(bits.path().join("addone.xclbin.json")).unwrap();
    let r = run();
    assert_eq!(r.out(), "after_update=1 final=1 on_host=2", "{}", r.stderr);
    let why = addone_line(&r)["reason"].as_str().unwrap().to_string();
    assert!(why.contains("of kernel addone may be stale or foreign: it has no build record"), "{why}");

    // TESSERA_DEVICE unset: the same reason after "no FPGA device".
    let r = p.run(&[("TESSERA_BITSTREAM_DIR", bitdir)]);
    assert_eq!(r.out(), "after_update=1 final=1 on_host=2", "{}", r.stderr);
    let why = addone_line(&r)["reason"].as_str().unwrap().to_string();
    assert!(why.starts_with("no FPGA device") && why.contains("has no build record"), "{why}");
}

/// A time loop over two kernels of one program: both are in the program's xclbin
/// (`x.xclbin`, named after the executable `x`, as `tessera bitstream x.tessera`
/// links them), which is loaded ONCE; each kernel is opened from it once and every
/// step runs both on the resident data without a reload. The kernels' own bitstreams
/// in the same directory are not used. A stale entry for one kernel sends that kernel
/// to the host (with a reason naming it and the rebuild command; fatal under
/// MANDATORY) while the other still runs from the same xclbin.
#[test]
fn one_xclbin_per_program_is_loaded_once() {
    if !standin_tools() {
        return;
    }
    const STEPS: usize = 6;
    let whole = || vec![sec(Expr::int(0), var("n"))];
    let abn = [("a", VarKind::Pointer), ("b", VarKind::Pointer), ("n", VarKind::Scalar)];
    let region = data_desc(
        "x.c:10",
        DataOp::Region,
        &abn,
        vec![(0, MapKind::To, vec![var("n")], whole()), (1, MapKind::Tofrom, vec![var("n")], whole())],
    );
    let source = format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera_rt.h"

static const char *const SCALE = {};
static const char *const ADDONE = {};
static const char *const REGION = {};

int main(void) {{
  int n = 4096, on_host = 0;
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float)), *r = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) {{ a[i] = 0.5f * i + 1.0f; b[i] = 7.0f; r[i] = 7.0f; }}
  void *h = __tessera_data_begin(REGION, 3, &a, &b, &n);
  for (int t = 0; t < {STEPS}; t++) {{
    if (!__tessera_offload(SCALE, 3, &a, &b, &n)) {{
      on_host++;
      for (int i = 1; i < n - 1; i++) b[i] = 2.0f * a[i];
      __tessera_host_end(SCALE);
    }}
    if (!__tessera_offload(ADDONE, 2, &b, &n)) {{
      on_host++;
      for (int i = 0; i < n; i++) b[i] += 1.0f;
      __tessera_host_end(ADDONE);
    }}
    for (int i = 1; i < n - 1; i++) r[i] = 2.0f * a[i];
    for (int i = 0; i < n; i++) r[i] += 1.0f;
  }}
  __tessera_data_end(h);
  printf("ok=%d on_host=%d\n", memcmp(b, r, n * sizeof(float)) == 0, on_host);
  return 0;
}}
"#,
        c_literal(&scale1d_hashed().to_json()),
        c_literal(&addone_present().to_json()),
        c_literal(&region.to_json())
    );
    let (p, bits) = program_and_bitstreams_of(&source);
    assert_eq!(p.exe.file_name().unwrap(), "x");
    // The program's xclbin: both kernels, `b` on the same bank for both (group 2).
    let xclbin = bits.path().join("x.xclbin");
    program_bitstream(
        bits.path(),
        "x.xclbin",
        &[
            (
                "scale1d",
                "buf@1,buf@2,i32",
                "const float *a = args[0]; float *b = args[1]; int n = *(const int *)args[2];\n\
                 for (int i = 1; i < n - 1; i++) b[i] = 2.0f * a[i];",
            ),
            ("addone", "buf@2,i32", "float *b = args[0]; int n = *(const int *)args[1];\nfor (int i = 0; i < n; i++) b[i] += 1.0f;"),
        ],
    );
    let (scale, addone) = (scale1d_hashed(), addone_present());
    record_of(&xclbin, &[(&scale, &scale.hash), (&addone, &addone.hash)]);
    let bitdir = bits.path().to_str().unwrap();
    let log = p.dir.path().join("standin.log");
    let logs = log.to_str().unwrap();
    let run = |extra: &[(&str, &str)]| {
        let _ = std::fs::remove_file(&log);
        let mut vars = vec![("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bitdir), ("XRT_STANDIN_LOG", logs)];
        vars.extend_from_slice(extra);
        p.run(&vars)
    };

    let r = run(&[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), "ok=1 on_host=0", "{}", r.stderr);
    let kernels = r.kernels();
    assert_eq!(kernels, ["scale1d@xrt", "addone@xrt"].repeat(STEPS));
    let lines = log_lines(&log);
    let loads: Vec<&String> = lines.iter().filter(|l| l.starts_with("load ")).collect();
    assert_eq!(loads, [&format!("load {}", xclbin.display())], "exactly one load, of the program's xclbin: {lines:#?}");
    let opens: Vec<&String> = lines.iter().filter(|l| l.starts_with("open ")).collect();
    assert_eq!(opens, ["open scale1d", "open addone"], "{lines:#?}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("run ")).count(), 2 * STEPS, "{lines:#?}");
    // The data stayed resident: after the first launch bound a and b, nothing was
    // allocated, freed or copied until the end of the data region (only addone's
    // first use opens it).
    let first_run = lines.iter().position(|l| l.starts_with("run ")).unwrap();
    let last_run = lines.iter().rposition(|l| l.starts_with("run ")).unwrap();
    assert!(
        lines[first_run..last_run].iter().all(|l| l.starts_with("run ") || l == "open addone"),
        "only runs between the first and the last launch: {lines:#?}"
    );

    // Stale: the xclbin was built from an older addone. addone runs on the host every
    // step, scale1d still on the board from the same, once-loaded xclbin.
    record_of(&xclbin, &[(&scale, &scale.hash), (&addone, &"0".repeat(64))]);
    let r = run(&[]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), format!("ok=1 on_host={STEPS}"), "{}", r.stderr);
    let on = |k: &str, d: &str| r.report.iter().filter(|l| l["kernel"] == k && l["device"] == d).count();
    assert_eq!((on("scale1d", "xrt"), on("addone", "host")), (STEPS, STEPS));
    let why = r.report.iter().find(|l| l["kernel"] == "addone").unwrap()["reason"].as_str().unwrap().to_string();
    assert!(
        why.starts_with(&format!(
            "TESSERA_DEVICE=xrt but bitstream {} of kernel addone is stale or foreign: it was built from a manifest \
             with hash 000000000000, this program's kernel has hash {}",
            xclbin.display(),
            &addone.hash[..12]
        )),
        "{why}"
    );
    // The program's xclbin is named after it (x.tessera -> x.xclbin): no --name needed.
    assert!(why.ends_with("rebuild it with `tessera bitstream x.tessera --platform standin -t hw`"), "{why}");
    let lines = log_lines(&log);
    assert_eq!(lines.iter().filter(|l| l.starts_with("load ")).count(), 1, "{lines:#?}");
    assert_eq!(lines.iter().filter(|l| l.starts_with("open ")).collect::<Vec<_>>(), ["open scale1d"], "{lines:#?}");

    // MANDATORY: the stale kernel is fatal, with that reason.
    let r = run(&[("OMP_TARGET_OFFLOAD", "MANDATORY")]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stderr.lines().any(|l| l
            .starts_with("tessera: fatal: x.c:30: OMP_TARGET_OFFLOAD=MANDATORY but the region cannot be offloaded: ")
            && l.contains("of kernel addone is stale or foreign")),
        "{}",
        r.stderr
    );
}

/// `ey[i] = 2 * ey[i] + 1` through a kernel with a write port (a dataflow kernel's
/// in-place array: `Manifest::write_ports`): kernel `inplace_ok` reads `ey` through
/// parameter 0 and writes it through parameter 2, which the backend binds to the same
/// buffer object. `inplace_bad`'s bitstream connects its write port to another memory
/// group than `ey`'s own: it is refused at load with the reason, and the region runs on
/// the host with the same results.
#[test]
fn write_ports_pass_the_array_buffer_twice() {
    if !standin_tools() {
        return;
    }
    let whole = || vec![sec(Expr::int(0), var("n"))];
    let m = |kernel: &str, line: u32| {
        let ey = farray("ey", VarKind::Pointer, MapKind::Tofrom, vec![var("n")], whole());
        let mut m = manifest(&format!("w.c:{line}"), kernel, vec![ey, int_scalar("n")], "/* bitstream only */", "/* bitstream only */");
        m.write_ports = vec![0];
        m.with_hash()
    };
    let (ok, bad) = (m("inplace_ok", 10), m("inplace_bad", 20));
    let source = format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include "tessera_rt.h"

static const char *const OK = {};
static const char *const BAD = {};

int main(void) {{
  int n = 1000, on_host = 0, good = 1;
  float *ey = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) ey[i] = 0.25f * i;
  if (!__tessera_offload(OK, 2, &ey, &n)) {{ on_host++; for (int i = 0; i < n; i++) ey[i] = 2.0f * ey[i] + 1.0f; __tessera_host_end(OK); }}
  if (!__tessera_offload(BAD, 2, &ey, &n)) {{ on_host++; for (int i = 0; i < n; i++) ey[i] = 2.0f * ey[i] + 1.0f; __tessera_host_end(BAD); }}
  for (int i = 0; i < n; i++) good &= ey[i] == 2.0f * (2.0f * (0.25f * i) + 1.0f) + 1.0f;
  printf("good=%d on_host=%d\n", good, on_host);
  return 0;
}}
"#,
        c_literal(&ok.to_json()),
        c_literal(&bad.to_json())
    );
    let root = target_dir().join("xrt-standin");
    let (lib, _prefix) = build_runtime_on_standin(&root);
    let bits = tempfile::tempdir().unwrap();
    let body = "const float *r = args[0]; float *w = args[2]; int n = *(const int *)args[1];\n\
                if (r != w) return;\n\
                for (int i = 0; i < n; i++) w[i] = 2.0f * r[i] + 1.0f;";
    program_bitstream(bits.path(), "w.xclbin", &[("inplace_ok", "buf@1,i32,buf@1", body), ("inplace_bad", "buf@1,i32,buf@2", body)]);
    record_of(&bits.path().join("w.xclbin"), &[(&ok, &ok.hash), (&bad, &bad.hash)]);
    let p = CProgram::build_against(&lib, "w", &source);
    let bitdir = bits.path().to_str().unwrap();
    let r = p.run(&[("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bitdir)]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), "good=1 on_host=1", "{}", r.stderr);
    let kernels = r.kernels();
    assert_eq!(kernels, ["inplace_ok@xrt", "inplace_bad@host"], "{:#?}", r.report);
    let why = r.report[1]["reason"].as_str().unwrap();
    assert!(why.contains("write port 'tdf_w_ey' is connected to memory group 2 and 'ey' to 1"), "{why}");
}

/// A present `float` array interleaved over two banks in segments of 16 elements
/// (`Manifest::interleave`), with a write port when `write_port`: kernel `kernel`
/// (bitstream only), arguments `x` and `n`.
fn interleaved(line: u32, kernel: &str, write_port: bool) -> Manifest {
    let x = farray("x", VarKind::Pointer, MapKind::Present, vec![Expr::int(0)], vec![]);
    let mut m = manifest(&format!("i.c:{line}"), kernel, vec![x, int_scalar("n")], "/* bitstream only */", "/* bitstream only */");
    if write_port {
        m.write_ports = vec![0];
    }
    m.interleave = Some(tessera_ir::manifest::Interleave { args: vec![0], segment_bytes: 64 });
    m.with_hash()
}

/// Element `i` of an interleaved array as the stand-in kernels reach it: segment
/// `k = i / 16` (64 bytes) in half `k % 2`, at element `(k / 2) * 16 + i % 16` of it.
const ELEM: &str = "#define ELEM(h, i) (&(h)[((i) / 16) % 2][((i) / 16 / 2) * 16 + (i) % 16])\n";

/// Interleaved arrays on XRT: inside a `target data` region, `addone` (an ordinary
/// kernel: the device copy becomes newer than the host view), then `il` (`x[i] = 3 x[i]
/// + i` through the two halves: the staging must read the device copy back first, and
/// the halves must be laid out as the manifest says, else element `i` gets another
/// element's value), then `addone` again (it must see `il`'s result: the binding is
/// re-synced from the host view), `ilw` (`x[i] = 2 x[i] + 1` through read and write
/// ports of both halves) on a window 32 bytes into the mapping, and `ilw_bad`, whose
/// bitstream connects the second half's write port to another group than the half:
/// refused at load, run on the host. The halves' buffer objects are in the groups of
/// the halves' parameters (the stand-in checks them at `xrtRunSetArg` too).
#[test]
fn interleaved_arrays_run_on_two_buffer_objects() {
    if !standin_tools() {
        return;
    }
    let n: usize = 3000;
    let whole = || vec![sec(Expr::int(0), var("n"))];
    let region = data_desc(
        "i.c:5",
        DataOp::Region,
        &[("x", VarKind::Pointer), ("n", VarKind::Scalar)],
        vec![(0, MapKind::Tofrom, vec![var("n")], whole())],
    );
    let (il, ilw, bad, addone) = (interleaved(10, "il", false), interleaved(20, "ilw", true), interleaved(30, "ilw_bad", true), addone_present());
    let source = format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tessera_rt.h"

static const char *const REGION = {};
static const char *const IL = {};
static const char *const ILW = {};
static const char *const BAD = {};
static const char *const ADDONE = {};

int main(void) {{
  int n = {n}, m = 1000, on_host = 0;
  float *x = malloc(n * sizeof(float)), *r = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) x[i] = r[i] = 0.5f * i + 1.0f;
  void *h = __tessera_data_begin(REGION, 2, &x, &n);
  if (!__tessera_offload(ADDONE, 2, &x, &n)) {{ on_host++; for (int i = 0; i < n; i++) x[i] += 1.0f; __tessera_host_end(ADDONE); }}
  for (int i = 0; i < n; i++) r[i] += 1.0f;
  if (!__tessera_offload(IL, 2, &x, &n)) {{ on_host++; for (int i = 0; i < n; i++) x[i] = 3.0f * x[i] + (float)i; __tessera_host_end(IL); }}
  for (int i = 0; i < n; i++) r[i] = 3.0f * r[i] + (float)i;
  if (!__tessera_offload(ADDONE, 2, &x, &n)) {{ on_host++; for (int i = 0; i < n; i++) x[i] += 1.0f; __tessera_host_end(ADDONE); }}
  for (int i = 0; i < n; i++) r[i] += 1.0f;
  float *w = x + 8;
  if (!__tessera_offload(ILW, 2, &w, &m)) {{ on_host++; for (int i = 0; i < m; i++) w[i] = 2.0f * w[i] + 1.0f; __tessera_host_end(ILW); }}
  for (int i = 0; i < m; i++) r[8 + i] = 2.0f * r[8 + i] + 1.0f;
  if (!__tessera_offload(BAD, 2, &x, &n)) {{ on_host++; for (int i = 0; i < n; i++) x[i] = 2.0f * x[i] + 1.0f; __tessera_host_end(BAD); }}
  for (int i = 0; i < n; i++) r[i] = 2.0f * r[i] + 1.0f;
  __tessera_data_end(h);
  int bad = -1;
  for (int i = 0; i < n && bad < 0; i++) if (x[i] != r[i]) bad = i;
  printf("ok=%d first_bad=%d on_host=%d\n", bad < 0, bad, on_host);
  return 0;
}}
"#,
        c_literal(&region.to_json()),
        c_literal(&il.to_json()),
        c_literal(&ilw.to_json()),
        c_literal(&bad.to_json()),
        c_literal(&addone.to_json())
    );
    let root = target_dir().join("xrt-standin");
    let (lib, _prefix) = build_runtime_on_standin(&root);
    let bits = tempfile::tempdir().unwrap();
    let il_body = format!(
        "{ELEM}float *h[2] = {{args[0], args[2]}}; int n = *(const int *)args[1];\n\
         for (int i = 0; i < n; i++) {{ float *p = ELEM(h, i); *p = 3.0f * *p + (float)i; }}"
    );
    // Reads through the halves' own ports, writes through their write ports, which
    // must be the same memory (else nothing is written).
    let ilw_body = format!(
        "{ELEM}const float *rd[2] = {{args[0], args[3]}}; float *wr[2] = {{args[2], args[4]}};\n\
         int n = *(const int *)args[1];\n\
         if ((void *)rd[0] != (void *)wr[0] || (void *)rd[1] != (void *)wr[1] || rd[0] == rd[1]) return;\n\
         for (int i = 0; i < n; i++) *ELEM(wr, i) = 2.0f * *ELEM(rd, i) + 1.0f;"
    );
    let xclbin = bits.path().join("i.xclbin");
    program_bitstream(
        bits.path(),
        "i.xclbin",
        &[
            // x (half 0), n, tdf_b1_x (half 1).
            ("il", "buf@1,i32,buf@2", il_body.as_str()),
            // x, n, tdf_w_x, tdf_b1_x, tdf_w_b1_x.
            ("ilw", "buf@1,i32,buf@1,buf@2,buf@2", ilw_body.as_str()),
            ("ilw_bad", "buf@1,i32,buf@1,buf@2,buf@1", ilw_body.as_str()),
            ("addone", "buf@3,i32", "float *b = args[0]; int n = *(const int *)args[1];\nfor (int i = 0; i < n; i++) b[i] += 1.0f;"),
        ],
    );
    record_of(&xclbin, &[(&il, &il.hash), (&ilw, &ilw.hash), (&bad, &bad.hash), (&addone, &addone.hash)]);
    let p = CProgram::build_against(&lib, "i", &source);
    let log = p.dir.path().join("standin.log");
    let bitdir = bits.path().to_str().unwrap();
    let r = p.run(&[("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bitdir), ("XRT_STANDIN_LOG", log.to_str().unwrap())]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), "ok=1 first_bad=-1 on_host=1", "{}", r.stderr);
    let kernels = r.kernels();
    assert_eq!(kernels, ["addone@xrt", "il@xrt", "addone@xrt", "ilw@xrt", "ilw_bad@host"], "{:#?}", r.report);
    let why = r.report.iter().find(|l| l["kernel"] == "ilw_bad").unwrap()["reason"].as_str().unwrap().to_string();
    assert!(
        why.contains("its write port 'tdf_w_b1_x' is connected to memory group 1 and 'tdf_b1_x' to 2; both pass the one buffer of the second half of 'x'"),
        "{why}"
    );

    // The log: per interleaved launch two xrtBOAlloc buffers, in group 1 (half 0) and
    // 2 (half 1), of the halves' bytes in whole pages, written and synced before the
    // run, synced back and read after it, and freed.
    let lines = log_lines(&log);
    let field = |l: &str, i: usize| l.split(' ').nth(i).unwrap().to_string();
    let halves = |start: usize, bytes: usize| {
        let il = tessera_ir::manifest::Interleave { args: vec![0], segment_bytes: 64 };
        let want = il.half_bytes(bytes).map(|h| h.next_multiple_of(4096).max(4096));
        let allocs: Vec<&String> = lines[start..].iter().filter(|l| l.starts_with("alloc_bo ")).take(2).collect();
        assert_eq!(allocs.len(), 2, "{lines:#?}");
        for (h, a) in allocs.iter().enumerate() {
            assert_eq!(**a, format!("alloc_bo {} {} group {}", field(a, 1), want[h], h + 1), "{lines:#?}");
        }
        allocs.iter().map(|a| field(a, 1)).collect::<Vec<_>>()
    };
    let runs: Vec<usize> = lines.iter().enumerate().filter(|(_, l)| l.starts_with("run ")).map(|(i, _)| i).collect();
    assert_eq!(runs.len(), 4, "{lines:#?}");
    assert_eq!(lines[runs[1]], "run il");
    // il: the whole mapping (n floats); its halves staged between the first and second run.
    let ids = halves(runs[0], n * 4);
    for id in &ids {
        let ev = |e: &str| lines.iter().position(|l| l.starts_with(&format!("{e} {id} "))).unwrap_or(usize::MAX);
        assert!(ev("write") < runs[1] && ev("sync") < runs[1], "{id}: {lines:#?}");
        let back = lines.iter().rposition(|l| l.starts_with(&format!("sync {id} from "))).expect("synced back");
        let read = lines.iter().position(|l| l.starts_with(&format!("read {id} "))).expect("read back");
        let free = lines.iter().position(|l| *l == format!("free {id}")).expect("freed");
        assert!(runs[1] < back && back < read && read < free && free < runs[2], "{id}: {lines:#?}");
    }
    // Before il, addone's device copy was read back (the host view had to be current);
    // before the second addone, its binding was synced from the host view again.
    let userptr = field(lines.iter().find(|l| l.starts_with("alloc ")).unwrap(), 1);
    assert!(lines[runs[0]..runs[1]].contains(&format!("sync {userptr} from 0 12288")), "{lines:#?}");
    assert!(lines[runs[1]..runs[2]].contains(&format!("sync {userptr} to 0 12288")), "{lines:#?}");
    // ilw: the window from its element 0 (byte 32) to the mapping's end.
    assert_eq!(lines[runs[3]], "run ilw");
    halves(runs[2], n * 4 - 32);
}

/// A kernel that does not know the size of a present array takes the elements of its
/// buffer as a scalar after its memory parameters (`Manifest::size_params`): `sized`
/// adds that count to `x[0..n)`. Inside a data region mapping 4096 floats it gets 4096
/// for `x` and 3072 for `x + 1024` (a sub-buffer one page in: the mapping from there to
/// its end).
#[test]
fn size_parameters_pass_the_buffer_elements() {
    if !standin_tools() {
        return;
    }
    let x = farray("x", VarKind::Pointer, MapKind::Present, vec![Expr::int(0)], vec![]);
    let mut sized = manifest("s.c:10", "sized", vec![x, int_scalar("n")], "/* bitstream only */", "/* bitstream only */");
    sized.size_params = vec![0];
    let sized = sized.with_hash();
    let xn = [("x", VarKind::Pointer), ("n", VarKind::Scalar)];
    let region = data_desc("s.c:5", DataOp::Region, &xn, vec![(0, MapKind::Tofrom, vec![var("n")], vec![sec(Expr::int(0), var("n"))])]);
    let source = format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include "tessera_rt.h"

static const char *const SIZED = {};
static const char *const REGION = {};

int main(void) {{
  int n = 4096, m = 1024, on_host = 0, good = 1;
  float *x = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) x[i] = (float)i;
  void *h = __tessera_data_begin(REGION, 2, &x, &n);
  if (!__tessera_offload(SIZED, 2, &x, &n)) {{ on_host++; __tessera_host_end(SIZED); }}
  float *p = x + 1024;
  if (!__tessera_offload(SIZED, 2, &p, &m)) {{ on_host++; __tessera_host_end(SIZED); }}
  __tessera_data_end(h);
  for (int i = 0; i < n; i++) good &= x[i] == (float)i + 4096.0f + (i >= 1024 && i < 2048 ? 3072.0f : 0.0f);
  printf("good=%d on_host=%d\n", good, on_host);
  return 0;
}}
"#,
        c_literal(&sized.to_json()),
        c_literal(&region.to_json())
    );
    let root = target_dir().join("xrt-standin");
    let (lib, _prefix) = build_runtime_on_standin(&root);
    let bits = tempfile::tempdir().unwrap();
    bitstream(
        bits.path(),
        "sized",
        "buf@1,i32,i64",
        "float *x = args[0]; int n = *(const int *)args[1]; long elems = *(const long *)args[2];\n\
         for (int i = 0; i < n; i++) x[i] += (float)elems;",
    );
    record(bits.path(), &sized, &sized.hash);
    let p = CProgram::build_against(&lib, "s", &source);
    let r = p.run(&[("TESSERA_DEVICE", "xrt"), ("TESSERA_BITSTREAM_DIR", bits.path().to_str().unwrap())]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), "good=1 on_host=0", "{}\n{:#?}", r.stderr, r.report);
}
