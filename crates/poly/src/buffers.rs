//! Step 2 of the method: working sets, cache buffer kinds, fusion and cost
//! (paper Sec. 3 and Sec. 4, step 2; `docs/method.md`, step 2).
//!
//! **Working sets.** For an access `R` and the tiled schedule `Sch'`, the paper maps
//! tiled time to array elements with `R' = (R⁻¹ . Sch')⁻¹` and applies it to the
//! iterations of a *full* tile. Here `R'` is built per statement as
//! `[ti_1 … ti_d, i_f …] -> S[x] : x = ti + i, 0 ≤ i < SZ` composed with `R` (isl
//! `apply_range`), where the `i_f` are the intra-tile indices held fixed: none for the
//! whole tile, `p(1)` for a sub-tile (chunk), `p(1) … p(d−1)` for a line. Full tiles
//! ignore the domain's boundary: every tile's working set lies inside the full-tile
//! one, so its box is an upper bound of constant size. Bounding boxes come from isl's
//! `get_range_simple_fixed_box_hull`: offset affine in the tile origins, fixed
//! intra-tile indices and parameters; constant size (else the access is `nc`).
//!
//! **Kinds** (Sec. 3), for a group of accesses and a permutation p:
//! - `full`: the box of the whole tile's working set; always possible when that box
//!   has a constant size.
//! - `chunk`: the box of one sub-tile (fix the outermost intra-tile index `p(1)`);
//!   requires d ≥ 2, a constant size, a shift between consecutive sub-tiles along at
//!   most one array dimension (data then shifts inside the buffer instead of being
//!   reloaded), and that the innermost intra-tile loop `p(d)` walks the array's
//!   contiguous dimension so slices fill with bursts — "Only for p=(.,.,k) we can pick a
//!   chunk buffer for A". "Walks" means: the last subscript of every access of the
//!   group involves `p(d)` and no other subscript does.
//! - `line`: the box of one innermost sweep (fix `p(1) … p(d−1)`), which must be 1 in
//!   every dimension but the last, with the same walking condition; and only for
//!   groups that are **written and not read** (output streams). Reading of the paper:
//!   this is the one rule consistent with all of its data — Fig. 4 gives V (read and
//!   written) a chunk `[1,32,32]` at p=(i,k,j) where a line `[1,1,32]` would be smaller;
//!   at p=(i,j,k) it calls the individual A reads chunks `[1,32,32]`, not lines `[1,1,32]`;
//!   and the paper's generator produces chunk buffers for the stencil inputs and line
//!   buffers only for the outputs (2D-5p `A_c[3][96]` + `X_c[1][96]`, heat-3d
//!   `A_c[3][34][64]` + `B_c[1][1][64]`). A read line is refilled on every sweep and
//!   keeps no data for reuse, which is what the paper's buffers are for.
//! - `nc`: no buffer; the access goes to DDR.
//!
//! The kind of a group is the applicable one with the fewest elements; ties go to
//! the faster kind, line < chunk < full.
//!
//! **Alignment halo** (Sec. 4, step 5, "Halos and bursts"; footnote 6: "step 2 of
//! course works with the sizes of the halo-added buffers"). For port width w the
//! innermost buffer dimension holds whole beats: the left halo is the largest
//! misalignment `addr mod w` of the first element of any row of the box over all tiles
//! (and fixed intra-tile positions), computed with isl when the array's inner extents
//! and the loops' lower bounds are constants, and the worst case `w − 1` when they are
//! symbolic; the innermost extent becomes `roundup(left + box, w)`; the right halo is
//! the rest. Element `q` of a box row sits at buffer index `left + q` in every tile
//! (the burst starts at `addr − (addr mod w)` and drops what falls outside the
//! buffer), so redirected subscripts add the constant `left`. w = 1 gives the paper's
//! unaligned Fig. 4 numbers. Array base addresses are assumed aligned to w elements.
//!
//! **Fusion** (Sec. 3, "Fusion of Caches for Temporal Locality"; `docs/method.md`, step 2, item 4):
//! - accesses connected by a dependence must share one buffer or all be `nc`; with the
//!   paper's simplification, a dependence-connected group with any pair of disjoint
//!   working sets is `nc` entirely, as is one containing a write that padding makes
//!   `nc` (see `tiling`);
//! - other accesses to the same array whose full-tile working sets intersect share
//!   one buffer when that is smaller than the separate buffers and not `nc`. The size
//!   comparison is made on the full-tile working-set buffers, the paper's "working
//!   sets" whose intersection decides fusion. Comparing the buffers of the kinds
//!   finally chosen would contradict Fig. 4: at p=(i,j,k) the paper fuses the two A
//!   reads into one chunk `[2,33,33]` (2 178 elements) although two chunks `[1,32,32]`
//!   hold 2 048, arguing that the fused chunk shifts data instead of reloading it.
//!   More than two accesses (the paper only discusses pairs) are fused greedily: each
//!   access joins the existing group with the largest saving, then groups merge
//!   pairwise while that saves.
//!
//! **Cost** of a permutation (Sec. 4, step 2): the total elements of its buffers.
//! Tessera ranks permutations by (number of `nc` accesses, total elements, number of
//! full buffers, number of chunk buffers, enumeration order): an `nc` access costs no
//! buffer space but one DDR access per use, so it must not make a permutation look
//! cheap (the paper never compares such permutations: its benchmarks have no `nc`).

