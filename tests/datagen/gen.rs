//! Random cases: ops proposed at random and kept when the [`Model`] accepts them.

use super::model::Model;
use super::{
    Arr, Body, Case, Fb, Feat, Features, Item, Ix, Kind, MapT, Op, RKind, Read, Region, Rng, Scalar, Sec, Ty, VarRef,
};

/// Generates the case of seed `id` with the features `f`.
pub fn gen_case(id: u64, f: Features) -> Case {
    let mut g = Gen { rng: Rng::new(id), f };
    let arrs = g.arrays();
    let mut m = Model::new(&arrs);
    let n = g.rng.range(3, 10) as usize;
    let ops = g.block(&mut m, &Ctx { depth: 0, in_loop: false, thr: None }, n, &|_| true);
    // From a stream of its own, so that the rest of the case does not change with it.
    let kstruct = if f.has(Feat::KStruct) { Rng::new(id ^ 0x6b73_7472_7563_7400).below(4) as u8 } else { 0 };
    let mut c = Case { id, arrs, ops, kstruct };
    // `pk->kf`: a member a pointer may reach. In a region that writes floats it is
    // read at the directive after a launch check, but in one that also calls a
    // function (which may write anything) it stays a member access that keeps the
    // region on the host with a remark; inside a parallel region such a host run
    // stops the program (its footprint is unknown), as documented.
    if c.kstruct == 3 && c.used().has(Feat::Threads) {
        c.kstruct = 2;
    }
    c
}

struct Gen {
    rng: Rng,
    f: Features,
}

#[derive(Clone)]
struct Ctx {
    depth: u32,
    in_loop: bool,
    thr: Option<TCtx>,
}

#[derive(Clone)]
struct TCtx {
    base: i64,
    len: i64,
    slices: Vec<usize>,
    picks: Vec<(usize, usize)>,
}

/// A name the generator can use, with its rows in the current view: rows
/// `[base, base + len)`; `lo_rel`: those rows are the thread's (`lo + k`).
#[derive(Clone, Copy, Debug)]
struct H {
    v: VarRef,
    base: i64,
    len: i64,
    lo_rel: bool,
    own: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum K {
    Region,
    Data,
    Enter,
    Exit,
    Update,
    HostWrite,
    Print,
    Loop,
    Threads,
}

impl Gen {
    fn has(&self, f: Feat) -> bool {
        self.f.has(f)
    }

    fn arrays(&mut self) -> Vec<Arr> {
        let mut kinds = Vec::new();
        for (f, k) in
            [(Feat::Heap, Kind::Heap), (Feat::Fixed, Kind::Fixed), (Feat::Vla2d, Kind::Vla), (Feat::Flat, Kind::Flat)]
        {
            if self.has(f) {
                kinds.push(k);
            }
        }
        if kinds.is_empty() {
            kinds.push(Kind::Heap);
        }
        let cols2 = self.rng.range(2, 16);
        let n = self.rng.range(2, 5);
        let mut arrs: Vec<Arr> = Vec::new();
        let twins = self.has(Feat::SwapLoop) || self.has(Feat::ThreadsPick);
        for _ in 0..n {
            if twins && self.rng.pct(35) {
                if let Some(prev) = arrs.last().filter(|a| a.is_ptr()).cloned() {
                    arrs.push(prev);
                    continue;
                }
            }
            let kind = *self.rng.pick(&kinds);
            let mut tys = vec![Ty::F32, Ty::F32];
            if self.has(Feat::Double) {
                tys.push(Ty::F64);
            }
            if self.has(Feat::Int) {
                tys.push(Ty::I32);
            }
            let ty = *self.rng.pick(&tys);
            let two_d = matches!(kind, Kind::Vla | Kind::Flat) || (kind == Kind::Fixed && self.rng.pct(35));
            let (rows, cols) = if two_d {
                (self.rng.range(1, 20), cols2)
            } else {
                let r = match self.rng.below(10) {
                    0 | 1 => self.rng.range(1, 7),
                    2 => self.rng.range(250, 300),
                    _ => self.rng.range(8, 300),
                };
                (r, 1)
            };
            let stat = kind == Kind::Fixed && self.has(Feat::StaticArr) && self.rng.pct(30);
            let member = matches!(kind, Kind::Heap | Kind::Flat) && self.has(Feat::Member) && self.rng.pct(40);
            let file = stat && self.has(Feat::FbGlobal) && self.rng.pct(60);
            let late = file && self.rng.pct(40);
            let aos = matches!(kind, Kind::Heap | Kind::Fixed) && !member && !file && self.has(Feat::Aos) && self.rng.pct(35);
            arrs.push(Arr { ty, kind, rows, cols, two_d, stat, member, file, late, aos });
        }
        arrs
    }

