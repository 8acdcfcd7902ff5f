//! The C ABI end to end: a C program includes `tessera_rt.h`, links
//! `libtessera_rt.so` (which must export `__tessera_offload`), and calls the variadic
//! entry point like a rewritten region. Each run is a subprocess with a cleared,
//! explicit environment, so the runtime's one-per-process environment snapshot is
//! exercised as in real programs.

mod common;

use common::cprog::{c_literal, CProgram};
use common::*;
use std::process::Command;
use tessera_ir::manifest::Manifest;
use tessera_ir::{Expr, MapKind, VarKind};

/// The region of `common::scale1d` as the plugin would rewrite it.
fn scale_program(m: &Manifest) -> String {
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include "tessera_rt.h"

static const char *const MANIFEST = {};

int main(void) {{
  int n = 100;
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) {{ a[i] = i + 0.5f; b[i] = 7.0f; }}
  int on_host = 0;
  for (int rep = 0; rep < 2; rep++)
    if (!__tessera_offload(MANIFEST, 3, &a, &b, &n)) {{
      on_host = 1;
      for (int i = 1; i < n - 1; i++) b[i] = 2.0f * a[i];
    }}
  double sum = 0;
  for (int i = 0; i < n; i++) sum += b[i];
  printf("on_host=%d sum=%.2f ends=%.1f,%.1f\n", on_host, sum, b[0], b[n - 1]);
  return 0;
}}
"#,
        c_literal(&m.to_json())
    )
}

#[test]
fn c_program_offloads_through_the_variadic_entry() {
    let p = CProgram::build("scale", &scale_program(&scale1d()));
    // sum of b: 7 + 7 + Σ_{i=1}^{98} 2(i + 0.5) = 14 + 2·4851 + 98 = 9814.
    let want = "sum=9814.00 ends=7.0,7.0";

    // Emulated device: no host code runs; two report lines; verbose lines.
    let r = p.run(&[("TESSERA_DEVICE", "emu"), ("TESSERA_VERBOSE", "1")]);
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert_eq!(r.out(), format!("on_host=0 {want}"), "{}", r.stderr);
    assert_eq!(r.stderr.matches("tessera: scale.c:10: kernel scale1d ran on emu\n").count(), 2, "{}", r.stderr);
    assert_eq!(r.report.len(), 2);
    assert!(r.report.iter().all(|v| v["device"] == "emu" && v["bytes_from_device"] == 98 * 4));

    // No device requested: host fallback with the documented reason, same result.
    let r = p.run(&[]);
    assert_eq!(r.out(), format!("on_host=1 {want}"));
    assert!(r.stderr.is_empty(), "{}", r.stderr);
    assert_eq!(r.report[0]["device"], "host");
    assert!(r.report[0]["reason"].as_str().unwrap().starts_with(tessera_rt::device::NO_DEVICE));

    // TESSERA_DEVICE=xrt in a build without the feature.
    if !cfg!(feature = "xrt") {
        let r = p.run(&[("TESSERA_DEVICE", "xrt")]);
        assert_eq!(r.out(), format!("on_host=1 {want}"));
        assert_eq!(r.report[0]["reason"], tessera_rt::device::XRT_NOT_BUILT);
    }

    // MANDATORY with the host requested: fatal, after the report line.
    let r = p.run(&[("OMP_TARGET_OFFLOAD", "mandatory"), ("TESSERA_DEVICE", "host")]);
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.is_empty());
    assert_eq!(
        r.stderr,
        "tessera: fatal: scale.c:10: OMP_TARGET_OFFLOAD=MANDATORY but the region cannot be offloaded: TESSERA_DEVICE=host\n"
    );
    assert_eq!(r.report.len(), 1);

    // MANDATORY with the emulated device: fine.
    let r = p.run(&[("OMP_TARGET_OFFLOAD", "MANDATORY"), ("TESSERA_DEVICE", "emu")]);
    assert_eq!(r.out(), format!("on_host=0 {want}"));

    // DISABLED wins over TESSERA_DEVICE.
    let r = p.run(&[("OMP_TARGET_OFFLOAD", "disabled"), ("TESSERA_DEVICE", "emu"), ("TESSERA_VERBOSE", "1")]);
    assert_eq!(r.out(), format!("on_host=1 {want}"));
    assert!(r.stderr.contains("tessera: scale.c:10: running on the host: OMP_TARGET_OFFLOAD=DISABLED"));
}

#[test]
fn manifest_errors_fall_back_to_the_host() {
    let program = r#"#include <stdio.h>
#include "tessera_rt.h"
int main(void) {
  int x = 1;
  int r1 = __tessera_offload("{\"region\": \"bad.c:3\", \"version\": 1}", 1, &x);
  int r2 = __tessera_offload("not json", 1, &x);
  printf("%d %d\n", r1, r2);
  return 0;
}
"#;
    let r = CProgram::build("bad", program).run(&[("TESSERA_DEVICE", "emu")]);
    assert_eq!(r.out(), "0 0");
    assert_eq!(r.report[0]["region"], "bad.c:3");
    assert!(r.report[0]["reason"].as_str().unwrap().starts_with("manifest does not parse"));
    assert_eq!(r.report[1]["region"], "<unknown region>");
}

