//! Tessera's polyhedral optimizer: steps 1–4 of Mayer, Brandner, Philippsen,
//! "Employing polyhedral methods to optimize stencils on FPGAs with stencil-specific
//! caches, data reuse, and wide data bursts" (IMPACT 2024), restated
//! in `docs/method.md`. Step 5 (code generation) consumes the [`Plan`].
//!
//! ```text
//! Region (IR)
//!   └─ scop::extract ──────────► Scop          domain, schedule, accesses (Sec. 2)   ── PolyReject
//!   └─ deps::compute ──────────► Dependences   flow / anti / output, distances
//!   └─ step 1 tiling::resolve ─► SZ            defaults 1024 / 128² / 32³ (Sec. 4)   ── PolyReject
//!   └─ for every permutation p of the intra-tile loops:
//!        tiled schedule Sch' ── legal? (isl: deps ∩ lex_ge(Sch',Sch') = ∅)         ── identity illegal: PolyReject
//!        step 3 padding hazards ─► writes forced nc (guarded)
//!        step 2 buffers::Eval ──► BufferPlan   working sets, kinds, fusion, halos (Sec. 3)
//!   └─ cheapest legal p ──────► TilingPlan     SZ, p, δ, padded trip counts, guards/trims (Sec. 4, step 3)
//!   └─ redirect ──────────────► Redirect[]     subscripts into the buffers (Sec. 4, step 4)
//!   = Plan (serde; stable text dumps per stage)
//! ```
//!
//! Architecture invariants:
//! - Pure: no I/O; [`optimize`] is a function of the region and the options.
//! - Every set/map computation is done by isl; isl objects live in one context per
//!   [`optimize`] call and never leave it — the stage outputs hold their text forms.
//! - A region the optimizer cannot handle correctly is rejected with a reason from the
//!   closed set [`PolyRejectReason`]; it then runs as the baseline kernel or on the
//!   host, never wrongly.

#![warn(missing_docs)]

pub mod affine;
pub mod buffers;
pub mod dataflow;
pub mod deps;
pub mod dump;
pub mod fifo;
mod isl;
pub mod loadstore;
pub mod normalize;
pub mod redirect;
pub mod reduction;
pub mod reject;
pub mod scop;
pub mod tiling;

pub use affine::{Aff, Sym, SymNames, Term};
pub use buffers::{Buffer, BufferKind, BufferPlan, Shift};
pub use deps::{DepKind, Dependence, Dependences};
pub use dump::{dump, Stage};
pub use redirect::Redirect;
pub use reduction::ScopReduction;
pub use reject::{PolyReject, PolyRejectReason};
pub use scop::{Access, AccessKind, Array, Loop, Scop, Statement};
pub use tiling::{default_tile_sizes, parse_tile_list, preset_tile_sizes, IntraTrip, TiledLoop, TilingPlan};

use serde::{Deserialize, Serialize};
use tessera_ir::{Loc, Region};

/// Per-compile options of the optimizer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolyOptions {
    /// Tile sizes, one per loop of the nest, outermost first (`None`: the defaults of
    /// [`default_tile_sizes`]). From `--tile 64,64` / `-fplugin-arg-tessera-tile=64,64`.
    pub tile: Option<Vec<i64>>,
    /// Port width w in elements per beat (1: no alignment halo, the paper's Fig. 4
    /// numbers; 4/8/16 floats for 128/256/512-bit ports).
    pub port_width: u32,
    /// `-fplugin-arg-tessera-reassociate`: floating `+` and `*` reductions may be
    /// accumulated in any order (partial results); without it, a floating reduction is
    /// tiled only when the tiling keeps the loop's order of its accumulations
    /// ([`reduction`]).
    #[serde(default)]
    pub reassociate: bool,
}

impl Default for PolyOptions {
    fn default() -> Self {
        PolyOptions { tile: None, port_width: 1, reassociate: false }
    }
}