    /// Up to `n` ops valid on `work` (which they advance); `ok` checks the enclosing
    /// construct with the body so far.
    fn block(&mut self, work: &mut Model, ctx: &Ctx, n: usize, ok: &dyn Fn(&[Op]) -> bool) -> Vec<Op> {
        let mut body = Vec::new();
        for _ in 0..n {
            for _attempt in 0..30 {
                let Some(op) = self.propose(work, ctx) else {
                    continue;
                };
                let mut w2 = work.clone();
                if w2.apply(&op).is_err() {
                    continue;
                }
                body.push(op);
                if !ok(&body) {
                    body.pop();
                    continue;
                }
                *work = w2;
                break;
            }
        }
        body
    }

    fn twins(&self, m: &Model) -> Vec<(usize, usize)> {
        let mut out = Vec::new();
        for a in 0..m.nvars() {
            for b in a + 1..m.nvars() {
                let (x, y) = (m.arr(VarRef::Arr(a)), m.arr(VarRef::Arr(b)));
                if let (Some(x), Some(y)) = (x, y) {
                    if x.is_ptr() && x == y {
                        out.push((a, b));
                    }
                }
            }
        }
        out
    }

    fn propose(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let thr = ctx.thr.is_some();
        let regions = self.has(Feat::Teams) || self.has(Feat::ParFor) || self.has(Feat::PlainTarget);
        let has_dyn = (0..m.nvars()).any(|v| m.entries(VarRef::Arr(v)).iter().any(|e| e.3 > 0))
            || ctx.thr.as_ref().is_some_and(|t| !t.picks.is_empty());
        let mut choices: Vec<(K, u64)> = vec![
            (K::Region, if regions { 40 } else { 0 }),
            (K::Data, if self.has(Feat::DataRegion) && ctx.depth < 2 && !ctx.in_loop { 12 } else { 0 }),
            (K::Enter, if self.has(Feat::EnterExit) && !ctx.in_loop { 8 } else { 0 }),
            (K::Exit, if self.has(Feat::EnterExit) && !ctx.in_loop && has_dyn { 10 } else { 0 }),
            (K::Update, if self.has(Feat::Update) { 8 } else { 0 }),
            (K::HostWrite, if self.has(Feat::HostWrite) { 6 } else { 0 }),
            (K::Print, if self.has(Feat::Print) && !thr { 4 } else { 0 }),
            (
                K::Loop,
                if self.has(Feat::SwapLoop) && !thr && !ctx.in_loop && !self.twins(m).is_empty() { 6 } else { 0 },
            ),
            (
                K::Threads,
                if (self.has(Feat::Threads) || self.has(Feat::ThreadsPick)) && !thr && !ctx.in_loop && ctx.depth < 2 {
                    6
                } else {
                    0
                },
            ),
        ];
        choices.retain(|c| c.1 > 0);
        if choices.is_empty() {
            return None;
        }
        let k = choices[self.rng.weighted(&choices.iter().map(|c| c.1).collect::<Vec<_>>())].0;
        match k {
            K::Region => self.region(m, ctx),
            K::Data => self.data(m, ctx),
            K::Enter => self.enter(m, ctx),
            K::Exit => self.exit(m, ctx),
            K::Update => self.update(m, ctx),
            K::HostWrite => self.host_write(m, ctx),
            K::Print => self.print(m, ctx),
            K::Loop => self.time_loop(m, ctx),
            K::Threads => self.threads(m, ctx),
        }
    }

