//! Tiled kernels (modes `paper` and `tessera`) run on the emulated device, bit for bit against the baseline kernel
//! of the same region on the same inputs (the baseline is proven bit-exact against the
//! CPU by the e2e tests), for port widths 4, 8 and 16 and tiles smaller and larger
//! than the arrays: the ten benchmark stencils at small, odd sizes
//! (`tests/ir/small/`), the optimizer's fixtures (`tests/ir/`) and regions written for
//! the generator (`tests/ir/small/src/`).
//!
//! The emulated ports abort on any out-of-bounds request, burst over 256 beats or
//! across 4 KiB, so a passing run also shows the shipment respects those rules. The
//! bytes the strobes enabled must equal the baseline's (every element written exactly
//! once, no halo or padded lane written), and the kernel must need fewer DDR
//! transactions than the baseline's one per access. The `tessera` kernel moves exactly
//! the paper kernel's bursts (same lengths, bytes and strobes per array); only their
//! order and overlap differ: every round trip of a paper kernel is exposed (on the
//! critical path, as the emulated ports classify them), a tessera kernel that
//! prefetches, batches or posts rows exposes fewer.

mod common;

use common::*;
use std::path::Path;
use tessera_ir::Region;
use tessera_rt::report::Record;

/// One region and the configurations to run it in.
struct Case {
    name: String,
    region: Region,
    /// Integer scalars (symbolic sizes).
    ints: Vec<(&'static str, i64)>,
    /// Tile sizes to try, each with port widths 4, 8 and 16.
    tiles: Vec<Vec<i64>>,
    /// Whether the tessera kernels must overlap some round trips (the stencils: each
    /// has an array it only reads, prefetched or requested in batches).
    overlaps: bool,
}

impl Case {
    fn new(name: &str, region: Region, ints: Vec<(&'static str, i64)>, tiles: Option<Vec<Vec<i64>>>) -> Case {
        let tiles = tiles.unwrap_or_else(|| default_tiles(depth(&region)));
        Case { name: name.to_string(), region, ints, tiles, overlaps: false }
    }
}

/// Tiles smaller than the arrays (several tiles, partial last ones) and larger.
fn default_tiles(depth: usize) -> Vec<Vec<i64>> {
    match depth {
        1 => vec![vec![100], vec![1024], vec![4096]],
        2 => vec![vec![5, 12], vec![64, 64]],
        _ => vec![vec![3, 4, 8], vec![16, 16, 32]],
    }
}

fn depth(r: &Region) -> usize {
    let mut d = 0;
    let mut body = &r.body;
    while let [tessera_ir::Stmt::For { body: inner, .. }] = body.as_slice() {
        d += 1;
        body = inner;
    }
    d
}

/// Per array: bytes and beats read and written, and the burst-length histograms
/// (everything but the exposed round trips).
fn bursts_per_array(r: &Record) -> Vec<(String, String)> {
    let arrays = &r.arrays.as_ref().expect("emulated kernels count traffic").0;
    arrays
        .iter()
        .map(|(n, t)| {
            // Which round trips overlap is the one thing the modes may differ in.
            let t = t.clone().map(|t| tessera_ir::report::ArrayTraffic { read_exposed: 0, write_exposed: 0, ..t });
            (n.clone(), format!("{t:?}"))
        })
        .collect()
}

/// Exposed round trips and bursts, all arrays.
fn exposed(r: &Record) -> (u64, u64) {
    let arrays = &r.arrays.as_ref().expect("emulated kernels count traffic").0;
    let t = arrays.iter().filter_map(|(_, t)| t.as_ref());
    t.fold((0, 0), |(e, b), t| (e + t.read_exposed + t.write_exposed, b + t.read_bursts + t.write_bursts))
}

/// Per array: bytes stored (strobes enabled), and DDR transactions.
fn traffic(r: &Record) -> (Vec<(String, u64)>, u64) {
    let arrays = &r.arrays.as_ref().expect("emulated kernels count traffic").0;
    let enabled = arrays.iter().map(|(n, t)| (n.clone(), t.as_ref().map_or(0, |t| t.write_enabled_bytes))).collect();
    let bursts = arrays.iter().filter_map(|(_, t)| t.as_ref()).map(|t| t.read_bursts + t.write_bursts).sum();
    (enabled, bursts)
}

/// One region: the baseline once, then every (w, tile) configuration of the paper kernel.
fn check(case: &Case, cache: &Path) -> Vec<String> {
    let region = &case.region;
    let inputs = Inputs::new(region, &case.ints, 2024);
    let base = tessera_hls::baseline::generate(region, "tessera_base");
    let (want, base_rec) = run(region, &manifest(region, &base, "baseline"), &inputs, cache);
    let (base_enabled, base_bursts) = traffic(&base_rec);
    let mut failures = Vec::new();
    // Exposed round trips over all configurations: (paper, tessera).
    let mut exposed_total = (0u64, 0u64);
    for w in [4u32, 8, 16] {
        for tile in &case.tiles {
          let mut paper_bursts = None;
          let mut paper_exposed = 0;
          for variant in [Variant::Paper, Variant::Tessera] {
            let label = format!("{} {} w={w} tile={tile:?}", case.name, variant.name());
            let k = tiled(region, Some(tile.clone()), w, "tessera_tiled", variant);
            let (got, rec) = run(region, &manifest(region, &k, variant.name()), &inputs, cache);
            for (i, (g, e)) in got.iter().zip(&want).enumerate() {
                if g != e {
                    let v = &region.vars[i];
                    let first = g.iter().zip(e).position(|(a, b)| a != b).unwrap() / v.elem.size();
                    failures.push(format!("{label}: array {} differs first at element {first}", v.name));
                }
            }
            let (enabled, bursts) = traffic(&rec);
            if enabled != base_enabled {
                failures.push(format!("{label}: enabled write bytes {enabled:?}, baseline {base_enabled:?}"));
            }
            if bursts >= base_bursts {
                failures.push(format!("{label}: {bursts} DDR transactions, baseline {base_bursts}"));
            }
            let (exp, all) = exposed(&rec);
            match variant {
                Variant::Paper if exp != all => failures.push(format!("{label}: {exp} of {all} round trips exposed, expected all")),
                Variant::Paper => {
                    paper_exposed = exp;
                    exposed_total.0 += exp;
                }
                Variant::Tessera if exp > paper_exposed => {
                    failures.push(format!("{label}: {exp} exposed round trips, more than the paper kernel's {paper_exposed}"))
                }
                Variant::Tessera => exposed_total.1 += exp,
            }
            let per_array = bursts_per_array(&rec);
            match &paper_bursts {
                None => paper_bursts = Some(per_array),
                Some(p) if *p != per_array => failures.push(format!("{label}: bursts {per_array:?}, paper kernel {p:?}")),
                Some(_) => {}
            }
          }
        }
    }
    if case.overlaps && exposed_total.1 >= exposed_total.0 {
        failures.push(format!(
            "{}: the tessera kernels expose {} round trips, the paper kernels {}: nothing overlapped",
            case.name, exposed_total.1, exposed_total.0
        ));
    }
    failures
}

/// Checks the cases on a few threads; fails with every mismatch found.
fn check_all(cases: Vec<Case>) {
    let cache = tempfile::tempdir().unwrap();
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get()).min(cases.len());
    let next = std::sync::atomic::AtomicUsize::new(0);
    let failures = std::sync::Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(case) = cases.get(i) else { break };
                let f = check(case, cache.path());
                failures.lock().unwrap().extend(f);
            });
        }
    });
    let failures = failures.into_inner().unwrap();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn benchmarks_bit_exact_on_the_emulated_device() {
    check_all(SMALL.iter().map(|n| Case { overlaps: true, ..Case::new(n, small(n), Vec::new(), None) }).collect());
}

