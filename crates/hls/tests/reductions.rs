//! Tiled kernels (modes `paper` and `tessera`) of regions with reductions
//! (`tessera_poly::reduction`): the kernel text of a 1-D floating sum (in the loop's
//! order, padded iterations guarded), a 2-D integer reduction (any order) and a 2-D
//! floating sum with `reassociate` (partial results) matches its snapshot in
//! `tests/snapshots/`; every kernel compiles warning-free as the emulated device and as
//! Vitis compile it; and on the emulated device the tiled kernels compute bit for bit
//! what the baseline kernel computes (which adds in the loop's order) — the floating
//! sum on random data, so any reordering would show.
//!
//! Bless the snapshots after an intended change of the generator with
//! `TESSERA_BLESS=1 cargo test --release -p tessera-hls --test reductions`, then review
//! the diff.

mod common;

use common::*;
use tessera_hls::Kernel;
use tessera_ir::Region;

fn fixture(name: &str) -> Region {
    load(&format!("tests/ir/{name}.ir.json"))
}

/// The tiled kernel of `region` with `reassociate` as given.
fn kernel(region: &Region, tile: &[i64], w: u32, reassociate: bool, variant: Variant) -> Kernel {
    let opts = tessera_poly::PolyOptions { tile: Some(tile.to_vec()), port_width: w, reassociate };
    let plan = tessera_poly::optimize(region, &opts).unwrap_or_else(|r| panic!("{}: {}", region.location, r.message()));
    tessera_hls::paper::generate(region, &plan, "tessera_red", w, variant).unwrap_or_else(|e| panic!("{e}"))
}

/// (fixture, tile sizes, port width, reassociate) of the snapshot kernels.
const SNAPSHOTS: &[(&str, &[i64], u32, bool)] =
    &[("sum1d", &[8], 4, false), ("checksum2d", &[5, 8], 4, false), ("sum2d", &[4, 8], 4, true)];

#[test]
fn snapshots_and_compilation() {
    let dir = repo().join("crates/hls/tests/snapshots");
    let tmp = tempfile::tempdir().unwrap();
    let mut stale = Vec::new();
    for (i, (name, tile, w, re)) in SNAPSHOTS.iter().enumerate() {
        for variant in [Variant::Paper, Variant::Tessera] {
            let k = kernel(&fixture(name), tile, *w, *re, variant);
            compile_check(&k, &tmp.path().join(format!("k{i}{}", variant.name())));
            let text = format!("{}\n// ---- emulation entry ----\n{}", k.source, k.emu_entry);
            let path = dir.join(format!("{name}.{}.w{w}.cpp", variant.name()));
            stale.extend(common::snapshot(&path, &text));
        }
    }
    assert!(
        stale.is_empty(),
        "kernels differ from their snapshots (review, then bless with \
         `TESSERA_BLESS=1 cargo test --release -p tessera-hls --test reductions`):\n{}",
        stale.join("\n")
    );
}

/// What the snapshots show, said once: the 1-D sum's accumulator starts at the
/// identity before the tiles, accumulates under the padding guard, and is combined into
/// the one-element port at the end; the reassociated sum keeps partial results.
#[test]
fn kernel_text() {
    let k = kernel(&fixture("sum1d"), &[8], 4, false, Variant::Tessera);
    for line in [
        "extern \"C\" void tessera_red(tessera::maxi<float> s_port, hls::burst_maxi<tessera::wide_t<4, float>> x, int n) {",
        "#pragma HLS INTERFACE mode=m_axi port=s_port offset=slave bundle=gmem1",
        "  // reduction(+: s): the private copy starts at the identity, accumulated in the loop's order (the tiling keeps it).\n  float s = 0.0f;",
        "      if (i < i_n) {\n        s = s + x_f[i];\n      }",
        "  float s_orig = s_port[0];\n  s_port[0] = (float)(s_orig + s);",
    ] {
        assert!(k.source.contains(line), "{line}\n{}", k.source);
    }
    assert!(k.emu_entry.contains("tessera_red(tessera::maxi<float>(ports[0]),"), "{}", k.emu_entry);
    let k = kernel(&fixture("sum2d"), &[4, 8], 4, true, Variant::Paper);
    for line in ["double s_part[8] = {0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0};", "s_part[j % 8] = s_part[j % 8] + g_c[0][j + 3] * g_c[0][j + 3];"] {
        assert!(k.source.contains(line), "{line}\n{}", k.source);
    }
}

/// The tiled kernels against the baseline kernel on the emulated device, for tiles
/// smaller and larger than the loops and every port width.
#[test]
fn bit_exact_on_the_emulated_device() {
    let cache = tempfile::tempdir().unwrap();
    type Case<'a> = (&'a str, &'a [(&'a str, i64)], &'a [&'a [i64]]);
    let cases: &[Case] = &[
        ("sum1d", &[("n", 3001)], &[&[8], &[100], &[4096]]),
        ("checksum2d", &[("n", 23), ("m", 41)], &[&[5, 8], &[64, 64]]),
    ];
    let mut failures = Vec::new();
    for (name, ints, tiles) in cases {
        let region = fixture(name);
        let inputs = Inputs::new(&region, ints, 7);
        let base = tessera_hls::baseline::generate(&region, "tessera_base");
        let (want, _) = run(&region, &manifest(&region, &base, "baseline"), &inputs, cache.path());
        for w in [4, 8, 16] {
            for tile in *tiles {
                for variant in [Variant::Paper, Variant::Tessera] {
                    let k = kernel(&region, tile, w, false, variant);
                    let (got, _) = run(&region, &manifest(&region, &k, variant.name()), &inputs, cache.path());
                    for (v, (g, e)) in region.vars.iter().zip(got.iter().zip(&want)) {
                        if g != e {
                            failures.push(format!("{name} {} w={w} tile={tile:?}: '{}' differs", variant.name(), v.name));
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
