//! Lowering: the plan of steps 1–4, checked against the (normalized) region, becomes
//! the tiled kernel's structure ([`Tiled`]) — the loops with their tiles, the arrays
//! and their ports, the cache buffers, the reduction accumulators, the row loop
//! variables of the ships and every access redirected into a buffer or left in DDR.
//! Every name the kernel introduces is chosen here, apart from the region's own.
//!
//! Lowering refuses what the printer does not handle (unsupported shapes) and plans
//! that contradict the region (bugs); whatever it accepted, the printer relies on.
//! The resource limits are `resources.rs`'s, the shipping decisions `shipping.rs`'s.

use super::shipping::Overlap;
use super::{bug, unsupported};
use crate::cpp::{self, ident, Leaves};
use std::collections::HashSet;
use tessera_ir::manifest::size_param_name;
use tessera_ir::reject::Reason;
use tessera_ir::{Expr, LValue, ReductionOp, Region, ScalarType, Stmt, VarKind};
use tessera_poly::{AccessKind, Aff, BufferKind, IntraTrip, Plan, Sym};

/// The tiled kernel's structure: what [`super::print`] prints.
pub(super) struct Tiled<'a> {
    /// The region, normalized as the optimizer planned it.
    pub region: &'a Region,
    pub plan: &'a Plan,
    /// Port width: elements per beat.
    pub w: i64,
    /// The loops of the nest, outer to inner as in the source.
    pub loops: Vec<LoopInfo>,
    /// Intra-tile loops outer to inner (p).
    pub perm: Vec<usize>,
    /// The innermost body's statements (assignments and accumulations).
    pub stmts: Vec<&'a Stmt>,
    /// The arrays of the region, in its variable order (the ports' order).
    pub arrays: Vec<ArrayInfo>,
    /// The cache buffers (the plan's, without the uncached groups).
    pub bufs: Vec<Buf>,
    /// Every access of the SCoP, in its order: where the kernel reads or writes it.
    pub accesses: Vec<Access>,
    /// Row loop variables, one per array dimension (enough for every array).
    pub rows: Vec<String>,
    /// The reduction variables, in the SCoP's order.
    pub reds: Vec<Red>,
}

/// One loop of the nest, tiled.
pub(super) struct LoopInfo {
    /// The intra-tile index (the source's index name: `i` runs from 0 in a tile).
    pub var: String,
    /// The tile origin (`ti`).
    pub tile: String,
    /// The source's index type.
    pub ty: ScalarType,
    /// SZ.
    pub size: i64,
    pub lower: Aff,
    pub upper: Aff,
    pub trip: IntraTrip,
    /// Name of the per-tile count of real iterations (`i_n`), for partial and padded loops.
    pub real: String,
}

/// One array of the region.
pub(super) struct ArrayInfo {
    /// Source name.
    pub name: String,
    /// Port (parameter) name.
    pub port: String,
    pub elem: ScalarType,
    /// Extents, outermost first, as C++ (the outermost from the map clause when the type
    /// does not say).
    pub extents: Vec<String>,
    /// Name of the variable holding the array's size in beats.
    pub words: String,
    /// When neither the type nor a map clause gives the outermost extent (a pointer
    /// without a map clause, a delinearised view): the kernel's scalar parameter that
    /// holds the elements of the array's device buffer
    /// (`tessera_ir::manifest::size_param_name`), which bounds the reads as the
    /// extents do otherwise.
    pub size: Option<String>,
    /// Burst segment in beats: min(256, 4096 / beat bytes).
    pub seg: i64,
    /// Name of the counter of a posted port (see [`Overlap`]).
    pub pending: String,
    /// How its rows ship: blocking until [`super::shipping::decide`] says otherwise.
    pub overlap: Overlap,
}

