//! The dataflow kernels (mode `dataflow`, `tessera_hls::dataflow`): which benchmark
//! stencils qualify, the 2D 5-point kernel's text (snapshot
//! `tests/snapshots/2D-5p.dataflow.w16.cpp`), warning-free compiles (emulation and
//! Vitis' view), bit-exact runs on the emulated device against the baseline kernel,
//! and the point of the mode: DDR reads are exactly the beats of the Load set's rows,
//! writes exactly the Store set; generated regions (statement orders, conditional
//! reads) streamed exactly or refused.
//!
//! Bless the snapshot after an intended change of the generator with
//! `TESSERA_BLESS=1 cargo test --release -p tessera-hls --test dataflow`, then review
//! the diff.

mod common;

use common::*;
use std::path::Path;
use tessera_hls::dataflow::Limits;
use tessera_hls::Kernel;
use tessera_ir::{Region, VarKind};

/// The benchmark stencils the dataflow kernel takes: all ten (fdtd's updates are
/// point-wise in place, `ey[i][j] = ey[i][j] - …`, which it streams too).
const QUALIFYING: &[&str] = SMALL;

fn dataflow(region: &Region, w: u32, name: &str) -> Kernel {
    tessera_hls::dataflow::generate(region, name, w).unwrap_or_else(|e| panic!("{name}: {e}")).0
}

/// Vitis' `hls_stream.h`, reduced to what the kernels call: `hls::stream<T>` and
/// `hls::stream<T, DEPTH>`, a `stream<T>` of that depth (UG1399, "HLS Stream Library").
const VITIS_STREAM_STUB: &str = r#"#pragma once
namespace hls {
template <typename T, int DEPTH = 0> class stream;
template <typename T> class stream<T, 0> {
 public:
  stream();
  explicit stream(const char *name);
  T read();
  void write(const T &v);
  bool empty();
  bool full();
};
template <typename T, int DEPTH> class stream : public stream<T, 0> {
 public:
  stream();
  explicit stream(const char *name);
};
}  // namespace hls
"#;

#[test]
fn which_benchmark_stencils_qualify() {
    for name in SMALL {
        let r = tessera_hls::dataflow::analyze(&small(name), 16);
        assert_eq!(r.is_ok(), QUALIFYING.contains(name), "{name}: {:?}", r.err());
        if let Err(e) = r {
            assert_eq!(e.code(), "dataflow-unsupported");
            panic!("{name}: {}", e.remark());
        }
    }
}

/// An in-place stencil (Gauss-Seidel) falls back with the reason's code, message and
/// hint.
#[test]
fn in_place_stencils_fall_back() {
    let r = load("tests/ir/gauss_seidel5.ir.json");
    let e = tessera_hls::dataflow::analyze(&r, 16).unwrap_err();
    assert_eq!(
        e.remark().split(';').next().unwrap(),
        "[dataflow-unsupported] no dataflow kernel: 'A' is both read and written at other elements (an in-place update, A[i - 1][j])"
    );
    assert!(e.hint().unwrap().contains("out-of-place"), "{}", e.remark());
}

/// A boundary stencil written with `?:` over the whole array
/// (`b[i][j] = edge ? a[i][j] : 0.25f * (a[i - 1][j] + …)`): its halo reads may not
/// happen, and the launch checks do not bound them, so the load process must not read
/// their box (row -1 and row n lie outside the array). Refused; with the halo reads
/// within an unconditional access's offsets (the same element read in the
/// condition), streamed.
#[test]
fn conditional_reads_beyond_the_unconditional_ones_fall_back() {
    let r = load("tests/ir/guarded_boundary.ir.json");
    let e = tessera_hls::dataflow::analyze(&r, 16).unwrap_err();
    assert!(
        e.remark().starts_with("[dataflow-unsupported] no dataflow kernel: the read a[i][j] may not happen (it is under a condition)"),
        "{}",
        e.remark()
    );
    // `a[i][j] > 0 ? a[i][j] : 0`: the conditional read is the unconditional one's element.
    fn value(r: &mut Region) -> &mut tessera_ir::Expr {
        let tessera_ir::Stmt::For { body, .. } = &mut r.body[0] else { panic!() };
        let tessera_ir::Stmt::For { body, .. } = &mut body[0] else { panic!() };
        let tessera_ir::Stmt::Assign { value, .. } = &mut body[0] else { panic!() };
        value
    }
    let mut inside = r.clone();
    let tessera_ir::Expr::Select { cond, then, otherwise, .. } = value(&mut inside) else { panic!() };
    let centre = (**then).clone();
    **cond = tessera_ir::Expr::Binary {
        op: tessera_ir::BinOp::Gt,
        lhs: Box::new(centre.clone()),
        rhs: Box::new(tessera_ir::Expr::Float { bits: 0, ty: tessera_ir::ScalarType::F32 }),
        ty: tessera_ir::ScalarType::I32,
    };
    **otherwise = tessera_ir::Expr::Float { bits: 0, ty: tessera_ir::ScalarType::F32 };
    assert!(tessera_hls::dataflow::analyze(&inside, 16).is_ok());
    // … but not with a halo read in its branch.
    let tessera_ir::Expr::Select { then, .. } = value(&mut inside) else { panic!() };
    let tessera_ir::Expr::Read { index, .. } = &mut **then else { panic!() };
    index[0] = tessera_ir::Expr::Binary {
        op: tessera_ir::BinOp::Add,
        lhs: Box::new(index[0].clone()),
        rhs: Box::new(tessera_ir::Expr::int(1)),
        ty: tessera_ir::ScalarType::I32,
    };
    let e = tessera_hls::dataflow::analyze(&inside, 16).unwrap_err();
    assert!(e.remark().contains("the read a[i + 1][j] may not happen"), "{}", e.remark());
}

#[test]
fn snapshot_of_the_2d_5_point_kernel() {
    let k = dataflow(&small("2D-5p"), 16, "tessera_snap");
    let path = repo().join("crates/hls/tests/snapshots/2D-5p.dataflow.w16.cpp");
    if let Some(stale) = common::snapshot(&path, &k.source) {
        panic!("the kernel differs from its snapshot {stale}\nreview, then bless with `TESSERA_BLESS=1 cargo test --release -p tessera-hls --test dataflow`");
    }
    for must in ["#pragma HLS DATAFLOW", "hls::stream<tessera::wide_t<16, float>, 64> A_in", "#pragma HLS PIPELINE II=1", "A_lb[4][4]"] {
        assert!(k.source.contains(must), "{must}");
    }
}