use crate::affine::{Aff, Sym};
use crate::deps::Dependences;
use crate::isl::{self, ctx_err, FixedBox, IslResult, Text};
use crate::scop::{fresh, isl_ident, AccessKind, Scop};
use isl_rs::{Context, DimType, Map};
use serde::{Deserialize, Serialize};
use std::cell::RefCell;
use std::collections::{HashMap, HashSet};

/// The kind of cache buffer of a group of accesses.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BufferKind {
    /// The whole tile's working set.
    Full,
    /// One sub-tile's working set (outermost intra-tile index fixed), shifted per tick.
    Chunk,
    /// One innermost sweep's working set, a 1-D line (written-only groups).
    Line,
    /// Not cached: the accesses go to DDR.
    Nc,
}

impl BufferKind {
    /// `full`, `chunk`, `line`, `nc`.
    pub fn name(self) -> &'static str {
        match self {
            BufferKind::Full => "full",
            BufferKind::Chunk => "chunk",
            BufferKind::Line => "line",
            BufferKind::Nc => "nc",
        }
    }

    /// Speed order for ties: line < chunk < full (< nc).
    fn rank(self) -> u8 {
        match self {
            BufferKind::Line => 0,
            BufferKind::Chunk => 1,
            BufferKind::Full => 2,
            BufferKind::Nc => 3,
        }
    }
}

/// How a chunk buffer's box moves between consecutive sub-tiles.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shift {
    /// The loop whose intra-tile index is fixed (`p(1)`, original loop index).
    pub loop_index: usize,
    /// The array (and buffer) dimension along which the box moves.
    pub axis: usize,
    /// Elements the box moves per iteration of that loop (its step included).
    pub step: i64,
}

/// One cache buffer (or, for kind `nc`, one group of uncached accesses).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buffer {
    /// Buffer name for the generated code (`A_c`, `V_f`, `B_l`; the array for `nc`).
    pub name: String,
    /// The array.
    pub array: String,
    /// The fused accesses (ids into `Scop::accesses`).
    pub accesses: Vec<usize>,
    /// Kind.
    pub kind: BufferKind,
    /// Intra-tile loops held fixed (original loop indices): none for full, `p(1)` for
    /// chunk, `p(1) … p(d−1)` for line.
    pub fixed_loops: Vec<usize>,
    /// Box origin in array coordinates, affine in tile origins, the fixed intra-tile
    /// indices and parameters (empty for `nc`).
    pub offset: Vec<Aff>,
    /// Box extent per array dimension (without halo).
    pub box_size: Vec<i64>,
    /// Declared shape: the box with the alignment halo in the last dimension.
    pub shape: Vec<i64>,
    /// Product of the shape.
    pub elements: u64,
    /// Halo elements left of the box in the last dimension (box element q of a row is
    /// at index `halo_left + q`).
    pub halo_left: i64,
    /// Halo elements right of the box in the last dimension.
    pub halo_right: i64,
    /// Smallest and largest misalignment (`address mod w`) of a box row start, when
    /// known (`None`: symbolic extents, worst case assumed).
    pub misalignment: Option<(i64, i64)>,
    /// For chunk buffers whose box moves: how.
    pub shift: Option<Shift>,
    /// Whether some access of the group reads.
    pub reads: bool,
    /// Whether some access of the group writes.
    pub writes: bool,
    /// Why the group is `nc` (for kind `nc`).
    pub reason: Option<String>,
    /// The working set the box bounds, `[ti…, fixed i…] -> A[…]` (isl text; filled for
    /// the chosen permutation only).
    pub working_set: Option<String>,
}