/// One permutation considered in step 2.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Candidate {
    /// The intra-tile loops, outer to inner, by name.
    pub permutation: Vec<String>,
    /// The same as original loop indices.
    pub loops: Vec<usize>,
    /// Whether the tiled schedule respects every dependence.
    pub legal: bool,
    /// For an illegal permutation, the dependence it violates.
    pub violated: Option<String>,
    /// Total buffer elements (legal permutations).
    pub total_buffer_elements: Option<u64>,
    /// Accesses without a buffer (legal permutations).
    pub uncached_accesses: Option<usize>,
    /// The buffers (legal permutations).
    pub buffers: Vec<Buffer>,
    /// Whether this is the permutation chosen.
    pub chosen: bool,
}

/// Everything steps 1–4 decided for one region: the input of code generation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plan {
    /// Location of the region's directive.
    pub location: Loc,
    /// Enclosing function.
    pub function: String,
    /// The options in effect (tile sizes filled in).
    pub options: PolyOptions,
    /// The SCoP.
    pub scop: Scop,
    /// Its dependences.
    pub deps: Dependences,
    /// Steps 1 and 3: the tiling of the chosen permutation.
    pub tiling: TilingPlan,
    /// Step 2: the buffers of the chosen permutation.
    pub buffers: BufferPlan,
    /// Step 4: every access redirected.
    pub redirects: Vec<Redirect>,
    /// Every permutation considered, in enumeration order.
    pub candidates: Vec<Candidate>,
    /// How the source's decreasing loops were made increasing: `scop` is of the
    /// region [`normalize::apply`] gives with it, and so is the tiled kernel.
    #[serde(default)]
    pub normalization: normalize::Normalization,
}

impl Plan {
    /// The chosen permutation by loop name, outer to inner.
    pub fn permutation(&self) -> &[String] {
        &self.tiling.permutation_names
    }

    /// JSON (pretty).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("plans are always serialisable")
    }
}

/// Runs steps 1–4 on a region.
///
/// Decreasing loops are planned as increasing ones ([`normalize`]): over their negated
/// index, in the source order; or, when the nest has no dependence at all (so the
/// order is free), those of step −1 upwards over their own index, which keeps the
/// subscripts' signs. [`Plan::normalization`] says which; the tiled generator prints
/// the same region.
pub fn optimize(region: &Region, opts: &PolyOptions) -> Result<Plan, PolyReject> {
    let mut normalization = normalize::Normalization::default();
    let mut counted = normalize::apply(region, &normalization)?;
    let mut scop = scop::extract(&counted)?;
    let reversible = normalize::reversible(region);
    if !reversible.is_empty() && dependence_free(&scop, opts.reassociate)? {
        normalization.reversed = reversible;
        counted = normalize::apply(region, &normalization)?;
        scop = scop::extract(&counted)?;
    }
    let region = &*counted;
    // Step 1: `#pragma tessera tile(…)` on the region wins over the compile-wide
    // option, which wins over the defaults.
    let requested = region.tile.as_ref().map(|t| t.sizes.as_slice()).or(opts.tile.as_deref());
    let sz = tiling::resolve_tile_sizes(&scop, requested)?;
    let opts = PolyOptions { tile: Some(sz.clone()), port_width: opts.port_width.max(1), reassociate: opts.reassociate };
    let ctx = isl::new_context();
    // Every isl object is created and dropped inside `run`; only plain data returns.
    let r = run(&ctx, region, &scop, &sz, &opts);
    drop(ctx);
    match r {
        Ok(r) => r.map(|plan| Plan { normalization, ..plan }),
        Err(message) => Err(PolyReject::new(PolyRejectReason::Internal { message }, &scop.loc)),
    }
}