/// One cache buffer.
pub(super) struct Buf {
    /// Index into the plan's buffers.
    pub plan: usize,
    /// C++ name.
    pub name: String,
    /// Array (index into [`Tiled::arrays`]).
    pub array: usize,
    pub kind: BufferKind,
    pub box_size: Vec<i64>,
    pub shape: Vec<i64>,
    pub offset: Vec<Aff>,
    pub left: i64,
    /// Chunk: (array dimension, slices per iteration of p(1)).
    pub shift: Option<(usize, i64)>,
    pub reads: bool,
    /// Written: the write subscripts and, per array dimension, the loop it follows.
    pub write: Option<(Vec<Aff>, Vec<Option<usize>>)>,
}

/// Where an access of the SCoP goes (step 4).
pub(super) enum Target {
    /// A buffer element: the buffer (index into [`Tiled::bufs`]) and the subscripts
    /// into it.
    Buffer { buf: usize, subscripts: Vec<Aff> },
    /// Uncached: the array (index into [`Tiled::arrays`]) at the original subscripts,
    /// over tile origins and intra-tile indices.
    Array { array: usize, index: Vec<Aff> },
}

/// One access of the SCoP, redirected.
pub(super) struct Access {
    pub target: Target,
    /// Whether it runs under the padding guard (an uncached access of the padded loop).
    pub guarded: bool,
}

