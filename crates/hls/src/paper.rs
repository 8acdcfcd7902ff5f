//! The optimized kernel: step 5 of Mayer, Brandner, Philippsen, "Employing polyhedral
//! methods to optimize stencils on FPGAs with stencil-specific caches, data reuse, and
//! wide data bursts" (IMPACT 2024, Sec. 4 and Fig. 5/6; `docs/method.md`),
//! printed from the plan of steps 1–4 (`tessera_poly::Plan`).
//!
//! ```text
//! for ti = lb; ti < ub; ti += SZ …            inter-tile loops, original order (steps 1, 3: δ^o = −lb)
//!   [PIPELINE II=1 when d = 1]
//!   x_n = min(SZ, ub − tx)                    real iterations of a partial / padded loop (step 3)
//!   T A_f[…], A_c[…], X_l[…]                  cache buffers, ARRAY_PARTITION complete (step 2, 5)
//!   fill full buffers; pre-load chunk buffers (step 5, ship)
//!   for i = 0; i < i_n; i++                   intra-tile loops in the order p (δ^i = −ti)
//!     load the next chunk slice(s)
//!     for j …   [PIPELINE II=1 on p(d−1)]
//!       for k = 0; k < SZ; k++                padded: constant trip count, unrolled (step 3)
//!         statements, subscripts redirected into the buffers (step 4)
//!       flush the line buffers (trimmed)
//!     flush the chunk's written elements (trimmed); shift the chunks by one slice
//!   flush the full buffers (trimmed)
//! ```
//!
//! Every ship moves rows of the innermost array dimension as wide bursts with strobes
//! (`ship.rs`); the ports are `hls::burst_maxi<tessera::wide_t<W, T>>`, one bundle per
//! array, in the region's variable order, so the runtime ABI equals the baseline's.
//!
//! [`Variant::Tessera`] prints the same kernel with its round trips overlapped where no
//! read can observe an unacknowledged write: for an array the region only reads, the
//! row loaded inside the pipelined loop (2D) is requested one iteration ahead
//! (`tessera_request_in` before the loop and for `i + 1`, `tessera_receive_in` for
//! `i`), and every other load (pre-loads, 3D slices, full fills) requests all its rows
//! before reading any; for an array it only writes, rows are posted
//! (`tessera_ship_out_posted`: the previous row's responses are awaited after this
//! row's bursts) and drained at the kernel's end. The bursts are exactly the paper
//! variant's (tests compare the per-array histograms).
//!
//! Where this differs from the paper's own generator, and why:
//! - A chunk's next slice is loaded whole at the start of each iteration of p(1)
//!   (docs/method.md, step 5), not row by row inside p(2) as in Fig. 5. In 2D the two are
//!   the same (the slice is one row, loaded inside the pipelined loop); in 3D the
//!   pipelined loop holds the computation and the line write-back only.
//! - A buffer row keeps the plan's layout (box element q at `halo_left + q`) whatever
//!   the row's misalignment: each lane of a beat goes to its element's slot, lanes
//!   outside the box are dropped. The paper pads a whole beat on both sides instead.
//! - Padded iterations skip integer divisions (as they skip uncached accesses): their
//!   operands are garbage there, and a zero divisor traps in emulation.
//!
//! Reductions (`tessera_poly::reduction`): each reduction variable is a local
//! accumulator at the operator's identity, declared before the tiles; its
//! accumulations run where the nest has them, in the tiled order, under the padding
//! guard (a padded iteration never accumulates), and the plan has proved that order to
//! be the loop's wherever the result depends on it. At the end the result, `original
//! op private` (clang's combiner), goes to the variable's one-element port
//! (`tessera::maxi<T>`, the baseline kernel's ABI; bundles after the arrays'). With
//! `reassociate`, a floating sum or product the loop only accumulates into keeps
//! [`crate::baseline::PARTIAL_SUMS`] partial results, indexed by the padded loop's
//! intra-tile index modulo their number (a constant in each unrolled copy), added up
//! pairwise at the end.
//!
//! What makes [`generate`] refuse a plan (the caller then uses the baseline kernel):
//! loops with a step other than 1; a cached write group that does not write one
//! element per iteration with subscripts `tile origin + intra index + constant` (so
//! that the elements real iterations wrote form a box, which the write-back trims to),
//! or whose writes differ; a chunk that shifts along the innermost dimension or
//! backwards; a beat wider than 1024 bits; a plan laid out for another port width;
//! buffers with more bits than the device has flip-flops (they are completely
//! partitioned into registers).

use crate::cpp::{self, ident, Leaves};
use crate::ship::{self, Code, Dir, How, Range, RowDim, Ship};
use crate::Kernel;
use std::cell::{Cell, RefCell};
use std::collections::{BTreeSet, HashSet};
use std::fmt::Write as _;
use tessera_ir::reject::Reason;
use tessera_ir::{BinOp, Expr, LValue, ReductionOp, Region, ScalarType, Stmt, VarKind};
use tessera_poly::{AccessKind, Aff, BufferKind, IntraTrip, Plan, Sym};

/// Generates the optimized kernel `name` for `region` from its plan, with ports of
/// `port_width` elements per beat (the width the plan's halos were computed for).
/// `Err` says why the plan is not supported (one of the generation stage's reasons of
/// [`tessera_ir::reject`]; a plan that contradicts the region is a bug); no code is
/// generated then.
pub fn generate(region: &Region, plan: &Plan, name: &str, port_width: u32, variant: Variant) -> Result<Kernel, Reason> {
    // The region as the optimizer planned it: decreasing loops counting up (over
    // their negated index, or over their own when the order is free).
    let region = tessera_poly::normalize::apply(region, &plan.normalization).map_err(|e| e.reason)?;
    let g = Gen::new(&region, plan, port_width, variant)?;
    Ok(g.kernel(name))
}

/// How the tiled kernel ships its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Mode `paper`: the paper's structure, every burst a blocking round trip — per
    /// pipelined row a read request and burst, the unrolled computation, a write
    /// request and burst, then the wait for its response.
    Paper,
    /// Mode `tessera`: the same tiles, buffers and bursts, with the round trips
    /// overlapped where no data hazard can exist: an array the region only reads has
    /// the row of the next iteration of the pipelined loop requested before the
    /// current row's beats are read (prefetch, in 2D nests where the row is loaded
    /// inside the pipelined loop); an array the region only writes posts its rows and
    /// waits for a row's write responses one row later (at the kernel's end for the
    /// last one). Arrays both read and written keep the paper's blocking shipment.
    Tessera,
}

impl Variant {
    /// The mode's name, as in options and manifests.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Paper => "paper",
            Variant::Tessera => "tessera",
        }
    }
}

/// One loop of the nest, tiled.
struct LoopInfo {
    /// The intra-tile index (the source's index name: `i` runs from 0 in a tile).
    var: String,
    /// The tile origin (`ti`).
    tile: String,
    /// The source's index type.
    ty: ScalarType,
    /// SZ.
    size: i64,
    lower: Aff,
    upper: Aff,
    trip: IntraTrip,
    /// Name of the per-tile count of real iterations (`i_n`), for partial and padded loops.
    real: String,
}

/// One array of the region.
struct ArrayInfo {
    /// Source name.
    name: String,
    /// Port (parameter) name.
    port: String,
    elem: ScalarType,
    /// Extents, outermost first, as C++ (the outermost from the map clause when the type
    /// does not say).
    extents: Vec<String>,
    /// Name of the variable holding the array's size in beats.
    words: String,
    /// When neither the type nor a map clause gives the outermost extent (a pointer
    /// without a map clause, a delinearised view): the variables holding one past the
    /// largest element index the region's accesses reach (which bounds the reads as
    /// the array's size does otherwise), and a temporary.
    reach: Option<(String, String)>,
    /// Burst segment in beats: min(256, 4096 / beat bytes).
    seg: i64,
    /// Tessera variant, an array the region writes and never reads: its rows are
    /// posted; the counter `pending` holds the bursts of the last posted row, at most
    /// `pend` (0: nothing is written through a buffer).
    posted: bool,
    pending: String,
    pend: i64,
    /// Tessera variant, an array the region reads and never writes: rows loaded inside
    /// the pipelined loop are prefetched one iteration ahead, the rows of any other
    /// load are all requested before their beats are read.
    prefetch: bool,
}

