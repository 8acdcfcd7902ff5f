//! Printing: the lowered kernel ([`Tiled`]) as HLS C++ — the header comment, the
//! ports and their interface pragmas, the inter-tile loops, per tile the cache buffers,
//! their ships (decided in `shipping.rs`) and the intra-tile loops around the
//! statements with their subscripts redirected (step 4), the reduction accumulators
//! and combiners, and the emulation entry.
//!
//! Lowering has checked everything printing relies on; nothing here fails. The
//! printer keeps two facts it learns while printing the body, which the text before
//! the body needs: the loops whose real-iteration count a tile uses (declared at the
//! tile's start) and, per port, the most read bursts outstanding at once (its
//! interface pragma).

use super::lower::{ArrayInfo, Buf, NoArrays, Target, Tiled};
use super::shipping::{Dir, How, Range, Ship};
use super::Variant;
use crate::cpp::{self, ident, Leaves};
use crate::Kernel;
use std::cell::{Cell, RefCell};
use std::collections::BTreeSet;
use std::fmt::Write as _;
use tessera_ir::{BinOp, Expr, ScalarType, Stmt, VarKind};
use tessera_poly::{Aff, BufferKind, IntraTrip, Sym};

/// The C++ text of the kernel `name` (mode `variant`) for the lowered `tiled`.
pub(super) fn kernel(tiled: &Tiled, variant: Variant, name: &str) -> Kernel {
    Printer { k: tiled, variant, used_real: RefCell::new(BTreeSet::new()), read_outstanding: RefCell::new(vec![1; tiled.arrays.len()]) }
        .kernel(name)
}

/// Lines of C++ at an indentation depth (pragmas at column 0, as Vitis examples do).
#[derive(Default)]
pub(super) struct Code {
    pub s: String,
    pub depth: usize,
}

impl Code {
    pub fn line(&mut self, text: &str) {
        for _ in 0..self.depth {
            self.s.push_str("  ");
        }
        self.s.push_str(text);
        self.s.push('\n');
    }

    pub fn pragma(&mut self, text: &str) {
        self.s.push_str("#pragma ");
        self.s.push_str(text);
        self.s.push('\n');
    }

    /// `text {` and one level deeper.
    pub fn open(&mut self, text: &str) {
        self.line(&format!("{text} {{"));
        self.depth += 1;
    }

    /// `}` one level up.
    pub fn close(&mut self) {
        self.depth -= 1;
        self.line("}");
    }
}

/// Prints one lowered kernel (it reads the structure through `Deref`).
pub(super) struct Printer<'a> {
    k: &'a Tiled<'a>,
    variant: Variant,
    /// Loops whose real-iteration count the tile body uses.
    used_real: RefCell<BTreeSet<usize>>,
    /// Per array: the most read bursts the kernel has outstanding at once (tessera
    /// variant; the paper's blocking reads have one).
    pub(super) read_outstanding: RefCell<Vec<i64>>,
}

impl<'a> std::ops::Deref for Printer<'a> {
    type Target = Tiled<'a>;

    fn deref(&self) -> &Tiled<'a> {
        self.k
    }
}