/// The 1D kernel: a ring of lag + 2 words (the output waits one word more than its
/// window needs) and, in emulation only, the ring twice over so that the lanes read
/// their window in place.
#[test]
fn snapshot_of_the_1d_kernel() {
    let k = dataflow(&small("1D-jacobi"), 16, "tessera_snap");
    let path = repo().join("crates/hls/tests/snapshots/1D-jacobi.dataflow.w16.cpp");
    if let Some(stale) = common::snapshot(&path, &k.source) {
        panic!("the kernel differs from its snapshot {stale}\nreview, then bless with `TESSERA_BLESS=1 cargo test --release -p tessera-hls --test dataflow`");
    }
    for must in ["A_ring[3];", "A_lin[6];", "if (tdf_s >= 2 && tdf_s - 2 < tdf_out_words)", "const tessera::wide_t<16, float> *A_w = &A_lin[tdf_pos + 1];"] {
        assert!(k.source.contains(must), "{must}\n{}", k.source);
    }
}

#[test]
fn kernels_compile_warning_free() {
    let tmp = tempfile::tempdir().unwrap();
    let mut ks = Vec::new();
    for (i, name) in QUALIFYING.iter().enumerate() {
        let w = [4, 8, 16][i % 3];
        ks.push(dataflow(&small(name), w, &format!("tessera_df{i}")));
    }
    // Kernels of strips (forced to two words) and of fewer lanes than the port width.
    for (i, name) in ["2D-5p", "2D-fdtd0", "3D-heat"].iter().enumerate() {
        let r = small(name);
        let limits = Limits { max_strip: 2 * 8, ..Limits::default() };
        assert!(tessera_hls::dataflow::analyze_with(&r, 8, &limits).unwrap().strips.is_some(), "{name}");
        ks.push(tessera_hls::dataflow::generate_with(&r, &format!("tessera_dfs{i}"), 8, &limits).unwrap().0);
        let mut an = tessera_hls::dataflow::analyze(&r, 16).unwrap();
        an.set_lanes(4).unwrap();
        let k = tessera_hls::dataflow::generate_from(&r, &format!("tessera_dfv{i}"), &an).unwrap().0;
        assert!(k.source.contains("#pragma HLS PIPELINE II=4") && k.source.contains("#pragma HLS ALLOCATION operation instances="), "{name}");
        ks.push(k);
    }
    std::thread::scope(|s| {
        for (i, k) in ks.iter().enumerate() {
            let dir = tmp.path().join(format!("k{i}"));
            s.spawn(move || {
                std::fs::create_dir_all(dir.join("vitis")).unwrap();
                std::fs::write(dir.join("vitis/hls_stream.h"), VITIS_STREAM_STUB).unwrap();
                compile_check(k, &dir)
            });
        }
    });
}

/// Per array: (read bytes, write bytes, enabled write bytes).
fn bytes(r: &tessera_rt::report::Record) -> Vec<(String, (u64, u64, u64))> {
    let arrays = &r.arrays.as_ref().expect("emulated kernels count traffic").0;
    arrays
        .iter()
        .map(|(n, t)| (n.clone(), t.as_ref().map_or((0, 0, 0), |t| (t.read_bytes, t.write_bytes, t.write_enabled_bytes))))
        .collect()
}

/// Runs a stencil at the port widths `widths` against the baseline kernel: same
/// results bit for bit, same elements stored (enabled bytes). With `strip_words`, the
/// strips are forced to at most that many words (`Limits::max_strip`), and must be
/// chosen.
fn check(name: &str, region: &Region, cache: &Path, widths: &[u32], strip_words: Option<i64>) -> Vec<String> {
    let inputs = Inputs::new(region, &[], 2024);
    let base = tessera_hls::baseline::generate(region, "tessera_base");
    let (want, base_rec) = run(region, &manifest(region, &base, "baseline"), &inputs, cache);
    let base_bytes = bytes(&base_rec);
    let mut failures = Vec::new();
    for &w in widths {
        let label = format!("{name} dataflow w={w}{}", strip_words.map_or(String::new(), |k| format!(" strips of {k} words")));
        let k = match strip_words {
            None => dataflow(region, w, "tessera_df"),
            Some(k) => {
                let limits = Limits { max_strip: k * w as i64, ..Limits::default() };
                let an = tessera_hls::dataflow::analyze_with(region, w, &limits).unwrap();
                assert!(an.strips.is_some(), "{label}: no strips");
                tessera_hls::dataflow::generate_with(region, "tessera_dfs", w, &limits).unwrap().0
            }
        };
        let (got, rec) = run(region, &manifest(region, &k, "dataflow"), &inputs, cache);
        for (i, (g, e)) in got.iter().zip(&want).enumerate() {
            if g != e {
                let v = &region.vars[i];
                let first = g.iter().zip(e).position(|(a, b)| a != b).unwrap() / v.elem.size();
                failures.push(format!("{label}: array {} differs first at element {first}", v.name));
            }
        }
        let enabled: Vec<u64> = bytes(&rec).iter().map(|(_, b)| b.2).collect();
        let base_enabled: Vec<u64> = base_bytes.iter().map(|(_, b)| b.2).collect();
        if enabled != base_enabled {
            failures.push(format!("{label}: enabled write bytes {enabled:?}, baseline {base_enabled:?}"));
        }
    }
    failures
}

