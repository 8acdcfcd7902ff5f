//! Steps 1 and 3 of the method, and the legality of step 2's permutations.
//!
//! **Step 1, tile sizes (paper Sec. 4, step 1).** The paper fixes SZ by nest depth:
//! (1024), (128, 128), (32, 32, 32) — the largest its HLS runs finished in 3–5 h.
//! These are Tessera's defaults ([`default_tile_sizes`]); a compile overrides them with
//! `PolyOptions::tile` (CLI `--tile 64,64`, plugin `-fplugin-arg-tessera-tile=64,64`).
//! A single size (`tile=16`, `tile(16)`) applies to every loop of every nest, whatever
//! its depth, so one compile flag serves programs with 1D, 2D and 3D regions; a list
//! of two or more sizes gives one per loop, outermost first, and a region whose depth
//! differs is not tiled (`tile-size-count`, reported per region; never truncated or
//! padded).
//! Beyond the paper, depth 4 gets 16⁴ and depth 5 gets 8⁵. (`docs/benchmarks.md`
//! calls 512/64²/32³ the paper's "default" configuration; the issue
//! and the paper's headline figures use 1024/128²/32³, which win here.)
//!
//! **Tiled schedule (paper Sec. 2, `T(SZ, p, δ)`).** With `δ^o_x = −lb_x` every tile
//! origin is `ti_x = lb_x + SZ_x·⌊(x − lb_x)/SZ_x⌋`, and the tiled schedule is
//! `Sch' = S_s[x] -> [ti_1 … ti_d, x_p(1) … x_p(d), s]`: inter-tile loops in the
//! original order, intra-tile loops permuted by p, statements in textual order.
//!
//! **Legality.** A permutation p is legal when `Sch'` respects every flow, anti and
//! output dependence: no dependence `x → y` with `Sch'(x) ⪰ Sch'(y)` (isl:
//! `D ∩ lex_ge(Sch', Sch') = ∅`). The identity is legal iff rectangular tiling
//! itself is; when it is not (distance (1, −1) of a Gauss–Seidel sweep) the region is
//! rejected, as in the paper (Sec. 4: "excludes those where tiling breaks the data
//! dependences"). A reduction whose accumulations must keep the loop's order
//! (`crate::reduction`) adds the pairs of its accumulations in that order to `D`
//! (`deps::ReductionOrder`): then only tilings that perform them in the loop's order
//! are legal, and when the identity is not, the region is rejected with
//! `reduction-order`.
//!
//! **Step 3, δ and padding (paper Sec. 4, step 3).** `δ^o_x = −lb_x` makes the first
//! tile full and removes the `max` from the intra-tile lower bound; `δ^i_x = −ti_x`
//! makes intra-tile loops start at 0. The innermost intra-tile loop `p(d)` is padded:
//! its upper bound becomes `lb + SZ·⌈(ub − lb)/SZ⌉`, stride kept, so it always runs
//! `SZ/step` iterations and HLS can unroll/pipeline it. Outer intra-tile loops keep
//! `min(SZ, ub − ti)`. Padded iterations must not change the result:
//! - a cached write is *trimmed* at write-back: only elements written by real
//!   iterations of the tile go back to DDR;
//! - a write whose padded instances could still corrupt data — a padded instance
//!   writes an element that a real iteration of the same tile reads later, or that a
//!   real iteration writes earlier (so trimming cannot drop it) — is made `nc` and
//!   *guarded* (`if (in original domain)`). This generalises the paper's
//!   write-after-write corner case, and is computed exactly with isl
//!   (`harmful_padded_writes`).
//! - every `nc` access gets the guard when padding exists (an `nc` read would
//!   otherwise read DDR outside the array);
//! - so does every accumulation into a reduction variable (`crate::reduction`): a
//!   padded iteration must never accumulate.

use crate::affine::{Aff, Sym};
use crate::deps::{Dependences, IslDeps};
use crate::isl::{self, ctx_err, IslResult, Text};
use crate::reject::{PolyReject, PolyRejectReason as R};
use crate::scop::{domain_constraints, isl_ident, isl_sym, stmt_tuple, AccessKind, Scop};
use isl_rs::{Context, UnionMap, UnionSet};
use serde::{Deserialize, Serialize};

