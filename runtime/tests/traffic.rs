//! Exact DDR traffic through the emulated memory ports, end to end: hand-written copy
//! kernels with manual bursts (`hls::burst_maxi`, 32-bit and 512-bit beats) report
//! exactly the hand-computed bytes, bursts and burst lengths; the vendor headers are
//! found or the region falls back with a reason that says how to get them; the
//! transaction trace.

mod common;

use common::*;
use std::collections::BTreeMap;
use tessera_ir::{MapKind, VarKind};
use tessera_rt::config::Config;
use tessera_rt::offload_with;

/// `b[i] = a[i]` for `0 <= i < n`, in bursts of up to 64 floats (256 B: aligned, so
/// never across a 4 KiB boundary).
fn burst_copy() -> tessera_ir::manifest::Manifest {
    let kernel = r#"
#include "tessera_hls.h"
extern "C" void copy_bursts(hls::burst_maxi<float> a, hls::burst_maxi<float> b, int n) {
#pragma HLS INTERFACE mode=m_axi port=a offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=b offset=slave bundle=gmem1
  for (int off = 0; off < n; off += 64) {
    const int len = n - off < 64 ? n - off : 64;
    a.read_request(off, len);
    b.write_request(off, len);
    for (int i = 0; i < len; i++) {
#pragma HLS PIPELINE II=1
      b.write(a.read());
    }
    b.write_response();
  }
}
"#;
    let entry = r#"#include "kernel.cpp"
extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports) {
  copy_bursts(hls::burst_maxi<float>(ports[0]), hls::burst_maxi<float>(ports[1]), *(const int *)args[2]);
}
"#;
    manifest(
        "copy.c:4",
        "copy_bursts",
        vec![
            farray("a", VarKind::Pointer, MapKind::To, vec![var("n")], vec![]),
            farray("b", VarKind::Pointer, MapKind::From, vec![var("n")], vec![]),
            int_scalar("n"),
        ],
        kernel,
        entry,
    )
}

#[test]
fn burst_copy_reports_exact_bytes_and_bursts() {
    let cache = tempfile::tempdir().unwrap();
    let n = 1000;
    let mut a: Vec<f32> = (0..n).map(|i| i as f32 * 0.5 - 7.0).collect();
    let mut b = vec![0f32; n as usize];
    let (mut pa, mut pb, mut nv) = (a.as_mut_ptr(), b.as_mut_ptr(), n);
    let r = unsafe { offload_with(&Config::emu(cache.path()), &burst_copy(), &[addr(&mut pa), addr(&mut pb), addr(&mut nv)]) };
    assert!(r.offloaded(), "{:?}", r.reason);
    assert_eq!(a, b);
    // 1000 floats = 15 bursts of 64 + one of 40, each way.
    assert_eq!((r.ddr_read_bytes, r.ddr_write_bytes, r.bursts), (Some(4000), Some(4000), Some(32)));
    let arrays = &r.arrays.as_ref().unwrap().0;
    let (ta, tb) = (arrays[0].1.as_ref().unwrap(), arrays[1].1.as_ref().unwrap());
    let lengths = BTreeMap::from([(40, 1), (64, 15)]);
    assert_eq!((ta.read_bursts, ta.write_bursts, ta.beats, &ta.read_burst_lengths), (16, 0, 1000, &lengths));
    assert_eq!((tb.read_bursts, tb.write_bursts, tb.beats, &tb.write_burst_lengths), (0, 16, 1000, &lengths));
    assert_eq!(tb.write_enabled_bytes, 4000);
}