impl Printer<'_> {
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
    pub(super) fn real(&self, x: usize) -> Range {
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
        match &self.accesses[a].target {
            Target::Buffer { buf, subscripts } => {
                let subs: String = subscripts.iter().map(|s| format!("[{}]", self.aff(s))).collect();
                format!("{}{subs}", self.bufs[*buf].name)
            }
            Target::Array { array, index } => {
                let arr = &self.arrays[*array];
                format!("tessera_nc_read<{}, {}>({}, {})", self.w, arr.elem.c_name(), arr.port, self.linear(arr, index))
            }
        }
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
            let Stmt::Assign { value, .. } = st else { unreachable!("checked in lowering") };
            let ids = &self.plan.scop.statements[s].accesses;
            let (reads, write) = ids.split_at(ids.len() - 1);
            let body = Body { g: self, reads, next: Cell::new(0), acc: None };
            // Padded iterations compute on whatever their buffer slots hold; an integer
            // division by such a value could trap, so they skip it.
            let divides = self.plan.tiling.padding && has_integer_division(value);
            let value = cpp::expr_with(value, &body);
            let line = match &self.accesses[write[0]].target {
                Target::Buffer { .. } => format!("{} = {value};", self.access(write[0])),
                Target::Array { array, index } => {
                    let arr = &self.arrays[*array];
                    format!("tessera_nc_write<{}, {}>({}, {}, {value});", self.w, arr.elem.c_name(), arr.port, self.linear(arr, index))
                }
            };
            let nc = ids.iter().any(|&a| self.accesses[a].guarded);
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
        let red = self.reds.iter().find(|r| r.var == var).expect("checked in lowering");
        let (cond, value) = match st {
            Stmt::Assign { value, .. } => (None, value),
            Stmt::If { cond, then, .. } => match then.as_slice() {
                [Stmt::Assign { value, .. }] => (Some(cond), value),
                _ => unreachable!("checked in lowering"),
            },
            _ => unreachable!("checked in lowering"),
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

    /// Emits the row loops of ship `s` and the call of the helper `how` says. Inside a
    /// pipelined loop (`pipelined`), every loop gets a constant trip count, with a guard
    /// for run-time counts.
    pub(super) fn emit(&self, code: &mut Code, s: &Ship, pipelined: bool, how: How) {
        let mut opened = 0;
        let mut ddr = Vec::new();
        let mut buf = Vec::new();
        for r in &s.rows {
            let fixed = |k: i64| {
                let at = |a: &Aff| a.substitute(&|x| matches!(x, Sym::Param(n) if *n == r.var).then(|| Aff::constant(k)));
                (at(&r.ddr), at(&r.buf))
            };
            match &r.range {
                Range::Const { lo, hi } if hi - lo == 1 => {
                    let (d, b) = fixed(*lo);
                    ddr.push(d);
                    buf.push(b);
                    continue;
                }
                Range::Const { lo, hi } => {
                    code.open(&format!("for (int {v} = {lo}; {v} < {hi}; {v}++)", v = r.var));
                    opened += 1;
                }
                Range::Var { count, max } if pipelined => {
                    code.open(&format!("for (int {v} = 0; {v} < {max}; {v}++)", v = r.var));
                    code.open(&format!("if ({} < {count})", r.var));
                    opened += 2;
                }
                Range::Var { count, .. } => {
                    code.open(&format!("for (int {v} = 0; {v} < {count}; {v}++)", v = r.var));
                    opened += 1;
                }
            }
            ddr.push(r.ddr.clone());
            buf.push(r.buf.clone());
        }
        ddr.push(s.ddr_last.clone());
        let row: String = buf.iter().map(|b| format!("[{}]", self.aff(b))).collect();
        let e = self.linear(&self.arrays[s.array], &ddr);
        let at = self.aff(&s.at);
        let (w, seg) = (s.w, s.seg);
        let (port, words, len, buffer, row_len) = (&s.port, &s.words, &s.len, &s.buffer, s.row_len);
        let line = match (s.dir, how) {
            (Dir::In, How::Blocking) => format!("tessera_ship_in<{w}, {seg}>({port}, {words}, {e}, {len}, {buffer}{row}, {at});"),
            (Dir::In, How::Request) => format!("tessera_request_in<{w}, {seg}, {row_len}>({port}, {words}, {e}, {len});"),
            (Dir::In, How::Receive) => format!("tessera_receive_in<{w}>({port}, {words}, {e}, {len}, {buffer}{row}, {at});"),
            (Dir::Out, How::Blocking) => format!("tessera_ship_out<{w}, {seg}>({port}, {e}, {len}, {buffer}{row}, {at});"),
            (Dir::Out, How::Posted { pending, pend }) => {
                format!("tessera_ship_out_posted<{w}, {seg}, {pend}>({port}, {e}, {len}, {buffer}{row}, {at}, {pending});")
            }
            (dir, how) => unreachable!("a {dir:?} ship has no {how:?} form"),
        };
        code.line(&line);
        for _ in 0..opened {
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
                .filter(|b| b.kind == BufferKind::Chunk && b.reads && self.arrays[b.array].overlap.prefetch)
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
            self.emit(code, &self.load(b, Some((keep, b.box_size[axis])), false), false, How::Request);
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
                        self.emit(code, &ahead, true, How::Request);
                        code.close();
                        self.emit(code, &this, true, How::Receive);
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
            // A size parameter counts elements, the outermost extent rows.
            let elems = match &arr.size {
                Some(size) => format!("(long){size}"),
                None => {
                    let e0 = &arr.extents[0];
                    let long_literal = e0.strip_suffix('L').is_some_and(|d| !d.is_empty() && d.chars().all(|c| c.is_ascii_digit()));
                    let mut elems = if long_literal { e0.clone() } else { format!("(long){}", paren(e0)) };
                    for e in &arr.extents[1..] {
                        let _ = write!(elems, " * {}", paren(e));
                    }
                    elems
                }
            };
            body.line(&format!("const long {} = ({elems} + {}) / {};", arr.words, self.w - 1, self.w));
        }
        let posted: Vec<&ArrayInfo> = self.arrays.iter().filter(|a| a.overlap.posted && a.overlap.pend > 0).collect();
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
            body.line(&format!("tessera_write_drain<{}>({}, {});", a.overlap.pend, a.port, a.pending));
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
            .chain(self.arrays.iter().filter_map(|a| Some(format!("long {}", a.size.as_ref()?))))
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
        for size in self.arrays.iter().filter_map(|a| a.size.as_ref()) {
            writeln!(c.s, "#pragma HLS INTERFACE mode=s_axilite port={size}").unwrap();
        }
        writeln!(c.s, "#pragma HLS INTERFACE mode=s_axilite port=return").unwrap();
        // Variables only a map clause uses are still parameters (-Wunused-parameter).
        for v in region.vars.iter().filter(|v| !crate::baseline::mentions(&body.s, &self.param(v))) {
            writeln!(c.s, "  (void){};", self.param(v)).unwrap();
        }
        // A size parameter of an array the kernel only writes.
        for size in self.arrays.iter().filter_map(|a| a.size.as_ref()).filter(|s| !crate::baseline::mentions(&body.s, s)) {
            writeln!(c.s, "  (void){size};").unwrap();
        }
        c.s.push_str(&body.s);
        writeln!(c.s, "}}").unwrap();

        Kernel {
            name: name.to_string(),
            source: c.s,
            emu_entry: self.emu_entry(name),
            write_ports: Vec::new(),
            interleave: None,
            size_params: self.size_params(),
        }
    }

    fn port_type(&self, elem: ScalarType) -> String {
        format!("hls::burst_maxi<tessera::wide_t<{}, {}>>", self.w, elem.c_name())
    }

    fn emu_entry(&self, name: &str) -> String {
        crate::emu_entry(self.region, name, &|v| match v.kind {
            VarKind::Scalar => format!("tessera::maxi<{}>", v.elem.c_name()),
            _ => self.port_type(v.elem),
        }, &[], &[], &self.size_params())
    }

    /// The variables (indices) whose arrays have a size parameter, in the signature's order.
    fn size_params(&self) -> Vec<usize> {
        self.arrays
            .iter()
            .filter(|a| a.size.is_some())
            .map(|a| self.region.vars.iter().position(|v| v.name == a.name).expect("an array of the region"))
            .collect()
    }
}

/// The leaves of a statement's right-hand side: the k-th read is the statement's k-th
/// read access (the optimizer numbers them in the printer's pre-order).
struct Body<'g> {
    g: &'g Printer<'g>,
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