/// Deepest nest the optimizer handles (5! = 120 permutations).
pub const MAX_DEPTH: usize = 5;

/// The default tile sizes for a nest of depth `d` (see the module docs).
pub fn default_tile_sizes(d: usize) -> Vec<i64> {
    match d {
        1 => vec![1024],
        2 => vec![128, 128],
        3 => vec![32, 32, 32],
        4 => vec![16; 4],
        _ => vec![8; d],
    }
}

/// The paper's tile presets by nest depth (its "Configurations": `small` is its
/// "half" tiles 256 / 32² / 16³, `default` 512 / 64² / 32³, `large` its headline
/// figures' 1024 / 128² / 32³), for the plugin's `tile=small|default|large` and `tessera
/// bench --tiles`. `None` for another name.
pub fn preset_tile_sizes(preset: &str, d: usize) -> Option<Vec<i64>> {
    let per_dim = match (preset, d) {
        ("small", 1) => 256,
        ("small", 2) => 32,
        ("small", _) => 16,
        ("default", 1) => 512,
        ("default", 2) => 64,
        ("default", _) => 32,
        ("large", 1) => 1024,
        ("large", 2) => 128,
        ("large", _) => 32,
        _ => return None,
    };
    Some(vec![per_dim; d])
}

/// Parses a tile list (CLI `--tile`, plugin `tile=`): one size, `16` (every loop of
/// every nest), or one per loop, `64,64`. Sizes must be positive integers.
pub fn parse_tile_list(s: &str) -> Result<Vec<i64>, String> {
    s.split(',')
        .map(|t| match t.trim().parse::<i64>() {
            Ok(v) if v > 0 => Ok(v),
            Ok(_) => Err(format!("tile size '{}' in tile list '{s}' is not positive", t.trim())),
            Err(_) => Err(format!("'{}' in tile list '{s}' is not an integer", t.trim())),
        })
        .collect()
}

/// The tile sizes to use for `scop`, checked against the nest: a single requested size
/// is used for every loop; a list must have one size per loop.
pub(crate) fn resolve_tile_sizes(scop: &Scop, tile: Option<&[i64]>) -> Result<Vec<i64>, PolyReject> {
    let d = scop.depth();
    if d > MAX_DEPTH {
        return Err(PolyReject::new(R::TooDeep { depth: d, max: MAX_DEPTH }, &scop.loc));
    }
    let sz = match tile {
        Some(&[n]) => vec![n; d],
        Some(t) if t.len() != d => return Err(PolyReject::new(R::TileSizeCount { depth: d, given: t.len() }, &scop.loc)),
        Some(t) => t.to_vec(),
        None => default_tile_sizes(d),
    };
    for (l, &s) in scop.loops.iter().zip(&sz) {
        if s < 1 || s % l.step != 0 {
            return Err(PolyReject::new(R::BadTileSize { var: l.var.clone(), size: s, step: l.step }, &l.loc));
        }
    }
    Ok(sz)
}

/// All permutations of `0..d` in lexicographic order (identity first).
pub fn permutations(d: usize) -> Vec<Vec<usize>> {
    fn rec(prefix: &mut Vec<usize>, rest: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if rest.is_empty() {
            out.push(prefix.clone());
            return;
        }
        for i in 0..rest.len() {
            let x = rest.remove(i);
            prefix.push(x);
            rec(prefix, rest, out);
            prefix.pop();
            rest.insert(i, x);
        }
    }
    let mut out = Vec::new();
    rec(&mut Vec::new(), &mut (0..d).collect(), &mut out);
    out
}

fn isl_aff(scop: &Scop, a: &Aff) -> String {
    a.format(&|s| isl_sym(&scop.loops, s))
}

/// isl text of the tile origin of loop x as a function of the loop index.
fn origin_text(scop: &Scop, sz: &[i64], x: usize) -> String {
    let lb = isl_aff(scop, &scop.loops[x].lower);
    let v = isl_ident(&scop.loops[x].var);
    format!("({lb}) + {}*floor(({v} - ({lb}))/{})", sz[x], sz[x])
}