/// Whether no two iterations of the nest access one element with a write among them
/// (no flow, anti or output dependence), and no reduction must be accumulated in the
/// loop's order, so that any order computes the same.
fn dependence_free(scop: &Scop, reassociate: bool) -> Result<bool, PolyReject> {
    let ctx = isl::new_context();
    let r = dependences(&ctx, scop, &ordered(scop, reassociate)).map(|(deps, _)| deps.pairs.is_empty() && deps.orders.is_empty());
    drop(ctx);
    r.map_err(|message| PolyReject::new(PolyRejectReason::Internal { message }, &scop.loc))
}

/// The reductions (indices into `Scop::reductions`) whose accumulations must keep the
/// loop's order ([`reduction::must_keep_order`]).
fn ordered(scop: &Scop, reassociate: bool) -> Vec<usize> {
    (0..scop.reductions.len()).filter(|&k| reduction::must_keep_order(&scop.reductions[k], reassociate)).collect()
}

/// The dependences of `scop` (plain and as isl objects).
fn dependences(ctx: &isl_rs::Context, scop: &Scop, ordered: &[usize]) -> isl::IslResult<(Dependences, deps::IslDeps)> {
    use isl::ctx_err;
    let dom = isl::uset(ctx, &scop.domain)?;
    let sched = isl::umap(ctx, &scop.schedule)?;
    let acc_fn = scop.accesses.iter().map(|a| isl::umap(ctx, &a.relation)).collect::<isl::IslResult<Vec<_>>>()?;
    let acc_dom = acc_fn
        .iter()
        .map(|m| m.copy().map_err(ctx_err("copy"))?.intersect_domain(dom.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("accesses")))
        .collect::<isl::IslResult<Vec<_>>>()?;
    deps::compute(ctx, scop, &sched, &acc_dom, ordered)
}