/// One cache buffer.
struct Buf {
    /// Index into the plan's buffers.
    plan: usize,
    /// C++ name.
    name: String,
    /// Array (index into `Gen::arrays`).
    array: usize,
    kind: BufferKind,
    box_size: Vec<i64>,
    shape: Vec<i64>,
    offset: Vec<Aff>,
    left: i64,
    /// Chunk: (array dimension, slices per iteration of p(1)).
    shift: Option<(usize, i64)>,
    reads: bool,
    /// Written: the write subscripts and, per array dimension, the loop it follows.
    write: Option<(Vec<Aff>, Vec<Option<usize>>)>,
}

/// One reduction variable (`tessera_poly::reduction`): a local accumulator in the
/// kernel, combined into the variable's one-element port at the end.
struct Red {
    /// Source name.
    var: String,
    op: ReductionOp,
    ty: ScalarType,
    /// The accumulator: a local of the variable's own name.
    local: String,
    /// The kernel parameter: `<var>_port`, the one-element memory port of a variable
    /// returned to the host, or `<var>_in`, the (unused) value of a firstprivate one.
    param: String,
    /// Whether the variable returns to the host (`Var::writes_back`).
    writes_back: bool,
    /// The original value read from the port at the end.
    orig: String,
    /// Whether the plan keeps the loop's order of its accumulations.
    ordered: bool,
    /// Reassociated (`reassociate`, a floating sum or product only accumulated
    /// into): the array of partial results, one per intra-tile index of the padded
    /// loop modulo [`crate::baseline::PARTIAL_SUMS`].
    part: Option<String>,
}

struct Gen<'a> {
    region: &'a Region,
    plan: &'a Plan,
    variant: Variant,
    w: i64,
    loops: Vec<LoopInfo>,
    /// Intra-tile loops outer to inner (p).
    perm: Vec<usize>,
    /// The innermost body's assignments.
    stmts: Vec<&'a Stmt>,
    arrays: Vec<ArrayInfo>,
    bufs: Vec<Buf>,
    /// Row loop variables, one per array dimension (enough for every array).
    rows: Vec<String>,
    /// Loops whose real-iteration count the tile body uses.
    used_real: RefCell<BTreeSet<usize>>,
    /// Per array: the most read bursts the kernel has outstanding at once (tessera
    /// variant; the paper's blocking reads have one).
    read_outstanding: RefCell<Vec<i64>>,
    /// The reduction variables, in the SCoP's order.
    reds: Vec<Red>,
}

/// Names the generated code introduces, kept apart from the region's own.
struct Names(HashSet<String>);

impl Names {
    fn fresh(&mut self, base: &str) -> String {
        let mut n = ident(base);
        while self.0.contains(&n) {
            n.push('_');
        }
        self.0.insert(n.clone());
        n
    }
}

/// Helper functions of the kernel source, all named `tessera_…`.
/// Flip-flops of the VCU118's XCVU9P (DS890; docs/performance-model.md, "Target platform facts"): the most
/// register bits completely partitioned buffers can occupy. A plan beyond it is
/// refused (the region gets the baseline kernel) rather than printed.
const DEVICE_FLIP_FLOPS: i64 = 2_364_480;

/// The helpers of `tessera_ship.h` (and its template names) the kernel may call.
const HELPERS: &[&str] = &[
    "tessera_floor_div",
    "tessera_row_beats",
    "tessera_row_bursts",
    "tessera_request_in",
    "tessera_receive_in",
    "tessera_ship_in",
    "tessera_write_row",
    "tessera_ship_out",
    "tessera_ship_out_posted",
    "tessera_write_drain",
    "tessera_nc_read",
    "tessera_nc_write",
];

impl<'a> Gen<'a> {
    fn new(region: &'a Region, plan: &'a Plan, port_width: u32, variant: Variant) -> Result<Gen<'a>, Reason> {
        if !port_width.is_power_of_two() || port_width > 64 {
            return Err(Reason::KernelUnsupported { detail: format!("port width {port_width} is not a power of two from 1 to 64") });
        }
        if plan.buffers.port_width != port_width {
            return Err(Reason::KernelInconsistent { detail: format!(
                "the plan's buffers were laid out for port width {}, not {port_width}",
                plan.buffers.port_width
            ) });
        }
        let w = port_width as i64;
        let scop = &plan.scop;
        let d = scop.depth();
        let mut names = Names(region.vars.iter().map(|v| ident(&v.name)).collect());
        for h in HELPERS {
            if names.0.contains(*h) {
                return Err(Reason::KernelUnsupported { detail: format!("the region has a variable named {h}, a helper of the generated kernel") });
            }
            names.0.insert(h.to_string());
        }
        for dp in &scop.derived {
            if !names.0.insert(ident(&dp.name)) {
                return Err(Reason::KernelUnsupported { detail: format!("the parameter {} for a loop-invariant expression has the name of a helper of the generated kernel", dp.name) });
            }
        }

        // The perfect nest of the IR (the optimizer accepted it, so it is one).
        let mut fors = Vec::new();
        let mut body: &[Stmt] = &region.body;
        while let [Stmt::For { var, ty, body: inner, .. }] = body {
            fors.push((var.clone(), *ty));
            body = inner;
        }
        if fors.len() != d || body.len() != scop.statements.len() {
            return Err(Reason::KernelInconsistent { detail: "the region's loop nest does not match the plan".into() });
        }
        let stmts: Vec<&Stmt> = body.iter().collect();
        for (v, _) in &fors {
            names.0.insert(ident(v));
        }
        names.0.extend(plan.tiling.loops.iter().map(|l| ident(&l.tile_var)));

        let mut loops = Vec::new();
        for (x, tl) in plan.tiling.loops.iter().enumerate() {
            if tl.step != 1 {
                return Err(Reason::KernelUnsupported { detail: format!("loop '{}' has step {}; only step 1 is generated", tl.var, tl.step) });
            }
            if tl.var != fors[x].0 {
                return Err(Reason::KernelInconsistent { detail: "the region's loop nest does not match the plan".into() });
            }
            loops.push(LoopInfo {
                var: ident(&tl.var),
                tile: ident(&tl.tile_var),
                ty: fors[x].1,
                size: tl.size,
                lower: tl.lower.clone(),
                upper: tl.upper.clone(),
                trip: tl.trip.clone(),
                real: names.fresh(&format!("{}_n", tl.var)),
            });
        }
        let perm = plan.tiling.permutation.clone();

        // Arrays: every array variable is a port (the ABI), the nest's arrays are shipped.
        let mut arrays = Vec::new();
        for v in region.vars.iter().filter(|v| v.kind != VarKind::Scalar) {
            let beat = w * v.elem.size() as i64;
            if beat > 128 {
                return Err(Reason::KernelTooLarge { detail: format!(
                    "a beat of {w} elements of '{}' ({} bits) is wider than an AXI data bus (1024 bits)",
                    v.name,
                    beat * 8
                ) });
            }
            let mut reach = None;
            let extents = v
                .dims
                .iter()
                .enumerate()
                .map(|(j, e)| match (e, v.section.get(j)) {
                    (Some(e), _) => Ok(cpp::expr_with(e, &NoArrays)),
                    (None, Some(s)) if j == 0 => {
                        Ok(format!("{} + {}", cpp::expr_with(&s.lower, &NoArrays), cpp::expr_with(&s.length, &NoArrays)))
                    }
                    // The loop bounds bound what the region touches (a box domain).
                    (None, None) if j == 0 => {
                        reach = Some((names.fresh(&format!("{}_reach", v.name)), names.fresh(&format!("{}_top", v.name))));
                        Ok(String::new())
                    }
                    _ => Err(Reason::KernelUnsupported { detail: format!("the extent of dimension {j} of '{}' is unknown", v.name) }),
                })
                .collect::<Result<Vec<_>, _>>()?;
            arrays.push(ArrayInfo {
                name: v.name.clone(),
                port: ident(&v.name),
                elem: v.elem,
                extents,
                words: names.fresh(&format!("{}_words", v.name)),
                reach,
                seg: (4096 / beat).min(256),
                posted: false,
                pending: names.fresh(&format!("{}_pending", v.name)),
                pend: 0,
                prefetch: false,
            });
        }
        let array_index = |name: &str| arrays.iter().position(|a| a.name == name);