/// `Sch'` for permutation `perm` (text).
pub(crate) fn schedule_text(scop: &Scop, sz: &[i64], perm: &[usize]) -> String {
    let parts: Vec<String> = (0..scop.statements.len())
        .map(|s| {
            let mut out: Vec<String> = (0..scop.depth()).map(|x| origin_text(scop, sz, x)).collect();
            out.extend(perm.iter().map(|&x| isl_ident(&scop.loops[x].var)));
            out.push(s.to_string());
            format!("{} -> [{}]", stmt_tuple(scop, s), out.join(", "))
        })
        .collect();
    format!("{}{{ {} }}", scop.isl_params(), parts.join("; "))
}

/// `S_s[x] -> [ti_1 … ti_d]`: which tile an iteration belongs to.
fn tile_map_text(scop: &Scop, sz: &[i64]) -> String {
    let parts: Vec<String> = (0..scop.statements.len())
        .map(|s| {
            let out: Vec<String> = (0..scop.depth()).map(|x| origin_text(scop, sz, x)).collect();
            format!("{} -> [{}]", stmt_tuple(scop, s), out.join(", "))
        })
        .collect();
    format!("{}{{ {} }}", scop.isl_params(), parts.join("; "))
}

/// The padded upper bound of loop x: `lb + SZ·⌈(ub − lb)/SZ⌉` — as an [`Aff`] when
/// the extent is constant, and always as isl text.
pub(crate) fn padded_upper(scop: &Scop, sz: &[i64], x: usize) -> (Option<Aff>, String) {
    let l = &scop.loops[x];
    if let Some(e) = scop.constant_extent(x) {
        let n = if e <= 0 { 0 } else { (e + sz[x] - 1) / sz[x] };
        let a = l.lower.add_constant(n * sz[x]);
        let t = isl_aff(scop, &a);
        return (Some(a), t);
    }
    let (lb, ub) = (isl_aff(scop, &l.lower), isl_aff(scop, &l.upper));
    (None, format!("({lb}) + {}*floor((({ub}) - ({lb}) + {})/{})", sz[x], sz[x] - 1, sz[x]))
}

/// The padded domain when the intra-tile loop `x` is padded (text).
pub(crate) fn padded_domain_text(scop: &Scop, sz: &[i64], x: usize) -> String {
    let (_, up) = padded_upper(scop, sz, x);
    let parts: Vec<String> =
        (0..scop.statements.len()).map(|s| format!("{}{}", stmt_tuple(scop, s), domain_constraints(scop, Some((x, &up))))).collect();
    format!("{}{{ {} }}", scop.isl_params(), parts.join("; "))
}

/// The live isl objects of one permutation's tiled schedule.
pub(crate) struct PermIsl {
    /// `Sch'`.
    pub sched: UnionMap,
    /// The padded domain `Dom_pad`.
    pub padded_domain: UnionSet,
    /// Padded iterations `Dom_pad \ Dom`.
    pub padded: UnionSet,
}

impl PermIsl {
    /// Builds `Sch'` and the padded iterations for `perm`.
    pub(crate) fn new(ctx: &Context, scop: &Scop, sz: &[i64], perm: &[usize], dom: &UnionSet) -> IslResult<PermIsl> {
        let sched = isl::umap(ctx, &schedule_text(scop, sz, perm))?;
        let padded_dom = isl::uset(ctx, &padded_domain_text(scop, sz, *perm.last().expect("depth >= 1")))?;
        let padded = padded_dom.copy().map_err(ctx_err("copy"))?.subtract(dom.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("padded iterations"))?;
        Ok(PermIsl { sched, padded_domain: padded_dom, padded })
    }
}

/// What a tiled schedule breaks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Violation {
    /// A dependence, described.
    Dependence(String),
    /// The loop's order of a reduction's accumulations (index into
    /// `Dependences::orders`).
    ReductionOrder(usize),
}