    /// The names usable here.
    fn handles(&mut self, m: &Model, ctx: &Ctx, interior: bool) -> Vec<H> {
        let mut hs = Vec::new();
        match &ctx.thr {
            None => {
                for v in 0..m.nvars() {
                    let a = m.arr(VarRef::Arr(v)).expect("var").clone();
                    hs.push(H { v: VarRef::Arr(v), base: 0, len: a.rows, lo_rel: false, own: true });
                    if interior && self.has(Feat::Interior) && a.kind == Kind::Heap && a.rows >= 3 && self.rng.pct(30) {
                        let k = self.rng.range(1, a.rows - 2);
                        hs.push(H { v: VarRef::Interior(v, k), base: 0, len: a.rows - k, lo_rel: false, own: true });
                    }
                }
            }
            Some(t) => {
                for (k, &(a, _)) in t.picks.iter().enumerate() {
                    let rows = m.arr(VarRef::Arr(a)).expect("var").rows;
                    hs.push(H { v: VarRef::Pick(k), base: 0, len: rows, lo_rel: false, own: true });
                }
                for v in 0..m.nvars() {
                    let picked = t.picks.iter().any(|p| p.0 == v || p.1 == v);
                    let a = m.arr(VarRef::Arr(v)).expect("var").clone();
                    if t.slices.contains(&v) {
                        hs.push(H { v: VarRef::Arr(v), base: t.base, len: t.len, lo_rel: true, own: true });
                    } else if !picked {
                        hs.push(H { v: VarRef::Arr(v), base: 0, len: a.rows, lo_rel: false, own: false });
                    }
                }
            }
        }
        hs
    }

    /// A row index in the current view: relative to `lo` when `lo_rel`.
    fn ix(&self, ctx: &Ctx, lo_rel: bool, val: i64) -> Ix {
        match (&ctx.thr, lo_rel) {
            (Some(t), true) => Ix { k: val - t.base, lo: true },
            _ => Ix::abs(val),
        }
    }

    /// A random sub-range of `[lo, hi)` (whole half of the time).
    fn sub(&mut self, lo: i64, hi: i64) -> (i64, i64) {
        if hi - lo <= 1 || self.rng.pct(45) {
            return (lo, hi);
        }
        let a = self.rng.range(lo, hi - 1);
        let b = self.rng.range(a + 1, hi);
        (a, b)
    }

    fn sec(&self, ctx: &Ctx, h: &H, lo_rel: bool, r0: i64, r1: i64, m: &Model) -> Sec {
        let a = m.arr(h.v).expect("var");
        let bare =
            a.kind == Kind::Fixed && matches!(h.v, VarRef::Arr(_)) && r0 == 0 && r1 == a.rows && !lo_rel && h.base == 0;
        Sec { v: h.v, r0: self.ix(ctx, lo_rel, r0), rlen: r1 - r0, cols: None, bare: bare && (r0 + r1) % 2 == 0 }
    }