        // Statements: the reads the printer meets, in order, are the statement's reads
        // (an accumulation's condition first), then an array assignment's write.
        for (s, st) in stmts.iter().enumerate() {
            let reduction = scop.statements[s].reduction.as_deref();
            let (cond, value, written) = match (st, reduction) {
                (Stmt::Assign { target: LValue::Element { array, .. }, value, .. }, None) => (None, value, Some(array)),
                (Stmt::Assign { target: LValue::Scalar { name, .. }, value, .. }, Some(v)) if name == v => (None, value, None),
                (Stmt::If { cond, then, otherwise, .. }, Some(v)) if otherwise.is_empty() => match then.as_slice() {
                    [Stmt::Assign { target: LValue::Scalar { name, .. }, value, .. }] if name == v => (Some(cond), value, None),
                    _ => return Err(Reason::KernelInconsistent { detail: format!("statement S{s} is not the accumulation the plan says") }),
                },
                _ => return Err(Reason::KernelInconsistent { detail: format!("statement S{s} is not the assignment the plan says") }),
            };
            let ids = &scop.statements[s].accesses;
            let mut seen = Vec::new();
            for e in cond.into_iter().chain([value]) {
                e.visit(&mut |e| {
                    if let Expr::Read { array, .. } = e {
                        seen.push(array.clone());
                    }
                });
            }
            seen.extend(written.cloned());
            let planned: Vec<&String> = ids.iter().map(|&a| &scop.accesses[a].array).collect();
            let last = ids.last().map(|&a| scop.accesses[a].kind);
            let writes = ids.iter().filter(|&&a| scop.accesses[a].kind == AccessKind::Write).count();
            let shape_ok = match written {
                Some(_) => last == Some(AccessKind::Write) && writes == 1,
                None => writes == 0,
            };
            if seen.len() != ids.len() || seen.iter().zip(&planned).any(|(a, b)| a != *b) || !shape_ok {
                return Err(Reason::KernelInconsistent { detail: format!("the accesses of statement S{s} do not match the plan") });
            }
        }
        // Reductions: a local accumulator each, the parameter renamed.
        let mut reds = Vec::new();
        for (k, r) in scop.reductions.iter().enumerate() {
            let v = region.var(&r.var).filter(|v| v.kind == VarKind::Scalar).ok_or_else(|| Reason::KernelInconsistent {
                detail: format!("the reduction variable '{}' is not a scalar of the region", r.var),
            })?;
            let reassociated = plan.options.reassociate && r.op.order_sensitive(r.ty) && crate::baseline::reassociable(region, &r.var, r.op);
            let writes_back = v.writes_back();
            reds.push(Red {
                var: r.var.clone(),
                op: r.op,
                ty: r.ty,
                local: ident(&r.var),
                param: names.fresh(&format!("{}_{}", r.var, if writes_back { "port" } else { "in" })),
                writes_back,
                orig: names.fresh(&format!("{}_orig", r.var)),
                ordered: plan.deps.orders.iter().any(|o| o.reduction == k),
                part: reassociated.then(|| names.fresh(&format!("{}_part", r.var))),
            });
        }
        if let Some(v) = region.vars.iter().find(|v| v.writes_back() && !reds.iter().any(|r| r.var == v.name)) {
            return Err(Reason::KernelInconsistent { detail: format!("the scalar '{}' returns to the host but is no reduction of the plan", v.name) });
        }
        if plan.redirects.iter().enumerate().any(|(i, r)| r.access != i) {
            return Err(Reason::KernelInconsistent { detail: "the plan's redirections are not in access order".into() });
        }