/// `b[i] = 2 * a[i]` for `0 <= i < n` with 512-bit beats (16 floats), bursts of up to
/// 64 beats (exactly one 4 KiB page), the tail beat masked with byte-enable strobes.
/// `b` has `m >= n` elements; `b[n..m)` must keep the host's values.
fn wide_scale() -> tessera_ir::manifest::Manifest {
    let kernel = r#"
#include "tessera_wide.h"
typedef ap_uint<512> beat_t;
extern "C" void wscale(hls::burst_maxi<beat_t> a, hls::burst_maxi<beat_t> b, int n) {
#pragma HLS INTERFACE mode=m_axi port=a offset=slave bundle=gmem0
#pragma HLS INTERFACE mode=m_axi port=b offset=slave bundle=gmem1
  const int beats = (n + 15) / 16;
  for (int k = 0; k < beats; k += 64) {
    const int len = beats - k < 64 ? beats - k : 64;
    a.read_request(k, len);
    b.write_request(k, len);
    for (int i = 0; i < len; i++) {
#pragma HLS PIPELINE II=1
      float lanes[16];
      tessera::unpack(a.read(), lanes);
      for (int l = 0; l < 16; l++) lanes[l] = 2.0f * lanes[l];
      const int valid = n - 16 * (k + i);
      ap_int<64> strobe = -1;
      if (valid < 16) strobe = (ap_int<64>(1) << (4 * valid)) - 1;
      b.write(tessera::pack(lanes), strobe);
    }
    b.write_response();
  }
}
"#;
    let entry = r#"#include "kernel.cpp"
extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports) {
  wscale(hls::burst_maxi<beat_t>(ports[0]), hls::burst_maxi<beat_t>(ports[1]), *(const int *)args[2]);
}
"#;
    manifest(
        "wide.c:7",
        "wscale",
        vec![
            farray("a", VarKind::Pointer, MapKind::To, vec![var("n")], vec![]),
            farray("b", VarKind::Pointer, MapKind::Tofrom, vec![var("m")], vec![]),
            int_scalar("n"),
            int_scalar("m"),
        ],
        kernel,
        entry,
    )
}

#[test]
fn wide_beats_with_strobes_report_exact_traffic() {
    let cache = tempfile::tempdir().unwrap();
    let config = Config { hls_headers: Some(hls_headers()), ..Config::emu(cache.path()) };
    let (n, m) = (3000usize, 3005usize);
    let mut a: Vec<f32> = (0..n).map(|i| (i as f32).sin()).collect();
    // A NaN with a payload and a negative zero travel bit-exactly through the lanes.
    a[17] = f32::from_bits(0x7fa1_2345);
    a[18] = -0.0;
    let mut b = vec![-1f32; m];
    let (mut pa, mut pb, mut nv, mut mv) = (a.as_mut_ptr(), b.as_mut_ptr(), n as i32, m as i32);
    let r = unsafe {
        offload_with(&config, &wide_scale(), &[addr(&mut pa), addr(&mut pb), addr(&mut nv), addr(&mut mv)])
    };
    assert!(r.offloaded(), "{:?}", r.reason);
    for i in 0..n {
        assert_eq!((2.0 * a[i]).to_bits(), b[i].to_bits(), "b[{i}]");
    }
    assert_eq!(&b[n..], &[-1.0; 5], "lanes past n are masked by the strobes");
    // 3000 floats = 187.5 beats → 188 beats of 64 B in bursts of 64, 64, 60.
    assert_eq!((r.ddr_read_bytes, r.ddr_write_bytes, r.bursts), (Some(188 * 64), Some(188 * 64), Some(6)));
    let arrays = &r.arrays.as_ref().unwrap().0;
    let (ta, tb) = (arrays[0].1.as_ref().unwrap(), arrays[1].1.as_ref().unwrap());
    let lengths = BTreeMap::from([(60, 1), (64, 2)]);
    assert_eq!((ta.read_bursts, ta.beats, &ta.read_burst_lengths), (3, 188, &lengths));
    assert_eq!((tb.write_bursts, tb.beats, &tb.write_burst_lengths), (3, 188, &lengths));
    assert_eq!(tb.write_enabled_bytes, (n * 4) as u64);

    // The vendor headers were copied into the cache and are part of the kernel's key.
    let hls_dirs: Vec<_> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("hls-"))
        .collect();
    assert_eq!(hls_dirs.len(), 1, "{hls_dirs:?}");
    assert!(cache.path().join(&hls_dirs[0]).join("etc/ap_private.h").is_file());
}

