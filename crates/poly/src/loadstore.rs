//! Exact per-tile Load and Store sets of a tiled loop nest: C. Alias, A. Darte,
//! A. Plesco, *Program Analysis and Source-Level Communication Optimizations for
//! High-Level Synthesis*, Research Report RR-7648, INRIA, 2011, Theorem 1
//! (`docs/method.md`, "Exact load and store sets").
//!
//! **Architecture.** The tiles of a *tile strip* — the innermost inter-tile loop, the
//! outer tile counters being fixed, i.e. parameters of the strip — run one after the
//! other; each tile `T` is preceded by a Load(T) of the data it needs from DDR into
//! local memory, computes on local copies only, and is followed by a Store(T) of the
//! data it produced. Locally, data a previous tile of the strip loaded or wrote is
//! still there, so it is loaded at most once per strip; data a later tile of the strip
//! writes again need not be stored yet.
//!
//! **Sets.** With `In(T)` the data *read before being written* in tile `T`
//! (upward-exposed reads) and `Out(T)` the data written in `T`, Theorem 1 gives the
//! smallest sets that keep the local copies exact:
//!
//! ```text
//! Load(T)  = In(T)  \ ( In(t < T) ∪ Out(t < T) )
//! Store(T) = Out(T) \ Out(t > T)
//! ```
//!
//! so every element is loaded at most once and stored at most once per strip,
//! `⋃_T Load(T) = ⋃_t (In(t) \ Out(t' < t))` and `⋃_T Store(T) = Out(strip)`.
//!
//! **With isl** (every set and map below is computed by isl). The tiling is a map
//! `θ : S[x] -> [s_1 … s_k, T, r …]` from statement instances to dates: `k` strip
//! counters, the tile counter `T`, then the order inside the tile; its lexicographic
//! order is the execution order, so `θ` must give every instance of the domain its
//! own date (injective; checked). Within one instance the reads happen before the
//! write (`crate::scop`'s access order). Then, with `R`, `W` the read and write
//! access relations of one array restricted to the domain and
//! `tile = θ` projected on `[s, T]`:
//!
//! - `Before = θ ≺ θ`, `EarlierInTile = Before ∩ tile.tile⁻¹`: `y -> x`, `y` runs
//!   before `x` in the same tile;
//! - `Killed = EarlierInTile⁻¹ . W`: `x -> m` such that an earlier instance of `x`'s
//!   tile wrote `m`; the exposed reads are `R \ Killed` (as a relation `x -> m`, so a
//!   statement reading two elements of one array is handled per element);
//! - `In = (R \ Killed) ∘ tile⁻¹ : [s, T] -> A[m]`, `Out = W ∘ tile⁻¹`;
//! - `Lt = { [s, T] -> [s, t] : t < T }`, `Gt = { [s, T] -> [s, t] : t > T }`:
//!   `Load = In \ (Lt.In ∪ Lt.Out)`, `Store = Out \ Gt.Out`.
//!
//! The results are printed with the strip counters moved to parameters:
//! `[N, I] -> { [T] -> c[m] : … }` is Load(T) of strip `I`.
//!
//! [`rectangular`] builds `θ` for the optimizer's rectangular tiling of a
//! [`Scop`]: tile numbers `⌊(x − lb)/SZ⌋` per loop, the strip all but the innermost
//! one, then the intra-tile loops in the order of a permutation and the statement
//! number. `In(T)` does not depend on that order as long as it is legal: a write
//! before a read of the same element in the original order is a dependence every
//! legal tiling keeps, and so is a read before a write.

use crate::isl::{self, ctx_err, IslResult, Text};
use crate::scop::{isl_ident, isl_sym, stmt_tuple, AccessKind, Scop};
use isl_rs::{Context, DimType, Map, UnionMap};
use serde::{Deserialize, Serialize};

/// A tiled loop nest in isl text: the input of [`sets`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TiledNest {
    /// The iteration domain (union set).
    pub domain: String,
    /// The array accesses: kind and relation `[p] -> { S[x] -> A[f(x)] }`, one
    /// statement per relation. Within an instance, the reads happen before the writes.
    pub accesses: Vec<(AccessKind, String)>,
    /// `θ : [p] -> { S[x] -> [s_1 … s_k, T, r …] }` (union map, one range space): the
    /// strip counters, the tile counter, the order inside the tile; injective on the
    /// domain, its lexicographic order is the execution order.
    pub tiling: String,
    /// Names of the `k` strip counters (they become parameters; must differ from the
    /// parameters of the texts).
    pub strip: Vec<String>,
    /// Name of the tile counter `T`.
    pub tile: String,
}

/// The per-tile sets of one array, `[p, strip] -> { [T] -> A[m] }` (isl text).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ArrayTileSets {
    /// The array.
    pub array: String,
    /// In(T): elements read in T before any write to them in T (`None`: not read).
    pub input: Option<String>,
    /// Out(T): elements written in T (`None`: not written).
    pub output: Option<String>,
    /// Load(T) = In(T) \ (In(t<T) ∪ Out(t<T)) (`None`: not read).
    pub load: Option<String>,
    /// Store(T) = Out(T) \ Out(t>T) (`None`: not written).
    pub store: Option<String>,
}

/// The Load/Store sets of a tiled nest.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileSets {
    /// The strip counters (parameters of every set below).
    pub strip: Vec<String>,
    /// The tile counter.
    pub tile: String,
    /// Which tile of the strip an instance runs in, `[p, strip] -> { S[x] -> [T] }`
    /// (union map text, restricted to the domain).
    pub tile_of: String,
    /// Per array, in order of first access.
    pub arrays: Vec<ArrayTileSets>,
}