        // Buffers.
        let mut bufs = Vec::new();
        for (bi, b) in plan.buffers.buffers.iter().enumerate() {
            if b.kind == BufferKind::Nc {
                continue;
            }
            let array = array_index(&b.array).ok_or_else(|| Reason::KernelInconsistent { detail: format!("buffer {} of unknown array '{}'", b.name, b.array) })?;
            let n = b.box_size.len();
            let expected_fixed: Vec<usize> = match b.kind {
                BufferKind::Full => Vec::new(),
                BufferKind::Chunk => perm[..1].to_vec(),
                BufferKind::Line => perm[..d - 1].to_vec(),
                BufferKind::Nc => unreachable!(),
            };
            let shape_ok = n > 0
                && b.shape.len() == n
                && b.offset.len() == n
                && b.shape[..n - 1] == b.box_size[..n - 1]
                && b.halo_left >= 0
                && b.shape[n - 1] >= b.halo_left + b.box_size[n - 1]
                && b.box_size.iter().all(|&z| z >= 1);
            // The box may only move with the intra-tile indices held fixed (in scope
            // where the buffer is shipped); a line is never read (step 2: output streams).
            let offset_ok =
                b.offset.iter().all(|o| !o.mentions(|s| matches!(s, Sym::Intra(x) | Sym::Loop(x) if !expected_fixed.contains(x))));
            if b.fixed_loops != expected_fixed || !shape_ok || !offset_ok || (b.kind == BufferKind::Line && b.reads) {
                return Err(Reason::KernelInconsistent { detail: format!("buffer {} has a layout the generator does not know", b.name) });
            }
            let shift = match (&b.kind, &b.shift) {
                (BufferKind::Chunk, Some(s)) => {
                    if s.axis + 1 >= n || s.step < 1 || s.loop_index != perm[0] {
                        return Err(Reason::KernelUnsupported { detail: format!(
                            "chunk buffer {} shifts along dimension {} by {}; only shifts by a positive step along an outer dimension are generated",
                            b.name, s.axis, s.step
                        ) });
                    }
                    Some((s.axis, s.step))
                }
                _ => None,
            };
            let write = if b.writes {
                let subs: Vec<&Vec<Aff>> = b
                    .accesses
                    .iter()
                    .filter(|&&a| scop.accesses[a].kind == AccessKind::Write)
                    .map(|&a| &plan.redirects[a].original)
                    .collect();
                if subs.iter().any(|s| *s != subs[0]) {
                    return Err(Reason::KernelUnsupported { detail: format!("buffer {} holds writes with different subscripts; its write-back cannot be trimmed", b.name) });
                }
                let dims = translation_dims(subs[0]).ok_or_else(|| Reason::KernelUnsupported {
                    detail: format!(
                        "the write {} is not a translation of the iteration (tile origin + intra-tile index + constant per subscript); its write-back cannot be trimmed",
                        scop.accesses[b.accesses.iter().copied().find(|&a| scop.accesses[a].kind == AccessKind::Write).unwrap_or(0)].text
                    ),
                })?;
                Some((subs[0].clone(), dims))
            } else {
                None
            };
            bufs.push(Buf {
                plan: bi,
                name: names.fresh(&b.name),
                array,
                kind: b.kind,
                box_size: b.box_size.clone(),
                shape: b.shape.clone(),
                offset: b.offset.clone(),
                left: b.halo_left,
                shift,
                reads: b.reads,
                write,
            });
        }
        // Completely partitioned buffers are registers: one flip-flop per bit.
        let bits: i64 = bufs
            .iter()
            .map(|b| b.shape.iter().product::<i64>().saturating_mul(arrays[b.array].elem.size() as i64 * 8))
            .fold(0i64, |a, x| a.saturating_add(x));
        if bits > DEVICE_FLIP_FLOPS {
            return Err(Reason::KernelTooLarge { detail: format!(
                "the cache buffers hold {bits} bits; completely partitioned (ARRAY_PARTITION complete) they need more registers than the XCVU9P's {DEVICE_FLIP_FLOPS} flip-flops: choose smaller tiles"
            ) });
        }
        for r in &plan.redirects {
            if r.cached && !bufs.iter().any(|b| b.plan == r.buffer) {
                return Err(Reason::KernelInconsistent { detail: format!("access {} goes to a buffer the plan does not describe", r.name) });
            }
            if r.cached && r.subscripts.len() != plan.buffers.buffers[r.buffer].shape.len() {
                return Err(Reason::KernelInconsistent { detail: format!("access {} has the wrong number of buffer subscripts", r.name) });
            }
            if !r.cached && array_index(&r.array).is_none() {
                return Err(Reason::KernelInconsistent { detail: format!("access {} of unknown array '{}'", r.name, r.array) });
            }
        }
        // Tessera variant: which arrays ship overlapped (no read-after-write through DDR).
        if variant == Variant::Tessera {
            for (a, arr) in arrays.iter_mut().enumerate() {
                let accessed = |k: AccessKind| scop.accesses.iter().any(|x| x.array == arr.name && x.kind == k);
                let (read, written) = (accessed(AccessKind::Read), accessed(AccessKind::Write));
                // An uncached access shares the port's in-order queues with the rows
                // (it would receive a prefetched row's beats or another burst's response).
                let uncached = plan.redirects.iter().any(|r| !r.cached && r.array == arr.name);
                arr.posted = written && !read && !uncached;
                if arr.posted {
                    arr.pend = bufs
                        .iter()
                        .filter(|b| b.array == a && b.write.is_some())
                        .map(|b| ship::row_bursts(w, arr.seg, *b.shape.last().expect("buffers have a dimension")))
                        .max()
                        .unwrap_or(0);
                }
                arr.prefetch = read && !written && !uncached;
            }
        }
        let n_arrays = arrays.len();
        let rank = arrays.iter().map(|a| a.extents.len()).max().unwrap_or(0);
        let rows = (0..rank).map(|j| names.fresh(&format!("r{j}"))).collect();
        Ok(Gen {
            region,
            plan,
            variant,
            w,
            loops,
            perm,
            stmts,
            arrays,
            bufs,
            rows,
            used_real: RefCell::new(BTreeSet::new()),
            read_outstanding: RefCell::new(vec![1; n_arrays]),
            reds,
        })
    }

    // ---- printing affine expressions -------------------------------------------------

    fn sym(&self, s: &Sym) -> String {
        match s {
            Sym::Tile(x) => self.loops[*x].tile.clone(),
            Sym::Intra(x) | Sym::Loop(x) => self.loops[*x].var.clone(),
            // Parameters, and the row variables of ships.
            Sym::Param(p) => ident(p),
        }
    }

    fn sym_signed(&self, s: &Sym) -> bool {
        match s {
            Sym::Tile(x) | Sym::Intra(x) | Sym::Loop(x) => self.loops[*x].ty.is_signed(),
            Sym::Param(p) => match self.plan.scop.derived.iter().find(|d| d.name == *p) {
                Some(d) => d.ty.is_signed(),
                None => self.region.var(p).is_none_or(|v| v.elem.is_signed()),
            },
        }
    }

    fn aff(&self, a: &Aff) -> String {
        a.format(&|s| self.sym(s))
    }

    /// An index in `long` arithmetic: `(long)(…)` over signed variables (which cannot
    /// wrap), else every variable converted first (an unsigned `tj - 1` must not wrap).
    fn aff_long(&self, a: &Aff, first: bool) -> String {
        if a.terms.iter().all(|t| self.sym_signed(&t.sym)) {
            let s = self.aff(a);
            let atom = (a.is_constant() && a.constant >= 0) || (a.constant == 0 && a.terms.len() == 1 && a.terms[0].coeff == 1);
            match (first, a.is_constant(), atom) {
                (true, true, _) => format!("{s}L"),
                (true, false, true) => format!("(long){s}"),
                (true, false, false) => format!("(long)({s})"),
                (false, _, true) => s,
                (false, _, false) => format!("({s})"),
            }
        } else if a.constant == 0 && a.terms.len() == 1 && a.terms[0].coeff == 1 {
            format!("(long){}", self.sym(&a.terms[0].sym))
        } else {
            format!("({})", a.format(&|s| format!("(long){}", self.sym(s))))
        }
    }

    /// `((long)(i0) * e1 + (i1)) * e2 + (i2)`, the row-major index of `array[idx…]`.
    fn linear(&self, array: &ArrayInfo, idx: &[Aff]) -> String {
        let mut s = self.aff_long(&idx[0], true);
        for (j, i) in idx.iter().enumerate().skip(1) {
            let lhs = if j == 1 { s.clone() } else { format!("({s})") };
            s = format!("{lhs} * {} + {}", paren(&array.extents[j]), self.aff_long(i, false));
        }
        s
    }

    fn loop_type(&self, x: usize) -> &'static str {
        self.loops[x].ty.c_name()
    }

    /// The number of real iterations of loop x in this tile, as C++.
    fn real(&self, x: usize) -> Range {
        match self.loops[x].trip {
            IntraTrip::Full { count } => Range::Const { lo: 0, hi: count },
            _ => {
                self.used_real.borrow_mut().insert(x);
                Range::Var { count: self.loops[x].real.clone(), max: self.loops[x].size }
            }
        }
    }

    // ---- the statements ----------------------------------------------------------------

    /// An access in the tile body: a buffer element (step 4) or an uncached read.
    fn access(&self, a: usize) -> String {
        let r = &self.plan.redirects[a];
        if r.cached {
            let b = self.bufs.iter().find(|b| b.plan == r.buffer).expect("checked in new");
            let subs: String = r.subscripts.iter().map(|s| format!("[{}]", self.aff(s))).collect();
            format!("{}{subs}", b.name)
        } else {
            let arr = self.array(&r.array);
            format!("tessera_nc_read<{}, {}>({}, {})", self.w, arr.elem.c_name(), arr.port, self.linear(arr, &r.original))
        }
    }

    fn array(&self, name: &str) -> &ArrayInfo {
        self.arrays.iter().find(|a| a.name == name).expect("checked in new")
    }

    /// A loop index used as a value: the original index is tile origin + intra index.
    fn index_value(&self, name: &str) -> String {
        match self.loops.iter().find(|l| l.var == ident(name)) {
            Some(l) if l.ty.size() < 4 => format!("({})({} + {})", l.ty.c_name(), l.tile, l.var),
            Some(l) => format!("({} + {})", l.tile, l.var),
            None => ident(name),
        }
    }

    fn statements(&self, code: &mut Code) {
        let padded = self.plan.tiling.padded_loop;
        for (s, st) in self.stmts.iter().enumerate() {
            if let Some(var) = &self.plan.scop.statements[s].reduction {
                self.accumulation(code, s, st, var);
                continue;
            }
            let Stmt::Assign { value, .. } = st else { unreachable!("checked in new") };
            let ids = &self.plan.scop.statements[s].accesses;
            let (reads, write) = ids.split_at(ids.len() - 1);
            let body = Body { g: self, reads, next: Cell::new(0), acc: None };
            // Padded iterations compute on whatever their buffer slots hold; an integer
            // division by such a value could trap, so they skip it.
            let divides = self.plan.tiling.padding && has_integer_division(value);
            let value = cpp::expr_with(value, &body);
            let wr = &self.plan.redirects[write[0]];
            let line = if wr.cached {
                format!("{} = {value};", self.access(write[0]))
            } else {
                let arr = self.array(&wr.array);
                format!(
                    "tessera_nc_write<{}, {}>({}, {}, {value});",
                    self.w,
                    arr.elem.c_name(),
                    arr.port,
                    self.linear(arr, &wr.original)
                )
            };
            let nc = ids.iter().any(|&a| self.plan.redirects[a].guarded);
            if nc || divides {
                let Range::Var { count, .. } = self.real(padded) else { unreachable!("a padded loop has a real count") };
                code.line(if nc {
                    "// Step 3: padded iterations skip the uncached accesses (guard)."
                } else {
                    "// Step 3: padded iterations skip the integer division (its operands are garbage there)."
                });
                code.open(&format!("if ({} < {count})", self.loops[padded].var));
                code.line(&line);
                code.close();
            } else {
                code.line(&line);
            }
        }
    }

    /// Statement `s`, an accumulation into `var`: into the local accumulator (or the
    /// partial result of the padded loop's index), in the tiled order — which the plan
    /// proved to be the loop's order where that matters. A padded iteration never
    /// accumulates (guard).
    fn accumulation(&self, code: &mut Code, s: usize, st: &Stmt, var: &str) {
        let red = self.reds.iter().find(|r| r.var == var).expect("checked in new");
        let (cond, value) = match st {
            Stmt::Assign { value, .. } => (None, value),
            Stmt::If { cond, then, .. } => match then.as_slice() {
                [Stmt::Assign { value, .. }] => (Some(cond), value),
                _ => unreachable!("checked in new"),
            },
            _ => unreachable!("checked in new"),
        };
        let padded = self.plan.tiling.padded_loop;
        let target = match &red.part {
            Some(part) => format!("{part}[{} % {}]", self.loops[padded].var, crate::baseline::PARTIAL_SUMS),
            None => red.local.clone(),
        };
        let body = Body { g: self, reads: &self.plan.scop.statements[s].accesses, next: Cell::new(0), acc: Some((var, target.clone())) };
        let cond = cond.map(|c| cpp::expr_with(c, &body));
        let line = format!("{target} = {};", cpp::expr_with(value, &body));
        let guarded = self.plan.tiling.guarded_accumulations.contains(&s);
        if guarded {
            let Range::Var { count, .. } = self.real(padded) else { unreachable!("a padded loop has a real count") };
            code.line("// Step 3: padded iterations never accumulate (guard).");
            code.open(&format!("if ({} < {count})", self.loops[padded].var));
        }
        match cond {
            Some(c) => {
                code.open(&format!("if ({c})"));
                code.line(&line);
                code.close();
            }
            None => code.line(&line),
        }
        if guarded {
            code.close();
        }
    }

    /// The accumulators before the tiles: each reduction's private copy at the
    /// operator's identity (OpenMP), or its partial results.
    fn accumulators(&self, code: &mut Code) {
        for r in &self.reds {
            let (ty, id) = (r.ty.c_name(), crate::baseline::identity(r.op, r.ty));
            let clause = format!("reduction({}: {})", r.op.name(), r.var);
            match &r.part {
                Some(part) => {
                    let p = crate::baseline::PARTIAL_SUMS;
                    code.line(&format!(
                        "// {clause}, reassociated (-fplugin-arg-tessera-reassociate): {p} partial results, one per index of the padded loop modulo {p}, combined pairwise at the end."
                    ));
                    code.line(&format!("{ty} {part}[{p}] = {{{}}};", vec![id; p].join(", ")));
                    code.pragma(&format!("HLS ARRAY_PARTITION variable={part} type=complete"));
                }
                None => {
                    let how = if r.ordered {
                        "accumulated in the loop's order (the tiling keeps it)"
                    } else if r.op.order_sensitive(r.ty) {
                        "accumulated in the tiles' order (reassociated: -fplugin-arg-tessera-reassociate)"
                    } else {
                        "accumulated in the tiles' order (exact in any order)"
                    };
                    code.line(&format!("// {clause}: the private copy starts at the identity, {how}."));
                    code.line(&format!("{ty} {} = {id};", r.local));
                }
            }
        }
    }

    /// After the tiles: the partial results combined, and the result `original op
    /// private` (clang's combiner) written to a returned variable's port.
    fn combiners(&self, code: &mut Code) {
        for r in &self.reds {
            let ty = r.ty.c_name();
            if let Some(part) = &r.part {
                let mut level: Vec<String> = (0..crate::baseline::PARTIAL_SUMS).map(|k| format!("{part}[{k}]")).collect();
                while level.len() > 1 {
                    level = level.chunks(2).map(|p| crate::baseline::combine(r.op, r.ty, &p[0], &p[1])).collect();
                }
                code.line(&format!("{ty} {} = {};", r.local, level[0]));
            }
            if r.writes_back {
                code.line(&format!("// reduction({}: {}): the original value combined with the private copy.", r.op.name(), r.var));
                code.line(&format!("{ty} {} = {}[0];", r.orig, r.param));
                code.line(&format!("{}[0] = {};", r.param, crate::baseline::combine(r.op, r.ty, &r.orig, &r.local)));
            } else {
                code.line(&format!("(void){};", r.local));
            }
        }
    }

    /// The kernel parameter of a region variable.
    fn param(&self, v: &tessera_ir::Var) -> String {
        self.reds.iter().find(|r| r.var == v.name).map_or_else(|| ident(&v.name), |r| r.param.clone())
    }

    // ---- ships -----------------------------------------------------------------------

    /// The load of `b`'s box rows, with the slices `slices` (lo, hi) along the chunk's
    /// shift dimension (all of them for `None`); `moving`: the fixed loop's index is in
    /// scope (per-iteration load), else 0 (before the tile's first iteration).
    fn load(&self, b: &Buf, slices: Option<(i64, i64)>, moving: bool) -> Ship {
        let arr = &self.arrays[b.array];
        let n = b.box_size.len();
        let fixed = self.perm[0];
        let off = |j: usize| {
            if moving {
                b.offset[j].clone()
            } else {
                b.offset[j].substitute(&|s| matches!(s, Sym::Intra(x) if *x == fixed).then(|| Aff::constant(0)))
            }
        };
        let rows = (0..n - 1)
            .map(|j| {
                let r = Aff::sym(Sym::Param(self.rows[j].clone()));
                let range = match (b.shift, slices) {
                    (Some((axis, _)), Some((lo, hi))) if axis == j => Range::Const { lo, hi },
                    _ => Range::Const { lo: 0, hi: b.box_size[j] },
                };
                RowDim { var: self.rows[j].clone(), range, ddr: off(j).add(&r), buf: r }
            })
            .collect();
        Ship {
            dir: Dir::In,
            array: b.array,
            port: arr.port.clone(),
            words: arr.words.clone(),
            buffer: b.name.clone(),
            w: self.w,
            seg: arr.seg,
            rows,
            ddr_last: off(n - 1),
            at: Aff::constant(b.left),
            len: b.box_size[n - 1].to_string(),
            row_len: b.shape[n - 1],
        }
    }

    /// The write-back of the elements real iterations wrote into `b` while the loops
    /// `fixed` stood still (step 3: cached writes are trimmed at write-back).
    fn flush(&self, b: &Buf, fixed: &[usize]) -> Ship {
        let arr = &self.arrays[b.array];
        let (subs, dims) = b.write.as_ref().expect("flushes are for written buffers");
        let n = subs.len();
        let mut rows = Vec::new();
        let mut last = None;
        for j in 0..n {
            let (start, range) = match dims[j] {
                Some(x) if !fixed.contains(&x) => {
                    (subs[j].substitute(&|s| matches!(s, Sym::Intra(y) if *y == x).then(|| Aff::constant(0))), self.real(x))
                }
                _ => (subs[j].clone(), Range::Const { lo: 0, hi: 1 }),
            };
            let mut pos = start.sub(&b.offset[j]);
            if j + 1 == n {
                pos = pos.add_constant(b.left);
                let len = match range {
                    Range::Const { hi, .. } => hi.to_string(),
                    Range::Var { count, .. } => count,
                };
                last = Some((start, pos, len));
            } else {
                let r = Aff::sym(Sym::Param(self.rows[j].clone()));
                rows.push(RowDim { var: self.rows[j].clone(), range, ddr: start.add(&r), buf: pos.add(&r) });
            }
        }
        let (ddr_last, at, len) = last.expect("arrays have a dimension");
        Ship {
            dir: Dir::Out,
            array: b.array,
            port: arr.port.clone(),
            words: arr.words.clone(),
            buffer: b.name.clone(),
            w: self.w,
            seg: arr.seg,
            rows,
            ddr_last,
            at,
            len,
            row_len: *b.shape.last().expect("buffers have a dimension"),
        }
    }

    /// Emits a ship: blocking, except for the arrays the Tessera variant overlaps
    /// (loads: every row requested, then every row read; write-backs: posted).
    fn ship(&self, code: &mut Code, comment: &str, s: Ship, pipelined: bool) {
        code.line(comment);
        let arr = &self.arrays[s.array];
        let how = match s.dir {
            Dir::Out if arr.posted => {
                code.line("// (posted: then the responses of this port's previous row; nothing reads this array)");
                How::Posted { pending: &arr.pending, pend: arr.pend }
            }
            Dir::In if arr.prefetch => {
                code.line("// (every row requested first, then the beats read: the round trips overlap)");
                self.note_reads(&s, s.row_count());
                s.emit(code, self, pipelined, How::Request);
                How::Receive
            }
            _ => How::Blocking,
        };
        s.emit(code, self, pipelined, how);
    }

    /// Records that `rows` rows of `s` are requested before any is read.
    fn note_reads(&self, s: &Ship, rows: i64) {
        let n = rows * ship::row_bursts(self.w, s.seg, s.row_len);
        let mut o = self.read_outstanding.borrow_mut();
        o[s.array] = o[s.array].max(n);
    }

    /// Step 5: the chunk's data for the next sub-tile stays on chip, one slice further.
    fn shift(&self, code: &mut Code, b: &Buf, axis: usize, step: i64) {
        let keep = b.box_size[axis] - step;
        code.line(&format!(
            "// Step 5 (ship): shift {} by {step} slice{} along dimension {axis}; the next sub-tile reuses them.",
            b.name,
            if step == 1 { "" } else { "s" }
        ));
        let mut src = String::new();
        let mut dst = String::new();
        for (j, &ext) in b.shape.iter().enumerate() {
            let v = &self.rows[j];
            let hi = if j == axis { keep } else { ext };
            code.open(&format!("for (int {v} = 0; {v} < {hi}; {v}++)"));
            let _ = write!(dst, "[{v}]");
            if j == axis {
                let _ = write!(src, "[{v} + {step}]");
            } else {
                let _ = write!(src, "[{v}]");
            }
        }
        code.line(&format!("{0}{dst} = {0}{src};", b.name));
        for _ in &b.shape {
            code.close();
        }
    }

    // ---- the kernel ------------------------------------------------------------------

    /// Chunk slices loaded per iteration of p(1), and how many lead slices are pre-loaded.
    fn chunk_slices(b: &Buf) -> Option<(usize, i64, i64)> {
        b.shift.map(|(axis, step)| (axis, (b.box_size[axis] - step).max(0), step))
    }

    /// "slice 2", "slices 1..2": slices `lo .. hi − 1` of a chunk.
    fn slices_text(lo: i64, hi: i64) -> String {
        if hi - lo == 1 {
            format!("slice {lo}")
        } else {
            format!("slices {lo}..{}", hi - 1)
        }
    }

    /// The intra-tile loop at `level` of p and everything inside it.
    fn intra(&self, code: &mut Code, level: usize) {
        let d = self.perm.len();
        let x = self.perm[level];
        let l = &self.loops[x];
        let innermost = level + 1 == d;
        let bound = match (&l.trip, innermost) {
            (IntraTrip::Partial { .. }, false) => {
                self.used_real.borrow_mut().insert(x);
                l.real.clone()
            }
            _ => l.trip.count().to_string(),
        };
        if innermost {
            code.line(&format!(
                "// Step 3: the innermost intra-tile loop runs a constant {} iterations (padded), fully unrolled.",
                l.trip.count()
            ));
        }
        // Inside the pipelined loop every ship gets constant trip counts.
        let in_pipeline = level + 2 >= d;
        let prefetched: Vec<&Buf> = if level == 0 && in_pipeline && !innermost {
            self.bufs
                .iter()
                .filter(|b| b.kind == BufferKind::Chunk && b.reads && self.arrays[b.array].prefetch)
                .filter(|b| Self::chunk_slices(b).is_some())
                .collect()
        } else {
            Vec::new()
        };
        for b in &prefetched {
            let (axis, keep, _) = Self::chunk_slices(b).expect("filtered");
            code.line(&format!(
                "// Step 5 (ship, tessera): request {} of {} for the first sub-tile (prefetch).",
                Self::slices_text(keep, b.box_size[axis]),
                b.name
            ));
            self.load(b, Some((keep, b.box_size[axis])), false).emit(code, self, false, How::Request);
        }
        code.open(&format!("for ({ty} {v} = 0; {v} < {bound}; {v}++)", ty = self.loop_type(x), v = l.var));
        let pipelined = d >= 2 && level + 2 == d;
        if pipelined {
            code.pragma("HLS PIPELINE II=1");
        }
        if innermost {
            code.line("// Step 4: subscripts redirected into the cache buffers.");
            self.statements(code);
            code.close();
            return;
        }
        if level == 0 {
            for b in self.bufs.iter().filter(|b| b.kind == BufferKind::Chunk && b.reads) {
                if let Some((axis, keep, _)) = Self::chunk_slices(b) {
                    let (lo, hi) = (keep, b.box_size[axis]);
                    let what = Self::slices_text(lo, hi);
                    let this = self.load(b, Some((lo, hi)), true);
                    if prefetched.iter().any(|p| p.name == b.name) {
                        code.line(&format!(
                            "// Step 5 (ship, tessera): request {what} of {} for the next sub-tile, then read this sub-tile's (requested one iteration earlier).",
                            b.name
                        ));
                        code.open(&format!("if ({v} + 1 < {bound})", v = l.var));
                        let next = |a: &Aff| a.substitute(&|s| matches!(s, Sym::Intra(y) if *y == x).then(|| Aff::sym(Sym::Intra(x)).add_constant(1)));
                        let mut ahead = self.load(b, Some((lo, hi)), true);
                        ahead.ddr_last = next(&ahead.ddr_last);
                        for r in &mut ahead.rows {
                            r.ddr = next(&r.ddr);
                        }
                        self.note_reads(&ahead, 2 * ahead.row_count());
                        ahead.emit(code, self, true, How::Request);
                        code.close();
                        this.emit(code, self, true, How::Receive);
                    } else {
                        let c = format!("// Step 5 (ship): load {what} of {} for this sub-tile.", b.name);
                        self.ship(code, &c, this, in_pipeline);
                    }
                }
            }
        }
        self.intra(code, level + 1);
        if level + 2 == d {
            self.line_flushes(code, true);
        }
        if level == 0 {
            for b in self.bufs.iter().filter(|b| b.kind == BufferKind::Chunk && b.write.is_some()) {
                let c = format!("// Step 5 (ship): write back what this sub-tile wrote into {}, trimmed (step 3).", b.name);
                self.ship(code, &c, self.flush(b, &self.perm[..1]), in_pipeline);
            }
            for b in self.bufs.iter().filter(|b| b.kind == BufferKind::Chunk && b.reads) {
                if let Some((axis, keep, step)) = Self::chunk_slices(b) {
                    if keep > 0 {
                        self.shift(code, b, axis, step);
                    }
                }
            }
        }
        code.close();
    }

    fn line_flushes(&self, code: &mut Code, pipelined: bool) {
        let d = self.perm.len();
        for b in self.bufs.iter().filter(|b| b.kind == BufferKind::Line) {
            let c = format!("// Step 5 (ship): write back line {}, trimmed to the real iterations (step 3).", b.name);
            self.ship(code, &c, self.flush(b, &self.perm[..d - 1]), pipelined);
        }
    }

    /// Everything inside the innermost inter-tile loop.
    fn tile(&self, code: &mut Code) {
        let d = self.perm.len();
        let mut body = Code { s: String::new(), depth: code.depth };
        for b in &self.bufs {
            let plan_b = &self.plan.buffers.buffers[b.plan];
            let shape: String = b.shape.iter().map(|z| format!("[{z}]")).collect();
            let at: Vec<String> = b.offset.iter().map(|o| self.aff(o)).collect();
            let boxed: Vec<String> = b.box_size.iter().map(|z| z.to_string()).collect();
            body.line(&format!(
                "// Step 2: {} buffer of {}, box ({}) at ({}); {} + {} alignment halo lanes (step 5).",
                b.kind.name(),
                plan_b.array,
                boxed.join(", "),
                at.join(", "),
                b.left,
                plan_b.halo_right
            ));
            body.line(&format!("{} {}{shape};", self.arrays[b.array].elem.c_name(), b.name));
            body.pragma(&format!("HLS ARRAY_PARTITION variable={} type=complete dim=0", b.name));
        }
        for b in self.bufs.iter().filter(|b| b.kind == BufferKind::Full && b.reads) {
            let c = format!("// Step 5 (ship): fill {} before the tile.", b.name);
            self.ship(&mut body, &c, self.load(b, None, false), d == 1);
        }
        for b in self.bufs.iter().filter(|b| b.kind == BufferKind::Chunk && b.reads) {
            let (slices, what) = match Self::chunk_slices(b) {
                Some((_, 0, _)) => continue,
                Some((_, 1, _)) => (Some((0, 1)), "pre-load slice 0".to_string()),
                Some((_, keep, _)) => (Some((0, keep)), format!("pre-load slices 0..{}", keep - 1)),
                None => (None, "load the whole box (it does not move)".to_string()),
            };
            let c = format!("// Step 5 (ship): {what} of {} before the tile.", b.name);
            self.ship(&mut body, &c, self.load(b, slices, false), false);
        }
        self.intra(&mut body, 0);
        if d == 1 {
            self.line_flushes(&mut body, true);
        }
        for b in self.bufs.iter().filter(|b| b.kind == BufferKind::Full && b.write.is_some()) {
            let c = format!("// Step 5 (ship): write back {} after the tile, trimmed to the real iterations (step 3).", b.name);
            self.ship(&mut body, &c, self.flush(b, &[]), d == 1);
        }
        let used: Vec<usize> = self.used_real.borrow().iter().copied().collect();
        if !used.is_empty() {
            code.line("// Step 3: real iterations per intra-tile loop in this tile (the last tile may be partial or padded).");
        }
        for x in used {
            let l = &self.loops[x];
            let rem = self.aff(&l.upper.sub(&Aff::sym(Sym::Tile(x))));
            code.line(&format!("const {} {} = {rem} < {sz} ? {rem} : {sz};", self.loop_type(x), l.real, sz = l.size));
        }
        code.s.push_str(&body.s);
    }

    fn kernel(&self, name: &str) -> Kernel {
        let region = self.region;
        let plan = self.plan;
        let d = self.perm.len();
        let mut c = Code::default();
        let loc = &region.location;
        let sizes: Vec<String> = self.loops.iter().map(|l| l.size.to_string()).collect();
        let perm: Vec<&str> = self.perm.iter().map(|&x| self.loops[x].var.as_str()).collect();
        let bufs: Vec<String> = self.bufs.iter().map(|b| format!("{} ({})", b.name, b.kind.name())).collect();
        let deltas: Vec<String> = plan
            .tiling
            .loops
            .iter()
            .flat_map(|l| [self.aff(&l.delta_outer), self.aff(&l.delta_inner)])
            .collect();
        let padded = &self.loops[plan.tiling.padded_loop];
        writeln!(c.s, "// Tessera kernel {name}").unwrap();
        writeln!(c.s, "// Region: {} in {}(), `#pragma omp {}`.", loc, region.function, region.directive).unwrap();
        match self.variant {
            Variant::Paper => {
                writeln!(c.s, "// Mode: paper — the optimized kernel of Mayer, Brandner, Philippsen (IMPACT 2024),").unwrap();
                writeln!(c.s, "// steps 1-4 planned by tessera-poly, step 5 printed here:").unwrap();
            }
            Variant::Tessera => {
                writeln!(c.s, "// Mode: tessera — the optimized kernel of Mayer, Brandner, Philippsen (IMPACT 2024)").unwrap();
                writeln!(c.s, "// with overlapped shipment (rows of read-only arrays prefetched one iteration ahead,").unwrap();
                writeln!(c.s, "// rows of write-only arrays posted, their responses awaited one row later);").unwrap();
                writeln!(c.s, "// steps 1-4 planned by tessera-poly, step 5 printed here:").unwrap();
            }
        }
        writeln!(c.s, "//   step 1: tile sizes SZ = ({})", sizes.join(", ")).unwrap();
        writeln!(
            c.s,
            "//   step 2: intra-tile loop order ({}); cache buffers {}",
            perm.join(", "),
            if bufs.is_empty() { "none".to_string() } else { bufs.join(", ") }
        )
        .unwrap();
        writeln!(c.s, "//   step 3: δ = ({}); loop {} padded to {} iterations", deltas.join(", "), padded.var, padded.trip.count())
            .unwrap();
        writeln!(c.s, "//   step 4: subscripts redirected into the buffers (alignment halo included)").unwrap();
        let bits: Vec<String> = {
            let mut v: Vec<i64> = self.arrays.iter().map(|a| self.w * a.elem.size() as i64 * 8).collect();
            v.sort_unstable();
            v.dedup();
            v.iter().map(|b| b.to_string()).collect()
        };
        writeln!(
            c.s,
            "//   step 5: buffers, pragmas and data shipment in bursts of {}-element beats ({} bit)",
            self.w,
            bits.join("/")
        )
        .unwrap();
        writeln!(c.s, "// Multi-dimensional arrays are flat, row-major; every implicit conversion of the").unwrap();
        writeln!(c.s, "// source is an explicit cast, so results match the host bit for bit.").unwrap();
        writeln!(c.s).unwrap();
        writeln!(c.s, "#include \"tessera_wide.h\"").unwrap();
        writeln!(c.s, "#include \"tessera_ship.h\"").unwrap();
        if crate::cpp::uses_math(self.region) {
            writeln!(c.s, "#include \"{}\"", crate::cpp::MATH_HEADER).unwrap();
        }

        // The body first: it decides which helpers and declarations are used.
        let mut body = Code { s: String::new(), depth: 1 };
        let loaded: Vec<usize> = {
            let mut v: Vec<usize> = self.bufs.iter().filter(|b| b.reads).map(|b| b.array).collect();
            v.sort_unstable();
            v.dedup();
            v
        };
        if !self.plan.scop.derived.is_empty() {
            body.line("// Loop-invariant expressions the optimizer treats as parameters, as the source computes them.");
        }
        for dp in &self.plan.scop.derived {
            body.line(&format!("const {} {} = {};", dp.ty.c_name(), ident(&dp.name), cpp::expr_with(&dp.expr, &NoArrays)));
            body.line(&format!("(void){};", ident(&dp.name)));
        }
        if !loaded.is_empty() {
            body.line("// Array sizes in beats: reads never go beyond an array's last beat.");
        }
        for &a in &loaded {
            let arr = &self.arrays[a];
            let reach_elems;
            let e0 = match &arr.reach {
                Some((reach, top)) => {
                    self.reach(&mut body, arr, reach, top);
                    reach_elems = reach.clone();
                    &reach_elems
                }
                None => &arr.extents[0],
            };
            let long_literal = e0.strip_suffix('L').is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()));
            let mut elems = if long_literal { e0.clone() } else { format!("(long){}", paren(e0)) };
            // `reach` counts elements, the outermost extent rows.
            for e in arr.extents[1..].iter().filter(|_| arr.reach.is_none()) {
                let _ = write!(elems, " * {}", paren(e));
            }
            body.line(&format!("const long {} = ({elems} + {}) / {};", arr.words, self.w - 1, self.w));
        }
        let posted: Vec<&ArrayInfo> = self.arrays.iter().filter(|a| a.posted && a.pend > 0).collect();
        if !posted.is_empty() {
            body.line("// Step 5 (ship, tessera): write bursts of the last posted row per port, not yet acknowledged.");
        }
        for a in &posted {
            body.line(&format!("int {} = 0;", a.pending));
        }
        self.accumulators(&mut body);
        body.line("// Steps 1 and 3: inter-tile loops (δ^o = -lb: the first tile starts at the lower bound).");
        for l in &self.loops {
            body.open(&format!(
                "for ({ty} {t} = {lo}; {t} < {hi}; {t} += {sz})",
                ty = l.ty.c_name(),
                t = l.tile,
                lo = self.aff(&l.lower),
                hi = self.aff(&l.upper),
                sz = l.size
            ));
        }
        if d == 1 {
            body.pragma("HLS PIPELINE II=1");
        }
        self.tile(&mut body);
        for _ in &self.loops {
            body.close();
        }
        if !posted.is_empty() {
            body.line("// Step 5 (ship, tessera): the responses of each port's last posted row.");
        }
        for a in &posted {
            body.line(&format!("tessera_write_drain<{}>({}, {});", a.pend, a.port, a.pending));
        }
        self.combiners(&mut body);

        writeln!(c.s).unwrap();
        let params: Vec<String> = region
            .vars
            .iter()
            .map(|v| match v.kind {
                VarKind::Scalar if v.writes_back() => format!("tessera::maxi<{}> {}", v.elem.c_name(), self.param(v)),
                VarKind::Scalar => format!("{} {}", v.elem.c_name(), self.param(v)),
                _ => format!("{} {}", self.port_type(v.elem), ident(&v.name)),
            })
            .collect();
        writeln!(c.s, "extern \"C\" void {name}({}) {{", params.join(", ")).unwrap();
        for (bundle, a) in self.arrays.iter().enumerate() {
            writeln!(
                c.s,
                "#pragma HLS INTERFACE mode=m_axi port={} offset=slave bundle=gmem{bundle} max_read_burst_length={s} max_write_burst_length={s}{}",
                a.port,
                self.outstanding(bundle, a),
                s = a.seg
            )
            .unwrap();
        }
        // A scalar returned to the host is a one-element port (the baseline's ABI).
        for (bundle, v) in region.vars.iter().filter(|v| v.kind == VarKind::Scalar && v.writes_back()).enumerate() {
            writeln!(c.s, "#pragma HLS INTERFACE mode=m_axi port={} offset=slave bundle=gmem{}", self.param(v), self.arrays.len() + bundle)
                .unwrap();
        }
        for v in region.vars.iter().filter(|v| v.kind == VarKind::Scalar && !v.writes_back()) {
            writeln!(c.s, "#pragma HLS INTERFACE mode=s_axilite port={}", self.param(v)).unwrap();
        }
        writeln!(c.s, "#pragma HLS INTERFACE mode=s_axilite port=return").unwrap();
        // Variables only a map clause uses are still parameters (-Wunused-parameter).
        for v in region.vars.iter().filter(|v| !crate::baseline::mentions(&body.s, &self.param(v))) {
            writeln!(c.s, "  (void){};", self.param(v)).unwrap();
        }
        c.s.push_str(&body.s);
        writeln!(c.s, "}}").unwrap();

        Kernel { name: name.to_string(), source: c.s, emu_entry: self.emu_entry(name) }
    }

    /// `long <reach> = …;`: one past the largest row-major element index any access
    /// of `arr` reaches over the box of the loops (0 when none reaches one). An
    /// access's index is affine in the loop indices with coefficients over the
    /// scalars: largest at the first corner plus every positive step to the last.
    fn reach(&self, body: &mut Code, arr: &ArrayInfo, reach: &str, top: &str) {
        let scop = &self.plan.scop;
        body.line(&format!("// '{}': its size is not known here; reads stay below the largest element the loops reach.", arr.name));
        body.line(&format!("long {reach} = 0;"));
        for a in scop.accesses.iter().filter(|a| a.array == arr.name) {
            let first: Vec<Aff> = a
                .subscripts
                .iter()
                .map(|s| s.substitute(&|sym| match sym {
                    Sym::Loop(x) => Some(self.loops[*x].lower.clone()),
                    _ => None,
                }))
                .collect();
            body.line("{");
            body.depth += 1;
            body.line(&format!("long {top} = {};", self.linear(arr, &first)));
            for (x, l) in self.loops.iter().enumerate() {
                let slope: Vec<Aff> = a.subscripts.iter().map(|s| Aff::constant(s.coeff(&Sym::Loop(x)))).collect();
                if slope.iter().all(|c| c.constant == 0) {
                    continue;
                }
                let span = l.upper.sub(&l.lower).add_constant(-1);
                body.line(&format!(
                    "if (({}) * {} > 0) {top} += ({}) * {};",
                    self.linear(arr, &slope),
                    self.aff_long(&span, true),
                    self.linear(arr, &slope),
                    self.aff_long(&span, true)
                ));
            }
            body.line(&format!("if ({top} + 1 > {reach}) {reach} = {top} + 1;"));
            body.close();
        }
    }

    /// Outstanding-transaction limits beyond Vitis' default of 16 per direction, for
    /// ports whose overlapped rows need more: all rows of a batched load, two rows of
    /// a prefetched one, two rows of posted writes (the row in flight and the
    /// unacknowledged one).
    fn outstanding(&self, index: usize, a: &ArrayInfo) -> String {
        let mut s = String::new();
        let reads = self.read_outstanding.borrow()[index];
        if reads > 16 {
            let _ = write!(s, " num_read_outstanding={reads}");
        }
        if 2 * a.pend > 16 {
            let _ = write!(s, " num_write_outstanding={}", 2 * a.pend);
        }
        s
    }

    fn port_type(&self, elem: ScalarType) -> String {
        format!("hls::burst_maxi<tessera::wide_t<{}, {}>>", self.w, elem.c_name())
    }

    fn emu_entry(&self, name: &str) -> String {
        crate::emu_entry(self.region, name, &|v| match v.kind {
            VarKind::Scalar => format!("tessera::maxi<{}>", v.elem.c_name()),
            _ => self.port_type(v.elem),
        })
    }
}