    fn region(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let mut kinds = Vec::new();
        for (f, k) in [(Feat::Teams, RKind::Teams), (Feat::ParFor, RKind::ParFor), (Feat::PlainTarget, RKind::Target)] {
            // Not `target teams` inside `omp parallel`: the reference's libomp (LLVM 19)
            // aborts ("Assertion failure at kmp_csupport.cpp(539): th_set_nproc >= 1")
            // running such a region on the host after an earlier top-level one.
            if self.has(f) && !(k == RKind::Teams && ctx.thr.is_some()) {
                kinds.push(k);
            }
        }
        if kinds.is_empty() {
            return None;
        }
        let kind = *self.rng.pick(&kinds);
        let hs = self.handles(m, ctx, ctx.thr.is_none());
        let reduce = self.has(Feat::Reduction) && kind != RKind::Target && ctx.thr.is_none() && self.rng.pct(12);
        let own: Vec<H> = hs.iter().copied().filter(|h| h.own).collect();
        if own.is_empty() {
            return None;
        }
        let anchor = if reduce { *self.rng.pick(&hs) } else { *self.rng.pick(&own) };
        let shape = m.arr(anchor.v)?.clone();
        let compatible: Vec<H> = hs
            .iter()
            .copied()
            .filter(|h| {
                let a = m.arr(h.v).expect("var");
                a.two_d == shape.two_d && (!a.two_d || a.cols == shape.cols) && (h.lo_rel == anchor.lo_rel || !h.own)
            })
            .collect();
        let w = if reduce { None } else { Some(anchor) };
        let mut reads: Vec<(H, Read)> = Vec::new();
        let nreads = if reduce { self.rng.range(1, 2) } else { self.rng.range(0, 2) };
        for _ in 0..nreads {
            let h = *self.rng.pick(&compatible);
            if reads.iter().any(|r| r.0.v == h.v) {
                continue;
            }
            let same = Some(h.v) == w.map(|w| w.v);
            let di = if same { 0 } else { *self.rng.pick(&[0, 0, 0, -1, 1, 2]) };
            let dj = if same || !shape.two_d { 0 } else { *self.rng.pick(&[0, 0, -1, 1]) };
            reads.push((h, Read { v: h.v, di, dj }));
        }
        if reduce && reads.is_empty() {
            reads.push((anchor, Read { v: anchor.v, di: 0, dj: 0 }));
        }
        let recur =
            w.is_some() && kind == RKind::Target && self.has(Feat::Recurrence) && !shape.two_d && self.rng.pct(35);
        if recur {
            let w = w.expect("w");
            reads.push((w, Read { v: w.v, di: -1, dj: 0 }));
        }
        // Loop rows: inside the anchor's rows and every read's, shifted by its offset.
        let (mut lo, mut hi) = (anchor.base, anchor.base + anchor.len);
        for (h, r) in &reads {
            lo = lo.max(h.base - r.di);
            hi = hi.min(h.base + h.len - r.di);
        }
        if recur {
            lo += 1;
        }
        if lo >= hi {
            return None;
        }
        let (r0, r1) = self.sub(lo, hi);
        let (c0, c1) = if shape.two_d {
            let (mut a, mut b) = (0, shape.cols);
            for (_, r) in &reads {
                a = a.max(-r.dj);
                b = b.min(shape.cols - r.dj);
            }
            if a >= b {
                return None;
            }
            self.sub(a, b)
        } else {
            (0, 1)
        };
        let loop_rel = anchor.lo_rel;
        // Map clauses.
        let mut used: Vec<(H, i64, i64, bool, bool)> = Vec::new(); // handle, row lo, row hi, written, read
        for (h, r, wr) in reads.iter().map(|(h, r)| (*h, r.di, false)).chain(w.map(|w| (w, 0, true))) {
            let (a, b) = (r0 + r, r1 + r);
            match used.iter_mut().find(|u| u.0.v == h.v) {
                Some(u) => {
                    u.1 = u.1.min(a);
                    u.2 = u.2.max(b);
                    u.3 |= wr;
                    u.4 |= !wr;
                }
                None => used.push((h, a, b, wr, !wr)),
            }
        }
        let mut maps = Vec::new();
        for (h, a, b, written, read) in used {
            let arr = m.arr(h.v)?.clone();
            let present = m.present_rows(h.v, a).filter(|p| p.0 <= a && b <= p.1);
            let ptr = arr.is_ptr() || !matches!(h.v, VarRef::Arr(_));
            let no_map_ok = (ptr && present.is_some()) || (!ptr && present.is_none_or(|p| p.0 <= 0 && arr.rows <= p.1));
            let explicit = if self.has(Feat::RegionMap) {
                !(no_map_ok && self.has(Feat::Present) && self.rng.pct(55))
            } else {
                !no_map_ok
            };
            if !explicit {
                if !no_map_ok {
                    return None;
                }
                if ptr && self.has(Feat::ZeroLen) && self.rng.pct(25) && m.present_rows(h.v, 0).is_some() {
                    let t = *self.rng.pick(&[MapT::ToFrom, MapT::To, MapT::Alloc, MapT::From]);
                    maps.push(Item {
                        sec: Sec { v: h.v, r0: Ix::abs(0), rlen: 0, cols: None, bare: false },
                        t,
                        always: false,
                    });
                }
                continue;
            }
            if !self.has(Feat::RegionMap) {
                return None;
            }
            let (s0, s1) = match present {
                Some(p) if self.rng.pct(50) => (p.0.max(0), p.1.min(arr.rows)),
                _ if self.rng.pct(45) => (h.base, h.base + h.len),
                _ => (a, b),
            };
            let rel = if (s0, s1) == (h.base, h.base + h.len) { h.lo_rel } else { loop_rel };
            let no_fb = ctx.thr.is_some() && !self.has(Feat::ThreadsFb);
            let t = if written && read && no_fb {
                MapT::ToFrom // `to` on a written array: a host fallback
            } else if written && read {
                *self.rng.pick(&[MapT::ToFrom, MapT::ToFrom, MapT::ToFrom, MapT::ToFrom, MapT::ToFrom, MapT::To])
            } else if written {
                *self.rng.pick(&[MapT::From, MapT::From, MapT::ToFrom, MapT::Alloc])
            } else {
                *self.rng.pick(&[MapT::To, MapT::To, MapT::To, MapT::ToFrom])
            };
            let always = self.has(Feat::Always) && t != MapT::Alloc && self.rng.pct(15);
            maps.push(Item { sec: self.sec(ctx, &h, rel, s0, s1, m), t, always });
        }
        if self.rng.pct(50) {
            maps.reverse();
        }
        // Whether the region reads an array with property `p`.
        let reads_arr = |p: fn(&Arr) -> bool| reads.iter().any(|r| m.arr(r.1.v).is_some_and(p));
        let mut fb = None;
        if !reduce && (ctx.thr.is_none() || self.has(Feat::ThreadsFb)) {
            let mut fbs = Vec::new();
            for (f, x) in [(Feat::FbCall, Fb::Call), (Feat::FbLocal, Fb::Local), (Feat::FbStmt, Fb::Stmt), (Feat::FbOpaque, Fb::Opaque), (Feat::FbNowait, Fb::Nowait)] {
                // A region of unknown footprint inside the threads' parallel region stops
                // the program while data is mapped (tests/fatal/opaque_parallel.c).
                // Neither may one whose statements Tessera cannot represent (its host
                // run swaps whole mappings: tests/fatal/unbounded_parallel.c).
                if self.has(f) && !(ctx.thr.is_some() && matches!(x, Fb::Opaque | Fb::Call | Fb::Local | Fb::Stmt)) {
                    fbs.push(x);
                }
            }
            if self.has(Feat::FbIf) {
                fbs.push(Fb::If(true));
                fbs.push(Fb::If(false));
            }
            if !fbs.is_empty() && self.rng.pct(5 * fbs.len() as u64) {
                fb = Some(*self.rng.pick(&fbs));
            }
            // Where the region reads a file-scope array, often through its accessor.
            if fb.is_none()
                && self.has(Feat::FbGlobal)
                && reads_arr(|a| a.file)
                // A late accessor makes the footprint unknown: not inside the threads
                // (tests/fatal/opaque_parallel.c).
                && ctx.thr.is_none()
                && self.rng.pct(50)
            {
                fb = Some(Fb::Global);
            }
        }
        let late = fb == Some(Fb::Global) && reads_arr(|a| a.late);
        if fb == Some(Fb::Opaque) || late {
            // Tessera cannot make the copies of `always` for a region whose variables
            // it cannot pass: while data is mapped such a region stops the program (as
            // with an `if` clause, tests/fatal/opaque_if.c), which the differential
            // fuzzer would report.
            for m in &mut maps {
                m.always = false;
            }
        }
        let written_to = w.is_some_and(|w| maps.iter().any(|m| m.sec.v == w.v && m.t == MapT::To));
        if !self.has(Feat::AlwaysFb) && (fb == Some(Fb::Nowait) || written_to) {
            for m in &mut maps {
                m.always = false;
            }
        }
        let body = match w {
            None => Body::Reduce { reads: reads.iter().map(|r| r.1).collect() },
            Some(w) => {
                let scalar = if self.has(Feat::Scalars) && self.rng.pct(30) {
                    let mut s = vec![Scalar::Kf, Scalar::Ki];
                    if ctx.in_loop {
                        s.extend([Scalar::Step, Scalar::Step]);
                    }
                    *self.rng.pick(&s)
                } else {
                    Scalar::None
                };
                Body::Assign {
                    w: w.v,
                    reads: reads.iter().map(|r| r.1).collect(),
                    cond: self.has(Feat::Cond) && self.rng.pct(15),
                    scalar,
                    konst: self.rng.below(256) as u8,
                }
            }
        };
        // An array reduction over the written array's `tofrom` section.
        let reduce_w = self.has(Feat::ArrReduce)
            && kind != RKind::Target
            && fb != Some(Fb::Nowait)
            && matches!(&body, Body::Assign { w, .. } if maps.iter().any(|m| m.sec.v == *w && m.t == MapT::ToFrom && m.sec.rlen > 0))
            // OpenMP's reduction list items are variables or their sections, not
            // struct members, and `+` is not defined on structs.
            && matches!(&body, Body::Assign { w, .. } if m.arr(*w).is_some_and(|a| !a.member && !a.aos))
            && self.rng.pct(30);
        // Row pointers in plain assignment bodies (the fallback forms wrap the
        // assignment; an array reduction's list item is the array itself).
        let row_ptr = self.has(Feat::RowPtr)
            && matches!(body, Body::Assign { .. })
            && matches!(fb, None | Some(Fb::If(_)) | Some(Fb::Nowait))
            && !reduce_w
            && self.rng.pct(30);
        let scalar_map = if self.has(Feat::MapScalar) && matches!(body, Body::Reduce { .. }) && self.rng.pct(40) {
            self.rng.range(1, super::SCALAR_MAPS as i64) as u8
        } else {
            0
        };
        Some(Op::Region(Region {
            scalar_map,
            reduce_w,
            kind,
            maps,
            rows: (self.ix(ctx, loop_rel, r0), self.ix(ctx, loop_rel, r1)),
            cols: (c0, c1),
            two_d: shape.two_d,
            body,
            fb,
            extra: if self.has(Feat::Clauses) && self.rng.pct(20) { 1 + self.rng.below(6) as u8 } else { 0 },
            no_collapse: self.has(Feat::Clauses) && shape.two_d && kind != RKind::Target && self.rng.pct(20),
            row_ptr,
        }))
    }