/// `None` if `perm` respects every dependence and keeps every reduction's order that
/// must be kept, else the first thing it breaks (dependences first).
pub(crate) fn violated_dependence(scop: &Scop, deps: &Dependences, ideps: &IslDeps, perm: &PermIsl) -> IslResult<Option<Violation>> {
    if ideps.pairs.is_empty() && ideps.orders.is_empty() {
        return Ok(None);
    }
    let ge = perm
        .sched
        .copy()
        .map_err(ctx_err("copy"))?
        .lex_ge_union_map(perm.sched.copy().map_err(ctx_err("copy"))?)
        .map_err(ctx_err("tiled order"))?;
    if !ideps.pairs.is_empty() {
        let bad = ideps.all.copy().map_err(ctx_err("copy"))?.intersect(ge.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("legality"))?;
        if !bad.is_empty().map_err(ctx_err("legality"))? {
            for (d, rel) in deps.pairs.iter().zip(&ideps.pairs) {
                let b = rel.copy().map_err(ctx_err("copy"))?.intersect(ge.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("legality"))?;
                if !b.is_empty().map_err(ctx_err("legality"))? {
                    return Ok(Some(Violation::Dependence(d.describe(scop))));
                }
            }
            return Ok(Some(Violation::Dependence(format!("dependences {}", bad.text()))));
        }
    }
    // Two accumulations in the loop's order that the tiled schedule runs the other way
    // round (or at once: they are distinct instances, so never).
    for (k, rel) in ideps.orders.iter().enumerate() {
        let b = rel.copy().map_err(ctx_err("copy"))?.intersect(ge.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("accumulation order"))?;
        if !b.is_empty().map_err(ctx_err("accumulation order"))? {
            return Ok(Some(Violation::ReductionOrder(k)));
        }
    }
    Ok(None)
}

/// The write accesses whose padded instances could corrupt data if the write were
/// cached and only trimmed (see the module docs): such writes must be `nc` and
/// guarded. `acc_fn` are the unrestricted access relations, `dom` the domain.
pub(crate) fn harmful_padded_writes(
    ctx: &Context,
    scop: &Scop,
    sz: &[i64],
    perm: &PermIsl,
    acc_fn: &[UnionMap],
    dom: &UnionSet,
) -> IslResult<Vec<usize>> {
    if perm.padded.is_empty().map_err(ctx_err("padding"))? {
        return Ok(Vec::new());
    }
    let tile = isl::umap(ctx, &tile_map_text(scop, sz))?;
    let same_tile = tile.copy().map_err(ctx_err("copy"))?.apply_range(tile.reverse().map_err(ctx_err("reverse"))?).map_err(ctx_err("same tile"))?;
    let lt = perm.sched.copy().map_err(ctx_err("copy"))?.lex_lt_union_map(perm.sched.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("order"))?;
    let lt_same = lt.intersect(same_tile).map_err(ctx_err("order"))?;
    let gt_same = lt_same.copy().map_err(ctx_err("copy"))?.reverse().map_err(ctx_err("reverse"))?;
    let mut out = Vec::new();
    for w in scop.accesses.iter().filter(|a| a.kind == AccessKind::Write) {
        let wp = acc_fn[w.id].copy().map_err(ctx_err("copy"))?.intersect_domain(perm.padded.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("padded writes"))?;
        let mut harmful = false;
        for other in scop.accesses.iter().filter(|a| a.array == w.array) {
            let real = acc_fn[other.id].copy().map_err(ctx_err("copy"))?.intersect_domain(dom.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("real accesses"))?;
            let same = wp.copy().map_err(ctx_err("copy"))?.apply_range(real.reverse().map_err(ctx_err("reverse"))?).map_err(ctx_err("same element"))?;
            // A real read after the padded write, or a real write before it, in the tile.
            let order = if other.kind == AccessKind::Read { &lt_same } else { &gt_same };
            let bad = same.intersect(order.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("padding hazard"))?;
            if !bad.is_empty().map_err(ctx_err("padding hazard"))? {
                harmful = true;
                break;
            }
        }
        if harmful {
            out.push(w.id);
        }
    }
    Ok(out)
}