#[test]
fn more_arguments_than_the_stack_vector_holds() {
    // One output pointer and 69 int scalars: out[0] = Σ (i + 1) · s_i.
    const K: usize = 69;
    let params: Vec<String> = (0..K).map(|i| format!("int s{i}")).collect();
    let body: Vec<String> = (0..K).map(|i| format!("{} * s{i}", i + 1)).collect();
    let kernel = format!(
        "extern \"C\" void many(long *out, {}) {{ out[0] = {}; }}\n",
        params.join(", "),
        body.join(" + ")
    );
    let unpack: Vec<String> = (0..K).map(|i| format!("*(const int *)args[{}]", i + 1)).collect();
    let entry = format!(
        "#include \"kernel.cpp\"\nextern \"C\" void tessera_emu_entry(void **args) {{ many((long *)args[0], {}); }}\n",
        unpack.join(", ")
    );
    let mut args = vec![tessera_ir::manifest::Arg {
        name: "out".into(),
        kind: VarKind::Array,
        elem: tessera_ir::ScalarType::I64,
        array: Some(tessera_ir::manifest::ArrayArg { map: MapKind::From, dims: vec![Expr::int(1)], section: vec![], footprint: vec![], bank: 0, reduction: None, untouched: false }),
    }];
    args.extend((0..K).map(|i| int_scalar(&format!("s{i}"))));
    let m = manifest("many.c:1", "many", args, &kernel, &entry);

    let decls: Vec<String> = (0..K).map(|i| format!("int s{i} = {};", 1000 + i)).collect();
    let addrs: Vec<String> = (0..K).map(|i| format!("&s{i}")).collect();
    let program = format!(
        r#"#include <stdio.h>
#include "tessera_rt.h"
int main(void) {{
  long out[1] = {{0}};
  {}
  int r = __tessera_offload({}, {}, out, {});
  printf("%d %ld\n", r, out[0]);
  return 0;
}}
"#,
        decls.join(" "),
        c_literal(&m.to_json()),
        K + 1,
        addrs.join(", ")
    );
    let r = CProgram::build("many", &program).run(&[("TESSERA_DEVICE", "emu")]);
    let want: i64 = (0..K as i64).map(|i| (i + 1) * (1000 + i)).sum();
    assert_eq!(r.out(), format!("1 {want}"), "{}", r.stderr);
}