#[test]
fn benchmarks_bit_exact_on_the_emulated_device() {
    let cache = tempfile::tempdir().unwrap();
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(name) = QUALIFYING.get(i) else { break };
                let f = check(name, &small(name), cache.path(), &[4, 8, 16], None);
                failures.lock().unwrap().extend(f);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The beats a set of rows occupies: per row (a run of `n` elements from element
/// `e`), the DDR words it touches.
fn row_beats(rows: &[(i64, i64)], w: i64) -> i64 {
    rows.iter().map(|&(e, n)| (e + n - 1).div_euclid(w) - e.div_euclid(w) + 1).sum()
}

/// The 2D 5-point stencil (37 × 53 floats, rows not aligned to beats): A's Load set is
/// rows 1..35 whole and rows 0 and 36 without their corners — the kernel reads the
/// box hull's rows 0..36 × columns 0..52, whose beats
/// are exactly the Load set's rows' beats plus partial edges; X's Store set is rows
/// 1..35 × columns 1..51, written with strobes for exactly those elements.
#[test]
fn traffic_is_the_load_and_store_sets() {
    let cache = tempfile::tempdir().unwrap();
    let region = small("2D-5p");
    let (ni, nj) = (37i64, 53i64); // tests/ir/small: NI = 37, NJ = 53
    let inputs = Inputs::new(&region, &[], 7);
    for w in [4i64, 8, 16] {
        let k = dataflow(&region, w as u32, "tessera_df");
        let (_, rec) = run(&region, &manifest(&region, &k, "dataflow"), &inputs, cache.path());
        let b: std::collections::BTreeMap<String, (u64, u64, u64)> = bytes(&rec).into_iter().collect();
        // The Load set of A, row by row (exact: the corners are not read by the source;
        // the box hull adds them, which lie in beats the rows touch anyway whenever the
        // row's first / last needed element shares its beat).
        let load_rows: Vec<(i64, i64)> = (0..ni).map(|i| if i == 0 || i == ni - 1 { (i * nj + 1, nj - 2) } else { (i * nj, nj) }).collect();
        let hull_rows: Vec<(i64, i64)> = (0..ni).map(|i| (i * nj, nj)).collect();
        let (load_beats, hull_beats) = (row_beats(&load_rows, w), row_beats(&hull_rows, w));
        let a = b["A"];
        assert_eq!(a.0 as i64, hull_beats * w * 4, "w={w}: A read bytes");
        // Each element of the box read once: no more than one beat per row beyond the Load set's.
        assert!(hull_beats - load_beats <= 2 * 2, "w={w}: {hull_beats} beats read, the Load set's rows need {load_beats}");
        assert_eq!((a.1, a.2), (0, 0));
        let store_rows: Vec<(i64, i64)> = (1..ni - 1).map(|i| (i * nj + 1, nj - 2)).collect();
        let x = b["X"];
        assert_eq!(x.0, 0, "w={w}: X is not read");
        assert_eq!(x.1 as i64, row_beats(&store_rows, w) * w * 4, "w={w}: X write bytes (whole beats)");
        assert_eq!(x.2 as i64, (ni - 2) * (nj - 2) * 4, "w={w}: X enabled bytes = the Store set");
    }
}

/// Whether a line of generated C++ declares mutable data of static storage duration:
/// `static` or `thread_local` other than a function definition or constant data.
fn declares_static_data(line: &str) -> bool {
    let t = line.trim_start();
    let storage = t.starts_with("static ") || t.starts_with("thread_local ");
    let function = t.ends_with('{') && t.contains('(');
    let constant = t.starts_with("static const ") || t.starts_with("static constexpr ");
    storage && !function && !constant
}

/// The class of bug behind concurrent offloads of one kernel reading each other's rows:
/// a kernel keeping state in static storage, which every launch shares. No generator
/// (baseline, paper, tessera, dataflow) declares static data except through
/// `TESSERA_PROCESS_STATE` (per launching thread in emulation), on every benchmark
/// stencil at every port width.
#[test]
fn kernels_keep_no_state_shared_between_launches() {
    let mut bad = Vec::new();
    for name in SMALL {
        let region = small(name);
        let mut ks = vec![("baseline".to_string(), tessera_hls::baseline::generate(&region, "tessera_k"))];
        for w in [4u32, 8, 16] {
            ks.push((format!("paper w={w}"), tiled(&region, None, w, "tessera_k", Variant::Paper)));
            ks.push((format!("tessera w={w}"), tiled(&region, None, w, "tessera_k", Variant::Tessera)));
            ks.push((format!("dataflow w={w}"), dataflow(&region, w, "tessera_k")));
        }
        for (label, k) in ks {
            for (n, line) in k.source.lines().chain(k.emu_entry.lines()).enumerate() {
                if declares_static_data(line) {
                    bad.push(format!("{name} {label}, line {}: {}", n + 1, line.trim()));
                }
            }
        }
    }
    assert!(bad.is_empty(), "static data in generated kernels:\n{}", bad.join("\n"));
    assert!(declares_static_data("  static float A_lb[4][4];"));
    assert!(!declares_static_data("  TESSERA_PROCESS_STATE float A_lb[4][4];"));
    assert!(!declares_static_data("static void k_compute(hls::stream<float> &A_in) {"));
}

/// The same dataflow kernels launched at once from four threads, each on its own
/// inputs, several times: every launch's results equal the same launch made alone
/// (the line buffers and rings are per launching thread).
#[test]
fn concurrent_launches_of_one_kernel_are_independent() {
    let cache = tempfile::tempdir().unwrap();
    for name in ["2D-5p", "3D-heat", "1D-jacobi"] {
        let region = small(name);
        let k = dataflow(&region, 4, "tessera_conc");
        let m = manifest(&region, &k, "dataflow");
        let inputs: Vec<Inputs> = (0..4u32).map(|t| Inputs::new(&region, &[], 7 + t)).collect();
        let alone: Vec<Vec<Vec<u8>>> = inputs.iter().map(|i| run(&region, &m, i, cache.path()).0).collect();
        std::thread::scope(|s| {
            for (t, (inp, want)) in inputs.iter().zip(&alone).enumerate() {
                let (region, m, cache) = (&region, &m, cache.path());
                s.spawn(move || {
                    for rep in 0..6 {
                        let got = run(region, m, inp, cache).0;
                        assert!(got == *want, "{name}: thread {t}, launch {rep} differs from the same launch made alone");
                    }
                });
            }
        });
    }
}

/// Every channel of every qualifying stencil is a FIFO one burst of its port deep (at
/// most 256 beats, never across 4 KiB), and the kernel declares it so.
#[test]
fn channels_are_fifos_one_burst_deep() {
    for name in QUALIFYING {
        let region = small(name);
        for w in [4u32, 8, 16] {
            let an = tessera_hls::dataflow::analyze(&region, w).unwrap();
            let k = dataflow(&region, w, "tessera_ch");
            let channels = an.channels();
            assert_eq!(channels.len(), an.inputs.len() + an.outputs.len(), "{name}");
            for ch in &channels {
                let burst = (4096 / (w as i64 * ch.elem.size() as i64)).min(256);
                assert_eq!(ch.depth, burst, "{name} w={w} {}", ch.stream);
                let pragma = format!("#pragma HLS STREAM variable={} depth={burst}", ch.stream);
                assert!(k.source.contains(&pragma), "{name} w={w}: no `{pragma}`");
            }
        }
    }
    let an = tessera_hls::dataflow::analyze(&small("2D-5p"), 16).unwrap();
    assert_eq!(
        tessera_hls::dataflow::describe_channels(&an.channels()).lines().nth(1).unwrap(),
        "  A_in: load A -> compute, FIFO, depth 64 words: in order and single-valued (rows of the Load box, row-major, each word read once); depth: one read burst"
    );
}

/// A tiny deterministic generator (xorshift).
struct Gen(u64);

impl Gen {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n
    }
}

/// One to three statements over arrays A, B, C of a nest of `depth` loops (indices
/// `i`, `j`, `k`; `at(d, o)` is the subscript `index_d + o`), each writing another
/// array at the loop indices the sum of 0.5f and one to three reads `X[.. + o]`,
/// offsets in {-1, 0, 1}. Distinct targets (two statements writing one array are
/// refused anyway); reads of a written array mostly at the indices (other offsets are
/// refused), so that about half the bodies read in a later statement what an earlier
/// one wrote. Returns the statements and their text.
fn generated_statements(
    g: &mut Gen,
    depth: usize,
    at: &dyn Fn(usize, i64) -> serde_json::Value,
    loc: &serde_json::Value,
) -> (Vec<serde_json::Value>, String) {
    let names = ["A", "B", "C"];
    let ivars = ["i", "j", "k"];
    let mut text = String::new();
    let mut body = Vec::new();
    let (k, rot) = (1 + g.below(3) as usize, g.below(3) as usize);
    let targets: Vec<&str> = (0..k).map(|j| names[(rot + j) % 3]).collect();
    for &target in &targets {
        let mut value = serde_json::json!({ "kind": "float", "ty": "f32", "bits": (0.5f32).to_bits() as u64 });
        let mut terms = vec!["0.5f".to_string()];
        for _ in 0..1 + g.below(3) {
            let x = names[g.below(3) as usize];
            let zero = targets.contains(&x) && g.below(6) != 0;
            let offs: Vec<i64> = (0..depth).map(|_| if zero { 0 } else { g.below(3) as i64 - 1 }).collect();
            let index: Vec<serde_json::Value> = offs.iter().enumerate().map(|(d, &o)| at(d, o)).collect();
            let read = serde_json::json!({ "kind": "read", "array": x, "index": index, "ty": "f32", "loc": loc });
            value = serde_json::json!({ "kind": "binary", "op": "add", "lhs": value, "rhs": read, "ty": "f32" });
            terms.push(format!("{x}{}", offs.iter().enumerate().map(|(d, o)| format!("[{}{o:+}]", ivars[d])).collect::<String>()));
        }
        body.push(serde_json::json!({
            "kind": "assign",
            "loc": loc,
            "target": { "kind": "element", "array": target, "index": (0..depth).map(|d| at(d, 0)).collect::<Vec<_>>(), "ty": "f32", "loc": loc },
            "value": value,
        }));
        text.push_str(&format!("{target}{} = {}; ", ivars[..depth].iter().map(|v| format!("[{v}]")).collect::<String>(), terms.join(" + ")));
    }
    (body, text)
}

/// A 1D region over arrays A, B, C (floats, 1999 elements, all `tofrom`) whose loop
/// `for (i = 1; i < 1998; i++)` runs the generated statements: each writes another
/// array at `i` the sum of one to three reads `X[i + o]`, o ∈ {-1, 0, 1}, and a constant.
fn generated_region(seed: u64) -> (Region, String) {
    let mut g = Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let template: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo().join("tests/ir/small/1D-jacobi.ir.json")).unwrap()).unwrap();
    let mut r = template.clone();
    let mut a = template["vars"][0].clone();
    a["map"] = "tofrom".into();
    a["written"] = true.into();
    let vars: Vec<serde_json::Value> = ["A", "B", "C"]
        .iter()
        .map(|n| {
            let mut v = a.clone();
            v["name"] = (*n).into();
            v
        })
        .collect();
    r["vars"] = vars.into();
    let i = serde_json::json!({ "kind": "var", "name": "i", "ty": "i32" });
    let loc = template["body"][0]["loc"].clone();
    let at = |_: usize, o: i64| match o {
        0 => i.clone(),
        _ => serde_json::json!({ "kind": "binary", "op": if o < 0 { "sub" } else { "add" }, "lhs": i, "rhs": { "kind": "int", "ty": "i32", "value": o.abs() }, "ty": "i32" }),
    };
    let (body, text) = generated_statements(&mut g, 1, &at, &loc);
    r["body"][0]["body"] = body.into();
    (Region::from_json(&r.to_string()).unwrap_or_else(|e| panic!("{text}: {e}")), text)
}