/// Computes In, Out, Load and Store per array of a tiled nest.
pub fn sets(nest: &TiledNest) -> Result<TileSets, String> {
    let ctx = isl::new_context();
    let r = compute(&ctx, nest);
    drop(ctx);
    r
}

/// The sets of `scop` under the optimizer's rectangular tiling (see [`rectangular`]).
pub fn of_scop(scop: &Scop, sz: &[i64], perm: &[usize]) -> Result<TileSets, String> {
    sets(&rectangular(scop, sz, perm)?)
}

/// The tiled nest of `scop` under rectangular tiling with sizes `sz` (one per loop,
/// outermost first) and intra-tile order `perm` (original loop indices, outer to
/// inner): tile numbers `⌊(x − lb_x)/SZ_x⌋` (named like the optimizer's tile loops,
/// [`crate::SymNames::tiles`]), the strip all tile loops but the innermost, then the
/// intra-tile loops and the statement number.
pub fn rectangular(scop: &Scop, sz: &[i64], perm: &[usize]) -> Result<TiledNest, String> {
    let d = scop.depth();
    if sz.len() != d || sz.iter().any(|&s| s < 1) {
        return Err(format!("{} tile sizes {sz:?} for a nest of depth {d}", sz.len()));
    }
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if sorted != (0..d).collect::<Vec<_>>() {
        return Err(format!("{perm:?} is no permutation of the {d} loops"));
    }
    let f = |a: &crate::Aff| a.format(&|s| isl_sym(&scop.loops, s));
    let parts: Vec<String> = (0..scop.statements.len())
        .map(|s| {
            let mut out: Vec<String> = (0..d)
                .map(|x| format!("floor(({} - ({}))/{})", isl_ident(&scop.loops[x].var), f(&scop.loops[x].lower), sz[x]))
                .collect();
            out.extend(perm.iter().map(|&x| isl_ident(&scop.loops[x].var)));
            out.push(s.to_string());
            format!("{} -> [{}]", stmt_tuple(scop, s), out.join(", "))
        })
        .collect();
    let names = &scop.names.tiles;
    Ok(TiledNest {
        domain: scop.domain.clone(),
        accesses: scop.accesses.iter().map(|a| (a.kind, a.relation.clone())).collect(),
        tiling: format!("{}{{ {} }}", scop.isl_params(), parts.join("; ")),
        strip: names[..d - 1].iter().map(|n| isl_ident(n)).collect(),
        tile: isl_ident(&names[d - 1]),
    })
}

fn cm(m: &Map) -> IslResult<Map> {
    m.copy().map_err(ctx_err("copy"))
}

fn cu(m: &UnionMap) -> IslResult<UnionMap> {
    m.copy().map_err(ctx_err("copy"))
}

/// `[x_0 … x_{n-1}]`.
fn tuple(base: &str, n: usize) -> String {
    format!("[{}]", (0..n).map(|i| format!("{base}{i}")).collect::<Vec<_>>().join(", "))
}

/// `{ [s_0 … s_{k-1}, T] -> [s_0 … s_{k-1}, t] : t op T }`.
fn order_map(ctx: &Context, k: usize, op: &str) -> IslResult<Map> {
    let s: Vec<String> = (0..k).map(|i| format!("s{i}")).collect();
    let (mut a, mut b) = (s.clone(), s);
    a.push("T".into());
    b.push("t".into());
    isl::map(ctx, &format!("{{ [{}] -> [{}] : t {op} T }}", a.join(", "), b.join(", ")))
}

/// Names the domain dimensions `[s…, T]` of `m` and moves the strip ones to the
/// parameters.
fn strip_to_params(m: Map, nest: &TiledNest, dim: DimType) -> IslResult<Map> {
    let k = nest.strip.len();
    let mut m = m;
    for (i, n) in nest.strip.iter().chain([&nest.tile]).enumerate() {
        m = m.set_dim_name(dim, i as u32, n).map_err(ctx_err("naming the tile counters"))?;
    }
    if k == 0 {
        return Ok(m);
    }
    let np = m.dim(DimType::Param).map_err(ctx_err("dim"))? as u32;
    m.move_dims(DimType::Param, np, dim, 0, k as u32).map_err(ctx_err("strip counters to parameters"))
}

fn text_of(m: &Map, nest: &TiledNest) -> IslResult<String> {
    let m = cm(m)?.coalesce().map_err(ctx_err("coalesce"))?;
    Ok(strip_to_params(m, nest, DimType::In)?.text())
}

/// One array: its name, rank, reads and writes (restricted to the domain).
struct ArrayAcc {
    name: String,
    rank: usize,
    reads: Option<UnionMap>,
    writes: Option<UnionMap>,
}

fn union_into(acc: &mut Option<UnionMap>, m: UnionMap) -> IslResult<()> {
    *acc = Some(match acc.take() {
        None => m,
        Some(u) => u.union(m).map_err(ctx_err("union"))?,
    });
    Ok(())
}

