//! Tile sizes from the resource model: the largest tiles whose tiled kernel fits the
//! device, when neither the options nor a `#pragma tessera tile(…)` give sizes.
//!
//! The tiled kernels unroll the innermost intra-tile loop completely (one lane per
//! element of a tile row) and keep their caches in registers, so the optimizer's
//! default tiles (1024 / 128² / 32³) can ask for more DSPs or flip-flops than the
//! XCVU9P has: 1D-jacobi at 1024 lanes needs 15 360 DSPs (modelled), the device has
//! 6 840. Starting from those defaults, [`choose`] plans the region, estimates the
//! tiled kernel ([`crate::shape::tiled`], `tessera_model::estimate_resources`) and, while
//! it does not fit, halves the largest tile size — the innermost on ties, since lanes
//! cost most — never below the port width for the loop that gives the lanes (fewer
//! lanes than elements per beat would make the kernel slower than its ports) nor
//! below 1 for the others. Every figure involved is *modelled*.

use crate::shape;
use tessera_ir::Region;
use tessera_model::{estimate_resources, usage, ResourceParams};
use tessera_poly::{optimize, Plan, PolyOptions, PolyReject};

/// What [`choose`] decided.
#[derive(Clone, Debug, PartialEq)]
pub struct TileChoice {
    /// Tile sizes, outermost loop first.
    pub tile: Vec<i64>,
    /// Whether the kernel at these sizes fits the device (else they are the smallest
    /// sizes tried, and the kernel does not fit).
    pub fits: bool,
    /// One line for the plan file: the sizes, the binding resource and its share.
    pub note: String,
    /// The optimizer's plan at `tile` (when it planned them).
    pub plan: Result<Plan, PolyReject>,
}

/// The tile sizes for `region` under the optimizer's options `opts` (their `tile` is
/// ignored; see the module docs), or `None` when the optimizer cannot plan the region
/// at its default sizes (the caller's own planning then reports why).
pub fn choose(region: &Region, opts: &PolyOptions) -> Option<TileChoice> {
    let p = ResourceParams::XCVU9P;
    let port_width = opts.port_width;
    let mut first = optimize(region, &PolyOptions { tile: None, ..opts.clone() }).ok()?;
    let mut tile: Vec<i64> = first.tiling.tile_sizes.clone();
    // The plan of the default sizes given explicitly (the caller's plan).
    first.options.tile = Some(tile.clone());
    let lanes_loop = first.tiling.permutation.last().copied();
    let mut plan = first;
    let mut tried = 0;
    loop {
        let u = usage(&estimate_resources(&shape::tiled(region, &plan), &p).total, &p);
        let share = [("BRAM36", u.bram36), ("URAM", u.uram), ("DSP", u.dsp), ("LUT", u.lut), ("FF", u.ff)]
            .into_iter()
            .find(|(n, _)| *n == u.binding)
            .map_or(0.0, |x| x.1);
        let sizes = tile.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        let note = format!(
            "tile sizes {sizes} from the resource model: {} {:.0}% of the XCVU9P (modelled){}",
            u.binding,
            100.0 * share,
            if tried > 0 { format!(", after {tried} halving(s) of the defaults") } else { String::new() }
        );
        if u.fits {
            return Some(TileChoice { tile, fits: true, note, plan: Ok(plan) });
        }
        let minimum = |d: usize| if Some(d) == lanes_loop { i64::from(port_width.max(1)) } else { 1 };
        // The largest size that can still be halved; the innermost on ties.
        let Some(d) = (0..tile.len()).filter(|&d| tile[d] / 2 >= minimum(d)).max_by_key(|&d| (tile[d], d)) else {
            return Some(TileChoice { tile, fits: false, note, plan: Ok(plan) });
        };
        tile[d] /= 2;
        tried += 1;
        match optimize(region, &PolyOptions { tile: Some(tile.clone()), ..opts.clone() }) {
            Ok(next) => plan = next,
            Err(e) => {
                let smaller = tile.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
                let note = format!("{note}; the optimizer refuses the smaller tiles {smaller}: {}", e.remark());
                return Some(TileChoice { tile, fits: false, note, plan: Err(e) });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::fixture;

    fn opts16() -> PolyOptions {
        PolyOptions { tile: None, port_width: 16, reassociate: false }
    }

    /// 1D-jacobi: 15 DSPs per lane (modelled), so 1024 and 512 lanes do not fit the
    /// XCVU9P's 6 840 DSPs and 256 do.
    #[test]
    fn one_d_jacobi_halves_to_256_lanes() {
        let c = choose(&fixture("bench/1D-jacobi.ir.json"), &opts16()).unwrap();
        assert_eq!((c.tile.as_slice(), c.fits), (&[256i64][..], true), "{c:?}");
        assert!(c.note.starts_with("tile sizes 256 from the resource model: DSP 56% of the XCVU9P (modelled)"), "{}", c.note);
        assert!(c.note.ends_with("after 2 halving(s) of the defaults"), "{}", c.note);
    }

    /// Every benchmark stencil gets tiles that fit, no larger than the defaults, and
    /// at least the port width along the loop that gives the lanes.
    #[test]
    fn every_benchmark_stencil_fits() {
        let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir/bench");
        let mut n = 0;
        for e in std::fs::read_dir(&dir).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with(".ir.json") {
                continue;
            }
            let r = fixture(&format!("bench/{name}"));
            let c = choose(&r, &opts16()).unwrap_or_else(|| panic!("{name}: not planned"));
            assert!(c.fits, "{name}: {c:?}");
            // The plan handed back is the one of the chosen sizes.
            assert_eq!(c.plan, optimize(&r, &PolyOptions { tile: Some(c.tile.clone()), ..opts16() }), "{name}");
            let defaults = tessera_poly::tiling::default_tile_sizes(c.tile.len());
            assert!(c.tile.iter().zip(&defaults).all(|(t, d)| t <= d), "{name}: {c:?}");
            n += 1;
        }
        assert_eq!(n, 10, "the ten benchmark stencils");
    }
}
