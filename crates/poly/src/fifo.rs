//! FIFO recovery after tiling by depth-partitioning the channels of a polyhedral
//! process network (C. Alias, "Improving Communication Patterns in Polyhedral
//! Process Networks", HIP3ES 2018; also cited as "FIFO recovery by
//! depth-partitioning is complete on data-aware process networks").
//!
//! **Process network.** One process per statement, executing its iterations in the
//! order of a schedule θ (one isl map per statement into a common time space
//! `[φ_1 … φ_n, point coordinates …]` whose first n dimensions are the tile
//! coordinates). One channel per value-based flow dependence from a write access
//! (the producer statement) to a read access (the consumer statement): the paper's
//! "different channel per couple producer/read reference" — with one channel per
//! statement pair instead, a stencil's three reads of one produced value would make
//! no channel single-valued. The value-based dependences (the last write before each
//! read, in the program's original order) come from isl's dataflow analysis
//! (`isl_union_access_info_compute_flow`, through `isl::value_flow`).
//!
//! **FIFO test** (paper Sec. 2.3). A channel `→` is a FIFO when it is
//! - *in order*: no `x → y`, `x' → y'` with `θ(x) ≺ θ(x')` and `θ(y') ≺ θ(y)` (the
//!   consumer reads in the order the producer writes); with `→_t = θ⁻¹ ; → ; θ` on
//!   time stamps, the test is the emptiness of `(→_t⁻¹ ; ≺ ; →_t) ∩ ≻`;
//! - *single-valued* (the paper's unicity): each produced value is read once, `→` is
//!   a function from producer to consumer iterations (isl `is_single_valued`).
//!
//! Every set and map computation is isl's; θ must be sequential (injective on the
//! domain) and respect every flow dependence, else [`channels`] fails.
//!
//! **Depth split** (paper Fig. 2). After tiling, most channels are out of order: a
//! consumer tile reads values of several producer tiles in the tiles' order, not in
//! the order they were written. Each channel is split by the depth k at which the
//! tile coordinates of source and target first differ, `θ(x) ≪^k θ(y)` for
//! k = 1 … n (the dependences crossing the k-th tiling hyperplane), plus the part with
//! source and target in one tile (k = n + 1). If every non-empty part is a FIFO, the
//! channel is replaced by its parts; a channel that is a FIFO already is kept whole.
//! The method is not complete (paper Sec. 3): long dependences or tiling hyperplanes
//! that are too skewed leave parts out of order.
//!
//! **When a part is a FIFO.** Take a uniform channel, a translation by δ in the
//! (skewed) point coordinates, with tiles wider than δ. The intra-tile order is the
//! same in every tile and invariant by translation, and so is the order of the tiles.
//! So the part of depth k is in order when it relates each producer tile to one
//! consumer tile — δ is zero on the tiled coordinates after k. Otherwise a producer
//! tile feeds several consumer tiles through that part, and it stays in order only
//! if the producer writes the values of each consumer tile before those of the next:
//! true of the values crossing the time hyperplane (δ_t = 1: one row of the producer
//! tile) when one tiled coordinate follows, false when two do. Hence the tests:
//! time-skewed stencils tiled on time and the outermost space dimension have every
//! channel recovered (the paper's 100 %), while tiling every space dimension of
//! jacobi-2d or seidel-2d leaves the dependences that cross the i and j hyperplanes at
//! once out of order in the parts of depth 1 and 2.
//!
//! **Depth estimate.** [`Channel::live`] and [`Part::live`] are the largest number of
//! values produced but not yet consumed by their last reader when the whole program
//! runs sequentially in the order of θ — the size of the FIFO (or, for a channel that
//! is no FIFO, a lower bound of its buffer). isl computes, per produced value, the time
//! of its last read (`lexmax` of `→_t`); the values are then enumerated with isl
//! (`isl_set_foreach_point`) and swept in time order. This needs a bounded relation
//! without parameters (fixed sizes); otherwise the estimate is `None`. The paper's
//! sizes come from its lattice-based contraction heuristic, rounded to powers of 2;
//! these are the exact sequential maxima, so only the ratios compare. The parts of a
//! channel fill up at different times, so the sum of their maxima exceeds the
//! channel's (at the tests' small sizes by 17 % for jacobi-1d to 60 % for heat-3d;
//! the paper measures 2–7 % more storage at PolyBench sizes).
//!
//! **Input.** A [`Program`] — statements, domain, original schedule, access relations
//! as isl text — from a [`Scop`] ([`Program::from_scop`]) or from a region whose
//! loops are not one perfect nest, such as a stencil's time loop around two sibling
//! nests ([`Program::from_region`]), which `scop::extract` refuses.

use crate::affine::{self, Sym};
use crate::isl::{self, ctx_err, IslResult, Text};
use crate::scop::{isl_ident, AccessKind, Scop};
use isl_rs::{Context, DimType, MultiUnionPwAff, Set, UnionMap, UnionSet};
use serde::{Deserialize, Serialize};
use tessera_ir::{print, Expr, LValue, Region, Stmt, VarKind};

/// A statement of a [`Program`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramStatement {
    /// `S0`, `S1`, … (the isl tuple name).
    pub name: String,
    /// The statement, printed.
    pub text: String,
}

/// An array access of a [`Program`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProgramAccess {
    /// Index of the statement.
    pub statement: usize,
    /// `R<n>` / `W<n>`, numbered per kind in execution order as in [`Scop`].
    pub name: String,
    /// The array.
    pub array: String,
    /// Read or write (one write per statement).
    pub kind: AccessKind,
    /// `S0[t, i] -> A[i - 1]` (isl union map text, not restricted to the domain).
    pub relation: String,
    /// `A[i - 1]`.
    pub text: String,
}

/// A multi-statement polyhedral program: what the process network is built from.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Program {
    /// The statements (processes).
    pub statements: Vec<ProgramStatement>,
    /// Every access, statement by statement.
    pub accesses: Vec<ProgramAccess>,
    /// The iteration domains (isl union set).
    pub domain: String,
    /// The original (sequential) schedule (isl union map into one time space).
    pub schedule: String,
}