/// The optimizer's own fixtures: symbolic sizes (worst-case halos), in-place updates
/// through chunk buffers, the paper's running example with a full buffer in 3D, two
/// statements, and uncached guarded accesses (padding hazard, reduction). The two with
/// a dependence of distance (1, −1) are tiled with one tile across j only (anything
/// narrower is illegal).
#[test]
fn optimizer_fixtures_bit_exact_on_the_emulated_device() {
    let fixture = |n: &str| load(&format!("tests/ir/{n}.ir.json"));
    let one_tile_across_j = Some(vec![vec![5, 128], vec![64, 128]]);
    check_all(vec![
        Case::new("gauss_seidel5", fixture("gauss_seidel5"), vec![("n", 29), ("m", 47)], None),
        Case::new("jacobi2d_param", fixture("jacobi2d_param"), vec![("n", 23), ("m", 41)], None),
        Case::new("two_statements", fixture("two_statements"), vec![("n", 19), ("m", 37)], None),
        // Default tiles: V in a full buffer, read and written.
        Case::new("paper_fig2", fixture("paper_fig2"), vec![("N", 13)], Some(vec![vec![3, 4, 8], vec![32, 32, 32]])),
        Case::new("reduction", fixture("reduction"), vec![("n", 3001)], None),
        Case::new("padding_hazard", fixture("padding_hazard"), vec![], one_tile_across_j.clone()),
        Case::new("skew_dep", fixture("skew_dep"), vec![], one_tile_across_j),
    ]);
}

