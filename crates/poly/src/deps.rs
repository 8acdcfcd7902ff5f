//! Memory-based dependences between the accesses of a SCoP (paper Sec. 2 and 4,
//! step 2: "We generate the set of all feasible permutations p of the inner tile loops
//! and purge those that violate data dependences").
//!
//! For every ordered pair of accesses (a, b) to the same array where at least one is a
//! write, the dependence relation is the classic formula
//! `{ S_a[x] -> S_b[y] : x ∈ Dom, y ∈ Dom, A_a(x) = A_b(y), Sch(x) ≺ Sch(y) }`,
//! computed with isl as `A_a . A_b⁻¹ ∩ (Sch ≺ Sch)`; write→read pairs are flow,
//! read→write anti and write→write output dependences. They are memory-based (not
//! value-based) on purpose: the tiled code updates arrays in place, so anti and output
//! dependences must be kept as well as flow.
//!
//! Two instances of the same statement are distinct iterations, so a read and a write
//! of the same element by one instance (`V[i,k,j] = V[i,k,j] + …`) is not a
//! dependence; the paper (Sec. 4, step 2) reaches the same conclusion for the running
//! example ("the stencil does not have any loop carried dependences").
//!
//! A reduction variable is no array: the statements that accumulate into it add no
//! dependence. When its accumulations must run in the loop's order
//! (`crate::reduction::must_keep_order`), the pairs of its accumulation instances in
//! that order are kept beside the dependences ([`ReductionOrder`]), and the legality
//! test treats them like dependences: a tiling is legal only if it keeps every pair
//! in order.
//!
//! The distance of a dependence is the set of differences `y − x` of loop indices;
//! its per-loop range is summarised for dumps and messages, e.g. `(1, -1)` for the
//! sweep the paper excludes (Gauss–Seidel, SOR).

use crate::isl::{self, ctx_err, IslResult, Text};
use crate::scop::{AccessKind, Scop};
use isl_rs::{Context, Set, UnionMap, UnionSet};
use serde::{Deserialize, Serialize};

/// Flow, anti or output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DepKind {
    /// Write, then read of the same element (read after write).
    Flow,
    /// Read, then write (write after read).
    Anti,
    /// Write, then write (write after write).
    Output,
}

impl DepKind {
    /// `flow`, `anti`, `output`.
    pub fn name(self) -> &'static str {
        match self {
            DepKind::Flow => "flow",
            DepKind::Anti => "anti",
            DepKind::Output => "output",
        }
    }
}

/// The dependences from one access to another.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependence {
    /// Kind.
    pub kind: DepKind,
    /// Source access (executes first), index into `Scop::accesses`.
    pub source: usize,
    /// Sink access.
    pub sink: usize,
    /// The relation `S_a[x] -> S_b[y]` as isl text.
    pub relation: String,
    /// The distance vectors `y − x` as an isl set.
    pub distance: String,
    /// Per loop, the smallest and largest distance (`None`: unbounded or symbolic).
    pub distance_range: Vec<(Option<i64>, Option<i64>)>,
}

impl Dependence {
    /// `(1, -1)`, `(0..2, 1)`, `(>=1, *)`.
    pub fn distance_summary(&self) -> String {
        format_distance(&self.distance_range)
    }

    /// `flow W0 A[i][j] -> R1 A[i - 1][j + 1], distance (1, -1)`.
    pub fn describe(&self, scop: &Scop) -> String {
        let (a, b) = (&scop.accesses[self.source], &scop.accesses[self.sink]);
        format!("{} {} {} -> {} {}, distance {}", self.kind.name(), a.name, a.text, b.name, b.text, self.distance_summary())
    }
}

/// Formats per-loop distance ranges.
pub fn format_distance(r: &[(Option<i64>, Option<i64>)]) -> String {
    let parts: Vec<String> = r
        .iter()
        .map(|d| match *d {
            (Some(a), Some(b)) if a == b => a.to_string(),
            (Some(a), Some(b)) => format!("{a}..{b}"),
            (Some(a), None) => format!(">={a}"),
            (None, Some(b)) => format!("<={b}"),
            (None, None) => "*".to_string(),
        })
        .collect();
    format!("({})", parts.join(", "))
}

/// All dependences of a SCoP.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dependences {
    /// Union of the flow dependences (isl union map text).
    pub flow: String,
    /// Union of the anti dependences.
    pub anti: String,
    /// Union of the output dependences.
    pub output: String,
    /// Every non-empty access-to-access dependence.
    pub pairs: Vec<Dependence>,
    /// The reductions whose accumulations the tiled schedule must keep in the loop's
    /// order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub orders: Vec<ReductionOrder>,
}

/// The order of a reduction's accumulations that a tiling must keep (module docs).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReductionOrder {
    /// Index into `Scop::reductions`.
    pub reduction: usize,
    /// `reduction(+: s)`.
    pub clause: String,
    /// Every pair of accumulation instances `x -> y` with `x` before `y` in the loop's
    /// order (isl union map text).
    pub relation: String,
}

