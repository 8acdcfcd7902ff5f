//! The emulated device end to end: hand-written manifests and kernels run through
//! `offload_with` with an explicit configuration (no process environment), each test
//! with its own kernel cache directory.

mod common;

use common::*;
use std::path::Path;
use tessera_rt::config::{CompilerChoice, Config, OffloadPolicy};
use tessera_rt::device::DeviceKind;
use tessera_rt::offload_with;
use tessera_rt::report::Record;

fn emu(cache: &Path) -> Config {
    Config::emu(cache)
}

/// Runs `scale1d` on fresh arrays of length `n`; returns (record, a, b).
fn run_scale1d(config: &Config, n: i32) -> (Record, Vec<f32>, Vec<f32>) {
    let m = scale1d();
    let mut a: Vec<f32> = (0..n).map(|i| i as f32 + 0.5).collect();
    let mut b: Vec<f32> = vec![7.0; n as usize];
    let (mut pa, mut pb, mut nv) = (a.as_mut_ptr(), b.as_mut_ptr(), n);
    let r = unsafe { offload_with(config, &m, &[addr(&mut pa), addr(&mut pb), addr(&mut nv)]) };
    (r, a, b)
}

#[test]
fn section_1d_results_and_bytes() {
    let cache = tempfile::tempdir().unwrap();
    let (r, a, b) = run_scale1d(&emu(cache.path()), 100);
    assert_eq!(r.device, DeviceKind::Emu, "{:?}", r.reason);
    assert!(r.offloaded() && r.reason.is_none());
    assert_eq!(b[0], 7.0);
    assert_eq!(b[99], 7.0);
    for i in 1..99 {
        assert_eq!(b[i], 2.0 * a[i], "b[{i}]");
    }
    // a[1:98] to the device, b[1:98] pre-filled (from), b[1:98] back.
    assert_eq!(r.bytes_to_device, 2 * 98 * 4);
    assert_eq!(r.bytes_from_device, 98 * 4);
    assert!(r.kernel_wall_s.is_some_and(|t| t >= 0.0));
    assert_eq!(r.kernel.as_deref(), Some("scale1d"));
    // The launch's integer scalars: its size.
    assert_eq!(r.scalars.iter().map(|(k, v)| (k.as_str(), *v)).collect::<Vec<_>>(), [("n", 100)]);
    // Exact port traffic: 98 single-beat reads of a, 98 single-beat writes of b.
    assert_eq!((r.ddr_read_bytes, r.ddr_write_bytes, r.bursts), (Some(98 * 4), Some(98 * 4), Some(196)));
    let arrays = &r.arrays.as_ref().unwrap().0;
    assert_eq!(arrays.iter().map(|(n, _)| n.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    let a = arrays[0].1.as_ref().unwrap();
    assert_eq!((a.read_bytes, a.write_bytes, a.read_bursts, a.write_bursts, a.beats), (392, 0, 98, 0, 98));
    assert_eq!(a.read_burst_lengths.get(&1), Some(&98));
    let b = arrays[1].1.as_ref().unwrap();
    assert_eq!((b.read_bytes, b.write_bytes, b.read_bursts, b.write_bursts, b.beats), (0, 392, 0, 98, 98));

    // The cache holds the sources and the library under one hash directory.
    let dirs = kernel_dirs(cache.path());
    assert_eq!(dirs.len(), 1, "{dirs:?}");
    for f in ["kernel.cpp", "entry.cpp", "kernel.so"] {
        assert!(dirs[0].join(f).is_file(), "{f}");
    }
    // Second run: cached (no new directory), same results.
    let (r2, a2, b2) = run_scale1d(&emu(cache.path()), 5);
    assert!(r2.offloaded());
    assert_eq!(b2, vec![7.0, 2.0 * a2[1], 2.0 * a2[2], 2.0 * a2[3], 7.0]);
    assert_eq!(kernel_dirs(cache.path()).len(), 1);

    // The shim headers were precompiled once, beside the kernels.
    let pch: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("pch-"))
        .collect();
    assert_eq!(pch.len(), 1, "{pch:?}");
    let header = std::fs::read_to_string(pch[0].join("tessera_emu.h")).unwrap();
    assert!(header.contains("#include \"tessera_hls.h\""), "{header}");
    let compiled: Vec<_> = ["tessera_emu.h.gch", "tessera_emu.h.pch"].iter().map(|f| pch[0].join(f)).filter(|p| p.is_file()).collect();
    assert_eq!(compiled.len(), 1, "one precompiled form in {}", pch[0].display());
    // A precompiled header the compiler refuses (here: garbage) costs only time: the
    // kernel compiles without it, with the same results.
    std::fs::write(&compiled[0], b"not a precompiled header").unwrap();
    std::fs::remove_dir_all(&dirs[0]).unwrap();
    let (r3, a3, b3) = run_scale1d(&emu(cache.path()), 5);
    assert!(r3.offloaded(), "{:?}", r3.reason);
    assert_eq!(b3, vec![7.0, 2.0 * a3[1], 2.0 * a3[2], 2.0 * a3[3], 7.0]);
}

#[test]
fn box_2d_results_and_bytes() {
    let cache = tempfile::tempdir().unwrap();
    let m = axpy2d();
    const N: usize = 6;
    const M: usize = 9;
    let mut a: Vec<f32> = (0..N * M).map(|i| i as f32).collect();
    let mut b: [[f32; M]; N] = [[0.0; M]; N];
    for (i, row) in b.iter_mut().enumerate() {
        for (j, x) in row.iter_mut().enumerate() {
            *x = 1000.0 + (i * M + j) as f32;
        }
    }
    let orig = b;
    let (mut pa, mut n, mut mm) = (a.as_mut_ptr(), N as i32, M as i32);
    // `b` is an array object: its address is element 0.
    let r = unsafe { offload_with(&emu(cache.path()), &m, &[addr(&mut pa), addr(&mut b), addr(&mut n), addr(&mut mm)]) };
    assert!(r.offloaded(), "{:?}", r.reason);
    for i in 0..N {
        for j in 0..M {
            let inside = (1..N - 1).contains(&i) && (1..M - 1).contains(&j);
            let want = if inside { 2.0 * a[i * M + j] + orig[i][j] } else { orig[i][j] };
            assert_eq!(b[i][j], want, "b[{i}][{j}]");
        }
    }
    let boxed = ((N - 2) * (M - 2) * 4) as u64;
    assert_eq!(r.bytes_to_device, (N * M * 4) as u64 + boxed);
    assert_eq!(r.bytes_from_device, boxed);
    // The kernel sweeps the whole index space: a read once, b read and written once.
    let nm = (N * M) as u64;
    assert_eq!((r.ddr_read_bytes, r.ddr_write_bytes, r.bursts), (Some(2 * nm * 4), Some(nm * 4), Some(3 * nm)));
}

#[test]
fn from_is_prefilled_with_host_values() {
    let cache = tempfile::tempdir().unwrap();
    let mut b: Vec<f32> = (0..11).map(|i| i as f32).collect();
    let (mut pb, mut n) = (b.as_mut_ptr(), 11);
    let r = unsafe { offload_with(&emu(cache.path()), &evens(), &[addr(&mut pb), addr(&mut n)]) };
    assert!(r.offloaded(), "{:?}", r.reason);
    for (i, &x) in b.iter().enumerate() {
        assert_eq!(x, if i % 2 == 0 { -1.0 } else { i as f32 }, "b[{i}]");
    }
    assert_eq!(r.bytes_to_device, 44);
    assert_eq!(r.bytes_from_device, 44);
    // Raw pointers and the one-argument entry: runs, but nothing is counted.
    assert_eq!((r.ddr_read_bytes, r.ddr_write_bytes, r.bursts), (None, None, None));
    assert_eq!(r.arrays.as_ref().unwrap().0, vec![("b".to_string(), None)]);
    assert!(r.to_json().ends_with(
        r#""ddr_read_bytes":null,"ddr_write_bytes":null,"bursts":null,"arrays":{"b":null},"transfers":{"b":{"to_device":44,"from_device":44}},"scalars":{"n":11}}"#
    ));
}

#[test]
fn overlapping_arrays_fall_back() {
    let cache = tempfile::tempdir().unwrap();
    let mut x: Vec<f32> = (0..20).map(|i| i as f32).collect();
    let before = x.clone();
    // a = x, b = x + 1: a[1:8] and b[1:8] overlap.
    let (mut pa, mut pb, mut n) = (x.as_mut_ptr(), unsafe { x.as_mut_ptr().add(1) }, 10);
    let r = unsafe { offload_with(&emu(cache.path()), &scale1d(), &[addr(&mut pa), addr(&mut pb), addr(&mut n)]) };
    assert!(!r.offloaded());
    assert_eq!(r.device, DeviceKind::Host);
    assert_eq!(r.reason.as_deref(), Some("arrays 'a' and 'b' overlap in host memory"));
    assert_eq!(x, before);
    assert_eq!((r.bytes_to_device, r.bytes_from_device, r.kernel_wall_s), (0, 0, None));
}

#[test]
fn compiler_failure_falls_back() {
    let cache = tempfile::tempdir().unwrap();
    let config = Config { cxx: CompilerChoice::Explicit("/bin/false".into()), ..emu(cache.path()) };
    let (r, _, b) = run_scale1d(&config, 10);
    assert!(!r.offloaded());
    let reason = r.reason.unwrap();
    assert!(reason.contains("kernel scale1d does not compile for the emulated device (/bin/false"), "{reason}");
    assert!(reason.contains("compile.log"), "{reason}");
    assert!(b.iter().all(|&x| x == 7.0), "host data untouched");

    // A real compile error quotes the compiler.
    let mut m = scale1d();
    m.kernel_source.push_str("\nthis is not C++;\n");
    let mut a = vec![0f32; 4];
    let mut b = vec![0f32; 4];
    let (mut pa, mut pb, mut n) = (a.as_mut_ptr(), b.as_mut_ptr(), 4);
    let r = unsafe { offload_with(&emu(cache.path()), &m, &[addr(&mut pa), addr(&mut pb), addr(&mut n)]) };
    let reason = r.reason.unwrap();
    assert!(reason.contains("error"), "{reason}");
    let log = reason.rsplit("(full log: ").next().unwrap().trim_end_matches(')');
    assert!(std::fs::read_to_string(log).unwrap().contains("this is not C++"));
}

#[test]
fn missing_compiler_falls_back() {
    let cache = tempfile::tempdir().unwrap();
    let config = Config { cxx: CompilerChoice::Explicit("no-such-compiler-xyz".into()), ..emu(cache.path()) };
    let (r, _, _) = run_scale1d(&config, 10);
    assert!(!r.offloaded());
    assert!(r.reason.unwrap().contains("TESSERA_CXX=no-such-compiler-xyz"));
}

#[test]
fn rejected_and_disabled_run_on_host() {
    let cache = tempfile::tempdir().unwrap();
    let mut m = scale1d();
    m.rejected = Some("scale.c:11:5: remark: loop bound is not affine".into());
    let mut a = vec![1f32; 4];
    let mut b = vec![0f32; 4];
    let (mut pa, mut pb, mut n) = (a.as_mut_ptr(), b.as_mut_ptr(), 4);
    let args = [addr(&mut pa), addr(&mut pb), addr(&mut n)];
    let r = unsafe { offload_with(&emu(cache.path()), &m, &args) };
    assert!(!r.offloaded());
    assert_eq!(r.reason.as_deref(), m.rejected.as_deref());

    let disabled = Config { offload: OffloadPolicy::Disabled, ..emu(cache.path()) };
    let r = unsafe { offload_with(&disabled, &scale1d(), &args) };
    assert!(!r.offloaded());
    assert_eq!(r.reason.as_deref(), Some("OMP_TARGET_OFFLOAD=DISABLED"));
    assert_eq!(b, vec![0.0; 4]);
    // Nothing was compiled.
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);

    // Wrong argument count.
    let r = unsafe { offload_with(&emu(cache.path()), &scale1d(), &args[..2]) };
    assert_eq!(r.reason.as_deref(), Some("the call passes 2 arguments but the manifest lists 3"));
}