fn compute(ctx: &Context, nest: &TiledNest) -> IslResult<TileSets> {
    let k = nest.strip.len();
    let dom = isl::uset(ctx, &nest.domain)?;
    let theta = isl::umap(ctx, &nest.tiling)?.intersect_domain(dom.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("tiling"))?;
    if !theta.is_injective().map_err(ctx_err("injectivity"))? {
        return Err(format!("the tiling `{}` gives two instances of the domain the same date", nest.tiling));
    }
    let range = isl_rs::Set::from_union_set(isl::umap(ctx, &nest.tiling)?.range().map_err(ctx_err("dates"))?)
        .map_err(|e| format!("the dates of the tiling must form one space: {e}"))?;
    let n = range.dim(DimType::Set).map_err(ctx_err("dim"))? as usize;
    if n < k + 1 {
        return Err(format!("the tiling has {n} date dimension(s), fewer than {k} strip counter(s) and the tile counter"));
    }
    // S[x] -> [s, T].
    let proj = isl::umap(ctx, &format!("{{ {} -> {} }}", tuple("x", n), tuple("x", k + 1)))?;
    let tile = cu(&theta)?.apply_range(proj).map_err(ctx_err("tile of an instance"))?;
    let same_tile = cu(&tile)?.apply_range(cu(&tile)?.reverse().map_err(ctx_err("reverse"))?).map_err(ctx_err("same tile"))?;
    let before = cu(&theta)?.lex_lt_union_map(cu(&theta)?).map_err(ctx_err("execution order"))?;
    let earlier_in_tile = before.intersect(same_tile).map_err(ctx_err("earlier in the tile"))?;
    // The accesses, per array in order of first access.
    let mut arrays: Vec<ArrayAcc> = Vec::new();
    for (kind, rel) in &nest.accesses {
        let m = isl::map(ctx, rel)?;
        let name = m.get_tuple_name(DimType::Out).map_err(|e| format!("array of `{rel}`: {e}"))?.to_string();
        let rank = m.dim(DimType::Out).map_err(ctx_err("dim"))? as usize;
        let u = UnionMap::from_map(m).map_err(ctx_err("access"))?.intersect_domain(dom.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("access"))?;
        let i = match arrays.iter().position(|a| a.name == name) {
            Some(i) => i,
            None => {
                arrays.push(ArrayAcc { name: name.clone(), rank, reads: None, writes: None });
                arrays.len() - 1
            }
        };
        if arrays[i].rank != rank {
            return Err(format!("array {name} accessed with {} and {rank} subscripts", arrays[i].rank));
        }
        match kind {
            AccessKind::Read => union_into(&mut arrays[i].reads, u)?,
            AccessKind::Write => union_into(&mut arrays[i].writes, u)?,
        }
    }
    let lt = order_map(ctx, k, "<")?;
    let gt = order_map(ctx, k, ">")?;
    let mut out = Vec::new();
    for a in &arrays {
        // The space [s, T] -> A[m] of the per-tile sets.
        let space = isl::map(ctx, &format!("{{ {} -> {}{} }}", tuple("x", k + 1), isl_ident(&a.name), tuple("m", a.rank)))?
            .get_space()
            .map_err(ctx_err("space"))?;
        let per_tile = |u: UnionMap| -> IslResult<Map> {
            let t = u.apply_domain(cu(&tile)?).map_err(ctx_err("per tile"))?;
            t.extract_map(space.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("per tile"))?.coalesce().map_err(ctx_err("coalesce"))
        };
        let output = a.writes.as_ref().map(|w| per_tile(cu(w)?)).transpose()?;
        let input = match (&a.reads, &a.writes) {
            (None, _) => None,
            (Some(r), None) => Some(per_tile(cu(r)?)?),
            (Some(r), Some(w)) => {
                let killed = cu(&earlier_in_tile)?
                    .reverse()
                    .map_err(ctx_err("reverse"))?
                    .apply_range(cu(w)?)
                    .map_err(ctx_err("written earlier in the tile"))?;
                let exposed = cu(r)?.subtract(killed).map_err(ctx_err("upward-exposed reads"))?;
                Some(per_tile(exposed)?)
            }
        };
        let load = match &input {
            None => None,
            Some(i) => {
                let mut seen = cm(&lt)?.apply_range(cm(i)?).map_err(ctx_err("In of earlier tiles"))?;
                if let Some(o) = &output {
                    let earlier_out = cm(&lt)?.apply_range(cm(o)?).map_err(ctx_err("Out of earlier tiles"))?;
                    seen = seen.union(earlier_out).map_err(ctx_err("union"))?;
                }
                Some(cm(i)?.subtract(seen).map_err(ctx_err("Load"))?)
            }
        };
        let store = match &output {
            None => None,
            Some(o) => {
                let later = cm(&gt)?.apply_range(cm(o)?).map_err(ctx_err("Out of later tiles"))?;
                Some(cm(o)?.subtract(later).map_err(ctx_err("Store"))?)
            }
        };
        let t = |m: &Option<Map>| m.as_ref().map(|m| text_of(m, nest)).transpose();
        out.push(ArrayTileSets { array: a.name.clone(), input: t(&input)?, output: t(&output)?, load: t(&load)?, store: t(&store)? });
    }
    // [p, strip] -> { S[x] -> [T] }, per statement.
    let list = tile.get_map_list().map_err(ctx_err("tile of an instance"))?;
    let mut tile_of: Option<UnionMap> = None;
    for i in 0..list.size().map_err(ctx_err("tile of an instance"))? {
        let m = strip_to_params(list.get_at(i).map_err(ctx_err("tile of an instance"))?, nest, DimType::Out)?;
        union_into(&mut tile_of, UnionMap::from_map(m).map_err(ctx_err("tile of an instance"))?)?;
    }
    let tile_of = match tile_of {
        Some(u) => u.coalesce().map_err(ctx_err("coalesce"))?.text(),
        None => "{  }".to_string(),
    };
    Ok(TileSets { strip: nest.strip.clone(), tile: nest.tile.clone(), tile_of, arrays: out })
}