impl Program {
    /// The program of a SCoP (one perfect nest).
    pub fn from_scop(scop: &Scop) -> Program {
        Program {
            statements: scop.statements.iter().map(|s| ProgramStatement { name: s.name.clone(), text: s.text.clone() }).collect(),
            accesses: scop
                .accesses
                .iter()
                .map(|a| ProgramAccess {
                    statement: a.statement,
                    name: a.name.clone(),
                    array: a.array.clone(),
                    kind: a.kind,
                    relation: a.relation.clone(),
                    text: a.text.clone(),
                })
                .collect(),
            domain: scop.domain.clone(),
            schedule: scop.schedule.clone(),
        }
    }

    /// The program of a region made of loops (positive constant steps, bounds affine
    /// in enclosing indices and integer scalars) and array assignments with affine
    /// subscripts, nested in any way: statement `S<n>` is the n-th assignment in
    /// textual order, scheduled by the classic 2d+1 form `[p_0, i_1, p_1, …, i_d, p_d]`
    /// (p_k: position among its siblings), zero-padded to the deepest statement.
    pub fn from_region(region: &Region) -> Result<Program, String> {
        let params: Vec<&str> =
            region.vars.iter().filter(|v| v.kind == VarKind::Scalar && v.elem.is_integer()).map(|v| v.name.as_str()).collect();
        let mut w = Walk { params: &params, used_params: Vec::new(), stmts: Vec::new(), accesses: Vec::new(), reads: 0, writes: 0 };
        w.walk(&region.body, &mut Vec::new(), &mut Vec::new())?;
        if w.stmts.is_empty() {
            return Err("the region has no array assignment".into());
        }
        let depth = w.stmts.iter().map(|s| s.loops.len()).max().unwrap_or(0);
        let used: Vec<String> = params.iter().filter(|p| w.used_params.iter().any(|u| u == *p)).map(|p| isl_ident(p)).collect();
        let prefix = if used.is_empty() { String::new() } else { format!("[{}] -> ", used.join(", ")) };
        let mut dom = Vec::new();
        let mut sch = Vec::new();
        for (n, s) in w.stmts.iter().enumerate() {
            let vars: Vec<String> = s.loops.iter().map(|l| isl_ident(&l.0)).collect();
            let tuple = format!("S{n}[{}]", vars.join(", "));
            let cons: Vec<String> = s.loops.iter().map(|l| l.1.clone()).collect();
            dom.push(if cons.is_empty() { tuple.clone() } else { format!("{tuple} : {}", cons.join(" and ")) });
            let mut out = Vec::new();
            for k in 0..=depth {
                out.push(s.positions.get(k).copied().unwrap_or(0).to_string());
                if k < depth {
                    out.push(vars.get(k).cloned().unwrap_or_else(|| "0".into()));
                }
            }
            sch.push(format!("{tuple} -> [{}]", out.join(", ")));
        }
        let accesses = w
            .accesses
            .into_iter()
            .map(|(statement, name, array, kind, subs, text)| {
                let s = &w.stmts[statement];
                let vars: Vec<String> = s.loops.iter().map(|l| isl_ident(&l.0)).collect();
                let relation = format!("{prefix}{{ S{statement}[{}] -> {}[{}] }}", vars.join(", "), isl_ident(&array), subs.join(", "));
                ProgramAccess { statement, name, array, kind, relation, text }
            })
            .collect();
        Ok(Program {
            statements: w.stmts.iter().enumerate().map(|(n, s)| ProgramStatement { name: format!("S{n}"), text: s.text.clone() }).collect(),
            accesses,
            domain: format!("{prefix}{{ {} }}", dom.join("; ")),
            schedule: format!("{prefix}{{ {} }}", sch.join("; ")),
        })
    }
}

/// One statement found by [`Walk`]: enclosing loops (name, isl constraints), 2d+1
/// positions, text.
struct Found {
    loops: Vec<(String, String)>,
    positions: Vec<i64>,
    text: String,
}

/// (statement, name, array, kind, isl subscripts, text)
type FoundAccess = (usize, String, String, AccessKind, Vec<String>, String);

struct Walk<'a> {
    params: &'a [&'a str],
    used_params: Vec<String>,
    stmts: Vec<Found>,
    accesses: Vec<FoundAccess>,
    reads: usize,
    writes: usize,
}

impl Walk<'_> {
    /// Affine form of `e` in isl text over the enclosing loops and the parameters.
    fn aff(&mut self, e: &Expr, loops: &[(String, String)]) -> Result<String, String> {
        let params = self.params;
        let lookup = |n: &str| {
            if let Some(x) = loops.iter().rposition(|l| l.0 == n) {
                Some(Sym::Loop(x))
            } else {
                params.contains(&n).then(|| Sym::Param(n.to_string()))
            }
        };
        let a = affine::from_expr(e, &lookup).ok_or_else(|| format!("'{}' is not affine", print::expr(e)))?;
        for t in &a.terms {
            if let Sym::Param(p) = &t.sym {
                if !self.used_params.contains(p) {
                    self.used_params.push(p.clone());
                }
            }
        }
        Ok(a.format(&|s| match s {
            Sym::Loop(x) => isl_ident(&loops[*x].0),
            Sym::Param(p) => isl_ident(p),
            Sym::Tile(x) | Sym::Intra(x) => format!("x{x}"),
        }))
    }

    fn walk(&mut self, body: &[Stmt], loops: &mut Vec<(String, String)>, pos: &mut Vec<i64>) -> Result<(), String> {
        for (p, s) in body.iter().enumerate() {
            pos.push(p as i64);
            match s {
                Stmt::For { var, lower, upper, step, ne, body, .. } => {
                    if *step < 1 || *ne {
                        return Err(format!("loop '{var}': only increasing loops with a `<` test"));
                    }
                    if loops.iter().any(|l| l.0 == *var) {
                        return Err(format!("loop '{var}' shadows an enclosing loop"));
                    }
                    let (lo, up) = (self.aff(lower, loops)?, self.aff(upper, loops)?);
                    let v = isl_ident(var);
                    let mut c = format!("{lo} <= {v} < {up}");
                    if *step > 1 {
                        c.push_str(&format!(" and ({v} - ({lo})) mod {step} = 0"));
                    }
                    loops.push((var.clone(), c));
                    self.walk(body, loops, pos)?;
                    loops.pop();
                }
                Stmt::Assign { target: LValue::Element { array, index, .. }, value, .. } => {
                    let n = self.stmts.len();
                    let mut reads: Vec<(&str, &[Expr])> = Vec::new();
                    value.visit(&mut |e| {
                        if let Expr::Read { array, index, .. } = e {
                            reads.push((array, index));
                        }
                    });
                    let all = reads.into_iter().map(|r| (r, AccessKind::Read)).chain([((array.as_str(), index.as_slice()), AccessKind::Write)]);
                    for ((arr, idx), kind) in all {
                        let subs = idx.iter().map(|e| self.aff(e, loops)).collect::<Result<Vec<_>, _>>()?;
                        let name = match kind {
                            AccessKind::Read => {
                                self.reads += 1;
                                format!("R{}", self.reads - 1)
                            }
                            AccessKind::Write => {
                                self.writes += 1;
                                format!("W{}", self.writes - 1)
                            }
                        };
                        let text = format!("{arr}{}", idx.iter().map(|e| format!("[{}]", print::expr(e))).collect::<String>());
                        self.accesses.push((n, name, arr.to_string(), kind, subs, text));
                    }
                    let text = format!("{}[{}] = {}", array, index.iter().map(print::expr).collect::<Vec<_>>().join("]["), print::expr(value));
                    self.stmts.push(Found { loops: loops.clone(), positions: pos.clone(), text });
                }
                other => return Err(format!("unsupported statement at {:?}: only loops and array assignments", other.loc())),
            }
            pos.pop();
        }
        Ok(())
    }
}