#[test]
fn missing_vendor_headers_fall_back_with_instructions() {
    let cache = tempfile::tempdir().unwrap();
    let empty = tempfile::tempdir().unwrap();
    let config = Config { hls_headers: Some(empty.path().to_path_buf()), ..Config::emu(cache.path()) };
    let mut a = vec![1f32; 16];
    let mut b = vec![0f32; 16];
    let (mut pa, mut pb, mut nv, mut mv) = (a.as_mut_ptr(), b.as_mut_ptr(), 16, 16);
    let r = unsafe {
        offload_with(&config, &wide_scale(), &[addr(&mut pa), addr(&mut pb), addr(&mut nv), addr(&mut mv)])
    };
    assert!(!r.offloaded());
    let reason = r.reason.unwrap();
    for want in ["kernel wscale includes tessera_wide.h", "ap_int.h", "scripts/fetch-hls-headers.sh", "TESSERA_HLS_HEADERS"] {
        assert!(reason.contains(want), "{want} missing from: {reason}");
    }
    assert!(reason.contains(&empty.path().display().to_string()), "{reason}");
    assert_eq!(b, vec![0.0; 16]);
    // Kernels without wide words never look for them.
    let (mut pa, mut pb, mut nv) = (a.as_mut_ptr(), b.as_mut_ptr(), 16);
    let r = unsafe { offload_with(&config, &burst_copy(), &[addr(&mut pa), addr(&mut pb), addr(&mut nv)]) };
    assert!(r.offloaded(), "{:?}", r.reason);
}

#[test]
fn trace_lists_every_transaction() {
    let cache = tempfile::tempdir().unwrap();
    let trace = cache.path().join("trace.txt");
    let config = Config { emu_trace: Some(trace.clone()), ..Config::emu(&cache.path().join("k")) };
    let mut a: Vec<f32> = (0..5).map(|i| i as f32).collect();
    let mut b = vec![0f32; 5];
    let (mut pa, mut pb, mut nv) = (a.as_mut_ptr(), b.as_mut_ptr(), 5);
    let r = unsafe { offload_with(&config, &scale1d(), &[addr(&mut pa), addr(&mut pb), addr(&mut nv)]) };
    assert!(r.offloaded(), "{:?}", r.reason);
    let mut c: Vec<f32> = (0..130).map(|i| i as f32).collect();
    let mut d = vec![0f32; 130];
    let (mut pc, mut pd, mut nv) = (c.as_mut_ptr(), d.as_mut_ptr(), 130);
    let r = unsafe { offload_with(&config, &burst_copy(), &[addr(&mut pc), addr(&mut pd), addr(&mut nv)]) };
    assert!(r.offloaded(), "{:?}", r.reason);

    let text = std::fs::read_to_string(&trace).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let header = |l: &str, kernel: &str| -> String {
        let rest = l.strip_prefix("# launch ").unwrap_or_else(|| panic!("not a header: {l}"));
        let (id, k) = rest.split_once(" kernel ").unwrap();
        assert_eq!(k, kernel);
        id.to_string()
    };
    let id = header(lines[0], "scale1d");
    let want: Vec<String> = (1..4)
        .flat_map(|i| [format!("{id} a R {} 4", 4 * i), format!("{id} b W {} 4", 4 * i)])
        .collect();
    assert_eq!(&lines[1..7], want.iter().map(String::as_str).collect::<Vec<_>>().as_slice());
    let id2 = header(lines[7], "copy_bursts");
    assert_ne!(id, id2);
    // Requests in program order: 64, 64, 2 floats each way.
    let want2 = [
        format!("{id2} a R 0 256"),
        format!("{id2} b W 0 256"),
        format!("{id2} a R 256 256"),
        format!("{id2} b W 256 256"),
        format!("{id2} a R 512 8"),
        format!("{id2} b W 512 8"),
    ];
    assert_eq!(&lines[8..], want2.iter().map(String::as_str).collect::<Vec<_>>().as_slice());
}