impl ship::Printer for Gen<'_> {
    fn aff(&self, a: &Aff) -> String {
        Gen::aff(self, a)
    }
    fn linear(&self, port: &str, idx: &[Aff]) -> String {
        let arr = self.arrays.iter().find(|a| a.port == port).expect("ships name known ports");
        Gen::linear(self, arr, idx)
    }
}

/// The leaves of a statement's right-hand side: the k-th read is the statement's k-th
/// read access (the optimizer numbers them in the printer's pre-order).
struct Body<'g> {
    g: &'g Gen<'g>,
    reads: &'g [usize],
    next: Cell<usize>,
    /// In an accumulation: the reduction variable and how the accumulator is spelled.
    acc: Option<(&'g str, String)>,
}

impl Leaves for Body<'_> {
    fn read(&self, _array: &str, _index: &[Expr]) -> String {
        let k = self.next.get();
        self.next.set(k + 1);
        self.g.access(self.reads[k])
    }

    fn var(&self, name: &str) -> String {
        match &self.acc {
            Some((var, target)) if *var == name => target.clone(),
            _ => self.g.index_value(name),
        }
    }
}

/// Extents and section bounds mention scalars only.
struct NoArrays;

impl Leaves for NoArrays {
    fn read(&self, array: &str, _index: &[Expr]) -> String {
        unreachable!("array extents do not read array '{array}'")
    }
}