/// The communication pattern of a channel or part (paper Sec. 2.3).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pattern {
    /// The consumer reads the values in the order the producer writes them.
    pub in_order: bool,
    /// Each value is read once (the relation is a function of the producer).
    pub single_valued: bool,
}

impl Pattern {
    /// In order and single-valued.
    pub fn is_fifo(self) -> bool {
        self.in_order && self.single_valued
    }

    /// `FIFO`, `out of order`, `not single-valued`, `out of order, not single-valued`.
    pub fn describe(self) -> &'static str {
        match (self.in_order, self.single_valued) {
            (true, true) => "FIFO",
            (false, true) => "out of order",
            (true, false) => "not single-valued (in order with multiplicity)",
            (false, false) => "out of order, not single-valued",
        }
    }
}

/// One part of a split channel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Part {
    /// k = 1 … n: source and target tiles first differ at tile coordinate k
    /// (`θ(x) ≪^k θ(y)`); n + 1: source and target in the same tile.
    pub depth: usize,
    /// The dependences of this part (isl union map text).
    pub relation: String,
    /// Its pattern.
    pub pattern: Pattern,
    /// Largest number of its values alive at once (module docs), `None` when not
    /// enumerable.
    pub live: Option<u64>,
}

/// One channel: the value-based flow from a write access to a read access.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Channel {
    /// Producer statement (index into [`Program::statements`]).
    pub producer: usize,
    /// Consumer statement.
    pub consumer: usize,
    /// The write access (index into [`Program::accesses`]).
    pub write: usize,
    /// The read access.
    pub read: usize,
    /// The array.
    pub array: String,
    /// The dependence relation `S_p[x] -> S_c[y]` (isl union map text).
    pub relation: String,
    /// Its pattern under θ, before the split.
    pub pattern: Pattern,
    /// Largest number of its values alive at once, `None` when not enumerable.
    pub live: Option<u64>,
    /// The non-empty parts of the depth split, by increasing depth.
    pub parts: Vec<Part>,
}

impl Channel {
    /// A FIFO before the split.
    pub fn is_fifo(&self) -> bool {
        self.pattern.is_fifo()
    }

    /// Not a FIFO, but every part of its split is: replaced by its parts.
    pub fn is_recovered(&self) -> bool {
        !self.is_fifo() && self.parts.iter().all(|p| p.pattern.is_fifo())
    }

    /// A FIFO (whole or as parts) after the split.
    pub fn is_fifo_after_split(&self) -> bool {
        self.is_fifo() || self.is_recovered()
    }
}

/// The channels of a program under a tiled schedule.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Network {
    /// θ (isl union map text).
    pub schedule: String,
    /// n, the number of leading tile coordinates of θ's time space.
    pub tile_dims: usize,
    /// The channels, by read access then producer statement.
    pub channels: Vec<Channel>,
}

/// Counts over a [`Network`] (paper Table 2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    /// Channels before the split.
    pub channels: usize,
    /// FIFOs among them.
    pub fifo: usize,
    /// Channels that are FIFOs after the split (whole or recovered).
    pub fifo_after: usize,
    /// Channels after the split (recovered channels count their parts).
    pub channels_after: usize,
    /// Total of [`Channel::live`] (`None` if one is unknown).
    pub live_before: Option<u64>,
    /// The same after the split: recovered channels count the sum of their parts.
    pub live_after: Option<u64>,
}

impl Network {
    /// The counts.
    pub fn summary(&self) -> Summary {
        let mut s = Summary { channels: self.channels.len(), fifo: 0, fifo_after: 0, channels_after: 0, live_before: Some(0), live_after: Some(0) };
        for c in &self.channels {
            s.fifo += c.is_fifo() as usize;
            s.fifo_after += c.is_fifo_after_split() as usize;
            let (n, live) = if c.is_recovered() {
                (c.parts.len(), c.parts.iter().map(|p| p.live).sum::<Option<u64>>())
            } else {
                (1, c.live)
            };
            s.channels_after += n;
            s.live_before = s.live_before.zip(c.live).map(|(a, b)| a + b);
            s.live_after = s.live_after.zip(live).map(|(a, b)| a + b);
        }
        s
    }
}

/// Builds the channels of `program` under the schedule `schedule` (isl union map
/// text, one map per statement into one time space whose first `tile_dims`
/// dimensions are tile coordinates), tests each for a FIFO, splits it by depth and
/// tests the parts. Fails when θ is not sequential, does not respect a flow
/// dependence, or has fewer than `tile_dims` dimensions.
pub fn channels(program: &Program, schedule: &str, tile_dims: usize) -> Result<Network, String> {
    let ctx = isl::new_context();
    let r = compute(&ctx, program, schedule, tile_dims);
    drop(ctx);
    r
}