fn run(
    ctx: &isl_rs::Context,
    region: &Region,
    scop: &Scop,
    sz: &[i64],
    opts: &PolyOptions,
) -> isl::IslResult<Result<Plan, PolyReject>> {
    use isl::ctx_err;
    let dom = isl::uset(ctx, &scop.domain)?;
    let sched = isl::umap(ctx, &scop.schedule)?;
    let acc_fn = scop.accesses.iter().map(|a| isl::umap(ctx, &a.relation)).collect::<isl::IslResult<Vec<_>>>()?;
    let acc_dom = acc_fn
        .iter()
        .map(|m| m.copy().map_err(ctx_err("copy"))?.intersect_domain(dom.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("accesses")))
        .collect::<isl::IslResult<Vec<_>>>()?;
    let (deps, ideps) = deps::compute(ctx, scop, &sched, &acc_dom, &ordered(scop, opts.reassociate))?;
    let eval = buffers::Eval::new(ctx, scop, sz, opts.port_width)?;
    let perms = tiling::permutations(scop.depth());
    let mut candidates = Vec::new();
    let mut evaluated: Vec<Option<(tiling::PermIsl, BufferPlan, Vec<usize>)>> = Vec::new();
    for (n, perm) in perms.iter().enumerate() {
        let pisl = tiling::PermIsl::new(ctx, scop, sz, perm, &dom)?;
        let violation = tiling::violated_dependence(scop, &deps, &ideps, &pisl)?;
        let names: Vec<String> = perm.iter().map(|&x| scop.loops[x].var.clone()).collect();
        if let Some(v) = &violation {
            if n == 0 {
                let reason = match v {
                    tiling::Violation::Dependence(d) => PolyRejectReason::TilingIllegal { dependence: d.clone() },
                    tiling::Violation::ReductionOrder(k) => {
                        let r = &scop.reductions[deps.orders[*k].reduction];
                        PolyRejectReason::ReductionOrder {
                            text: r.clause(),
                            what: reduction::what(r.op).to_string(),
                            reassociable: matches!(r.op, tessera_ir::ReductionOp::Add | tessera_ir::ReductionOp::Mul),
                        }
                    }
                };
                return Ok(Err(PolyReject::new(reason, &scop.loc)));
            }
            let violated = Some(match v {
                tiling::Violation::Dependence(d) => d.clone(),
                tiling::Violation::ReductionOrder(k) => format!("the loop's order of the accumulations of {}", deps.orders[*k].clause),
            });
            candidates.push(Candidate {
                permutation: names,
                loops: perm.clone(),
                legal: false,
                violated,
                total_buffer_elements: None,
                uncached_accesses: None,
                buffers: Vec::new(),
                chosen: false,
            });
            evaluated.push(None);
            continue;
        }
        let forced = tiling::harmful_padded_writes(ctx, scop, sz, &pisl, &acc_fn, &dom)?;
        let groups = eval.grouping(&deps, &forced)?;
        let bp = eval.evaluate(perm, &groups)?;
        candidates.push(Candidate {
            permutation: names,
            loops: perm.clone(),
            legal: true,
            violated: None,
            total_buffer_elements: Some(bp.total_elements),
            uncached_accesses: Some(bp.uncached_accesses),
            buffers: bp.buffers.clone(),
            chosen: false,
        });
        evaluated.push(Some((pisl, bp, forced)));
    }
    let best = evaluated
        .iter()
        .enumerate()
        .filter_map(|(i, e)| e.as_ref().map(|(_, bp, _)| (bp.rank_key(), i)))
        .min()
        .map(|(_, i)| i)
        .expect("the identity permutation is legal here");
    candidates[best].chosen = true;
    let (pisl, mut bp, _) = evaluated[best].take().expect("evaluated");
    for b in bp.buffers.iter_mut().filter(|b| b.kind != BufferKind::Nc) {
        b.working_set = Some(eval.ws_text(&b.accesses, &b.fixed_loops)?);
    }
    // Step 3: nc accesses are guarded (when padding exists), cached writes trimmed.
    let mut nc: Vec<usize> = bp.buffers.iter().filter(|b| b.kind == BufferKind::Nc).flat_map(|b| b.accesses.clone()).collect();
    nc.sort_unstable();
    let mut cached_writes: Vec<usize> = bp
        .buffers
        .iter()
        .filter(|b| b.kind != BufferKind::Nc)
        .flat_map(|b| b.accesses.iter().copied().filter(|&a| scop.accesses[a].kind == AccessKind::Write))
        .collect();
    cached_writes.sort_unstable();
    let tplan = tiling::plan(scop, sz, &perms[best], &pisl, &nc, &cached_writes)?;
    let redirects = redirect::redirect(scop, &bp, &tplan.guarded);
    Ok(Ok(Plan {
        location: region.location.clone(),
        function: region.function.clone(),
        options: opts.clone(),
        scop: scop.clone(),
        deps,
        tiling: tplan,
        buffers: bp,
        redirects,
        candidates,
        normalization: normalize::Normalization::default(),
    }))
}

/// Whether the set written in isl's syntax (`[n] -> { [i, j] : … }`) has no element
/// for any value of its parameters; `Err` when isl cannot parse or decide it. Used
/// by the compiler to drop launch conditions that every parameter value satisfies
/// (`crates/compiler/src/delinearize.rs`).
pub fn set_is_empty(text: &str) -> Result<bool, String> {
    let ctx = isl::new_context();
    let r = isl::set(&ctx, text).and_then(|s| s.is_empty().map_err(isl::ctx_err("emptiness")));
    drop(ctx);
    r
}

#[cfg(test)]
mod set_tests {
    #[test]
    fn emptiness() {
        assert_eq!(super::set_is_empty("[] -> { [v_i] : 1 <= v_i < 47 and (0 + 1*v_i < 0 or 0 + 1*v_i >= 48) }"), Ok(true));
        assert_eq!(super::set_is_empty("[v_n] -> { [v_i] : 0 <= v_i < v_n + 2 and (v_i >= v_n) }"), Ok(false));
    }
}