/// Whether `e` divides integers (`/` or `%`), which traps on a zero divisor.
fn has_integer_division(e: &Expr) -> bool {
    let mut found = false;
    e.visit(&mut |n| {
        if let Expr::Binary { op: BinOp::Div | BinOp::Rem, ty, .. } = n {
            found |= ty.is_integer();
        }
    });
    found
}

/// `e` in parentheses unless it is a plain literal or name.
fn paren(e: &str) -> String {
    if e.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        e.to_string()
    } else {
        format!("({e})")
    }
}

/// Per subscript of a write, the loop it follows when it is `Tile(x) + Intra(x) + c`
/// (c: constants and parameters), or `None` when it mentions no loop; `None` overall
/// when some subscript has another form or two subscripts follow one loop.
fn translation_dims(subs: &[Aff]) -> Option<Vec<Option<usize>>> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for s in subs {
        let loops: Vec<&tessera_poly::Term> =
            s.terms.iter().filter(|t| matches!(t.sym, Sym::Tile(_) | Sym::Intra(_) | Sym::Loop(_))).collect();
        match loops.as_slice() {
            [] => out.push(None),
            [a, b] => match (&a.sym, &b.sym) {
                (Sym::Tile(x), Sym::Intra(y)) | (Sym::Intra(y), Sym::Tile(x)) if x == y && a.coeff == 1 && b.coeff == 1 => {
                    if !seen.insert(*x) {
                        return None;
                    }
                    out.push(Some(*x));
                }
                _ => return None,
            },
            _ => return None,
        }
    }
    Some(out)
}