/// A copy of an isl object, the error mapped.
fn cp<T: Copied>(x: &T) -> IslResult<T> {
    x.dup()
}

/// `copy()` of the isl-rs types used here.
trait Copied: Sized {
    fn dup(&self) -> IslResult<Self>;
}

impl Copied for UnionMap {
    fn dup(&self) -> IslResult<Self> {
        self.copy().map_err(ctx_err("copy"))
    }
}

impl Copied for UnionSet {
    fn dup(&self) -> IslResult<Self> {
        self.copy().map_err(ctx_err("copy"))
    }
}

/// `{ [a_0 … a_{m-1}] -> [b_0 … b_{m-1}] : a ≺ b }` (strict lexicographic order).
fn lex_lt_text(m: usize) -> String {
    let (a, b) = vars(m);
    let alts: Vec<String> = (0..m)
        .map(|k| {
            let mut c: Vec<String> = (0..k).map(|i| format!("{} = {}", a[i], b[i])).collect();
            c.push(format!("{} < {}", a[k], b[k]));
            format!("({})", c.join(" and "))
        })
        .collect();
    format!("{{ [{}] -> [{}] : {} }}", a.join(", "), b.join(", "), if alts.is_empty() { "false".into() } else { alts.join(" or ") })
}

fn vars(m: usize) -> (Vec<String>, Vec<String>) {
    ((0..m).map(|i| format!("a{i}")).collect(), (0..m).map(|i| format!("b{i}")).collect())
}

/// θ's time-space dimensions `lo..hi` as a multi union piecewise affine function.
fn sub_schedule(ctx: &Context, theta: &UnionMap, m: usize, lo: usize, hi: usize) -> IslResult<MultiUnionPwAff> {
    let (a, _) = vars(m);
    let proj = isl::umap(ctx, &format!("{{ [{}] -> [{}] }}", a.join(", "), a[lo..hi].join(", ")))?;
    let u = cp(theta)?.apply_range(proj).map_err(ctx_err("sub-schedule"))?;
    MultiUnionPwAff::from_union_map(u).map_err(ctx_err("sub-schedule"))
}

fn compute(ctx: &Context, program: &Program, schedule: &str, n: usize) -> IslResult<Network> {
    let dom = isl::uset(ctx, &program.domain)?;
    let original = isl::umap(ctx, &program.schedule)?.intersect_domain(cp(&dom)?).map_err(ctx_err("schedule"))?;
    let theta = isl::umap(ctx, schedule)?.intersect_domain(cp(&dom)?).map_err(ctx_err("schedule"))?;
    // The time space.
    let list = theta.get_map_list().map_err(ctx_err("schedule maps"))?;
    let mut m = None;
    for i in 0..list.size().map_err(ctx_err("schedule maps"))? {
        let d = list.get_at(i).map_err(ctx_err("schedule maps"))?.dim(DimType::Out).map_err(ctx_err("dim"))? as usize;
        if m.is_some_and(|m| m != d) {
            return Err(format!("the schedule `{schedule}` maps statements into time spaces of different dimensions"));
        }
        m = Some(d);
    }
    let m = m.ok_or_else(|| format!("the schedule `{schedule}` schedules no statement"))?;
    if m < n {
        return Err(format!("the schedule has {m} dimensions, fewer than its {n} tile coordinates"));
    }
    let sched_dom = cp(&theta)?.domain().map_err(ctx_err("schedule domain"))?;
    if !sched_dom.is_equal(&dom).map_err(ctx_err("equality"))? || !theta.is_injective().map_err(ctx_err("injectivity"))? {
        return Err(format!("the schedule `{schedule}` is not sequential over the domain (every iteration, distinct times)"));
    }
    let lt = isl::umap(ctx, &lex_lt_text(m))?;
    let gt = cp(&lt)?.reverse().map_err(ctx_err("reverse"))?;
    // The split filters: eq on φ_1 … φ_{k-1}, lt on φ_k; eq on φ_1 … φ_n.
    let mut filters: Vec<(Option<MultiUnionPwAff>, Option<MultiUnionPwAff>)> = Vec::new();
    for k in 1..=n {
        let eq = if k > 1 { Some(sub_schedule(ctx, &theta, m, 0, k - 1)?) } else { None };
        filters.push((eq, Some(sub_schedule(ctx, &theta, m, k - 1, k)?)));
    }
    filters.push((if n > 0 { Some(sub_schedule(ctx, &theta, m, 0, n)?) } else { None }, None));

    let acc = |a: &ProgramAccess| -> IslResult<UnionMap> {
        isl::umap(ctx, &a.relation)?.intersect_domain(cp(&dom)?).map_err(ctx_err("accesses"))
    };
    let mut out = Vec::new();
    for (r, read) in program.accesses.iter().enumerate().filter(|(_, a)| a.kind == AccessKind::Read) {
        let writes: Vec<usize> =
            (0..program.accesses.len()).filter(|&w| program.accesses[w].kind == AccessKind::Write && program.accesses[w].array == read.array).collect();
        if writes.is_empty() {
            continue;
        }
        let mut source: Option<UnionMap> = None;
        for &w in &writes {
            let a = acc(&program.accesses[w])?;
            source = Some(match source {
                None => a,
                Some(s) => s.union(a).map_err(ctx_err("union"))?,
            });
        }
        let flow = isl::value_flow(acc(read)?, source.expect("a write"), cp(&original)?)?;
        for &w in &writes {
            let wdom = acc(&program.accesses[w])?.domain().map_err(ctx_err("domain"))?;
            let d = cp(&flow)?.intersect_domain(wdom).map_err(ctx_err("channel"))?.coalesce().map_err(ctx_err("coalesce"))?;
            if d.is_empty().map_err(ctx_err("emptiness"))? {
                continue;
            }
            // θ respects the dependences: every source strictly before its target.
            if !times(&d, &theta)?.subtract(cp(&lt)?).map_err(ctx_err("legality"))?.is_empty().map_err(ctx_err("emptiness"))? {
                return Err(format!("the schedule `{schedule}` does not respect the flow dependence `{}`", d.text()));
            }
            let (pattern, live) = analyse(&d, &theta, &lt, &gt)?;
            let mut parts = Vec::new();
            let mut covered: Option<UnionMap> = None;
            for (k, (eq, lt_at)) in filters.iter().enumerate() {
                let mut p = cp(&d)?;
                if let Some(e) = eq {
                    p = p.eq_at_multi_union_pw_aff(e.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("split"))?;
                }
                if let Some(l) = lt_at {
                    p = p.lex_lt_at_multi_union_pw_aff(l.copy().map_err(ctx_err("copy"))?).map_err(ctx_err("split"))?;
                }
                let p = p.coalesce().map_err(ctx_err("coalesce"))?;
                if p.is_empty().map_err(ctx_err("emptiness"))? {
                    continue;
                }
                covered = Some(match covered {
                    None => cp(&p)?,
                    Some(c) => c.union(cp(&p)?).map_err(ctx_err("union"))?,
                });
                let (pattern, live) = analyse(&p, &theta, &lt, &gt)?;
                parts.push(Part { depth: k + 1, relation: p.text(), pattern, live });
            }
            // The parts partition the channel (θ respects it).
            if !covered.map_or(Ok(false), |c| c.is_equal(&d).map_err(ctx_err("equality")))? {
                return Err(format!("the depth split of `{}` under `{schedule}` is not a partition", d.text()));
            }
            let producer = program.accesses[w].statement;
            out.push(Channel {
                producer,
                consumer: read.statement,
                write: w,
                read: r,
                array: read.array.clone(),
                relation: d.text(),
                pattern,
                live,
                parts,
            });
        }
    }
    Ok(Network { schedule: schedule.to_string(), tile_dims: n, channels: out })
}