/// Regions written for the generator (`tests/ir/small/src/`): chunk buffers shifting
/// along an inner array dimension (the intra-tile order differs from the inter-tile
/// order), a full intra-tile loop (tile 1), double and int elements, loop indices as
/// values, a buffer that does not move with the outer loop, unsigned indices,
/// symbolic sizes, an integer division that padded iterations must skip, and a full
/// buffer that is read and written.
#[test]
fn generator_fixtures_bit_exact_on_the_emulated_device() {
    check_all(vec![
        Case::new("axis1", small("axis1"), vec![], Some(vec![vec![8, 2, 8], vec![32, 1, 32], vec![4, 3, 16]])),
        Case::new("doubles", small("doubles"), vec![("n", 21), ("m", 45)], None),
        Case::new("unsigned_idx", small("unsigned_idx"), vec![("n", 17)], None),
        Case::new("inplace1d", small("inplace1d"), vec![("n", 2999)], None),
    ]);
}

/// A loop with step 2 is outside what the generator supports: it says so (the caller
/// then uses the baseline kernel) instead of generating code. So does a plan laid out
/// for another port width.
#[test]
fn unsupported_plans_are_refused() {
    let opts = |w| tessera_poly::PolyOptions { tile: None, port_width: w, ..Default::default() };
    let r = small("strided");
    let plan = tessera_poly::optimize(&r, &opts(4)).unwrap();
    let e = tessera_hls::paper::generate(&r, &plan, "tessera_k", 4, Variant::Tessera).unwrap_err();
    assert!(e.message().contains("step 2") && e.code() == "kernel-unsupported", "{e}");
    let r = small("2D-5p");
    let plan8 = tessera_poly::optimize(&r, &opts(8)).unwrap();
    let e = tessera_hls::paper::generate(&r, &plan8, "tessera_k", 4, Variant::Paper).unwrap_err();
    // Generating from a plan made for other options contradicts the pipeline: a bug.
    assert!(e.message().contains("port width 8") && e.code() == "kernel-inconsistent", "{e}");
    // Tiles of 1024 in 3D: megabytes of registers (and of stack in emulation).
    let r = small("3D-heat");
    let big = tessera_poly::optimize(&r, &tessera_poly::PolyOptions { tile: Some(vec![1024]), port_width: 4, ..Default::default() }).unwrap();
    let e = tessera_hls::paper::generate(&r, &big, "tessera_k", 4, Variant::Tessera).unwrap_err();
    assert!(e.message().contains("flip-flops: choose smaller tiles") && e.code() == "kernel-too-large", "{e}");
}