#[test]
fn concurrent_processes_share_one_cache_entry() {
    let p = CProgram::build("scale", &scale_program(&scale1d()));
    let report = p.dir.path().join("r.jsonl");
    let children: Vec<_> = (0..4)
        .map(|_| {
            Command::new(&p.exe)
                .env_clear()
                .env("PATH", std::env::var_os("PATH").unwrap_or_default())
                .env("TESSERA_DEVICE", "emu")
                .env("TESSERA_CACHE_DIR", &p.cache)
                .env("TESSERA_REPORT", &report)
                .stdout(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let out = c.wait_with_output().unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "on_host=0 sum=9814.00 ends=7.0,7.0");
    }
    assert_eq!(std::fs::read_to_string(&report).unwrap().lines().count(), 8);
    let entries = kernel_dirs(&p.cache);
    assert_eq!(entries.len(), 1, "{entries:?}");
    // No temporary files left behind.
    let dir = &entries[0];
    let mut names: Vec<String> =
        std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    names.sort();
    assert_eq!(names, ["entry.cpp", "kernel.cpp", "kernel.so"]);
}

/// A program that uses every data entry point like rewritten code does: a `target
/// data` around two launches of `scale1d` on present data (pointers without map
/// clauses), then `target enter data`, `target update`, `target exit data`.
fn data_program() -> String {
    use tessera_ir::data::DataOp;
    let whole = || vec![sec(Expr::int(0), var("n"))];
    let abn = [("a", VarKind::Pointer), ("b", VarKind::Pointer), ("n", VarKind::Scalar)];
    let region = data_desc(
        "d.c:5",
        DataOp::Region,
        &abn,
        vec![(0, MapKind::To, vec![var("n")], whole()), (1, MapKind::Tofrom, vec![var("n")], whole())],
    );
    let enter = data_desc("d.c:20", DataOp::Enter, &abn, vec![(1, MapKind::To, vec![var("n")], whole())]);
    let update = data_desc("d.c:21", DataOp::Update, &abn, vec![(1, MapKind::From, vec![var("n")], whole())]);
    let exit = data_desc("d.c:22", DataOp::Exit, &abn, vec![(1, MapKind::Delete, vec![var("n")], whole())]);
    format!(
        r#"#include <stdio.h>
#include <stdlib.h>
#include "tessera_rt.h"

static const char *const MANIFEST = {};
static const char *const REGION = {};
static const char *const ENTER = {};
static const char *const UPDATE = {};
static const char *const EXIT = {};

int main(void) {{
  int n = 100;
  float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
  for (int i = 0; i < n; i++) {{ a[i] = i + 0.5f; b[i] = 7.0f; }}
  int on_host = 0, data = 0;
  void *h = __tessera_data_begin(REGION, 3, &a, &b, &n);
  for (int rep = 0; rep < 2; rep++)
    if (!__tessera_offload(MANIFEST, 3, &a, &b, &n)) {{
      on_host = 1;
      for (int i = 1; i < n - 1; i++) b[i] = 2.0f * a[i];
      __tessera_host_end(MANIFEST);
    }}
  __tessera_data_end(h);
  data += __tessera_data(ENTER, 3, &a, &b, &n);
  data += __tessera_data(UPDATE, 3, &a, &b, &n);
  data += __tessera_data(EXIT, 3, &a, &b, &n);
  double sum = 0;
  for (int i = 0; i < n; i++) sum += b[i];
  printf("on_host=%d data=%d sum=%.2f\n", on_host, data, sum);
  return 0;
}}
"#,
        c_literal(&scale1d_present().to_json()),
        c_literal(&region.to_json()),
        c_literal(&enter.to_json()),
        c_literal(&update.to_json()),
        c_literal(&exit.to_json())
    )
}

#[test]
fn data_entries_under_every_offload_policy() {
    let p = CProgram::build("d", &data_program());
    let want = "sum=9814.00";

    // DEFAULT: the data region maps, both launches find a and b present.
    let r = p.run(&[("TESSERA_DEVICE", "emu")]);
    assert_eq!(r.out(), format!("on_host=0 data=3 {want}"), "{}", r.stderr);
    let lines = &r.report;
    let ops: Vec<&str> = lines.iter().map(|l| l["op"].as_str().unwrap_or("launch")).collect();
    assert_eq!(
        ops,
        ["target data", "launch", "launch", "end target data", "target enter data", "target update", "target exit data"]
    );
    assert!(lines.iter().all(|l| l["device"] == "emu"));
    // a and b go to the device once; b comes back once at the end of the region.
    assert_eq!(lines[0]["transfers"]["a"]["to_device"], 400);
    assert_eq!(lines[0]["transfers"]["b"]["to_device"], 400);
    assert!(lines[1]["transfers"].is_null() && lines[2]["transfers"].is_null());
    assert_eq!(lines[3]["transfers"]["b"]["from_device"], 400);
    assert_eq!(lines[3]["mode"], "data");

    // DISABLED: nothing maps, the launches fall back, the original code computes the same.
    let r = p.run(&[("OMP_TARGET_OFFLOAD", "DISABLED"), ("TESSERA_DEVICE", "emu")]);
    assert_eq!(r.out(), format!("on_host=1 data=0 {want}"));

    // MANDATORY with the emulated device: fine.
    let r = p.run(&[("OMP_TARGET_OFFLOAD", "MANDATORY"), ("TESSERA_DEVICE", "emu")]);
    assert_eq!(r.out(), format!("on_host=0 data=3 {want}"));

    // MANDATORY on the host: the data region is already fatal.
    let r = p.run(&[("OMP_TARGET_OFFLOAD", "mandatory"), ("TESSERA_DEVICE", "host")]);
    assert_eq!(r.code, Some(1));
    assert!(r.stdout.is_empty());
    assert_eq!(
        r.stderr,
        "tessera: fatal: d.c:5: OMP_TARGET_OFFLOAD=MANDATORY but 'target data' cannot be executed on a device: TESSERA_DEVICE=host\n"
    );
    assert_eq!(r.report.len(), 1);
}

#[test]
fn bad_descriptors_are_reported() {
    let program = r#"#include <stdio.h>
#include "tessera_rt.h"
int main(void) {
  int x = 1;
  int r = __tessera_data("{\"region\": \"bad.c:3\", \"version\": 1}", 1, &x);
  void *h = __tessera_data_begin("not json", 1, &x);
  __tessera_data_end(h);
  __tessera_data_end(0);
  __tessera_host_end("never offloaded");
  printf("%d %d %d\n", r, h != 0, __tessera_host_pending("never offloaded"));
  return 0;
}
"#;
    let r = CProgram::build("bad", program).run(&[("TESSERA_DEVICE", "emu")]);
    assert_eq!(r.out(), "0 1 0", "{}", r.stderr);
    let lines = &r.report;
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["region"], "bad.c:3");
    assert!(lines[0]["reason"].as_str().unwrap().starts_with("data directive descriptor does not parse"));
    assert_eq!(lines[1]["region"], "<unknown data directive>");
    assert_eq!(lines[1]["op"], "target data");
}