/// The class of the statement-order bug: whatever the order in which the statements of
/// an iteration read and write the same arrays, a region the dataflow kernel accepts
/// computes the baseline kernel's results bit for bit (generated bodies of one to three
/// statements over three arrays; the ones it refuses get the tessera kernel).
/// Runs `case(seed, failures)` for seeds `0..cases` on two threads; `case` returns
/// whether the dataflow kernel accepted the generated region and pushes a line per
/// result that differs from the baseline kernel's. Fails with those lines, or when
/// fewer than 8 regions were accepted (the generator must exercise the kernel, not
/// only its refusals).
fn generated_cases(cases: u64, case: &(dyn Fn(u64, &std::sync::Mutex<Vec<String>>) -> bool + Sync)) {
    use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
    let accepted = AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    let next = AtomicU64::new(0);
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let seed = next.fetch_add(1, Ordering::Relaxed);
                if seed >= cases {
                    break;
                }
                if case(seed, &failures) {
                    accepted.fetch_add(1, Ordering::Relaxed);
                }
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "dataflow results differ from the baseline's:\n{}", failures.join("\n"));
    assert!(accepted.into_inner() >= 8, "too few generated regions streamed");
}

#[test]
fn generated_statement_orders_are_streamed_exactly_or_refused() {
    let cache = tempfile::tempdir().unwrap();
    generated_cases(40, &|seed, failures| {
        let (region, text) = generated_region(seed);
        let Ok((k, _)) = tessera_hls::dataflow::generate(&region, "tessera_gen", 4) else { return false };
        if !same_as_baseline(&region, &k, 99 + seed as u32, cache.path()) {
            failures.lock().unwrap().push(format!("seed {seed}: {text}"));
        }
        true
    });
}

/// Whether the dataflow kernel `k` of `region` computes the baseline kernel's results
/// bit for bit on inputs from `seed` (the emulated ports abort on any read outside an
/// array).
fn same_as_baseline(region: &Region, k: &Kernel, seed: u32, cache: &Path) -> bool {
    same_as_baseline_in(region, k, "dataflow", seed, cache)
}

/// [`same_as_baseline`] for a kernel of mode `mode`.
fn same_as_baseline_in(region: &Region, k: &Kernel, mode: &str, seed: u32, cache: &Path) -> bool {
    let inputs = Inputs::new(region, &[], seed);
    let base = tessera_hls::baseline::generate(region, "tessera_gen_base");
    let (want, _) = run_at(region, &manifest(region, &base, "baseline"), &inputs, cache, GENERATED_EMU_OPT);
    let (got, _) = run_at(region, &manifest(region, k, mode), &inputs, cache, GENERATED_EMU_OPT);
    got == want
}