impl Dependences {
    /// Whether accesses `a` and `b` are connected by a dependence (either direction).
    pub fn connected(&self, a: usize, b: usize) -> bool {
        self.pairs.iter().any(|d| (d.source == a && d.sink == b) || (d.source == b && d.sink == a))
    }
}

/// The live isl objects of the dependence analysis (internal to one `optimize()`).
pub(crate) struct IslDeps {
    /// Union of all dependences.
    pub all: UnionMap,
    /// One relation per entry of [`Dependences::pairs`].
    pub pairs: Vec<UnionMap>,
    /// One relation per entry of [`Dependences::orders`].
    pub orders: Vec<UnionMap>,
}

/// Computes the dependences. `acc` are the access relations restricted to the domain;
/// `ordered` the reductions (indices into `Scop::reductions`) whose accumulations must
/// keep the loop's order.
pub(crate) fn compute(ctx: &Context, scop: &Scop, sched: &UnionMap, acc: &[UnionMap], ordered: &[usize]) -> IslResult<(Dependences, IslDeps)> {
    let p = scop.isl_params();
    let before = sched.copy().map_err(ctx_err("copy"))?.lex_lt_union_map(sched.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("schedule order"))?;
    let strip_parts: Vec<String> = (0..scop.statements.len())
        .map(|s| {
            let vars: Vec<String> = scop.loops.iter().map(|l| crate::scop::isl_ident(&l.var)).collect();
            format!("{} -> [{}]", crate::scop::stmt_tuple(scop, s), vars.join(", "))
        })
        .collect();
    let strip = isl::umap(ctx, &format!("{p}{{ {} }}", strip_parts.join("; ")))?;
    let empty = || -> IslResult<UnionMap> { isl::umap(ctx, &format!("{p}{{ }}")) };
    let (mut flow, mut anti, mut output) = (empty()?, empty()?, empty()?);
    let mut all = empty()?;
    let mut out = Vec::new();
    let mut rels = Vec::new();
    for a in &scop.accesses {
        for b in &scop.accesses {
            if a.array != b.array || (a.kind == AccessKind::Read && b.kind == AccessKind::Read) {
                continue;
            }
            let rel = acc[a.id]
                .copy()
                .map_err(ctx_err("copy"))?
                .apply_range(acc[b.id].copy().map_err(ctx_err("copy"))?.reverse().map_err(ctx_err("reverse"))?)
                .map_err(ctx_err("same element"))?
                .intersect(before.copy().map_err(ctx_err("copy"))?)
                .map_err(ctx_err("dependence"))?;
            if rel.is_empty().map_err(ctx_err("emptiness"))? {
                continue;
            }
            let kind = match (a.kind, b.kind) {
                (AccessKind::Write, AccessKind::Read) => DepKind::Flow,
                (AccessKind::Read, AccessKind::Write) => DepKind::Anti,
                _ => DepKind::Output,
            };
            let dist: UnionSet = rel
                .copy()
                .map_err(ctx_err("copy"))?
                .apply_domain(strip.copy().map_err(ctx_err("copy"))?)
                .map_err(ctx_err("distance"))?
                .apply_range(strip.copy().map_err(ctx_err("copy"))?)
                .map_err(ctx_err("distance"))?
                .deltas()
                .map_err(ctx_err("distance"))?;
            let dist_set = Set::from_union_set(dist.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("distance set"))?;
            let distance_range = isl::dim_ranges(&dist_set)?;
            let target = match kind {
                DepKind::Flow => &mut flow,
                DepKind::Anti => &mut anti,
                DepKind::Output => &mut output,
            };
            let t = std::mem::replace(target, empty()?);
            *target = t.union(rel.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("union"))?;
            let t = std::mem::replace(&mut all, empty()?);
            all = t.union(rel.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("union"))?;
            out.push(Dependence {
                kind,
                source: a.id,
                sink: b.id,
                relation: rel.text(),
                distance: dist.text(),
                distance_range,
            });
            rels.push(rel);
        }
    }
    let mut orders = Vec::new();
    let mut order_rels = Vec::new();
    for &k in ordered {
        let r = &scop.reductions[k];
        let parts: Vec<String> = r
            .statements
            .iter()
            .map(|&st| format!("{}{}", crate::scop::stmt_tuple(scop, st), crate::scop::domain_constraints(scop, None)))
            .collect();
        let dom = isl::uset(ctx, &format!("{p}{{ {} }}", parts.join("; ")))?;
        let rel = before
            .copy()
            .map_err(ctx_err("copy"))?
            .intersect_domain(dom.copy().map_err(ctx_err("copy"))?)
            .map_err(ctx_err("accumulation order"))?
            .intersect_range(dom)
            .map_err(ctx_err("accumulation order"))?
            .coalesce()
            .map_err(ctx_err("coalesce"))?;
        orders.push(ReductionOrder { reduction: k, clause: r.clause(), relation: rel.text() });
        order_rels.push(rel);
    }
    let deps = Dependences { flow: flow.text(), anti: anti.text(), output: output.text(), pairs: out, orders };
    Ok((deps, IslDeps { all, pairs: rels, orders: order_rels }))
}