/// The buffers of one permutation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BufferPlan {
    /// Port width w (elements per beat) the halos were computed for.
    pub port_width: u32,
    /// The permutation the buffers are for (original loop indices, outer to inner).
    pub permutation: Vec<usize>,
    /// Buffers and `nc` groups, ordered by their first access.
    pub buffers: Vec<Buffer>,
    /// Sum of `elements` (the cost of step 2).
    pub total_elements: u64,
    /// Number of accesses without a buffer.
    pub uncached_accesses: usize,
}

impl BufferPlan {
    /// The buffer serving access `a`.
    pub fn buffer_of(&self, a: usize) -> Option<&Buffer> {
        self.buffers.iter().find(|b| b.accesses.contains(&a))
    }

    /// Ranking key (lower is better), see the module docs.
    pub(crate) fn rank_key(&self) -> (usize, u64, usize, usize) {
        let count = |k| self.buffers.iter().filter(|b| b.kind == k).count();
        (self.uncached_accesses, self.total_elements, count(BufferKind::Full), count(BufferKind::Chunk))
    }
}

/// A box with its alignment halo.
#[derive(Clone, Debug)]
struct Sized {
    bx: FixedBox,
    shape: Vec<i64>,
    left: i64,
    right: i64,
    misalign: Option<(i64, i64)>,
    elements: u64,
}

/// (sorted access ids, fixed intra-tile loops): the key of the box caches.
type GroupKey = (Vec<usize>, Vec<usize>);

/// A buffer candidate for a group: kind, fixed loops, haloed box, shift.
struct Choice {
    kind: BufferKind,
    fixed: Vec<usize>,
    sized: Sized,
    shift: Option<Shift>,
}

/// A group of accesses before the kind is chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Group {
    /// Sorted access ids.
    pub accesses: Vec<usize>,
    /// `Some(reason)` when the group is not cached.
    pub nc: Option<String>,
}

/// Working-set computations for one region (one isl context), with caches.
pub(crate) struct Eval<'a> {
    ctx: &'a Context,
    scop: &'a Scop,
    sz: &'a [i64],
    w: u32,
    /// Unrestricted access relations as maps.
    acc: Vec<Map>,
    /// Free-variable names for the working-set maps, per loop.
    free_names: Vec<String>,
    /// isl parameter name → parameter.
    params: HashMap<String, String>,
    /// Tile-to-iteration maps per (statement, fixed loops).
    tr: RefCell<HashMap<(usize, Vec<usize>), Map>>,
    /// Working-set maps per (access, fixed loops).
    ws: RefCell<HashMap<(usize, Vec<usize>), Map>>,
    /// Bounding boxes per (sorted group, fixed loops).
    raw: RefCell<HashMap<GroupKey, Option<FixedBox>>>,
    /// Haloed boxes per (sorted group, fixed loops).
    boxes: RefCell<HashMap<GroupKey, Option<Sized>>>,
    /// Whether full-tile working sets intersect, per access pair (memoised).
    inter: RefCell<HashMap<(usize, usize), bool>>,
    /// Groupings per set of forced-`nc` writes.
    groupings: RefCell<HashMap<Vec<usize>, Vec<Group>>>,
}