/// One reduction variable (`tessera_poly::reduction`): a local accumulator in the
/// kernel, combined into the variable's one-element port at the end.
pub(super) struct Red {
    /// Source name.
    pub var: String,
    pub op: ReductionOp,
    pub ty: ScalarType,
    /// The accumulator: a local of the variable's own name.
    pub local: String,
    /// The kernel parameter: `<var>_port`, the one-element memory port of a variable
    /// returned to the host, or `<var>_in`, the (unused) value of a firstprivate one.
    pub param: String,
    /// Whether the variable returns to the host (`Var::writes_back`).
    pub writes_back: bool,
    /// The original value read from the port at the end.
    pub orig: String,
    /// Whether the plan keeps the loop's order of its accumulations.
    pub ordered: bool,
    /// Reassociated (`reassociate`, a floating sum or product only accumulated
    /// into): the array of partial results, one per intra-tile index of the padded
    /// loop modulo [`crate::baseline::PARTIAL_SUMS`].
    pub part: Option<String>,
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

/// Extents and section bounds mention scalars only.
pub(super) struct NoArrays;

impl Leaves for NoArrays {
    fn read(&self, array: &str, _index: &[Expr]) -> String {
        unreachable!("array extents do not read array '{array}'")
    }
}

/// The kernel's structure for `region` (normalized) from `plan`, at `port_width`
/// elements per beat.
pub(super) fn lower<'a>(region: &'a Region, plan: &'a Plan, port_width: u32) -> Result<Tiled<'a>, Reason> {
    if !port_width.is_power_of_two() || port_width > 64 {
        return Err(unsupported(format!("port width {port_width} is not a power of two from 1 to 64")));
    }
    if plan.buffers.port_width != port_width {
        return Err(bug(format!(
            "the plan's buffers were laid out for port width {}, not {port_width}",
            plan.buffers.port_width
        )));
    }
    let w = port_width as i64;
    let scop = &plan.scop;
    let d = scop.depth();
    let mut names = Names(region.vars.iter().map(|v| ident(&v.name)).collect());
    for h in HELPERS {
        if names.0.contains(*h) {
            return Err(unsupported(format!("the region has a variable named {h}, a helper of the generated kernel")));
        }
        names.0.insert(h.to_string());
    }
    for dp in &scop.derived {
        if !names.0.insert(ident(&dp.name)) {
            return Err(unsupported(format!(
                "the parameter {} for a loop-invariant expression has the name of a helper of the generated kernel",
                dp.name
            )));
        }
    }

    // The perfect nest of the IR (the optimizer accepted it, so it is one).
    let mut fors = Vec::new();
    let mut body: &[Stmt] = &region.body;
    while let [Stmt::For { var, ty, body: inner, .. }] = body {
        fors.push((var.clone(), *ty));
        body = inner;
    }
    if d == 0 || fors.len() != d || plan.tiling.loops.len() != d || body.len() != scop.statements.len() {
        return Err(bug("the region's loop nest does not match the plan".into()));
    }
    let perm = plan.tiling.permutation.clone();
    let mut sorted = perm.clone();
    sorted.sort_unstable();
    if sorted != (0..d).collect::<Vec<_>>() || plan.tiling.padded_loop >= d {
        return Err(bug("the plan's intra-tile order or padded loop does not name the nest's loops".into()));
    }
    let stmts: Vec<&Stmt> = body.iter().collect();
    for (v, _) in &fors {
        names.0.insert(ident(v));
    }
    names.0.extend(plan.tiling.loops.iter().map(|l| ident(&l.tile_var)));

    let mut loops = Vec::new();
    for (x, tl) in plan.tiling.loops.iter().enumerate() {
        if tl.step != 1 {
            return Err(unsupported(format!("loop '{}' has step {}; only step 1 is generated", tl.var, tl.step)));
        }
        if tl.var != fors[x].0 {
            return Err(bug("the region's loop nest does not match the plan".into()));
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

    // Arrays: every array variable is a port (the ABI), the nest's arrays are shipped.
    let mut arrays = Vec::new();
    for v in region.vars.iter().filter(|v| v.kind != VarKind::Scalar) {
        // The bus limit on the beat is `resources::check`'s.
        let beat = w * v.elem.size() as i64;
        let mut size = None;
        let extents = v
            .dims
            .iter()
            .enumerate()
            .map(|(j, e)| match (e, v.section.get(j)) {
                (Some(e), _) => Ok(cpp::expr_with(e, &NoArrays)),
                (None, Some(s)) if j == 0 => {
                    Ok(format!("{} + {}", cpp::expr_with(&s.lower, &NoArrays), cpp::expr_with(&s.length, &NoArrays)))
                }
                // The kernel does not know the array's size (a pointer without a section
                // of its own, a flat array seen as rows): it takes the elements of its
                // device buffer as a parameter and bounds its reads by them, as by the
                // extents otherwise. (The loops' reach would not do: a read that may
                // not happen can reach past the accesses the launch checks.)
                (None, None) if j == 0 => {
                    let param = size_param_name(&v.name);
                    if !names.0.insert(param.clone()) {
                        return Err(unsupported(format!(
                            "the region has a variable named {param}, the size parameter of '{}' in the generated kernel",
                            v.name
                        )));
                    }
                    size = Some(param);
                    Ok(String::new())
                }
                _ => Err(unsupported(format!("the extent of dimension {j} of '{}' is unknown", v.name))),
            })
            .collect::<Result<Vec<_>, _>>()?;
        arrays.push(ArrayInfo {
            name: v.name.clone(),
            port: ident(&v.name),
            elem: v.elem,
            extents,
            words: names.fresh(&format!("{}_words", v.name)),
            size,
            seg: (4096 / beat).min(256),
            pending: names.fresh(&format!("{}_pending", v.name)),
            overlap: Overlap::default(),
        });
    }
    let array_index = |name: &str| arrays.iter().position(|a| a.name == name);

    // Statements: the reads the printer meets, in order, are the statement's reads
    // (an accumulation's condition first), then an array assignment's write.
    for (s, st) in stmts.iter().enumerate() {
        let reduction = scop.statements[s].reduction.as_deref();
        if reduction.is_some_and(|v| !scop.reductions.iter().any(|r| r.var == v)) {
            return Err(bug(format!("statement S{s} accumulates into a variable that is no reduction of the plan")));
        }
        let (cond, value, written) = match (st, reduction) {
            (Stmt::Assign { target: LValue::Element { array, .. }, value, .. }, None) => (None, value, Some(array)),
            (Stmt::Assign { target: LValue::Scalar { name, .. }, value, .. }, Some(v)) if name == v => (None, value, None),
            (Stmt::If { cond, then, otherwise, .. }, Some(v)) if otherwise.is_empty() => match then.as_slice() {
                [Stmt::Assign { target: LValue::Scalar { name, .. }, value, .. }] if name == v => (Some(cond), value, None),
                _ => return Err(bug(format!("statement S{s} is not the accumulation the plan says"))),
            },
            _ => return Err(bug(format!("statement S{s} is not the assignment the plan says"))),
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
            return Err(bug(format!("the accesses of statement S{s} do not match the plan")));
        }
    }
    // Reductions: a local accumulator each, the parameter renamed.
    let mut reds = Vec::new();
    for (k, r) in scop.reductions.iter().enumerate() {
        let v = region
            .var(&r.var)
            .filter(|v| v.kind == VarKind::Scalar)
            .ok_or_else(|| bug(format!("the reduction variable '{}' is not a scalar of the region", r.var)))?;
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
        return Err(bug(format!("the scalar '{}' returns to the host but is no reduction of the plan", v.name)));
    }
    if plan.redirects.len() != scop.accesses.len() || plan.redirects.iter().enumerate().any(|(i, r)| r.access != i) {
        return Err(bug("the plan's redirections are not one per access in access order".into()));
    }

    // Buffers.
    let mut bufs = Vec::new();
    for (bi, b) in plan.buffers.buffers.iter().enumerate() {
        if b.kind == BufferKind::Nc {
            continue;
        }
        let array = array_index(&b.array).ok_or_else(|| bug(format!("buffer {} of unknown array '{}'", b.name, b.array)))?;
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
            return Err(bug(format!("buffer {} has a layout the generator does not know", b.name)));
        }
        let shift = match (&b.kind, &b.shift) {
            (BufferKind::Chunk, Some(s)) => {
                if s.axis + 1 >= n || s.step < 1 || s.loop_index != perm[0] {
                    return Err(unsupported(format!(
                        "chunk buffer {} shifts along dimension {} by {}; only shifts by a positive step along an outer dimension are generated",
                        b.name, s.axis, s.step
                    )));
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
            let Some(&first) = subs.first() else {
                return Err(bug(format!("buffer {} is written but holds no write", b.name)));
            };
            if subs.iter().any(|s| *s != first) {
                return Err(unsupported(format!(
                    "buffer {} holds writes with different subscripts; its write-back cannot be trimmed",
                    b.name
                )));
            }
            let dims = translation_dims(first).ok_or_else(|| {
                unsupported(format!(
                    "the write {} is not a translation of the iteration (tile origin + intra-tile index + constant per subscript); its write-back cannot be trimmed",
                    scop.accesses[b.accesses.iter().copied().find(|&a| scop.accesses[a].kind == AccessKind::Write).unwrap_or(0)].text
                ))
            })?;
            if dims.len() != n {
                return Err(bug(format!("the writes into buffer {} do not have one subscript per buffer dimension", b.name)));
            }
            Some((first.clone(), dims))
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
    // Step 4: every access into a buffer of the kernel or to a port.
    let mut accesses = Vec::new();
    for r in &plan.redirects {
        let target = if r.cached {
            let buf = bufs
                .iter()
                .position(|b| b.plan == r.buffer)
                .ok_or_else(|| bug(format!("access {} goes to a buffer the plan does not describe", r.name)))?;
            if r.subscripts.len() != bufs[buf].shape.len() {
                return Err(bug(format!("access {} has the wrong number of buffer subscripts", r.name)));
            }
            Target::Buffer { buf, subscripts: r.subscripts.clone() }
        } else {
            let array = array_index(&r.array).ok_or_else(|| bug(format!("access {} of unknown array '{}'", r.name, r.array)))?;
            Target::Array { array, index: r.original.clone() }
        };
        accesses.push(Access { target, guarded: r.guarded });
    }
    let rank = arrays.iter().map(|a| a.extents.len()).max().unwrap_or(0);
    let rows = (0..rank).map(|j| names.fresh(&format!("r{j}"))).collect();
    Ok(Tiled { region, plan, w, loops, perm, stmts, arrays, bufs, accesses, rows, reds })
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