    /// A section of `h` for a mapping directive: inside one of its mappings (for
    /// reference counts) or anywhere.
    fn map_rows(&mut self, m: &Model, ctx: &Ctx, h: &H, refcount: bool) -> Sec {
        let ents = m.entries(h.v);
        let (r0, r1) = if refcount && !ents.is_empty() && self.rng.pct(45) {
            let e = *self.rng.pick(&ents);
            self.sub(e.0.max(0), e.1.min(m.arr(h.v).expect("var").rows))
        } else {
            self.sub(h.base, h.base + h.len)
        };
        let rel = h.lo_rel;
        self.sec(ctx, h, rel, r0.max(0), r1, m)
    }

    fn pick_own(&mut self, m: &Model, ctx: &Ctx, n: usize) -> Vec<H> {
        let mut own: Vec<H> = self.handles(m, ctx, false).into_iter().filter(|h| h.own).collect();
        let mut out = Vec::new();
        for _ in 0..n {
            if own.is_empty() {
                break;
            }
            let i = self.rng.below(own.len() as u64) as usize;
            out.push(own.remove(i));
        }
        out
    }

    fn data(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let n = self.rng.range(1, 3) as usize;
        let mut items = Vec::new();
        for h in self.pick_own(m, ctx, n) {
            let sec = self.map_rows(m, ctx, &h, self.has(Feat::RefCount));
            let t = [MapT::To, MapT::From, MapT::ToFrom, MapT::Alloc][self.rng.weighted(&[3, 2, 4, 2])];
            let always = self.has(Feat::Always) && t != MapT::Alloc && self.rng.pct(12);
            items.push(Item { sec, t, always });
        }
        let cond = (self.has(Feat::DataIf) && self.rng.pct(15)).then(|| self.rng.pct(50));
        let mut work = m.clone();
        work.open_data(&items, cond).ok()?;
        let inner = Ctx { depth: ctx.depth + 1, ..ctx.clone() };
        let n = self.rng.range(1, 4) as usize;
        let pre = m.clone();
        let body = {
            let (items, cond) = (items.clone(), cond);
            self.block(&mut work, &inner, n, &|body: &[Op]| {
                pre.clone().apply(&Op::Data { items: items.clone(), cond, body: body.to_vec() }).is_ok()
            })
        };
        Some(Op::Data { items, cond, body })
    }