/// The dependences `d` on time stamps: `→_t = θ⁻¹ ; → ; θ`.
fn times(d: &UnionMap, theta: &UnionMap) -> IslResult<UnionMap> {
    cp(d)?
        .apply_domain(cp(theta)?)
        .map_err(ctx_err("time stamps"))?
        .apply_range(cp(theta)?)
        .map_err(ctx_err("time stamps"))?
        .coalesce()
        .map_err(ctx_err("coalesce"))
}

/// Pattern and live-value maximum of the dependences `d` under θ.
fn analyse(d: &UnionMap, theta: &UnionMap, lt: &UnionMap, gt: &UnionMap) -> IslResult<(Pattern, Option<u64>)> {
    let single_valued = d.is_single_valued().map_err(ctx_err("single-valued"))?;
    let dt = times(d, theta)?;
    // y -> y' with producers x ≺ x', kept when y' ≺ y: the out-of-order pairs.
    let crossed = cp(&dt)?
        .reverse()
        .map_err(ctx_err("reverse"))?
        .apply_range(cp(lt)?)
        .map_err(ctx_err("in order"))?
        .apply_range(cp(&dt)?)
        .map_err(ctx_err("in order"))?
        .intersect(cp(gt)?)
        .map_err(ctx_err("in order"))?;
    let in_order = crossed.is_empty().map_err(ctx_err("emptiness"))?;
    Ok((Pattern { in_order, single_valued }, live(&dt)?))
}

/// The largest number of values produced and not yet read by their last reader, in
/// the sequential order of the time stamps (module docs); `None` when the relation
/// cannot be enumerated.
fn live(dt: &UnionMap) -> IslResult<Option<u64>> {
    let last = cp(dt)?.lexmax().map_err(ctx_err("last read"))?.wrap().map_err(ctx_err("wrap"))?;
    let Ok(set) = Set::from_union_set(last) else { return Ok(None) };
    let Ok(points) = isl::points(&set) else { return Ok(None) };
    let m = set.dim(DimType::Set).map_err(ctx_err("dim"))? as usize / 2;
    // (time, 0 = last read, 1 = production): at one time stamp (a statement that reads
    // then writes), the read comes first.
    let mut events: Vec<(&[i64], u8)> = Vec::with_capacity(2 * points.len());
    for p in &points {
        events.push((&p[..m], 1));
        events.push((&p[m..], 0));
    }
    events.sort_unstable();
    let (mut cur, mut max) = (0i64, 0i64);
    for (_, e) in events {
        cur += if e == 1 { 1 } else { -1 };
        max = max.max(cur);
    }
    Ok(Some(max as u64))
}

fn pct(a: usize, b: usize) -> String {
    (a * 100).checked_div(b).map_or("-".into(), |p| format!("{p} %"))
}

fn opt(v: Option<u64>) -> String {
    v.map_or("?".into(), |v| v.to_string())
}