/// The sets as text, one line per set: `  Load  A: …`.
pub fn describe(s: &TileSets) -> String {
    let mut out = String::new();
    let strip = if s.strip.is_empty() { "none".to_string() } else { s.strip.join(", ") };
    out.push_str(&format!("  strip counters: {strip}; tile counter: {}\n", s.tile));
    for a in &s.arrays {
        for (what, v) in [("In   ", &a.input), ("Out  ", &a.output), ("Load ", &a.load), ("Store", &a.store)] {
            if let Some(v) = v {
                out.push_str(&format!("  {what} {}: {v}\n", a.array));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use isl_rs::{Set, UnionSet};

    fn small(name: &str) -> Scop {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/ir/small/{name}.ir.json"));
        let region = tessera_ir::Region::from_json(&std::fs::read_to_string(&p).unwrap()).unwrap();
        crate::scop::extract(&region).unwrap()
    }

    /// The ten benchmark stencils of `bench/stencils/` at small, odd sizes.
    const STENCILS: [&str; 10] =
        ["1D-jacobi", "2D-5p", "2D-9p", "2D-fdtd0", "2D-fdtd1", "2D-fdtd2", "2D-jacobi", "3D-19p", "3D-27p", "3D-heat"];

    fn array<'a>(ts: &'a TileSets, name: &str) -> &'a ArrayTileSets {
        ts.arrays.iter().find(|a| a.array == name).unwrap_or_else(|| panic!("no array {name} in\n{}", describe(ts)))
    }

    /// `got` and `want` (maps `[p, strip] -> { [T] -> A[m] }`) are equal for every
    /// parameter value in `context` (a parameter set).
    fn same(got: &Option<String>, want: &str, context: &str) {
        let got = got.as_deref().expect("a set");
        let ctx = isl::new_context();
        let c = isl::set(&ctx, context).unwrap();
        let g = isl::map(&ctx, got).unwrap().intersect_params(c.copy().unwrap()).unwrap();
        let w = isl::map(&ctx, want).unwrap().intersect_params(c).unwrap();
        assert!(g.is_equal(&w).unwrap(), "got {got}\nwant {want}\nunder {context}");
    }

    /// Polynomial product `c[i+j] += a[i]*b[j]` tiled by θ(i, j) = (N − j, i) with
    /// tiles of b × b: strip I = ⌊(N − j)/b⌋, tile T = ⌊i/b⌋, inside the tile the
    /// order of θ.
    fn polynomial_product(b: i64) -> TiledNest {
        // 0 ≤ i, j ≤ N, inclusive: the bounds RR-7648's formulas assume. Then the
        // largest element of strip I is i + j = N + (N − bI), the `m ≤ 2N − bI` of the
        // expected sets. With 0 ≤ i, j < N the largest would be 2N − bI − 1 for I ≥ 1
        // and 2N − 2 for I = 0, and the formulas would not be exact.
        let d = "[N] -> { S0[i, j] : 0 <= i <= N and 0 <= j <= N }";
        let acc = |k, a: &str| (k, format!("[N] -> {{ S0[i, j] -> {a} }}"));
        TiledNest {
            domain: d.into(),
            accesses: vec![
                acc(AccessKind::Read, "c[i + j]"),
                acc(AccessKind::Read, "a[i]"),
                acc(AccessKind::Read, "b[j]"),
                acc(AccessKind::Write, "c[i + j]"),
            ],
            tiling: format!("[N] -> {{ S0[i, j] -> [floor((N - j)/{b}), floor(i/{b}), N - j, i] }}"),
            strip: vec!["I".into()],
            tile: "T".into(),
        }
    }

    /// RR-7648's first example: the c elements loaded before tile T of strip I.
    #[test]
    fn polynomial_product_loads() {
        for b in [4, 3] {
            let nest = polynomial_product(b);
            let ts = sets(&nest).unwrap();
            // Existing strips: 0 ≤ N − j ≤ N, so 0 ≤ bI ≤ N.
            let strips = format!("[N, I] -> {{ : N >= 0 and 0 <= {b}*I <= N }}");
            let want = format!(
                "[N, I] -> {{ [T] -> c[m] : T >= 1 and m <= 2N - {b}I and N - {b}I + {b}T <= m <= N - {b}I + {b}*(T + 1) - 1; \
                 [0] -> c[m] : 0 <= m <= 2N - {b}I and N - {b}*(I + 1) + 1 <= m <= N - {b}I + {b} - 1 }}"
            );
            same(&array(&ts, "c").load, &want, &strips);
            // c is read before it is written in every tile: In = Out = the c of the tile.
            let c = array(&ts, "c");
            same(&c.input, c.output.as_deref().unwrap(), &strips);
            // Stored after the last tile of the strip that touches it: the later tiles,
            // if any (b(T + 1) ≤ N), start at i = b(T + 1), so touch exactly the
            // m ≥ b(T + 1) + max(0, N − b(I + 1) + 1).
            let store = format!(
                "[N, I] -> {{ [T] -> c[m] : exists (i, j : m = i + j and 0 <= i <= N and 0 <= j <= N and \
                 {b}T <= i < {b}*(T + 1) and {b}I <= N - j < {b}*(I + 1)) and \
                 ({b}*(T + 1) > N or m < {b}*(T + 1) or m < {b}*(T + 1) + N - {b}*(I + 1) + 1) }}"
            );
            same(&c.store, &store, &strips);
            guarantees(&nest, &ts);
        }
    }

    /// Matrix multiply `c[i][j] += a[i][k]*b[k][j]`, tiles of b³, strip (I, J), tile K.
    fn matmul(b: i64) -> TiledNest {
        let acc = |k, a: &str| (k, format!("[N] -> {{ S0[i, j, k] -> {a} }}"));
        TiledNest {
            domain: "[N] -> { S0[i, j, k] : 0 <= i < N and 0 <= j < N and 0 <= k < N }".into(),
            accesses: vec![
                acc(AccessKind::Read, "c[i, j]"),
                acc(AccessKind::Read, "a[i, k]"),
                acc(AccessKind::Read, "b[k, j]"),
                acc(AccessKind::Write, "c[i, j]"),
            ],
            tiling: format!("[N] -> {{ S0[i, j, k] -> [floor(i/{b}), floor(j/{b}), floor(k/{b}), i, j, k] }}"),
            strip: vec!["I".into(), "J".into()],
            tile: "K".into(),
        }
    }

    /// RR-7648's second example: a block of a and of b per tile, c loaded before the
    /// first tile and stored after the last, nothing of c in between.
    #[test]
    fn matmul_loads_and_stores() {
        let nest = matmul(32);
        let ts = sets(&nest).unwrap();
        let strips = "[N, I, J] -> { : 0 <= 32I < N and 0 <= 32J < N }";
        // 0 ≤ m1 holds for the existing tiles K ≥ 0 only.
        let block = |r: &str, c: &str| format!("32{r} <= m0 <= 32{r} + 31 and 32{c} <= m1 <= 32{c} + 31 and 0 <= m0 < N and 0 <= m1 < N");
        same(&array(&ts, "a").load, &format!("[N, I, J] -> {{ [K] -> a[m0, m1] : {} }}", block("I", "K")), strips);
        same(&array(&ts, "b").load, &format!("[N, I, J] -> {{ [K] -> b[m0, m1] : {} }}", block("K", "J")), strips);
        same(&array(&ts, "c").load, &format!("[N, I, J] -> {{ [0] -> c[m0, m1] : {} }}", block("I", "J")), strips);
        same(
            &array(&ts, "c").store,
            &format!("[N, I, J] -> {{ [K] -> c[m0, m1] : 32K <= N - 1 < 32K + 32 and {} }}", block("I", "J")),
            strips,
        );
        assert_eq!((&array(&ts, "a").store, &array(&ts, "b").output), (&None, &None));
        guarantees(&nest, &ts);
    }

    /// `A[i] = A[i - 1] + B[i]`, 0 ≤ i < N, tiles of 4, no strip counter.
    fn recurrence() -> TiledNest {
        TiledNest {
            domain: "[N] -> { S0[i] : 0 <= i < N }".into(),
            accesses: vec![
                (AccessKind::Read, "[N] -> { S0[i] -> A[i - 1] }".into()),
                (AccessKind::Read, "[N] -> { S0[i] -> B[i] }".into()),
                (AccessKind::Write, "[N] -> { S0[i] -> A[i] }".into()),
            ],
            tiling: "[N] -> { S0[i] -> [floor(i/4), i] }".into(),
            strip: vec![],
            tile: "T".into(),
        }
    }

    /// `A[i] = A[i - 1] + A[i + 10]`, 0 ≤ i < 8, tiles of 4.
    fn two_reads() -> TiledNest {
        TiledNest {
            domain: "{ S0[i] : 0 <= i < 8 }".into(),
            accesses: vec![
                (AccessKind::Read, "{ S0[i] -> A[i - 1] }".into()),
                (AccessKind::Read, "{ S0[i] -> A[i + 10] }".into()),
                (AccessKind::Write, "{ S0[i] -> A[i] }".into()),
            ],
            tiling: "{ S0[i] -> [floor(i/4), i] }".into(),
            strip: vec![],
            tile: "T".into(),
        }
    }

    /// Upward-exposed reads are exact: in `A[i] = A[i - 1] + B[i]` (one strip, tiles of
    /// 4) only the first read of a tile is not preceded by the write of its element
    /// in the tile, and that element was written by the previous tile, so only the
    /// first tile loads A (A[-1]).
    #[test]
    fn reads_after_writes_in_the_tile_are_not_loaded() {
        let nest = recurrence();
        let ts = sets(&nest).unwrap();
        let a = array(&ts, "A");
        let all = "[N] -> { : N >= 0 }";
        same(&a.input, "[N] -> { [T] -> A[4T - 1] : 0 <= 4T < N }", all);
        same(&a.load, "[N] -> { [0] -> A[-1] : N >= 1 }", all);
        same(&a.store, "[N] -> { [T] -> A[m] : 4T <= m <= 4T + 3 and 0 <= m < N }", all);
        assert!(ts.strip.is_empty() && ts.tile_of.contains("S0[i] -> [T"), "{}", describe(&ts));
        guarantees(&nest, &ts);
    }

    /// A statement that reads two elements of one array, one of them written earlier in
    /// the tile: only that one is killed (the exposed reads are a relation, not a set
    /// of instances).
    #[test]
    fn reads_are_killed_per_element() {
        let nest = two_reads();
        let ts = sets(&nest).unwrap();
        same(&array(&ts, "A").input, "{ [0] -> A[m] : m = -1 or 10 <= m <= 13; [1] -> A[m] : m = 3 or 14 <= m <= 17 }", "{ : }");
        same(&array(&ts, "A").load, "{ [0] -> A[m] : m = -1 or 10 <= m <= 13; [1] -> A[m] : 14 <= m <= 17 }", "{ : }");
        guarantees(&nest, &ts);
    }

    #[test]
    fn tilings_without_a_date_per_instance_are_refused() {
        let nest = TiledNest {
            domain: "{ S0[i] : 0 <= i < 8 }".into(),
            accesses: vec![(AccessKind::Write, "{ S0[i] -> A[i] }".into())],
            tiling: "{ S0[i] -> [floor(i/4)] }".into(),
            strip: vec![],
            tile: "T".into(),
        };
        assert!(sets(&nest).unwrap_err().contains("same date"));
    }

    /// Theorem 1's guarantees, checked with isl on the texts of `ts`:
    /// - each element is loaded at most once and stored at most once per strip;
    /// - `⋃_T Load(T) = ⋃_t (In(t) \ Out(t' < t))`, `⋃_T Store(T) = Out(strip)`;
    /// - for an array the nest only reads, In(T) is everything tile T reads, so the
    ///   loads of a strip are exactly its footprint, each element once.
    fn guarantees(nest: &TiledNest, ts: &TileSets) {
        let ctx = isl::new_context();
        let m = |t: &str| isl::map(&ctx, t).unwrap();
        let lt = m("{ [T] -> [t] : t < T }");
        let other_tile = m("{ [T] -> [t] : t != T }");
        let once = |what: &str, a: &str, t: &str| {
            let x = m(t);
            let pairs = x.copy().unwrap().apply_range(x.reverse().unwrap()).unwrap().intersect(other_tile.copy().unwrap()).unwrap();
            assert!(pairs.is_empty().unwrap(), "{what} {a}: elements in two tiles of a strip: {}", pairs.text());
        };
        let range = |t: &str| m(t).range().unwrap();
        let eq = |what: &str, a: &str, x: &Set, y: &Set| assert!(x.is_equal(y).unwrap(), "{what} {a}: {} != {}", x.text(), y.text());
        let dom = isl::uset(&ctx, &nest.domain).unwrap();
        let tile_of = isl::umap(&ctx, &ts.tile_of).unwrap();
        for a in &ts.arrays {
            let name = a.array.as_str();
            assert_eq!(a.input.is_some(), a.load.is_some(), "{name}");
            assert_eq!(a.output.is_some(), a.store.is_some(), "{name}");
            if let Some(l) = &a.load {
                once("Load", name, l);
                let first = match &a.output {
                    Some(o) => m(a.input.as_deref().unwrap()).subtract(lt.copy().unwrap().apply_range(m(o)).unwrap()).unwrap(),
                    None => m(a.input.as_deref().unwrap()),
                };
                eq("⋃ Load", name, &range(l), &first.range().unwrap());
            }
            if let Some(s) = &a.store {
                once("Store", name, s);
                eq("⋃ Store", name, &range(s), &range(a.output.as_deref().unwrap()));
            }
            if a.output.is_none() {
                // Read-only: the strip's footprint, from the accesses and the tiling.
                let mut reads: Option<UnionMap> = None;
                for (k, rel) in &nest.accesses {
                    let r = isl::map(&ctx, rel).unwrap();
                    if *k == AccessKind::Read && r.get_tuple_name(DimType::Out).unwrap() == name {
                        let r = UnionMap::from_map(r).unwrap().intersect_domain(dom.copy().unwrap()).unwrap();
                        let per_tile = r.apply_domain(tile_of.copy().unwrap()).unwrap();
                        reads = Some(match reads {
                            None => per_tile,
                            Some(u) => u.union(per_tile).unwrap(),
                        });
                    }
                }
                let reads = reads.expect("read-only arrays are read");
                let input = UnionMap::from_map(m(a.input.as_deref().unwrap())).unwrap();
                assert!(input.is_equal(&reads).unwrap(), "In {name}: {} != reads per tile {}", input.text(), reads.text());
                let footprint: UnionSet = reads.range().unwrap();
                let loads = UnionSet::from_set(range(a.load.as_deref().unwrap())).unwrap();
                assert!(loads.is_equal(&footprint).unwrap(), "Load {name}: {} != footprint {}", loads.text(), footprint.text());
            }
        }
    }

    /// The guarantees on the ten benchmark stencils, two tilings each (one dividing no
    /// extent, with partial tiles everywhere).
    #[test]
    fn stencil_guarantees() {
        for name in STENCILS {
            let scop = small(name);
            let d = scop.depth();
            let perm: Vec<usize> = (0..d).collect();
            for sz in [vec![4; d], [5, 3, 7][..d].to_vec()] {
                let nest = rectangular(&scop, &sz, &perm).unwrap();
                let ts = sets(&nest).unwrap_or_else(|e| panic!("{name} {sz:?}: {e}"));
                assert_eq!(ts.strip.len(), d - 1);
                guarantees(&nest, &ts);
                // Each array is loaded and stored as in the stencil's direction of use.
                for arr in &scop.arrays {
                    let a = array(&ts, &arr.name);
                    assert_eq!((a.load.is_some(), a.store.is_some()), (arr.read, arr.written), "{name} {}", arr.name);
                }
            }
        }
    }

    /// In(T), and so Load and Store, do not depend on the (legal) order inside the
    /// tile.
    #[test]
    fn intra_tile_order_does_not_matter() {
        let scop = small("2D-fdtd0");
        let (a, b) = (of_scop(&scop, &[4, 4], &[0, 1]).unwrap(), of_scop(&scop, &[4, 4], &[1, 0]).unwrap());
        for (x, y) in a.arrays.iter().zip(&b.arrays) {
            for (p, q) in [(&x.input, &y.input), (&x.output, &y.output), (&x.load, &y.load), (&x.store, &y.store)] {
                assert_eq!(p.is_some(), q.is_some());
                if let (Some(p), Some(q)) = (p, q) {
                    same(&Some(p.clone()), q, "{ : }");
                }
            }
        }
        assert!(of_scop(&scop, &[4], &[0, 1]).unwrap_err().contains("tile sizes"));
        assert!(of_scop(&scop, &[4, 4], &[0, 0]).unwrap_err().contains("no permutation"));
    }

    #[test]
    fn describe_names_every_set() {
        let ts = of_scop(&small("2D-fdtd1"), &[4, 8], &[0, 1]).unwrap();
        let text = describe(&ts);
        for line in ["  strip counters: ti; tile counter: tj\n", "  In    ex: ", "  Out   ex: ", "  Load  hz: ", "  Store ex: "] {
            assert!(text.contains(line), "{line:?} in\n{text}");
        }
        assert!(!text.contains("Store hz"), "{text}");
        assert_eq!(text, describe(&of_scop(&small("2D-fdtd1"), &[4, 8], &[0, 1]).unwrap()), "stable");
    }

    /// One statement instance of a concrete nest: its date under the tiling (strip
    /// counters, tile counter, order in the tile) and its accesses in order.
    type Instance = (Vec<i64>, Vec<(AccessKind, String, Vec<i64>)>);

    /// Per array, In, Out, Load, Store as sets of `(strip counters and T, element)`.
    type Simulated = std::collections::BTreeMap<String, [std::collections::BTreeSet<(Vec<i64>, Vec<i64>)>; 4]>;

    /// Runs the instances in the order of their dates and applies the definitions
    /// literally: In(T) the elements read in T while not yet written in T, Out(T) those
    /// written; per strip, Load(T) what In(T) has that no earlier tile read or wrote,
    /// Store(T) what Out(T) has that no later tile writes.
    fn simulate(mut instances: Vec<Instance>, k: usize) -> Simulated {
        use std::collections::{BTreeMap, BTreeSet};
        instances.sort_by(|a, b| a.0.cmp(&b.0));
        // Per tile (strip and T, in order), per array: In and Out.
        type Sets = BTreeMap<String, (BTreeSet<Vec<i64>>, BTreeSet<Vec<i64>>)>;
        let mut tiles: Vec<(Vec<i64>, Sets)> = Vec::new();
        for (date, accesses) in &instances {
            let key = date[..=k].to_vec();
            if tiles.last().is_none_or(|t| t.0 != key) {
                assert!(tiles.iter().all(|t| t.0 != key), "a tile runs in one piece");
                tiles.push((key, BTreeMap::new()));
            }
            let sets = &mut tiles.last_mut().unwrap().1;
            for (kind, array, m) in accesses {
                let (i, o) = sets.entry(array.clone()).or_default();
                match kind {
                    AccessKind::Read if !o.contains(m) => {
                        i.insert(m.clone());
                    }
                    AccessKind::Read => {}
                    AccessKind::Write => {
                        o.insert(m.clone());
                    }
                }
            }
        }
        let mut out = Simulated::new();
        for (n, (key, sets)) in tiles.iter().enumerate() {
            let strip = &key[..k];
            let same_strip = |t: &&(Vec<i64>, Sets)| &t.0[..k] == strip;
            for (array, (i, o)) in sets {
                let e = out.entry(array.clone()).or_default();
                let earlier = |m: &Vec<i64>| tiles[..n].iter().filter(same_strip).any(|t| t.1.get(array).is_some_and(|(i, o)| i.contains(m) || o.contains(m)));
                let later = |m: &Vec<i64>| tiles[n + 1..].iter().filter(same_strip).any(|t| t.1.get(array).is_some_and(|(_, o)| o.contains(m)));
                for m in i {
                    e[0].insert((key.clone(), m.clone()));
                    if !earlier(m) {
                        e[2].insert((key.clone(), m.clone()));
                    }
                }
                for m in o {
                    e[1].insert((key.clone(), m.clone()));
                    if !later(m) {
                        e[3].insert((key.clone(), m.clone()));
                    }
                }
            }
        }
        out
    }

    /// The isl sets of `ts` at the parameter values `fix` hold exactly the simulated
    /// points: every simulated point is in them, and they have as many points.
    fn agrees(ts: &TileSets, fix: &[(&str, i64)], sim: &Simulated) {
        let ctx = isl::new_context();
        let k = ts.strip.len();
        for a in &ts.arrays {
            let empty = Default::default();
            let s = sim.get(&a.array).unwrap_or(&empty);
            for (n, (what, text)) in [("In", &a.input), ("Out", &a.output), ("Load", &a.load), ("Store", &a.store)].into_iter().enumerate() {
                let pts = &s[n];
                let Some(text) = text else {
                    assert!(pts.is_empty(), "{what} {}: none, simulated {pts:?}", a.array);
                    continue;
                };
                let mut m = isl::map(&ctx, text).unwrap();
                for (p, v) in fix {
                    let pos = m.find_dim_by_name(DimType::Param, p).unwrap();
                    m = m.fix_si(DimType::Param, pos as u32, *v as i32).unwrap();
                }
                for (i, sname) in ts.strip.iter().enumerate() {
                    let pos = m.find_dim_by_name(DimType::Param, sname).unwrap();
                    m = m.move_dims(DimType::In, i as u32, DimType::Param, pos as u32, 1).unwrap();
                }
                let m = m.project_out_all_params().unwrap();
                let count = isl::val_i64(&m.copy().unwrap().wrap().unwrap().count_val().unwrap()).unwrap();
                // The points as runs along the last subscript (a few hundred disjuncts
                // instead of thousands: isl parses long unions slowly).
                let l = |v: &[i64]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", ");
                let mut runs: Vec<(&[i64], &[i64], i64, i64)> = Vec::new();
                for (key, e) in pts {
                    let (head, last) = e.split_at(e.len() - 1);
                    match runs.last_mut() {
                        Some(r) if r.0 == key.as_slice() && r.1 == head && r.3 + 1 == last[0] => r.3 = last[0],
                        _ => runs.push((key, head, last[0], last[0])),
                    }
                }
                let run = |(key, head, lo, hi): &(&[i64], &[i64], i64, i64)| {
                    let sep = if head.is_empty() { "" } else { ", " };
                    format!("[{}] -> {}[{}{sep}m] : {lo} <= m <= {hi}", l(key), isl_ident(&a.array), l(head))
                };
                let want = format!("{{ {} }}", runs.iter().map(run).collect::<Vec<_>>().join("; "));
                let want_map = isl::map(&ctx, &want).unwrap();
                let missing = want_map.subtract(m.copy().unwrap()).unwrap();
                assert!(missing.is_empty().unwrap(), "{what} {} at {fix:?} misses {}", a.array, missing.text());
                assert_eq!(count as usize, pts.len(), "{what} {} at {fix:?}: {} has more than the simulated points", a.array, m.text());
                assert!(k + 1 == m.dim(DimType::In).unwrap() as usize);
            }
        }
    }

    /// The isl sets against a literal run of the two examples and the two kill cases
    /// at concrete sizes.
    #[test]
    fn examples_agree_with_a_simulation() {
        let acc = |k, a: &str, m: &[i64]| (k, a.to_string(), m.to_vec());
        use AccessKind::{Read as R, Write as W};
        for b in [3, 4] {
            let n = 9;
            let mut inst = Vec::new();
            for i in 0..=n {
                for j in 0..=n {
                    let date = vec![(n - j) / b, i / b, n - j, i];
                    inst.push((date, vec![acc(R, "c", &[i + j]), acc(R, "a", &[i]), acc(R, "b", &[j]), acc(W, "c", &[i + j])]));
                }
            }
            agrees(&sets(&polynomial_product(b)).unwrap(), &[("N", n)], &simulate(inst, 1));
        }
        let (n, b) = (5, 2);
        let mut inst = Vec::new();
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let date = vec![i / b, j / b, k / b, i, j, k];
                    inst.push((date, vec![acc(R, "c", &[i, j]), acc(R, "a", &[i, k]), acc(R, "b", &[k, j]), acc(W, "c", &[i, j])]));
                }
            }
        }
        let ts = sets(&matmul(b)).unwrap();
        agrees(&ts, &[("N", n)], &simulate(inst, 2));
        guarantees(&matmul(b), &ts);
        let n = 10;
        let inst = (0..n).map(|i| (vec![i / 4, i], vec![acc(R, "A", &[i - 1]), acc(R, "B", &[i]), acc(W, "A", &[i])])).collect();
        agrees(&sets(&recurrence()).unwrap(), &[("N", n)], &simulate(inst, 0));
        let inst = (0..8).map(|i| (vec![i / 4, i], vec![acc(R, "A", &[i - 1]), acc(R, "A", &[i + 10]), acc(W, "A", &[i])])).collect();
        agrees(&sets(&two_reads()).unwrap(), &[], &simulate(inst, 0));
    }

    /// The same for the ten stencils, from their SCoPs (constant bounds).
    #[test]
    fn stencils_agree_with_a_simulation() {
        for name in STENCILS {
            let scop = small(name);
            let d = scop.depth();
            let perm: Vec<usize> = (0..d).collect();
            let sz = [5, 3, 7][..d].to_vec();
            let bounds: Vec<(i64, i64)> = scop.loops.iter().map(|l| (l.lower.as_constant().unwrap(), l.upper.as_constant().unwrap())).collect();
            let mut inst = Vec::new();
            let mut x: Vec<i64> = bounds.iter().map(|b| b.0).collect();
            'points: loop {
                for (s, st) in scop.statements.iter().enumerate() {
                    let mut date: Vec<i64> = (0..d).map(|y| (x[y] - bounds[y].0).div_euclid(sz[y])).collect();
                    date.extend(perm.iter().map(|&y| x[y]));
                    date.push(s as i64);
                    let val = |sym: &crate::Sym| match sym {
                        crate::Sym::Loop(y) => Some(crate::Aff::constant(x[*y])),
                        _ => None,
                    };
                    let accesses = st
                        .accesses
                        .iter()
                        .map(|&a| {
                            let a = &scop.accesses[a];
                            (a.kind, a.array.clone(), a.subscripts.iter().map(|e| e.substitute(&val).as_constant().unwrap()).collect())
                        })
                        .collect();
                    inst.push((date, accesses));
                }
                let mut y = d;
                loop {
                    if y == 0 {
                        break 'points;
                    }
                    y -= 1;
                    x[y] += scop.loops[y].step;
                    if x[y] < bounds[y].1 {
                        break;
                    }
                    x[y] = bounds[y].0;
                }
            }
            assert!(bounds.iter().all(|b| b.0 < b.1), "{name}: non-empty domain");
            agrees(&of_scop(&scop, &sz, &perm).unwrap(), &[], &simulate(inst, d - 1));
        }
    }
}