    fn nowait(&mut self) -> bool {
        self.has(Feat::DataNowait) && self.rng.pct(12)
    }

    fn enter(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let n = self.rng.range(1, 2) as usize;
        let mut items = Vec::new();
        for h in self.pick_own(m, ctx, n) {
            let sec = self.map_rows(m, ctx, &h, self.has(Feat::RefCount));
            let (t, always) = match self.rng.below(10) {
                0 if self.has(Feat::Always) => (MapT::To, true),
                0..=2 => (MapT::Alloc, false),
                _ => (MapT::To, false),
            };
            items.push(Item { sec, t, always });
        }
        let nowait = self.nowait();
        Some(Op::Enter { items, nowait })
    }

    fn exit(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let cands: Vec<H> = self
            .handles(m, ctx, false)
            .into_iter()
            .filter(|h| h.own && m.entries(h.v).iter().any(|e| e.3 > 0 && e.4))
            .collect();
        if cands.is_empty() {
            return None;
        }
        let mut items = Vec::new();
        let n = self.rng.range(1, 2);
        let mut cands = cands;
        for _ in 0..n {
            if cands.is_empty() {
                break;
            }
            let h = cands.remove(self.rng.below(cands.len() as u64) as usize);
            let ents: Vec<_> = m.entries(h.v).into_iter().filter(|e| e.3 > 0 && e.4).collect();
            let e = *self.rng.pick(&ents);
            let (r0, r1) = if self.has(Feat::ExitSub) && self.rng.pct(25) { self.sub(e.0, e.1) } else { (e.0, e.1) };
            let (t, always) = match self.rng.below(20) {
                0 | 1 if self.has(Feat::Always) => (MapT::From, true),
                2..=6 => (MapT::Release, false),
                7..=10 if e.2 == 0 => (MapT::Delete, false),
                _ => (MapT::From, false),
            };
            // Rows of an entry are absolute in the thread's view; express them
            // relative to lo for the thread's slices.
            let rel = h.lo_rel;
            items.push(Item { sec: self.sec(ctx, &h, rel, r0, r1, m), t, always });
        }
        let nowait = self.nowait();
        Some(Op::Exit { items, nowait })
    }