/// A stable text dump of the network: the summary, then per channel its relation,
/// pattern and parts.
pub fn describe(program: &Program, net: &Network) -> String {
    let s = net.summary();
    let mut o = String::new();
    o.push_str(&format!("schedule: {}\ntile coordinates: {}\n", net.schedule, net.tile_dims));
    o.push_str(&format!(
        "channels: {}, FIFO {} ({}); after the depth split: {} FIFO ({}), {} channels\n",
        s.channels,
        s.fifo,
        pct(s.fifo, s.channels),
        s.fifo_after,
        pct(s.fifo_after, s.channels),
        s.channels_after
    ));
    o.push_str(&format!("live values: {} before the split, {} after\n", opt(s.live_before), opt(s.live_after)));
    for (i, c) in net.channels.iter().enumerate() {
        let (w, r) = (&program.accesses[c.write], &program.accesses[c.read]);
        let verdict = if c.is_fifo() {
            "FIFO"
        } else if c.is_recovered() {
            "recovered: every part is a FIFO"
        } else {
            "not recovered"
        };
        o.push_str(&format!(
            "channel {i}: {} {} {} -> {} {} {}: {}; live {}; {verdict}\n",
            program.statements[c.producer].name,
            w.name,
            w.text,
            program.statements[c.consumer].name,
            r.name,
            r.text,
            c.pattern.describe(),
            opt(c.live)
        ));
        o.push_str(&format!("  relation: {}\n", c.relation));
        for p in &c.parts {
            let which = if p.depth > net.tile_dims { "same tile".to_string() } else { format!("depth {}", p.depth) };
            o.push_str(&format!("  {which}: {}; live {}; {}\n", p.pattern.describe(), opt(p.live), p.relation));
        }
    }
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(path: &str) -> Region {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir").join(path);
        Region::from_json(&std::fs::read_to_string(&p).unwrap()).unwrap()
    }

    /// The program of a fixture with a time loop.
    fn program(name: &str) -> Program {
        Program::from_region(&region(&format!("{name}.ir.json"))).unwrap()
    }

    /// Pluto-style time skewing, tiles of 2 time steps × 4 on the outer (skewed) space
    /// dimension, inner space dimensions whole.
    const JACOBI1D: &str = "{ S0[t, i] -> [floor(t/2), floor((2t + i)/4), t, 2t + i, 0]; \
                              S1[t, i] -> [floor(t/2), floor((2t + i + 1)/4), t, 2t + i + 1, 1] }";
    const JACOBI2D: &str = "{ S0[t, i, j] -> [floor(t/2), floor((2t + i)/4), t, 2t + i, 2t + j, 0]; \
                              S1[t, i, j] -> [floor(t/2), floor((2t + i + 1)/4), t, 2t + i + 1, 2t + j + 1, 1] }";
    const SEIDEL2D: &str = "{ S0[t, i, j] -> [floor(t/2), floor((t + i)/4), t, t + i, 2t + i + j] }";
    const HEAT3D: &str = "{ S0[t, i, j, k] -> [floor(t/2), floor((2t + i)/4), t, 2t + i, 2t + j, 2t + k, 0]; \
                            S1[t, i, j, k] -> [floor(t/2), floor((2t + i + 1)/4), t, 2t + i + 1, 2t + j + 1, 2t + k + 1, 1] }";
    /// The same skews, every dimension tiled.
    const JACOBI2D_ALL: &str = "{ S0[t, i, j] -> [floor(t/2), floor((2t + i)/4), floor((2t + j)/4), t, 2t + i, 2t + j, 0]; \
                              S1[t, i, j] -> [floor(t/2), floor((2t + i + 1)/4), floor((2t + j + 1)/4), t, 2t + i + 1, 2t + j + 1, 1] }";
    const SEIDEL2D_ALL: &str = "{ S0[t, i, j] -> [floor(t/2), floor((t + i)/4), floor((2t + i + j)/4), t, t + i, 2t + i + j] }";

    struct Kernel {
        name: &'static str,
        schedule: &'static str,
        tile_dims: usize,
        /// Channels, FIFOs before the split under the tiled schedule, channels after.
        expect: (usize, usize, usize),
    }

    const KERNELS: [Kernel; 4] = [
        Kernel { name: "jacobi1d_time", schedule: JACOBI1D, tile_dims: 2, expect: (6, 1, 13) },
        Kernel { name: "jacobi2d_time", schedule: JACOBI2D, tile_dims: 2, expect: (10, 1, 23) },
        Kernel { name: "seidel2d_time", schedule: SEIDEL2D, tile_dims: 2, expect: (9, 1, 19) },
        Kernel { name: "heat3d_time", schedule: HEAT3D, tile_dims: 2, expect: (20, 1, 48) },
    ];

    /// A program written in isl text: statements `S<n>` with one write each.
    fn hand(domain: &str, schedule: &str, accesses: &[(usize, &str, AccessKind, &str)]) -> Program {
        let n = accesses.iter().map(|a| a.0).max().unwrap() + 1;
        let mut counts = (0, 0);
        Program {
            statements: (0..n).map(|s| ProgramStatement { name: format!("S{s}"), text: format!("statement {s}") }).collect(),
            accesses: accesses
                .iter()
                .map(|&(statement, array, kind, relation)| {
                    let c = if kind == AccessKind::Read { &mut counts.0 } else { &mut counts.1 };
                    *c += 1;
                    let name = format!("{}{}", if kind == AccessKind::Read { "R" } else { "W" }, *c - 1);
                    ProgramAccess { statement, name, array: array.into(), kind, relation: relation.into(), text: relation.into() }
                })
                .collect(),
            domain: domain.into(),
            schedule: schedule.into(),
        }
    }

    /// The time loops around sibling nests are no SCoP of `scop::extract` (one perfect
    /// nest); seidel-2d is one, and both front ends give the same channels.
    #[test]
    fn time_loop_regions() {
        for name in ["jacobi1d_time", "jacobi2d_time", "heat3d_time"] {
            let e = crate::scop::extract(&region(&format!("{name}.ir.json"))).unwrap_err();
            assert!(matches!(e.reason, crate::PolyRejectReason::NotALoopNest { .. }), "{name}: {e:?}");
        }
        let scop = crate::scop::extract(&region("seidel2d_time.ir.json")).unwrap();
        let (a, b) = (Program::from_scop(&scop), program("seidel2d_time"));
        assert_eq!(a.statements.len(), 1);
        assert_eq!(b.domain, "{ S0[t, i, j] : 0 <= t < 4 and 1 <= i < 15 and 1 <= j < 15 }");
        assert_eq!(b.schedule, "{ S0[t, i, j] -> [0, t, 0, i, 0, j, 0] }");
        let (na, nb) = (channels(&a, &a.schedule, 0).unwrap(), channels(&b, SEIDEL2D, 2).unwrap());
        let ctx = isl::new_context();
        assert_eq!(na.channels.len(), nb.channels.len());
        for (x, y) in na.channels.iter().zip(&nb.channels) {
            assert_eq!((a.accesses[x.read].text.as_str(), x.read, x.write), (b.accesses[y.read].text.as_str(), y.read, y.write));
            let (rx, ry) = (isl::umap(&ctx, &x.relation).unwrap(), isl::umap(&ctx, &y.relation).unwrap());
            assert!(rx.is_equal(&ry).unwrap(), "{} vs {}", x.relation, y.relation);
        }
        // A reduction into a scalar is no array assignment.
        let e = Program::from_region(&region("sum1d.ir.json")).unwrap_err();
        assert!(e.starts_with("unsupported statement"), "{e}");
        let j1 = program("jacobi1d_time");
        assert_eq!(j1.schedule, "{ S0[t, i] -> [0, t, 0, i, 0]; S1[t, i_1] -> [0, t, 1, i_1, 0] }", "sibling loops: position 1");
        assert_eq!(
            j1.accesses.iter().map(|a| format!("{} {} {}", j1.statements[a.statement].name, a.name, a.text)).collect::<Vec<_>>(),
            ["S0 R0 A[i - 1]", "S0 R1 A[i]", "S0 R2 A[i + 1]", "S0 W0 B[i]", "S1 R3 B[i_1 - 1]", "S1 R4 B[i_1]", "S1 R5 B[i_1 + 1]", "S1 W1 A[i_1]"]
        );
    }

    /// In the original order every channel is a FIFO (one channel per read reference:
    /// the paper's counts 6, 10, 9 and 20), and its one part is the whole relation.
    #[test]
    fn original_order_is_all_fifo() {
        for k in &KERNELS {
            let p = program(k.name);
            let net = channels(&p, &p.schedule, 0).unwrap();
            let s = net.summary();
            assert_eq!((s.channels, s.fifo, s.fifo_after, s.channels_after), (k.expect.0, k.expect.0, k.expect.0, k.expect.0), "{}", k.name);
            for c in &net.channels {
                assert_eq!((c.parts.len(), c.parts[0].depth, c.parts[0].live), (1, 1, c.live), "{}", k.name);
                assert_eq!(c.parts[0].relation, c.relation);
            }
            assert!(describe(&p, &net).contains(&format!("channels: {0}, FIFO {0} (100 %)", k.expect.0)));
        }
    }

    /// Tiled (time-skewed, 2 time steps × 4 on the outer space dimension), almost no
    /// channel is a FIFO; split by depth, every channel is (paper Table 2: 0 % or 16 %
    /// before, 100 % after).
    #[test]
    fn depth_split_recovers_every_channel() {
        let mut report = Vec::new();
        for k in &KERNELS {
            let p = program(k.name);
            let net = channels(&p, k.schedule, k.tile_dims).unwrap();
            let s = net.summary();
            assert_eq!((s.channels, s.fifo, s.channels_after), k.expect, "{}", k.name);
            assert_eq!(s.fifo_after, s.channels, "{}: {}", k.name, describe(&p, &net));
            for c in net.channels.iter().filter(|c| !c.is_fifo()) {
                assert!(!c.pattern.in_order && c.pattern.single_valued, "{}: tiling breaks the order, never unicity", k.name);
                assert!(c.parts.len() >= 2 && c.parts.iter().all(|p| p.pattern.is_fifo()));
                let depths: Vec<usize> = c.parts.iter().map(|p| p.depth).collect();
                assert!(depths.windows(2).all(|w| w[0] < w[1]) && depths.iter().all(|&d| (1..=3).contains(&d)));
            }
            // Reads of the previous time step cross the time tiles (depth 1).
            assert!(net.channels.iter().any(|c| c.parts.iter().any(|p| p.depth == 1)), "{}", k.name);
            report.push(format!(
                "{}: {}/{} FIFO before, {}/{} after, {} channels; live {} -> {}",
                k.name,
                s.fifo,
                s.channels,
                s.fifo_after,
                s.channels,
                s.channels_after,
                s.live_before.unwrap(),
                s.live_after.unwrap()
            ));
        }
        assert_eq!(
            report,
            [
                "jacobi1d_time: 1/6 FIFO before, 6/6 after, 13 channels; live 97 -> 114",
                "jacobi2d_time: 1/10 FIFO before, 10/10 after, 23 channels; live 1070 -> 1476",
                "seidel2d_time: 1/9 FIFO before, 9/9 after, 19 channels; live 980 -> 1315",
                "heat3d_time: 1/20 FIFO before, 20/20 after, 48 channels; live 6050 -> 9688",
            ]
        );
    }

    /// With every space dimension tiled too, a dependence that crosses the i and the
    /// j hyperplanes of one tile pair lands in the depth-2 part beside those crossing
    /// only i: the producer tile writes both kinds row by row, the consumer tiles read
    /// one kind after the other. The depth split is not complete there (paper Sec. 3).
    #[test]
    fn tiling_every_dimension_leaves_parts_out_of_order() {
        for (name, sched, want) in [("jacobi2d_time", JACOBI2D_ALL, (10, 0, 2)), ("seidel2d_time", SEIDEL2D_ALL, (9, 0, 3))] {
            let p = program(name);
            let net = channels(&p, sched, 3).unwrap();
            let s = net.summary();
            assert_eq!((s.channels, s.fifo, s.fifo_after), want, "{name}");
            for c in net.channels.iter().filter(|c| !c.is_fifo_after_split()) {
                let bad: Vec<usize> = c.parts.iter().filter(|p| !p.pattern.is_fifo()).map(|p| p.depth).collect();
                // Crossing the time or the i hyperplane, and maybe the next ones.
                assert!(!bad.is_empty() && bad.iter().all(|&d| d < 3), "{name}: {bad:?}");
                assert!(c.parts.iter().all(|p| p.pattern.single_valued));
            }
        }
    }

    /// The isl decisions agree with a brute force over the points: pairs sorted by
    /// producer time have increasing consumer times (in order), producers are distinct
    /// (single-valued). On the fully tiled kernels, where some parts are not FIFOs.
    #[test]
    fn patterns_agree_with_enumeration() {
        let ctx = isl::new_context();
        let brute = |rel: &str, sched: &str| -> Pattern {
            let theta = isl::umap(&ctx, sched).unwrap();
            let dt = isl::umap(&ctx, rel).unwrap().apply_domain(theta.copy().unwrap()).unwrap().apply_range(theta).unwrap();
            let set = Set::from_union_set(dt.wrap().unwrap()).unwrap();
            let m = set.dim(DimType::Set).unwrap() as usize / 2;
            let mut pts = isl::points(&set).unwrap();
            pts.sort();
            let in_order = pts.windows(2).all(|w| w[0][..m] == w[1][..m] || w[0][m..] < w[1][m..]);
            let single_valued = pts.windows(2).all(|w| w[0][..m] != w[1][..m]);
            Pattern { in_order, single_valued }
        };
        let (mut checked, mut bad) = (0, 0);
        for (name, sched, n) in [("jacobi2d_time", JACOBI2D_ALL, 3), ("seidel2d_time", SEIDEL2D_ALL, 3), ("jacobi1d_time", JACOBI1D, 2)] {
            let p = program(name);
            for c in channels(&p, sched, n).unwrap().channels {
                assert_eq!(c.pattern, brute(&c.relation, sched), "{name}: {}", c.relation);
                for part in &c.parts {
                    assert_eq!(part.pattern, brute(&part.relation, sched), "{name}: {}", part.relation);
                    checked += 1;
                    bad += !part.pattern.is_fifo() as usize;
                }
            }
        }
        assert!(checked > 50 && bad > 5, "{checked} parts, {bad} not FIFOs");
        let acc = [(0, "A", AccessKind::Write, "{ S0[i] -> A[i] }"), (1, "A", AccessKind::Read, "{ S1[i] -> A[0] }"), (1, "B", AccessKind::Write, "{ S1[i] -> B[i] }")];
        let p = hand("{ S0[i] : 0 <= i < 8; S1[i] : 0 <= i < 8 }", "{ S0[i] -> [0, i]; S1[i] -> [1, i] }", &acc);
        let c = &channels(&p, &p.schedule, 0).unwrap().channels[0];
        assert_eq!(c.pattern, brute(&c.relation, &p.schedule));
    }

    /// The patterns on hand-written channels: a reversal is out of order, a broadcast
    /// is in order with multiplicity; the live-value count follows the schedule.
    #[test]
    fn patterns_and_live_values() {
        let acc = [
            (0, "A", AccessKind::Write, "{ S0[i] -> A[i] }"),
            (1, "A", AccessKind::Read, "{ S1[i] -> A[7 - i] }"),
            (1, "A", AccessKind::Read, "{ S1[i] -> A[0] }"),
            (1, "A", AccessKind::Read, "{ S1[i] -> A[i] }"),
            (1, "B", AccessKind::Write, "{ S1[i] -> B[i] }"),
        ];
        let p = hand("{ S0[i] : 0 <= i < 8; S1[i] : 0 <= i < 8 }", "{ S0[i] -> [0, i]; S1[i] -> [1, i] }", &acc);
        let net = channels(&p, &p.schedule, 0).unwrap();
        let got: Vec<(&str, Option<u64>)> = net.channels.iter().map(|c| (c.pattern.describe(), c.live)).collect();
        assert_eq!(got, [("out of order", Some(8)), ("not single-valued (in order with multiplicity)", Some(1)), ("FIFO", Some(8))]);
        // Fused: S1[i] right after S0[i] (only the copy stays legal).
        let fused = hand("{ S0[i] : 0 <= i < 8; S1[i] : 0 <= i < 8 }", "{ S0[i] -> [i, 0]; S1[i] -> [i, 1] }", &[acc[0], acc[3], acc[4]]);
        let net = channels(&fused, &fused.schedule, 0).unwrap();
        assert_eq!((net.channels.len(), net.channels[0].pattern.is_fifo(), net.channels[0].live), (1, true, Some(1)));
        // Symbolic sizes: the patterns are decided, the live count is not.
        let param = hand("[n] -> { S0[i] : 0 <= i < n; S1[i] : 0 <= i < n }", "[n] -> { S0[i] -> [0, i]; S1[i] -> [1, i] }", &[acc[0], acc[3], acc[4]]);
        let net = channels(&param, &param.schedule, 0).unwrap();
        assert_eq!((net.channels[0].pattern.is_fifo(), net.channels[0].live), (true, None));
        assert!(describe(&param, &net).contains("live values: ? before the split, ? after"));
    }

    /// Schedules that are no sequential order respecting the dependences are refused.
    #[test]
    fn bad_schedules() {
        let p = program("jacobi1d_time");
        let e = channels(&p, "{ S0[t, i] -> [t, i, 0]; S1[t, i] -> [t, i, 0] }", 0).unwrap_err();
        assert!(e.contains("not sequential"), "{e}");
        let e = channels(&p, "{ S0[t, i] -> [t, i, 0]; S1[t, i] -> [t, i, 1] }", 0).unwrap_err();
        assert!(e.contains("does not respect the flow dependence"), "{e}");
        let e = channels(&p, JACOBI1D, 6).unwrap_err();
        assert!(e.contains("fewer than its 6 tile coordinates"), "{e}");
    }

    /// A single-statement stencil (`X` from `A`) has no flow between statements and
    /// no channel, in the original order or tiled.
    #[test]
    fn single_statement_stencil_has_no_channel() {
        let scop = crate::scop::extract(&region("small/2D-5p.ir.json")).unwrap();
        let p = Program::from_scop(&scop);
        assert_eq!(p.statements.len(), 1);
        let net = channels(&p, &p.schedule, 0).unwrap();
        assert!(net.channels.is_empty());
        let tiled = crate::tiling::schedule_text(&scop, &[8, 8], &[0, 1]);
        let net = channels(&p, &tiled, 2).unwrap();
        assert!(net.channels.is_empty());
        assert_eq!(net.summary(), Summary { channels: 0, fifo: 0, fifo_after: 0, channels_after: 0, live_before: Some(0), live_after: Some(0) });
        assert!(describe(&p, &net).contains("channels: 0, FIFO 0 (-); after the depth split: 0 FIFO (-), 0 channels\n"));
    }

    /// The dump of jacobi-1d, tiled: summary, channels, parts (stable text).
    #[test]
    fn describe_jacobi1d() {
        let p = program("jacobi1d_time");
        let text = describe(&p, &channels(&p, JACOBI1D, 2).unwrap());
        let heads: Vec<&str> = text.lines().filter(|l| !l.starts_with("  relation")).map(|l| l.split("; {").next().unwrap()).collect();
        let want = format!(
            "schedule: {JACOBI1D}\ntile coordinates: 2\n\
             channels: 6, FIFO 1 (16 %); after the depth split: 6 FIFO (100 %), 13 channels\n\
             live values: 97 before the split, 114 after"
        );
        assert_eq!(heads[..4].join("\n"), want, "{text}");
        assert!(heads.contains(&"channel 0: S1 W1 A[i_1] -> S0 R0 A[i - 1]: out of order; live 29; recovered: every part is a FIFO"), "{text}");
        assert!(heads.contains(&"  depth 1: FIFO; live 29"), "{text}");
        assert!(heads.contains(&"  same tile: FIFO; live 2"), "{text}");
    }
}