/// A 1D region over A, B, C (1999 elements, `tofrom`) whose loop runs over every
/// element, `for (i = 0; i < 1999; i++)`: one or two statements each writing another
/// array at `i` the sum of 0.5f and reads that are either sure, `X[i]`, or may not
/// happen, `(i >= 1 && i <= 1997) ? X[i + o] : 0.25f` with o ∈ {-1, 0, 1}; a halo read
/// is only ever conditional (unconditionally it would leave the array).
fn generated_conditional_region(seed: u64) -> (Region, String) {
    let (template, _) = generated_region(seed);
    let mut g = Gen(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) | 1);
    let mut r: serde_json::Value = serde_json::from_str(&template.to_json()).unwrap();
    let i = serde_json::json!({ "kind": "var", "name": "i", "ty": "i32" });
    let int = |v: i64| serde_json::json!({ "kind": "int", "ty": "i32", "value": v });
    let loc = r["body"][0]["loc"].clone();
    r["body"][0]["lower"] = int(0);
    r["body"][0]["upper"] = int(1999);
    let names = ["A", "B", "C"];
    let (k, rot) = (1 + g.below(2) as usize, g.below(3) as usize);
    let mut text = String::new();
    let mut body = Vec::new();
    for t in 0..k {
        let target = names[(rot + t) % 3];
        let mut value = serde_json::json!({ "kind": "float", "ty": "f32", "bits": (0.5f32).to_bits() as u64 });
        let mut terms = vec!["0.5f".to_string()];
        for _ in 0..1 + g.below(3) {
            // Arrays a statement reads: not one an earlier statement writes (refused anyway).
            let x = names[(rot + k + g.below((3 - k) as u64 + 1) as usize) % 3];
            let x = if (0..t).any(|e| names[(rot + e) % 3] == x) { names[(rot + k) % 3] } else { x };
            let conditional = g.below(2) == 0;
            let o = if conditional { g.below(3) as i64 - 1 } else { 0 };
            let index = match o {
                0 => i.clone(),
                _ => serde_json::json!({ "kind": "binary", "op": "add", "lhs": i, "rhs": int(o), "ty": "i32" }),
            };
            let mut read = serde_json::json!({ "kind": "read", "array": x, "index": [index], "ty": "f32", "loc": loc });
            let mut term = format!("{x}[i{o:+}]");
            if conditional {
                let ge = serde_json::json!({ "kind": "binary", "op": "ge", "lhs": i, "rhs": int(1), "ty": "i32" });
                let le = serde_json::json!({ "kind": "binary", "op": "le", "lhs": i, "rhs": int(1997), "ty": "i32" });
                let cond = serde_json::json!({ "kind": "binary", "op": "land", "lhs": ge, "rhs": le, "ty": "i32" });
                let other = serde_json::json!({ "kind": "float", "ty": "f32", "bits": (0.25f32).to_bits() as u64 });
                read = serde_json::json!({ "kind": "select", "cond": cond, "then": read, "else": other, "ty": "f32" });
                term = format!("(i >= 1 && i <= 1997 ? {term} : 0.25f)");
            }
            value = serde_json::json!({ "kind": "binary", "op": "add", "lhs": value, "rhs": read, "ty": "f32" });
            terms.push(term);
        }
        body.push(serde_json::json!({
            "kind": "assign",
            "loc": loc,
            "target": { "kind": "element", "array": target, "index": [i.clone()], "ty": "f32", "loc": loc },
            "value": value,
        }));
        text.push_str(&format!("{target}[i] = {}; ", terms.join(" + ")));
    }
    r["body"][0]["body"] = body.into();
    (Region::from_json(&r.to_string()).unwrap_or_else(|e| panic!("{text}: {e}")), text)
}

/// The class of the conditional-read bug: a region the dataflow kernel accepts reads
/// only inside its arrays (the emulated ports abort on any other read) and computes
/// the baseline kernel's results bit for bit, whatever mix of sure and conditional
/// reads it has; exactly the regions whose conditional reads stay within the offsets
/// of their array's sure reads are accepted.
#[test]
fn generated_conditional_reads_stay_in_the_arrays_or_are_refused() {
    let cache = tempfile::tempdir().unwrap();
    generated_cases(40, &|seed, failures| {
        let (region, text) = generated_conditional_region(seed);
        let scop = tessera_poly::scop::extract(&region).unwrap();
        let offset = |a: &tessera_poly::scop::Access| a.subscripts[0].constant;
        let within = scop.accesses.iter().filter(|a| a.conditional).all(|c| {
            scop.accesses.iter().any(|s| !s.conditional && s.array == c.array && offset(s) <= offset(c))
                && scop.accesses.iter().any(|s| !s.conditional && s.array == c.array && offset(s) >= offset(c))
        });
        let generated = tessera_hls::dataflow::generate(&region, "tessera_gen", 4);
        if generated.is_ok() != within {
            failures.lock().unwrap().push(format!("seed {seed}: accepted {} but within {within}: {text}", generated.is_ok()));
            return false;
        }
        let Ok((k, _)) = generated else { return false };
        if !same_as_baseline(&region, &k, 7 + seed as u32, cache.path()) {
            failures.lock().unwrap().push(format!("seed {seed}: {text}"));
        }
        true
    });
}