    fn update(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let hs: Vec<H> = self.handles(m, ctx, false).into_iter().filter(|h| h.own).collect();
        let mapped: Vec<H> = hs.iter().copied().filter(|h| !m.entries(h.v).is_empty()).collect();
        let n = self.rng.range(1, 2);
        let mut motions: Vec<(bool, Sec, bool)> = Vec::new();
        for _ in 0..n {
            let (h, r0, r1, present) = if !mapped.is_empty() && self.rng.pct(85) {
                let h = *self.rng.pick(&mapped);
                let e = *self.rng.pick(&m.entries(h.v));
                let (a, b) = (e.0.max(h.base), e.1.min(h.base + h.len));
                if a >= b {
                    return None;
                }
                let (r0, r1) = self.sub(a, b);
                // Inside one entry: the `present` modifier holds.
                (h, r0, r1, self.has(Feat::PresentMod) && self.rng.pct(30))
            } else {
                let h = *self.rng.pick(&hs);
                let (r0, r1) = self.sub(h.base, h.base + h.len);
                (h, r0, r1, false)
            };
            if motions.iter().any(|x| x.1.v == h.v) {
                continue;
            }
            let arr = m.arr(h.v)?.clone();
            let mut sec = self.sec(ctx, &h, h.lo_rel, r0, r1, m);
            sec.bare = false;
            if arr.two_d && arr.kind != Kind::Flat && self.has(Feat::UpdateBox) && self.rng.pct(35) {
                let (c0, c1) = self.sub(0, arr.cols);
                sec.cols = Some((c0, c1 - c0));
            }
            let (hv, dv) = m.valid_counts(h.v, r0, r1);
            let to = if dv > hv { self.rng.pct(20) } else { self.rng.pct(80) };
            motions.push((to, sec, present));
        }
        let nowait = self.nowait();
        Some(Op::Update { motions, nowait })
    }

    fn host_write(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let h = *self.pick_own(m, ctx, 1).first()?;
        let arr = m.arr(h.v)?.clone();
        let (r0, r1) = self.sub(h.base, h.base + h.len);
        let cols = if arr.two_d { self.sub(0, arr.cols) } else { (0, 1) };
        Some(Op::HostWrite {
            v: h.v,
            rows: (self.ix(ctx, h.lo_rel, r0), self.ix(ctx, h.lo_rel, r1)),
            cols,
            self_read: self.rng.pct(50),
            salt: self.rng.below(256) as u8,
        })
    }

    fn print(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let hs: Vec<H> = self.handles(m, ctx, false);
        let h = *self.rng.pick(&hs);
        let runs = m.host_valid_rows(h.v);
        if runs.is_empty() {
            return None;
        }
        let run = *self.rng.pick(&runs);
        let (r0, r1) = self.sub(run.0, run.1);
        Some(Op::Print { v: h.v, rows: (Ix::abs(r0), Ix::abs(r1)) })
    }