/// How many iterations an intra-tile loop runs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum IntraTrip {
    /// The innermost intra-tile loop, padded: always `count` iterations (step kept).
    Padded {
        /// `SZ / step`.
        count: i64,
    },
    /// Every tile is full (constant extent, a multiple of SZ): `count` iterations.
    Full {
        /// `SZ / step`.
        count: i64,
    },
    /// The last tile may be partial: the loop runs while `x < min(SZ, remaining)`.
    Partial {
        /// `SZ / step` for full tiles.
        count: i64,
        /// `upper − ti`: the index range left in the loop at this tile.
        remaining: Aff,
    },
}

impl IntraTrip {
    /// Iterations of a full tile.
    pub fn count(&self) -> i64 {
        match self {
            IntraTrip::Padded { count } | IntraTrip::Full { count } | IntraTrip::Partial { count, .. } => *count,
        }
    }
}

/// One loop of the nest after tiling.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TiledLoop {
    /// Original index name (also the intra-tile index, relative to the tile origin).
    pub var: String,
    /// Name of the tile origin (the inter-tile loop index), e.g. `ti`.
    pub tile_var: String,
    /// Original lower bound.
    pub lower: Aff,
    /// Original exclusive upper bound.
    pub upper: Aff,
    /// Step (kept inside the tile).
    pub step: i64,
    /// Tile size SZ (in index units).
    pub size: i64,
    /// `δ^o = −lower`: the inter-tile loop runs `ti = lower; ti < upper; ti += SZ`.
    pub delta_outer: Aff,
    /// `δ^i = −ti`: the intra-tile index is relative, `x = ti + i`.
    pub delta_inner: Aff,
    /// Position of this loop among the intra-tile loops (0 = outermost), from p.
    pub intra_position: usize,
    /// Trip count of the intra-tile loop.
    pub trip: IntraTrip,
    /// For the padded loop, the padded upper bound of the index when constant.
    pub padded_upper: Option<Aff>,
}

/// The tiling transformation `T(SZ, p, δ)` chosen for a region, with padding.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TilingPlan {
    /// SZ per original loop.
    pub tile_sizes: Vec<i64>,
    /// The intra-tile loops, outer to inner, as original loop indices (p).
    pub permutation: Vec<usize>,
    /// The same by name.
    pub permutation_names: Vec<String>,
    /// Per original loop (outermost first).
    pub loops: Vec<TiledLoop>,
    /// `Sch'` as an isl union map.
    pub schedule: String,
    /// The padded loop (`p(d)`, original index).
    pub padded_loop: usize,
    /// The padded domain as an isl union set.
    pub padded_domain: String,
    /// The padded iterations `Dom_pad \ Dom` (isl text).
    pub padded_iterations: String,
    /// Whether padded iterations exist (for some parameter values).
    pub padding: bool,
    /// Accesses (ids) executed under a guard `if (in original domain)`: the `nc`
    /// accesses, when there is padding.
    pub guarded: Vec<usize>,
    /// Cached writes (ids) trimmed at write-back to the elements real iterations of
    /// the tile wrote.
    pub trimmed: Vec<usize>,
    /// Statements (indices) that accumulate into a reduction variable and run under
    /// the guard `if (in original domain)`: every accumulation, when there is padding
    /// (a padded iteration must never accumulate).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub guarded_accumulations: Vec<usize>,
}

