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

//!
//! Dataflow kernels ([`dataflow_lanes`]): their buffers are sized by the strips
//! (`tessera_hls::dataflow`, within half the device's block RAM); their datapath by the
//! lane count V. V = W (the port width) keeps every port the bound; when the operators
//! of W lanes would take more than half of the device's DSPs, LUTs or flip-flops (the
//! other half is the platform shell's and the other kernels', as for the block RAM),
//! V is halved until they fit, and the compute process takes W / V cycles per word.

use crate::shape;
use tessera_hls::dataflow::Analysis;
use tessera_ir::reject::Reason;
use tessera_ir::Region;
use tessera_model::{estimate_resources, usage, ResourceParams, Usage};
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
        // The binding resource's share: the largest.
        let share = u.max();
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

/// The share of each of the device's DSPs, LUTs and flip-flops a dataflow kernel's
/// datapath may take (the block RAM's is `tessera_hls::dataflow::BRAM36_BUDGET`).
pub const DATAFLOW_SHARE: f64 = 0.5;

/// Sets the lane count of the dataflow kernel `an` of `region` (module docs): the
/// requested one (`lanes=V`), else the largest power of two up to W whose datapath
/// takes at most [`DATAFLOW_SHARE`] of the DSPs, LUTs and flip-flops (1 when none
/// does). Returns the plan's line saying which and why.
pub fn dataflow_lanes(region: &Region, an: &mut Analysis, requested: Option<u32>) -> Result<String, Reason> {
    let p = ResourceParams::XCVU9P;
    let estimate = |an: &Analysis| usage(&estimate_resources(&shape::dataflow(region, an), &p).total, &p);
    let describe = |an: &Analysis, u: &Usage, why: &str| {
        format!(
            "lanes: {} per cycle{} ({why}; {} {:.0}% of the XCVU9P, modelled)",
            an.lanes,
            if an.lanes < an.w { format!(", a word of {} every {} cycles", an.w, an.ii()) } else { String::new() },
            u.binding,
            100.0 * u.max()
        )
    };
    if let Some(v) = requested {
        an.set_lanes(i64::from(v))?;
        let u = estimate(an);
        return Ok(describe(an, &u, &format!("lanes={v}")));
    }
    let within = |u: &Usage| u.dsp <= DATAFLOW_SHARE && u.lut <= DATAFLOW_SHARE && u.ff <= DATAFLOW_SHARE;
    let mut v = an.w;
    loop {
        an.set_lanes(v)?;
        let u = estimate(an);
        if within(&u) {
            let why = if v == an.w {
                "the port width: compute keeps pace with the ports".to_string()
            } else {
                format!("the most whose datapath takes at most half of the device's DSPs, LUTs and flip-flops; {} would not", 2 * v)
            };
            return Ok(describe(an, &u, &why));
        }
        if v == 1 {
            return Ok(describe(an, &u, "even one lane's datapath takes more than half of the device's DSPs, LUTs or flip-flops"));
        }
        v /= 2;
    }
}

/// The dataflow kernel's analysis of `region` at `port_width` with its lane count
/// chosen by [`dataflow_lanes`], and the plan line about the lanes.
pub fn dataflow_analysis(region: &Region, port_width: u32, lanes: Option<u32>) -> Result<(Analysis, String), Reason> {
    let mut an = tessera_hls::dataflow::analyze(region, port_width)?;
    let note = dataflow_lanes(region, &mut an, lanes)?;
    Ok((an, note))
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

#[cfg(test)]
mod lanes_tests {
    use super::*;
    use crate::test_support::fixture;
    use tessera_ir::{BinOp, Expr, Stmt};

    /// Every statement's value `v` replaced by `v + v + v`: three times the operators.
    fn tripled(mut r: Region) -> Region {
        fn go(body: &mut [Stmt]) {
            for s in body {
                match s {
                    Stmt::For { body, .. } => go(body),
                    Stmt::Assign { value, .. } => {
                        let ty = value.ty().unwrap();
                        let v = value.clone();
                        let sum = |a: Expr, b: Expr| Expr::Binary { op: BinOp::Add, lhs: Box::new(a), rhs: Box::new(b), ty };
                        *value = sum(sum(v.clone(), v.clone()), v);
                    }
                    _ => {}
                }
            }
        }
        go(&mut r.body);
        r
    }

    /// The benchmark stencils keep W = 16 lanes: their datapaths take at most 22 % of
    /// the DSPs (3D-heat), under half the device.
    #[test]
    fn benchmark_stencils_get_the_port_width() {
        for name in ["2D-jacobi", "3D-heat", "3D-27p"] {
            let (an, note) = dataflow_analysis(&fixture(&format!("bench/{name}.ir.json")), 16, None).unwrap();
            assert_eq!(an.lanes, 16, "{name}: {note}");
            assert!(note.starts_with("lanes: 16 per cycle (the port width"), "{note}");
        }
    }

    /// 3D-heat with three times its operators: 16 lanes would take about two thirds of
    /// the DSPs (modelled), 8 take a third, so V = 8 and a word every 2 cycles.
    #[test]
    fn a_datapath_over_half_the_dsps_halves_the_lanes() {
        let r = tripled(fixture("bench/3D-heat.ir.json"));
        let p = ResourceParams::XCVU9P;
        let mut an = tessera_hls::dataflow::analyze(&r, 16).unwrap();
        let u16 = usage(&estimate_resources(&shape::dataflow(&r, &an), &p).total, &p);
        assert!(u16.dsp > DATAFLOW_SHARE, "{u16:?}");
        let note = dataflow_lanes(&r, &mut an, None).unwrap();
        assert_eq!((an.lanes, an.ii()), (8, 2), "{note}");
        let u8 = usage(&estimate_resources(&shape::dataflow(&r, &an), &p).total, &p);
        assert!(u8.dsp <= DATAFLOW_SHARE && u8.dsp * 1.9 < u16.dsp, "{u8:?} {u16:?}");
        assert!(note.starts_with("lanes: 8 per cycle, a word of 16 every 2 cycles (the most whose datapath"), "{note}");
        assert!(note.contains("16 would not"), "{note}");
        // The kernel: the compute loop at II = 2, the operators of 8 lanes.
        let (k, plan) = tessera_hls::dataflow::generate_from(&r, "t", &an).unwrap();
        assert!(plan.contains("every 2 cycles (8 lanes per cycle, operators shared)"), "{plan}");
        assert!(k.source.contains("#pragma HLS PIPELINE II=2"), "{}", k.source);
        assert!(k.source.contains("#pragma HLS ALLOCATION operation instances="), "{}", k.source);
    }

    /// `lanes=V` is taken as given; more than the port width is refused.
    #[test]
    fn requested_lanes() {
        let r = fixture("bench/2D-jacobi.ir.json");
        let (an, note) = dataflow_analysis(&r, 16, Some(4)).unwrap();
        assert_eq!((an.lanes, an.ii()), (4, 4));
        assert!(note.starts_with("lanes: 4 per cycle, a word of 16 every 4 cycles (lanes=4;"), "{note}");
        let e = dataflow_analysis(&r, 8, Some(16)).unwrap_err();
        assert!(e.remark().contains("16 lanes: expected a power of two from 1 to the port width 8"), "{}", e.remark());
    }
}