impl<'a> Eval<'a> {
    pub(crate) fn new(ctx: &'a Context, scop: &'a Scop, sz: &'a [i64], w: u32) -> IslResult<Eval<'a>> {
        let acc = scop.accesses.iter().map(|a| isl::map(ctx, &a.relation)).collect::<IslResult<Vec<_>>>()?;
        let mut used: HashSet<String> = scop.names.loops.iter().chain(&scop.names.tiles).chain(&scop.params).map(|s| isl_ident(s)).collect();
        let free_names = scop.loops.iter().map(|l| fresh(&mut used, &format!("{}_", isl_ident(&l.var)))).collect();
        let params = scop.params.iter().map(|p| (isl_ident(p), p.clone())).collect();
        Ok(Eval {
            ctx,
            scop,
            sz,
            w: w.max(1),
            acc,
            free_names,
            params,
            tr: RefCell::new(HashMap::new()),
            ws: RefCell::new(HashMap::new()),
            raw: RefCell::new(HashMap::new()),
            boxes: RefCell::new(HashMap::new()),
            inter: RefCell::new(HashMap::new()),
            groupings: RefCell::new(HashMap::new()),
        })
    }

    /// Whether the full-tile working sets of accesses a and b intersect (memoised).
    fn inter(&self, a: usize, b: usize) -> IslResult<bool> {
        if a == b {
            return Ok(true);
        }
        let key = (a.min(b), a.max(b));
        if let Some(&r) = self.inter.borrow().get(&key) {
            return Ok(r);
        }
        let hit = self.scop.accesses[a].array == self.scop.accesses[b].array && {
            let i = self.ws_map(a, &[])?.intersect(self.ws_map(b, &[])?).map_err(ctx_err("working set intersection"))?;
            !i.is_empty().map_err(ctx_err("working set intersection"))?
        };
        self.inter.borrow_mut().insert(key, hit);
        Ok(hit)
    }

    /// `R'` of access `a` with the intra-tile loops `fixed` held fixed (a copy).
    fn ws_map(&self, a: usize, fixed: &[usize]) -> IslResult<Map> {
        let key = (a, fixed.to_vec());
        if let Some(m) = self.ws.borrow().get(&key) {
            return m.copy().map_err(ctx_err("copy"));
        }
        let stmt = self.scop.accesses[a].statement;
        let m = self.tile_map(stmt, fixed)?.apply_range(self.acc[a].copy().map_err(ctx_err("copy"))?).map_err(ctx_err("working set"))?;
        let out = m.copy().map_err(ctx_err("copy"))?;
        self.ws.borrow_mut().insert(key, m);
        Ok(out)
    }

    /// `[ti…, i_f…] -> S[x] : x = ti + i, 0 ≤ i < SZ` for statement `stmt` (a copy).
    fn tile_map(&self, stmt: usize, fixed: &[usize]) -> IslResult<Map> {
        let key = (stmt, fixed.to_vec());
        if let Some(m) = self.tr.borrow().get(&key) {
            return m.copy().map_err(ctx_err("copy"));
        }
        let scop = self.scop;
        let tiles: Vec<String> = scop.names.tiles.iter().map(|t| isl_ident(t)).collect();
        let mut dom: Vec<String> = tiles.clone();
        dom.extend(fixed.iter().map(|&x| isl_ident(&scop.loops[x].var)));
        let mut range = Vec::new();
        let mut cons = Vec::new();
        for (x, t) in tiles.iter().enumerate() {
            let (s, st) = (self.sz[x], scop.loops[x].step);
            if fixed.contains(&x) {
                let r = isl_ident(&scop.loops[x].var);
                range.push(format!("{t} + {r}"));
                cons.push(format!("0 <= {r} < {s}"));
                if st > 1 {
                    cons.push(format!("{r} mod {st} = 0"));
                }
            } else {
                let f = &self.free_names[x];
                range.push(f.clone());
                cons.push(format!("{t} <= {f} < {t} + {s}"));
                if st > 1 {
                    cons.push(format!("({f} - {t}) mod {st} = 0"));
                }
            }
        }
        let tr = format!(
            "{}{{ [{}] -> {}[{}] : {} }}",
            scop.isl_params(),
            dom.join(", "),
            scop.statements[stmt].name,
            range.join(", "),
            cons.join(" and ")
        );
        let m = isl::map(self.ctx, &tr)?;
        let out = m.copy().map_err(ctx_err("copy"))?;
        self.tr.borrow_mut().insert(key, m);
        Ok(out)
    }

    /// The working set of a group (union of its accesses' `R'`), as isl text.
    pub(crate) fn ws_text(&self, group: &[usize], fixed: &[usize]) -> IslResult<String> {
        let mut m = self.ws_map(group[0], fixed)?;
        for &a in &group[1..] {
            m = m.union(self.ws_map(a, fixed)?).map_err(ctx_err("union"))?;
        }
        Ok(m.coalesce().map_err(ctx_err("coalesce"))?.text())
    }

    /// The haloed box of a group's working set with `fixed` loops fixed.
    fn sized(&self, group: &[usize], fixed: &[usize]) -> IslResult<Option<Sized>> {
        let key = (group.to_vec(), fixed.to_vec());
        if let Some(s) = self.boxes.borrow().get(&key) {
            return Ok(s.clone());
        }
        let array = &self.scop.accesses[group[0]].array;
        let s = match self.raw_box(group, fixed)? {
            Some(b) => Some(self.align(b, array, fixed)?),
            None => None,
        };
        self.boxes.borrow_mut().insert(key, s.clone());
        Ok(s)
    }

    /// The bounding box (without halo) of a group's working set.
    fn raw_box(&self, group: &[usize], fixed: &[usize]) -> IslResult<Option<FixedBox>> {
        let key = (group.to_vec(), fixed.to_vec());
        if let Some(b) = self.raw.borrow().get(&key) {
            return Ok(b.clone());
        }
        let bx = match self.hull_of_member_boxes(group, fixed)? {
            Some(b) => Some(b),
            None => {
                let mut m = self.ws_map(group[0], fixed)?;
                for &a in &group[1..] {
                    m = m.union(self.ws_map(a, fixed)?).map_err(ctx_err("union of working sets"))?;
                }
                let mut ins: Vec<Sym> = (0..self.scop.depth()).map(Sym::Tile).collect();
                ins.extend(fixed.iter().map(|&x| Sym::Intra(x)));
                let param = |n: &str| self.params.get(n).map(|p| Sym::Param(p.clone()));
                debug_assert_eq!(m.dim(DimType::In).unwrap_or(-1) as usize, ins.len());
                isl::range_box(&m, &ins, &param)?
            }
        };
        self.raw.borrow_mut().insert(key, bx.clone());
        Ok(bx)
    }

    /// The bounding box of a group's working set as the hull of its members' boxes,
    /// when their offsets differ by constants only (the bounding box of a union is the
    /// hull of the bounding boxes; this saves isl a union of many pieces). `None` for
    /// single accesses and when the hull is not a constant-size box.
    fn hull_of_member_boxes(&self, group: &[usize], fixed: &[usize]) -> IslResult<Option<FixedBox>> {
        if group.len() < 2 {
            return Ok(None);
        }
        let mut boxes = Vec::new();
        for &a in group {
            match self.raw_box(&[a], fixed)? {
                Some(b) => boxes.push(b),
                None => return Ok(None),
            }
        }
        let n = boxes[0].size.len();
        let mut out = FixedBox { offset: Vec::new(), size: Vec::new() };
        for j in 0..n {
            let base = boxes[0].offset[j].add_constant(-boxes[0].offset[j].constant);
            let mut lo = i64::MAX;
            let mut hi = i64::MIN;
            for b in &boxes {
                let o = &b.offset[j];
                if o.add_constant(-o.constant) != base {
                    return Ok(None);
                }
                lo = lo.min(o.constant);
                hi = hi.max(o.constant + b.size[j]);
            }
            out.offset.push(base.add_constant(lo));
            out.size.push(hi - lo);
        }
        Ok(Some(out))
    }

    /// Adds the alignment halo for the port width (see the module docs).
    fn align(&self, bx: FixedBox, array: &str, fixed: &[usize]) -> IslResult<Sized> {
        let w = self.w as i64;
        let n = bx.size.len();
        let (left, misalign) = if w == 1 { (0, Some((0, 0))) } else { self.misalignment(&bx, array, fixed)? };
        let mut shape = bx.size.clone();
        let last = bx.size[n - 1];
        shape[n - 1] = (left + last + w - 1) / w * w;
        let right = shape[n - 1] - left - last;
        let elements = shape.iter().map(|&s| s.max(0) as u64).product();
        Ok(Sized { bx, shape, left, right, misalign, elements })
    }

    /// `(left halo, Some((min, max)) residue)` or the worst case `(w − 1, None)`.
    fn misalignment(&self, bx: &FixedBox, array: &str, fixed: &[usize]) -> IslResult<(i64, Option<(i64, i64)>)> {
        let w = self.w as i64;
        let worst = Ok((w - 1, None));
        let scop = self.scop;
        let Some(arr) = scop.array(array) else { return worst };
        let n = bx.size.len();
        // Row-major strides from the inner extents.
        let mut strides = vec![1i64; n];
        for j in (0..n.saturating_sub(1)).rev() {
            let Some(e) = arr.extents.get(j + 1).and_then(|e| e.as_ref()).and_then(|e| e.as_constant()) else { return worst };
            strides[j] = strides[j + 1].saturating_mul(e);
        }
        // Tile origins lb + SZ·m, fixed intra-tile indices r, rows q.
        let mut vars = Vec::new();
        let mut cons = Vec::new();
        let mut subst: HashMap<Sym, Aff> = HashMap::new();
        for (x, l) in scop.loops.iter().enumerate() {
            let Some(lb) = l.lower.as_constant() else { return worst };
            vars.push(format!("m{x}"));
            cons.push(format!("m{x} >= 0"));
            subst.insert(Sym::Tile(x), Aff::constant(lb).add(&Aff::sym(Sym::Loop(x)).scale(self.sz[x])));
        }
        for &x in fixed {
            vars.push(format!("r{x}"));
            cons.push(format!("0 <= r{x} < {}", self.sz[x]));
            if scop.loops[x].step > 1 {
                cons.push(format!("r{x} mod {} = 0", scop.loops[x].step));
            }
        }
        let mut lin = Vec::new();
        for (j, &stride) in strides.iter().enumerate() {
            // `Loop(x)` stands for m_x here (a fresh use of the symbol).
            let o = bx.offset[j].substitute(&|s| subst.get(s).cloned());
            if o.mentions(|s| matches!(s, Sym::Param(_))) {
                return worst;
            }
            let o = o.format(&|s| match s {
                Sym::Loop(x) => format!("m{x}"),
                Sym::Intra(x) => format!("r{x}"),
                _ => "0".to_string(),
            });
            if j + 1 < n && bx.size[j] > 1 {
                vars.push(format!("q{j}"));
                cons.push(format!("0 <= q{j} < {}", bx.size[j]));
                lin.push(format!("{stride} * ({o} + q{j})"));
            } else {
                lin.push(format!("{stride} * ({o})"));
            }
        }
        let text = format!("{{ [res] : exists ({} : {} and res = ({}) mod {w}) }}", vars.join(", "), cons.join(" and "), lin.join(" + "));
        let s = isl::set(self.ctx, &text)?;
        let r = isl::dim_ranges(&s)?;
        match r.first() {
            Some((Some(lo), Some(hi))) => Ok((*hi, Some((*lo, *hi)))),
            _ => worst,
        }
    }

    /// Whether the innermost intra-tile loop `v` walks the contiguous dimension of
    /// access `a`: only its last subscript involves `v`.
    fn walks(&self, a: usize, v: usize) -> bool {
        let subs = &self.scop.accesses[a].subscripts;
        let n = subs.len();
        subs[n - 1].coeff(&Sym::Loop(v)) != 0 && subs[..n - 1].iter().all(|s| s.coeff(&Sym::Loop(v)) == 0)
    }

    /// Groups the accesses of every array for a set of writes that padding forces
    /// to be `nc` (see the module docs). Cached per forced set.
    pub(crate) fn grouping(&self, deps: &Dependences, forced_nc: &[usize]) -> IslResult<Vec<Group>> {
        if let Some(g) = self.groupings.borrow().get(forced_nc) {
            return Ok(g.clone());
        }
        let mut out = Vec::new();
        for arr in &self.scop.arrays {
            let accs: Vec<usize> = self.scop.accesses.iter().filter(|a| a.array == arr.name).map(|a| a.id).collect();
            // Dependence components (union-find).
            let mut comp: HashMap<usize, usize> = accs.iter().map(|&a| (a, a)).collect();
            fn root(c: &HashMap<usize, usize>, mut a: usize) -> usize {
                while c[&a] != a {
                    a = c[&a];
                }
                a
            }
            for d in &deps.pairs {
                if comp.contains_key(&d.source) && comp.contains_key(&d.sink) {
                    let (ra, rb) = (root(&comp, d.source), root(&comp, d.sink));
                    if ra != rb {
                        comp.insert(ra.max(rb), ra.min(rb));
                    }
                }
            }
            let mut units: Vec<Vec<usize>> = Vec::new();
            for &a in &accs {
                let r = root(&comp, a);
                match units.iter_mut().find(|u| root(&comp, u[0]) == r) {
                    Some(u) => u.push(a),
                    None => units.push(vec![a]),
                }
            }
            let mut cacheable: Vec<Vec<usize>> = Vec::new();
            for u in units {
                let forced: Vec<usize> = u.iter().copied().filter(|a| forced_nc.contains(a)).collect();
                let reason = if !forced.is_empty() {
                    let names: Vec<&str> = forced.iter().map(|&a| self.scop.accesses[a].name.as_str()).collect();
                    Some(if u.len() == forced.len() {
                        format!("padded iterations of {} could overwrite data real iterations of the tile use: guarded write", names.join(", "))
                    } else {
                        format!("dependence-connected with the guarded write {}", names.join(", "))
                    })
                } else if self.any_disjoint(&u)? {
                    Some("dependence-connected accesses with disjoint working sets (paper Sec. 3)".to_string())
                } else if self.sized(&u, &[])?.is_none() {
                    Some("the working set has no bounding box of constant size".to_string())
                } else {
                    None
                };
                match reason {
                    Some(r) => out.push(Group { accesses: u, nc: Some(r) }),
                    None => cacheable.push(u),
                }
            }
            for g in self.fuse(cacheable)? {
                out.push(Group { accesses: g, nc: None });
            }
        }
        out.sort_by_key(|g| g.accesses[0]);
        self.groupings.borrow_mut().insert(forced_nc.to_vec(), out.clone());
        Ok(out)
    }

    fn intersects(&self, g: &[usize], h: &[usize]) -> IslResult<bool> {
        for &a in g {
            for &b in h {
                if self.inter(a, b)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    fn any_disjoint(&self, g: &[usize]) -> IslResult<bool> {
        for &a in g {
            for &b in g {
                if a < b && !self.inter(a, b)? {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Full-tile cost of a group (`None`: no constant box).
    fn full_cost(&self, g: &[usize]) -> IslResult<Option<u64>> {
        Ok(self.sized(g, &[])?.map(|s| s.elements))
    }

    /// The saving of merging g and h (`None` if they do not intersect, the union has
    /// no constant box, or it does not save).
    fn saving(&self, g: &[usize], h: &[usize]) -> IslResult<Option<(u64, Vec<usize>)>> {
        if !self.intersects(g, h)? {
            return Ok(None);
        }
        let mut m: Vec<usize> = g.iter().chain(h).copied().collect();
        m.sort_unstable();
        let (Some(cg), Some(ch), Some(cm)) = (self.full_cost(g)?, self.full_cost(h)?, self.full_cost(&m)?) else { return Ok(None) };
        Ok((cm < cg + ch).then(|| (cg + ch - cm, m)))
    }

    /// Greedy fusion of the cacheable units of one array.
    fn fuse(&self, units: Vec<Vec<usize>>) -> IslResult<Vec<Vec<usize>>> {
        let mut groups: Vec<Vec<usize>> = Vec::new();
        for u in units {
            let mut best: Option<(u64, usize, Vec<usize>)> = None;
            for (i, g) in groups.iter().enumerate() {
                if let Some((s, m)) = self.saving(g, &u)? {
                    if best.as_ref().is_none_or(|b| s > b.0) {
                        best = Some((s, i, m));
                    }
                }
            }
            match best {
                Some((_, i, m)) => groups[i] = m,
                None => groups.push(u),
            }
        }
        loop {
            let mut best: Option<(u64, usize, usize, Vec<usize>)> = None;
            for i in 0..groups.len() {
                for j in i + 1..groups.len() {
                    if let Some((s, m)) = self.saving(&groups[i], &groups[j])? {
                        if best.as_ref().is_none_or(|b| s > b.0) {
                            best = Some((s, i, j, m));
                        }
                    }
                }
            }
            match best {
                Some((_, i, j, m)) => {
                    groups[i] = m;
                    groups.remove(j);
                }
                None => break,
            }
        }
        Ok(groups)
    }

    /// The buffer of a cacheable group for permutation `perm` (see the module docs).
    fn choose(&self, g: &[usize], perm: &[usize]) -> IslResult<Option<Choice>> {
        let d = perm.len();
        let inner = perm[d - 1];
        let walks = g.iter().all(|&a| self.walks(a, inner));
        let write_only = g.iter().all(|&a| self.scop.accesses[a].kind == AccessKind::Write);
        let mut cands = Vec::new();
        if let Some(s) = self.sized(g, &[])? {
            cands.push(Choice { kind: BufferKind::Full, fixed: Vec::new(), sized: s, shift: None });
        }
        if d >= 2 && walks {
            let fixed = vec![perm[0]];
            if let Some(s) = self.sized(g, &fixed)? {
                let x = perm[0];
                let moving: Vec<(usize, i64)> = s
                    .bx
                    .offset
                    .iter()
                    .enumerate()
                    .map(|(j, o)| (j, o.coeff(&Sym::Intra(x))))
                    .filter(|(_, c)| *c != 0)
                    .collect();
                if moving.len() <= 1 {
                    let shift = moving.first().map(|&(axis, c)| Shift { loop_index: x, axis, step: c * self.scop.loops[x].step });
                    cands.push(Choice { kind: BufferKind::Chunk, fixed, sized: s, shift });
                }
            }
        }
        if write_only && walks {
            let fixed = perm[..d - 1].to_vec();
            if let Some(s) = self.sized(g, &fixed)? {
                let n = s.bx.size.len();
                if s.bx.size[..n - 1].iter().all(|&z| z == 1) {
                    cands.push(Choice { kind: BufferKind::Line, fixed, sized: s, shift: None });
                }
            }
        }
        Ok(cands.into_iter().min_by_key(|c| (c.sized.elements, c.kind.rank())))
    }

    /// The buffer plan of permutation `perm` with the given grouping.
    pub(crate) fn evaluate(&self, perm: &[usize], groups: &[Group]) -> IslResult<BufferPlan> {
        let mut buffers = Vec::new();
        for g in groups {
            let reads = g.accesses.iter().any(|&a| self.scop.accesses[a].kind == AccessKind::Read);
            let writes = g.accesses.iter().any(|&a| self.scop.accesses[a].kind == AccessKind::Write);
            let array = self.scop.accesses[g.accesses[0]].array.clone();
            let nc = |reason: String| Buffer {
                name: array.clone(),
                array: array.clone(),
                accesses: g.accesses.clone(),
                kind: BufferKind::Nc,
                fixed_loops: Vec::new(),
                offset: Vec::new(),
                box_size: Vec::new(),
                shape: Vec::new(),
                elements: 0,
                halo_left: 0,
                halo_right: 0,
                misalignment: None,
                shift: None,
                reads,
                writes,
                reason: Some(reason),
                working_set: None,
            };
            if let Some(r) = &g.nc {
                buffers.push(nc(r.clone()));
                continue;
            }
            match self.choose(&g.accesses, perm)? {
                None => buffers.push(nc("no buffer kind applies".to_string())),
                Some(Choice { kind, fixed: fixed_loops, sized: s, shift }) => buffers.push(Buffer {
                    name: String::new(),
                    array: array.clone(),
                    accesses: g.accesses.clone(),
                    kind,
                    fixed_loops,
                    offset: s.bx.offset.clone(),
                    box_size: s.bx.size.clone(),
                    shape: s.shape.clone(),
                    elements: s.elements,
                    halo_left: s.left,
                    halo_right: s.right,
                    misalignment: s.misalign,
                    shift,
                    reads,
                    writes,
                    reason: None,
                    working_set: None,
                }),
            }
        }
        // Names: A_f / A_c / A_l, numbered when an array has several of a kind.
        let mut count: HashMap<(String, BufferKind), usize> = HashMap::new();
        for b in &buffers {
            *count.entry((b.array.clone(), b.kind)).or_insert(0) += 1;
        }
        let mut seen: HashMap<(String, BufferKind), usize> = HashMap::new();
        for b in buffers.iter_mut().filter(|b| b.kind != BufferKind::Nc) {
            let key = (b.array.clone(), b.kind);
            let k = seen.entry(key.clone()).or_insert(0);
            let suffix = &b.kind.name()[..1];
            b.name = if count[&key] > 1 { format!("{}_{suffix}{k}", b.array) } else { format!("{}_{suffix}", b.array) };
            *k += 1;
        }
        let total_elements = buffers.iter().map(|b| b.elements).sum();
        let uncached_accesses = buffers.iter().filter(|b| b.kind == BufferKind::Nc).map(|b| b.accesses.len()).sum();
        Ok(BufferPlan { port_width: self.w, permutation: perm.to_vec(), buffers, total_elements, uncached_accesses })
    }
}