/// Builds the tiling plan of the chosen permutation.
pub(crate) fn plan(
    scop: &Scop,
    sz: &[i64],
    perm: &[usize],
    pisl: &PermIsl,
    nc: &[usize],
    cached_writes: &[usize],
) -> IslResult<TilingPlan> {
    let d = scop.depth();
    let padded_loop = perm[d - 1];
    let padding = !pisl.padded.is_empty().map_err(ctx_err("padding"))?;
    let loops = (0..d)
        .map(|x| {
            let l = &scop.loops[x];
            let count = sz[x] / l.step;
            let pos = perm.iter().position(|&y| y == x).expect("permutation");
            let trip = if x == padded_loop {
                IntraTrip::Padded { count }
            } else if scop.constant_extent(x).is_some_and(|e| e % sz[x] == 0) {
                IntraTrip::Full { count }
            } else {
                IntraTrip::Partial { count, remaining: l.upper.sub(&Aff::sym(Sym::Tile(x))) }
            };
            TiledLoop {
                var: l.var.clone(),
                tile_var: scop.names.tiles[x].clone(),
                lower: l.lower.clone(),
                upper: l.upper.clone(),
                step: l.step,
                size: sz[x],
                delta_outer: l.lower.scale(-1),
                delta_inner: Aff::sym(Sym::Tile(x)).scale(-1),
                intra_position: pos,
                trip,
                padded_upper: if x == padded_loop { padded_upper(scop, sz, x).0 } else { None },
            }
        })
        .collect();
    Ok(TilingPlan {
        tile_sizes: sz.to_vec(),
        permutation: perm.to_vec(),
        permutation_names: perm.iter().map(|&x| scop.loops[x].var.clone()).collect(),
        loops,
        schedule: pisl.sched.text(),
        padded_loop,
        padded_domain: pisl.padded_domain.text(),
        padded_iterations: pisl.padded.text(),
        padding,
        guarded: if padding { nc.to_vec() } else { Vec::new() },
        trimmed: cached_writes.to_vec(),
        guarded_accumulations: if padding {
            (0..scop.statements.len()).filter(|&s| scop.statements[s].reduction.is_some()).collect()
        } else {
            Vec::new()
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::Region;

    /// The SCoP of a region dumped from `tests/programs/` (`tests/ir/programs/`).
    fn scop_of(file: &str) -> Scop {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir/programs").join(file);
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        let region = Region::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        crate::scop::extract(&region).unwrap_or_else(|e| panic!("{file}: {e}"))
    }

    #[test]
    fn tile_lists_parse() {
        assert_eq!(parse_tile_list("16"), Ok(vec![16]));
        assert_eq!(parse_tile_list(" 64, 32 "), Ok(vec![64, 32]));
        assert_eq!(parse_tile_list("8,x").unwrap_err(), "'x' in tile list '8,x' is not an integer");
        assert_eq!(parse_tile_list("8,,8").unwrap_err(), "'' in tile list '8,,8' is not an integer");
        assert_eq!(parse_tile_list("8,0").unwrap_err(), "tile size '0' in tile list '8,0' is not positive");
        assert!(parse_tile_list("-4").unwrap_err().contains("not positive"));
    }

    /// One size serves every depth; a list must match the depth, whichever way it
    /// differs, and is never truncated or padded.
    #[test]
    fn one_size_for_every_depth_and_lists_per_loop() {
        let (s1, s2, s3) = (scop_of("stencil1d.0.ir.json"), scop_of("stencil2d.0.ir.json"), scop_of("stencil3d.0.ir.json"));
        assert_eq!((s1.depth(), s2.depth(), s3.depth()), (1, 2, 3));
        for (s, d) in [(&s1, 1), (&s2, 2), (&s3, 3)] {
            assert_eq!(resolve_tile_sizes(s, Some(&[4])).unwrap(), vec![4; d]);
            assert_eq!(resolve_tile_sizes(s, None).unwrap(), default_tile_sizes(d));
        }
        assert_eq!(resolve_tile_sizes(&s3, Some(&[4, 8, 16])).unwrap(), [4, 8, 16]);
        assert_eq!(resolve_tile_sizes(&s2, Some(&[64, 32])).unwrap(), [64, 32]);
        for (s, t) in [(&s2, &[4, 8, 16][..]), (&s3, &[4, 8][..]), (&s1, &[4, 4][..])] {
            let e = resolve_tile_sizes(s, Some(t)).unwrap_err();
            assert_eq!(e.reason, R::TileSizeCount { depth: s.depth(), given: t.len() });
            assert_eq!(e.reason.code(), "tile-size-count");
            assert!(e.loc.line > 0, "the rejection is located at the region: {e}");
        }
    }

    /// A single size is still checked per loop (multiple of the step).
    #[test]
    fn one_size_checked_against_every_step() {
        let s = scop_of("types.2.ir.json");
        assert_eq!(s.loops[0].step, 3);
        assert_eq!(resolve_tile_sizes(&s, Some(&[6])).unwrap(), [6]);
        let e = resolve_tile_sizes(&s, Some(&[4])).unwrap_err();
        assert_eq!(e.reason, R::BadTileSize { var: s.loops[0].var.clone(), size: 4, step: 3 });
    }
}