    fn time_loop(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let twins = self.twins(m);
        let (a, b) = *self.rng.pick(&twins);
        let rows = m.arr(VarRef::Arr(a))?.rows;
        let whole = |v: usize| m.present_rows(VarRef::Arr(v), 0).is_some_and(|p| p.0 <= 0 && p.1 >= rows);
        let mut work = m.clone();
        let mut items = Vec::new();
        if !(whole(a) && whole(b)) {
            if !self.has(Feat::DataRegion) {
                return None;
            }
            for (v, ts) in [(a, [MapT::ToFrom, MapT::To]), (b, [MapT::ToFrom, MapT::Alloc])] {
                if whole(v) {
                    continue;
                }
                let t = *self.rng.pick(&ts);
                let sec = Sec { v: VarRef::Arr(v), r0: Ix::abs(0), rlen: rows, cols: None, bare: false };
                items.push(Item { sec, t, always: false });
            }
            work.open_data(&items, None).ok()?;
        }
        let steps = self.rng.range(2, 5);
        let inner = Ctx { depth: ctx.depth + 1, in_loop: true, thr: None };
        let pre = work.clone();
        let n = self.rng.range(1, 3) as usize;
        let body = self.block(&mut work, &inner, n, &|body: &[Op]| {
            pre.clone().apply(&Op::Loop { steps, a, b, body: body.to_vec() }).is_ok()
        });
        if body.is_empty() {
            return None;
        }
        let lp = Op::Loop { steps, a, b, body };
        Some(if items.is_empty() { lp } else { Op::Data { items, cond: None, body: vec![lp] } })
    }

    fn threads(&mut self, m: &Model, ctx: &Ctx) -> Option<Op> {
        let mut slices = Vec::new();
        let (mut base, mut len) = (0, 0);
        if self.has(Feat::Threads) && (self.rng.pct(75) || !self.has(Feat::ThreadsPick)) {
            let cands: Vec<usize> =
                (0..m.nvars()).filter(|v| m.arr(VarRef::Arr(*v)).is_some_and(|a| a.rows >= 2)).collect();
            if cands.is_empty() {
                return None;
            }
            let first = *self.rng.pick(&cands);
            slices.push(first);
            if self.rng.pct(40) {
                let second = *self.rng.pick(&cands);
                if second != first {
                    slices.push(second);
                }
            }
            let min_rows = slices.iter().map(|v| m.arr(VarRef::Arr(*v)).expect("var").rows).min()?;
            len = self.rng.range(1, min_rows / 2);
            base = self.rng.range(0, min_rows - 2 * len);
        }
        let mut picks = Vec::new();
        if self.has(Feat::ThreadsPick) && (slices.is_empty() || self.rng.pct(30)) {
            let twins: Vec<(usize, usize)> =
                self.twins(m).into_iter().filter(|(a, b)| !slices.contains(a) && !slices.contains(b)).collect();
            if !twins.is_empty() {
                picks.push(*self.rng.pick(&twins));
            }
        }
        if slices.is_empty() && picks.is_empty() {
            return None;
        }
        if slices.is_empty() {
            len = 1;
        }
        // Half of the time the threads share present data: a `target data` around the
        // construct maps the sliced and picked arrays whole.
        let mut outer = m.clone();
        let mut items = Vec::new();
        if self.has(Feat::DataRegion) && self.rng.pct(50) {
            let vars: Vec<usize> = slices.iter().copied().chain(picks.iter().flat_map(|p| [p.0, p.1])).collect();
            for v in vars {
                let rows = m.arr(VarRef::Arr(v))?.rows;
                if !m.entries(VarRef::Arr(v)).is_empty() {
                    continue;
                }
                let t = *self.rng.pick(&[MapT::ToFrom, MapT::ToFrom, MapT::To, MapT::Alloc]);
                items.push(Item {
                    sec: Sec { v: VarRef::Arr(v), r0: Ix::abs(0), rlen: rows, cols: None, bare: false },
                    t,
                    always: false,
                });
            }
            if !items.is_empty() {
                outer.open_data(&items, None).ok()?;
            }
        }
        let m = &outer;
        let mut work = m.enter_threads(base, len, &slices, &picks, 0).ok()?;
        let inner = Ctx {
            depth: ctx.depth + 1,
            in_loop: false,
            thr: Some(TCtx { base, len, slices: slices.clone(), picks: picks.clone() }),
        };
        let n = self.rng.range(1, 4) as usize;
        let pre = m.clone();
        let body = {
            let (slices, picks) = (slices.clone(), picks.clone());
            self.block(&mut work, &inner, n, &|body: &[Op]| {
                pre.clone()
                    .apply(&Op::Threads {
                        base,
                        len,
                        slices: slices.clone(),
                        picks: picks.clone(),
                        body: body.to_vec(),
                    })
                    .is_ok()
            })
        };
        if body.is_empty() {
            return None;
        }
        let th = Op::Threads { base, len, slices, picks, body };
        Some(if items.is_empty() { th } else { Op::Data { items, cond: None, body: vec![th] } })
    }
}