#[test]
fn mandatory_turns_host_runs_into_fatal_errors() {
    let cache = tempfile::tempdir().unwrap();
    let mandatory = Config { offload: OffloadPolicy::Mandatory, ..emu(cache.path()) };
    let (r, _, _) = run_scale1d(&mandatory, 8);
    assert!(r.offloaded());
    assert_eq!(tessera_rt::mandatory_violation(&mandatory, &r), None);
    let host = Record::host("x.c:1".into(), None, "TESSERA_DEVICE=host".into());
    assert_eq!(
        tessera_rt::mandatory_violation(&mandatory, &host).as_deref(),
        Some("tessera: fatal: x.c:1: OMP_TARGET_OFFLOAD=MANDATORY but the region cannot be offloaded: TESSERA_DEVICE=host")
    );
    assert_eq!(tessera_rt::mandatory_violation(&emu(cache.path()), &host), None);
}

#[test]
fn report_lines() {
    let cache = tempfile::tempdir().unwrap();
    let report = cache.path().join("report.jsonl");
    let config = Config { report: Some(report.clone()), ..emu(&cache.path().join("k")) };
    let (r, _, _) = run_scale1d(&config, 12);
    assert!(r.offloaded());
    let host = Config { offload: OffloadPolicy::Disabled, ..config.clone() };
    run_scale1d(&host, 12);

    let text = std::fs::read_to_string(&report).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2);
    let keys = [
        "region",
        "kernel",
        "mode",
        "device",
        "reason",
        "bytes_to_device",
        "bytes_from_device",
        "kernel_wall_s",
        "ddr_read_bytes",
        "ddr_write_bytes",
        "bursts",
        "arrays",
        "transfers",
        "scalars",
    ];
    let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    let obj = v.as_object().unwrap();
    assert_eq!(obj.keys().collect::<Vec<_>>().len(), keys.len());
    assert_eq!(v["region"], "scale.c:10");
    assert_eq!(v["kernel"], "scale1d");
    assert_eq!(v["mode"], "baseline");
    assert_eq!(v["device"], "emu");
    assert!(v["reason"].is_null());
    assert_eq!(v["bytes_to_device"], 2 * 10 * 4);
    assert_eq!(v["bytes_from_device"], 10 * 4);
    assert!(v["kernel_wall_s"].as_f64().is_some());
    assert_eq!(v["ddr_read_bytes"], 10 * 4);
    assert_eq!(v["ddr_write_bytes"], 10 * 4);
    assert_eq!(v["bursts"], 20);
    assert_eq!(v["scalars"], serde_json::json!({"n": 12}));
    assert_eq!(v["arrays"]["a"]["read_bursts"], 10);
    assert_eq!(v["arrays"]["b"]["write_burst_lengths"]["1"], 10);
    // Host ↔ device copies per array: a to the device, b pre-filled and back.
    assert_eq!(v["transfers"]["a"]["to_device"], 10 * 4);
    assert_eq!(v["transfers"]["a"]["from_device"], 0);
    assert_eq!(v["transfers"]["b"]["to_device"], 10 * 4);
    assert_eq!(v["transfers"]["b"]["from_device"], 10 * 4);
    // Keys in the documented order.
    let mut pos = 0;
    for k in keys {
        let p = lines[0].find(&format!("\"{k}\":")).unwrap_or_else(|| panic!("{k} missing"));
        assert!(p >= pos, "{k} out of order in {}", lines[0]);
        pos = p;
    }
    assert_eq!(
        lines[1],
        r#"{"region":"scale.c:10","kernel":"scale1d","mode":"host","device":"host","reason":"OMP_TARGET_OFFLOAD=DISABLED","bytes_to_device":0,"bytes_from_device":0,"kernel_wall_s":null,"ddr_read_bytes":null,"ddr_write_bytes":null,"bursts":null,"arrays":null}"#
    );
}

#[test]
fn concurrent_launches_from_four_threads() {
    let cache = tempfile::tempdir().unwrap();
    let report = cache.path().join("report.jsonl");
    let config = Config { report: Some(report.clone()), ..emu(&cache.path().join("k")) };
    std::thread::scope(|s| {
        for t in 0..4 {
            let config = &config;
            s.spawn(move || {
                for it in 0..5 {
                    let n = 50 + 10 * t + it;
                    let (r, a, b) = run_scale1d(config, n);
                    assert!(r.offloaded(), "{:?}", r.reason);
                    assert_eq!(r.bytes_from_device, (n as u64 - 2) * 4);
                    for i in 1..n as usize - 1 {
                        assert_eq!(b[i], 2.0 * a[i]);
                    }
                    assert_eq!((b[0], b[n as usize - 1]), (7.0, 7.0));
                }
            });
        }
    });
    // One kernel compiled once, 20 whole report lines.
    let kdirs = kernel_dirs(&cache.path().join("k"));
    assert_eq!(kdirs.len(), 1);
    let text = std::fs::read_to_string(&report).unwrap();
    assert_eq!(text.lines().count(), 20);
    for l in text.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(v["device"], "emu");
    }
}