/// The same class for the tiled (tessera) kernel: an array whose size the kernel does
/// not know (no section: a present pointer, a flat array seen as rows) takes the
/// elements of its buffer as a size parameter and clips its reads to them, so every
/// mix of sure and conditional reads gets the kernel, which reads only inside the
/// arrays (the emulated ports abort on any read past an array's elements) and computes
/// the baseline kernel's results bit for bit. The runtime passes the arrays as the
/// region maps them (exactly 1999 elements each).
#[test]
fn generated_conditional_reads_stay_in_the_tiled_kernels_buffers() {
    let cache = tempfile::tempdir().unwrap();
    let beyond = std::sync::atomic::AtomicUsize::new(0);
    generated_cases(24, &|seed, failures| {
        let (region, text) = generated_conditional_region(seed);
        let mut no_size = region.clone();
        for v in no_size.vars.iter_mut() {
            v.section.clear();
            v.map = None;
        }
        let scop = tessera_poly::scop::extract(&no_size).unwrap();
        let dominated = scop.accesses.iter().filter(|a| a.conditional).all(|c| {
            scop.accesses.iter().any(|s| !s.conditional && s.array == c.array && s.subscripts[0].constant >= c.subscripts[0].constant)
        });
        if !dominated {
            beyond.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let plan = tessera_poly::optimize(&no_size, &tessera_poly::PolyOptions { port_width: 4, ..Default::default() });
        let k = plan.map_err(|e| e.remark()).and_then(|plan| {
            tessera_hls::paper::generate(&no_size, &plan, "tessera_gen", 4, tessera_hls::paper::Variant::Tessera).map_err(|e| e.remark())
        });
        let k = match k {
            Ok(k) => k,
            Err(e) => {
                failures.lock().unwrap().push(format!("seed {seed}: no tiled kernel: {e}: {text}"));
                return false;
            }
        };
        let sized: Vec<usize> = no_size.vars.iter().enumerate().filter(|(_, v)| v.kind != VarKind::Scalar).map(|(i, _)| i).collect();
        if k.size_params != sized {
            failures.lock().unwrap().push(format!("seed {seed}: size parameters {:?}, want {sized:?}: {text}", k.size_params));
            return false;
        }
        if !same_as_baseline_in(&region, &k, "tessera", 7 + seed as u32, cache.path()) {
            failures.lock().unwrap().push(format!("seed {seed}: {text}"));
        }
        true
    });
    assert!(beyond.into_inner() >= 4, "too few regions with a conditional read beyond the sure ones");
}

/// An in-place array (fdtd's `ey`, `ex`, `hz`) gets a write-only port of its own after
/// the variables, on its own bundle: the load process reads through the array's port,
/// the store process writes through `tdf_w_<array>`, and the emulation entry binds both
/// to the array's descriptor. Out-of-place stencils get none.
#[test]
fn in_place_arrays_get_a_write_port() {
    for name in QUALIFYING {
        let region = small(name);
        let k = dataflow(&region, 8, "tessera_wp");
        // The benchmark definitions: fdtd0 updates ey, fdtd1 ex, fdtd2 hz in place.
        let want = match *name {
            "2D-fdtd0" => Some("ey"),
            "2D-fdtd1" => Some("ex"),
            "2D-fdtd2" => Some("hz"),
            _ => None,
        };
        let in_place: Vec<usize> = region.vars.iter().enumerate().filter(|(_, v)| Some(v.name.as_str()) == want).map(|(i, _)| i).collect();
        assert_eq!(k.write_ports, in_place, "{name}");
        let n = region.vars.len();
        for (j, &i) in k.write_ports.iter().enumerate() {
            let v = &region.vars[i].name;
            let port = format!("tdf_w_{v}");
            assert!(k.source.contains(&format!("hls::burst_maxi<tessera::wide_t<8, float>> {port}")), "{name}: parameter {port}");
            assert!(k.source.contains(&format!("mode=m_axi port={port} offset=slave bundle=gmem")), "{name}: pragma of {port}");
            assert!(k.source.contains(&format!("tessera_wp_store_{v}({port}, {v}_out")), "{name}: the store writes through {port}");
            assert!(k.source.contains(&format!("tessera_wp_load_{v}({v}, {v}_in")), "{name}: the load reads through {v}");
            assert!(k.emu_entry.contains(&format!("(ports[{i}]));")) || k.emu_entry.contains(&format!("(ports[{i}]),")), "{name}");
            // The write ports follow the n variables, in order.
            let args = k.emu_entry.split(&format!("{}(", k.name)).nth(1).unwrap();
            assert_eq!(args.matches("ports[").count() + args.matches("args[").count(), n + k.write_ports.len(), "{name}");
            assert!(args.trim_end().trim_end_matches(['}', '\n', ' ', ';', ')']).ends_with(&format!("ports[{}]", k.write_ports[k.write_ports.len() - 1])), "{name}: {j}");
        }
        // One bundle per memory parameter.
        let bundles: std::collections::BTreeSet<&str> =
            k.source.lines().filter_map(|l| l.split("bundle=").nth(1)).map(|b| b.split_whitespace().next().unwrap()).collect();
        assert_eq!(bundles.len(), k.source.matches("mode=m_axi").count(), "{name}");
    }
}

/// Strips on the benchmark stencils of depth 2 and 3 (constant sizes, 53 columns in 2D,
/// 13 × 29 planes in 3D): forced to one or three words, so that rows span several
/// strips with a partial last one (and, in 3D, planes several row strips), the results
/// are the baseline's bit for bit and the same elements are stored (the in-place fdtd
/// updates included).
#[test]
fn forced_strips_bit_exact_on_the_emulated_device() {
    let cache = tempfile::tempdir().unwrap();
    let failures = std::sync::Mutex::new(Vec::new());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let cases: Vec<&str> = QUALIFYING.iter().copied().filter(|n| !n.starts_with("1D")).collect();
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(name) = cases.get(i) else { break };
                let w = [4u32, 8, 16][i % 3];
                let f = check(name, &small(name), cache.path(), &[w], Some(1 + 2 * (i as i64 % 2)));
                failures.lock().unwrap().extend(f);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// A region over arrays A, B, C (floats, `tofrom`, VLA-typed: `[n][m]` or
/// `[n][m][l]`, the extents scalar parameters) whose nest `for (i = 1; i < n - 1; i++)
/// for (j = 1; j < m - 1; j++) [for (k = 1; k < l - 1; k++)]` runs the generated
/// statements: each writes another array at the loop indices the sum of a constant and
/// one to three reads `X[i + o][j + o'][k + o'']`, offsets in {-1, 0, 1} (of an array
/// the region writes mostly at the indices, as in [`generated_region`]). The inner trip
/// counts are known at run time only: the strip path.
fn generated_strip_region(seed: u64, depth: usize) -> (Region, String) {
    let mut g = Gen(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let loc = serde_json::json!({ "col": 1, "file": "gen.c", "line": 1 });
    let extents = ["n", "m", "l"];
    let ivars = ["i", "j", "k"];
    let var = |n: &str| serde_json::json!({ "kind": "var", "name": n, "ty": "i32" });
    let int = |v: i64| serde_json::json!({ "kind": "int", "ty": "i32", "value": v });
    let names = ["A", "B", "C"];
    let mut vars: Vec<serde_json::Value> = names
        .iter()
        .map(|n| {
            serde_json::json!({
                "dims": extents[..depth].iter().map(|e| var(e)).collect::<Vec<_>>(),
                "elem": "f32", "kind": "pointer", "loc": loc, "map": "tofrom", "name": n,
                "section": extents[..depth].iter().map(|e| serde_json::json!({ "length": var(e), "lower": int(0) })).collect::<Vec<_>>(),
                "written": true,
            })
        })
        .collect();
    for e in &extents[..depth] {
        vars.push(serde_json::json!({ "dims": [], "elem": "i32", "kind": "scalar", "loc": loc, "map": null, "name": e, "section": [], "written": false }));
    }
    let at = |d: usize, o: i64| match o {
        0 => var(ivars[d]),
        _ => serde_json::json!({ "kind": "binary", "op": if o < 0 { "sub" } else { "add" }, "lhs": var(ivars[d]), "rhs": int(o.abs()), "ty": "i32" }),
    };
    let (body, text) = generated_statements(&mut g, depth, &at, &loc);
    let mut nest = serde_json::Value::Array(body);
    for d in (0..depth).rev() {
        let upper = serde_json::json!({ "kind": "binary", "op": "sub", "lhs": var(extents[d]), "rhs": int(1), "ty": "i32" });
        nest = serde_json::json!([{ "kind": "for", "loc": loc, "lower": int(1), "step": 1, "ty": "i32", "upper": upper, "var": ivars[d], "body": nest }]);
    }
    let r = serde_json::json!({
        "body": nest, "collapse": depth, "directive": "target teams distribute parallel for", "function": "gen",
        "index": 0, "location": loc, "unsupported_clauses": [], "vars": vars, "version": 1,
    });
    (Region::from_json(&r.to_string()).unwrap_or_else(|e| panic!("{text}: {e}")), text)
}

/// The strip path over generated regions of depth 2 and 3 with run-time extents, each
/// at several sizes (one kernel per region): strips of one to three words or the
/// budget's, at port widths 4, 8 and 16; extents not multiples of the strip or of W,
/// rows and planes smaller than one strip, single iterations. Every region the kernel
/// accepts computes the baseline kernel's results bit for bit.
#[test]
fn generated_run_time_extents_are_stripped_exactly() {
    let cache = tempfile::tempdir().unwrap();
    generated_cases(24, &|seed, failures| {
        let depth = 2 + (seed % 2) as usize;
        let (region, text) = generated_strip_region(seed, depth);
        let mut g = Gen(seed.wrapping_add(77) | 1);
        let w = [4u32, 8, 16][g.below(3) as usize];
        let limits = match g.below(4) {
            0 => Limits::default(),
            k => Limits { max_strip: k as i64 * w as i64, ..Limits::default() },
        };
        let Ok((k, _)) = tessera_hls::dataflow::generate_with(&region, "tessera_gs", w, &limits) else { return false };
        let an = tessera_hls::dataflow::analyze_with(&region, w, &limits).unwrap();
        let st = an.strips.clone().expect("run-time extents are stripped");
        assert_eq!(st.cols % w as i64, 0, "seed {seed}: strip {st:?} not a multiple of W = {w}");
        let base = tessera_hls::baseline::generate(&region, "tessera_gs_base");
        let (mb, md) = (manifest(&region, &base, "baseline"), manifest(&region, &k, "dataflow"));
        for size in 0..3 {
            // Extents: 3 (one iteration), below a strip, several strips with a partial last.
            let pick = |g: &mut Gen, big: u64| -> i64 {
                match size {
                    0 => 3 + g.below(3) as i64,
                    1 => 3 + g.below(big) as i64,
                    _ => 3 + st.cols + g.below(2 * st.cols.min(64) as u64) as i64,
                }
            };
            let n = 3 + g.below(if depth == 3 { 4 } else { 9 }) as i64;
            let m = if depth == 3 { 3 + (st.rows + g.below(st.rows.min(16) as u64 + 1) as i64).min(20) } else { pick(&mut g, 40) };
            let l = pick(&mut g, 40);
            let ints = [("n", n), ("m", m), ("l", l)];
            let inputs = Inputs::new(&region, &ints[..depth], 5 + seed as u32);
            let (want, _) = run_at(&region, &mb, &inputs, cache.path(), GENERATED_EMU_OPT);
            let (got, _) = run_at(&region, &md, &inputs, cache.path(), GENERATED_EMU_OPT);
            if got != want {
                failures.lock().unwrap().push(format!("seed {seed} (w={w}, strips {st:?}, extents {:?}): {text}", &ints[..depth]));
            }
        }
        true
    });
}

/// `jacobi2d_param` (`B[i][j]` from the 5-point star of `A[n][m]`, `1 <= i < n - 1`,
/// `1 <= j < m - 1`, n and m parameters): run-time columns are stripped, at the
/// budget's width (one strip per row at the sizes here: reads exactly the whole-row
/// kernel's), or at forced strips of 2 words: each strip reads its rows widened by the
/// two halo columns, so A's reads are the box's rows' beats per strip — at most the
/// whole rows' plus, per strip and row, the halo's words — and X's enabled bytes
/// exactly the Store set.
#[test]
fn strip_traffic_is_the_strips_boxes() {
    let cache = tempfile::tempdir().unwrap();
    let region = load("tests/ir/jacobi2d_param.ir.json");
    let an = tessera_hls::dataflow::analyze(&region, 8).unwrap();
    let st = an.strips.clone().expect("run-time columns are stripped");
    assert_eq!(st.cols, tessera_hls::dataflow::MAX_STRIP, "the budget allows the widest strip");
    assert!(an.strip_note.contains("loop 'j' is not a compile-time constant"), "{}", an.strip_note);
    for (w, strip_words) in [(8i64, None), (8, Some(2i64)), (4, Some(3))] {
        let limits = match strip_words {
            Some(k) => Limits { max_strip: k * w, ..Limits::default() },
            None => Limits::default(),
        };
        let k = tessera_hls::dataflow::generate_with(&region, "tessera_st", w as u32, &limits).unwrap().0;
        let s = tessera_hls::dataflow::analyze_with(&region, w as u32, &limits).unwrap().strips.unwrap().cols;
        for (n, m) in [(19i64, 31i64), (8, 5), (5, 3 + 2 * s)] {
            let inputs = Inputs::new(&region, &[("n", n), ("m", m)], 11);
            let (_, rec) = run(&region, &manifest(&region, &k, "dataflow"), &inputs, cache.path());
            let b: std::collections::BTreeMap<String, (u64, u64, u64)> = bytes(&rec).into_iter().collect();
            let cols = m - 2; // j = 1 .. m - 2
            let mut strip_rows = Vec::new();
            let mut c0 = 0;
            while c0 < cols {
                let sc = (cols - c0).min(s);
                strip_rows.extend((0..n).map(|i| (i * m + c0, sc + 2)));
                c0 += s;
            }
            let strips = (cols + s - 1) / s;
            let hull_rows: Vec<(i64, i64)> = (0..n).map(|i| (i * m, m)).collect();
            let label = format!("w={w} S={s} n={n} m={m}");
            let a = b["A"];
            assert_eq!(a.0 as i64, row_beats(&strip_rows, w) * w * 4, "{label}: A read bytes = the strips' boxes' beats");
            // Compulsory: the box's whole rows; per strip and row at most the halo's
            // 2 columns in one more word on each side.
            let bound = row_beats(&hull_rows, w) + n * (strips - 1) * 2;
            assert!(row_beats(&strip_rows, w) <= bound, "{label}: {} beats, bound {bound}", row_beats(&strip_rows, w));
            if strips == 1 {
                assert_eq!(row_beats(&strip_rows, w), row_beats(&hull_rows, w), "{label}: one strip reads the whole rows");
            }
            let x = b["B"];
            assert_eq!(x.2 as i64, (n - 2) * cols * 4, "{label}: B enabled bytes = the Store set");
        }
    }
}

/// The strip decision: a 3D region with run-time planes gets the largest square-ish
/// tile whose buffers fit the budget (one more W would not); a constant plane too
/// large for the budget is stripped instead of refused; whole rows stay whole (the
/// 2D 5-point kernel's snapshot is the whole-row kernel); the plan says which and why.
#[test]
fn strips_are_the_widest_the_budget_allows() {
    use tessera_hls::dataflow::{analyze_with, BRAM36_BUDGET};
    let (region, _) = generated_strip_region(1, 3);
    for w in [4u32, 16] {
        let an = analyze_with(&region, w, &Limits::default()).unwrap();
        let st = an.strips.clone().unwrap();
        assert!(an.bram36() <= BRAM36_BUDGET, "w={w}: {}", an.bram36());
        assert!(st.cols < tessera_hls::dataflow::MAX_STRIP, "w={w}: the budget binds in 3D");
        assert_eq!((st.rows, st.cols % w as i64), (st.cols, 0), "w={w}: square tiles of a multiple of W");
        // One W more does not fit: the budget is what stops it.
        let wider = analyze_with(&region, w, &Limits { max_strip: st.cols + w as i64, ..Limits::default() }).unwrap();
        assert_eq!(wider.strips.unwrap().cols, st.cols, "w={w}");
        assert!(an.strip_note.contains("BRAM36") && an.strip_note.contains("not a compile-time constant"), "{}", an.strip_note);
    }
    // The paper's 3D 27-point star (256³): whole planes, unless the budget is lower.
    let big = load("tests/ir/bench/3D-27p.ir.json");
    let whole = analyze_with(&big, 16, &Limits::default()).unwrap();
    assert!(whole.strips.is_none() && whole.strip_note.starts_with("strips: whole planes"), "{}", whole.strip_note);
    let budget = 300; // whole planes take 376 at w = 16, the narrowest strips 208
    let tight = analyze_with(&big, 16, &Limits { bram36: budget, ..Limits::default() }).unwrap();
    assert!(tight.strips.is_some() && tight.bram36() <= budget, "{:?} {}", tight.strips, tight.bram36());
    assert!(tight.strip_note.contains("whole planes need"), "{}", tight.strip_note);
    let (_, plan) = tessera_hls::dataflow::generate(&small("2D-5p"), "tessera_p", 16).unwrap();
    assert!(plan.contains("strips: whole rows (the inner trip counts are constants"), "{plan}");
    // Too tight even for strips of W: refused.
    let none = analyze_with(&big, 16, &Limits { bram36: 1, ..Limits::default() }).unwrap_err();
    assert!(none.remark().contains("even strips of 16 columns"), "{}", none.remark());
}

/// Every benchmark stencil of depth 2 and 3, at the paper's sizes (4096², 256³) and
/// the small ones, at port widths 4, 8 and 16, streams whole rows (planes) within the
/// budget: the kernels measured in docs/performance.md use no strips.
#[test]
fn benchmark_stencils_stream_whole_rows() {
    for name in SMALL.iter().filter(|n| !n.starts_with("1D")) {
        for region in [small(name), load(&format!("tests/ir/bench/{name}.ir.json"))] {
            for w in [4u32, 8, 16] {
                let an = tessera_hls::dataflow::analyze(&region, w).unwrap();
                assert!(an.strips.is_none(), "{name} w={w}: {}", an.strip_note);
                assert!(an.bram36() <= tessera_hls::dataflow::BRAM36_BUDGET, "{name} w={w}");
            }
        }
    }
}

/// Two banks: the arrays are interleaved exactly where whole arrays cannot split the
/// streams evenly — fdtd0 and fdtd1 (the in-place array's reads and writes against one
/// read-only array); fdtd2 (two read-only arrays against an in-place one) and the
/// stencils of one array read and one written keep whole arrays. The interleaved fdtd0
/// kernel (snapshot `2D-fdtd0.dataflow.banks2.w16.cpp`) compiles warning-free and runs
/// bit-exact at w = 4, 8, 16 on the emulated device, which counts each half's traffic
/// on its own: together exactly the one-bank kernel's bytes, each half at most a
/// segment per row from half of them.
#[test]
fn two_banks_interleave_where_whole_arrays_cannot_balance() {
    for name in SMALL {
        let r = small(name);
        let mut an = tessera_hls::dataflow::analyze(&r, 16).unwrap();
        let why = an.set_interleave(&r);
        let want = matches!(*name, "2D-fdtd0" | "2D-fdtd1");
        assert_eq!(an.interleave, want, "{name}: {why}");
        let [b0, b1] = an.whole_array_streams(&r);
        assert_eq!(b0 != b1, want, "{name}: {b0} against {b1}");
    }
    let r = small("2D-fdtd0");
    let kernel = |w: u32, name: &str| {
        let mut an = tessera_hls::dataflow::analyze(&r, w).unwrap();
        an.set_interleave(&r);
        tessera_hls::dataflow::generate_from(&r, name, &an).unwrap().0
    };
    let k = kernel(16, "tessera_snap");
    let path = repo().join("crates/hls/tests/snapshots/2D-fdtd0.dataflow.banks2.w16.cpp");
    if let Some(stale) = common::snapshot(&path, &k.source) {
        panic!("the kernel differs from its snapshot {stale}\nreview, then bless with `TESSERA_BLESS=1 cargo test --release -p tessera-hls --test dataflow`");
    }
    let il = k.interleave.clone().expect("interleaved");
    assert_eq!(il.segment_bytes, 4096);
    for must in ["hls::burst_maxi<tessera::wide_t<16, float>> tdf_b1_ey", "tdf_w_b1_ey", "tessera_df_read_row2<16, 64, float>(ey_b0, ey_b1,", "tdf_pending0, tdf_pending1"] {
        assert!(k.source.contains(must), "{must}\n{}", k.source);
    }
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("vitis")).unwrap();
    std::fs::write(tmp.path().join("vitis/hls_stream.h"), VITIS_STREAM_STUB).unwrap();
    compile_check(&k, tmp.path());
    // Bit-exact against the baseline kernel; the halves' bytes against the one-bank kernel's.
    let cache = tempfile::tempdir().unwrap();
    let inputs = Inputs::new(&r, &[], 2024);
    let (want, _) = run(&r, &manifest(&r, &tessera_hls::baseline::generate(&r, "tessera_base"), "baseline"), &inputs, cache.path());
    for w in [4, 8, 16] {
        let (one_got, one) = run(&r, &manifest(&r, &dataflow(&r, w, "tessera_df1"), "dataflow"), &inputs, cache.path());
        let k2 = kernel(w, "tessera_df2");
        let (got, two) = run(&r, &manifest(&r, &k2, "dataflow"), &inputs, cache.path());
        assert!(got == want && one_got == want, "w={w}: results differ from the baseline kernel's");
        let (one, two) = (bytes(&one), bytes(&two));
        for (array, (r1, w1, e1)) in &one {
            let half = |n: &str| two.iter().find(|(m, _)| m == n).map(|(_, b)| *b).unwrap_or_else(|| panic!("w={w}: no port {n}"));
            let (h0, h1) = (half(array), half(&format!("tdf_b1_{array}")));
            assert_eq!((h0.0 + h1.0, h0.1 + h1.1, h0.2 + h1.2), (*r1, *w1, *e1), "w={w}: {array}");
            assert!(h1.0 > 0 && h0.0 > 0, "w={w}: {array}: a half without reads ({h0:?}, {h1:?})");
        }
    }
}
