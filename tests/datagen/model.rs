//! The validity model: which copy of every element holds the value the program
//! means, and the present table (OpenMP 5.1 reference counts).
//!
//! Per array element, `host` says the host copy equals the value a shared-memory run
//! (the reference) has there, and `dev` says the same of the device copy (meaningful
//! while the element is mapped). Host writes make the device copy stale, device
//! writes the host copy; copies move validity; removing a mapping without a copy
//! back loses what only the device had. A read of a stale copy is invalid: the
//! outputs of a discrete device and of shared memory could differ.
//!
//! Inside a threads construct, thread `t` owns its rows of the sliced arrays and its
//! picked array: it may write, copy and map only what it owns, read what it owns or
//! what no thread owns, and remove only mappings it created. The two threads are
//! simulated one after the other; with these rules every interleaving gives the
//! same state.

use super::{Arr, Body, Fb, Item, Ix, Kind, MapT, Op, RKind, Region, Scalar, Sec, VarRef};

/// Why an op is invalid.
pub type Invalid = String;
type R<T = ()> = Result<T, Invalid>;

#[derive(Clone, Debug)]
struct Ent {
    lo: usize,
    hi: usize,
    /// Structured reference count (`target data`, target regions).
    s: u32,
    /// Dynamic reference count (`enter`/`exit data`).
    d: u32,
    /// The thread that created it inside a threads construct.
    owner: Option<usize>,
}

#[derive(Clone, Debug)]
struct Store {
    host: Vec<bool>,
    dev: Vec<bool>,
    ents: Vec<Ent>,
}

enum Look {
    In(usize),
    Out,
    Partial,
}

#[derive(Clone, Debug)]
struct Own {
    st: usize,
    lo: usize,
    hi: usize,
    t: usize,
}

/// A mapping opened by a `target data` (closed with the storage and span it opened).
#[derive(Clone, Debug)]
pub struct Opened {
    st: usize,
    lo: usize,
    hi: usize,
    t: MapT,
    always: bool,
}

/// What the end of a case must do: remove a dynamic mapping of `var` rows
/// `[r0, r1)`, fetching it first when `fetch`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cleanup {
    /// Variable.
    pub var: usize,
    /// First row.
    pub r0: i64,
    /// End row.
    pub r1: i64,
    /// `target update from` first.
    pub fetch: bool,
}

/// The model state.
#[derive(Clone, Debug)]
pub struct Model {
    arrs: Vec<Arr>,
    /// Variable → storage (pointer swaps permute it).
    vars: Vec<usize>,
    st: Vec<Store>,
    picks: Vec<(usize, usize)>,
    lo: Option<i64>,
    t: usize,
    own: Option<Vec<Own>>,
    loops: u32,
    /// A mapping was entered while present (reference count above 1).
    pub saw_refcount: bool,
    /// An exit named part of a mapping.
    pub saw_exit_sub: bool,
}

impl Model {
    /// Every array host-valid and unmapped.
    pub fn new(arrs: &[Arr]) -> Model {
        Model {
            arrs: arrs.to_vec(),
            vars: (0..arrs.len()).collect(),
            st: arrs
                .iter()
                .map(|a| {
                    let n = (a.rows * a.cols) as usize;
                    Store { host: vec![true; n], dev: vec![false; n], ents: Vec::new() }
                })
                .collect(),
            picks: Vec::new(),
            lo: None,
            t: 0,
            own: None,
            loops: 0,
            saw_refcount: false,
            saw_exit_sub: false,
        }
    }

    /// Whether `ops` enter present data and exit parts of mappings (for
    /// [`super::Case::used`]).
    pub fn refcount_usage(mut self, ops: &[Op]) -> (bool, bool) {
        let _ = self.apply_all(ops);
        (self.saw_refcount, self.saw_exit_sub)
    }

    fn arr_of_st(&self, st: usize) -> &Arr {
        &self.arrs[st]
    }

    /// The storage a variable reference names and its row offset.
    fn storage(&self, v: VarRef) -> R<(usize, i64)> {
        match v {
            VarRef::Arr(i) => self.vars.get(i).map(|s| (*s, 0)).ok_or_else(|| format!("no variable {i}")),
            VarRef::Interior(i, k) => {
                let st = *self.vars.get(i).ok_or_else(|| format!("no variable {i}"))?;
                let a = self.arr_of_st(st);
                if a.kind != Kind::Heap || a.two_d || k < 0 || k > a.rows {
                    return Err(format!("bad interior pointer p{i} + {k}"));
                }
                Ok((st, k))
            }
            VarRef::Pick(k) => {
                if self.lo.is_none() {
                    return Err("mine outside a threads construct".into());
                }
                let (a, b) = *self.picks.get(k).ok_or_else(|| format!("no pick {k}"))?;
                Ok((self.vars[if self.t == 0 { a } else { b }], 0))
            }
        }
    }

    fn ix(&self, x: Ix) -> R<i64> {
        if x.lo {
            self.lo.map(|lo| lo + x.k).ok_or_else(|| "lo outside a threads construct".into())
        } else {
            Ok(x.k)
        }
    }

    /// Storage and element ranges of a section.
    fn sec_ranges(&self, s: &Sec) -> R<(usize, Vec<(usize, usize)>)> {
        let (st, off) = self.storage(s.v)?;
        let a = self.arr_of_st(st);
        let r0 = self.ix(s.r0)? + off;
        if s.rlen < 1 || r0 < 0 || r0 + s.rlen > a.rows {
            return Err(format!("section rows {r0}+{} outside 0..{}", s.rlen, a.rows));
        }
        if s.bare && !(a.kind == Kind::Fixed && r0 == 0 && s.rlen == a.rows && s.cols.is_none()) {
            return Err("bare list item that is not a whole fixed array".into());
        }
        let c = a.cols;
        match s.cols {
            None => Ok((st, vec![((r0 * c) as usize, ((r0 + s.rlen) * c) as usize)])),
            Some((c0, cl)) => {
                if !a.two_d || a.kind == Kind::Flat || cl < 1 || c0 < 0 || c0 + cl > c {
                    return Err("bad column box".into());
                }
                if c0 == 0 && cl == c {
                    return Ok((st, vec![((r0 * c) as usize, ((r0 + s.rlen) * c) as usize)]));
                }
                Ok((st, (r0..r0 + s.rlen).map(|r| ((r * c + c0) as usize, (r * c + c0 + cl) as usize)).collect()))
            }
        }
    }

    /// Storage and contiguous element span of a map list item.
    fn item_span(&self, s: &Sec) -> R<(usize, usize, usize)> {
        if s.cols.is_some() {
            return Err("map list items are whole rows".into());
        }
        let (st, r) = self.sec_ranges(s)?;
        Ok((st, r[0].0, r[0].1))
    }

    fn look(&self, st: usize, lo: usize, hi: usize) -> Look {
        let mut found = Look::Out;
        for (i, e) in self.st[st].ents.iter().enumerate() {
            if lo >= e.lo && hi <= e.hi {
                return Look::In(i);
            }
            if lo < e.hi && e.lo < hi {
                found = Look::Partial;
            }
        }
        found
    }

    fn owner_of(&self, st: usize, e: usize) -> Option<usize> {
        self.own.as_ref()?.iter().find(|o| o.st == st && o.lo <= e && e < o.hi).map(|o| o.t)
    }

    fn touch(&self, st: usize, lo: usize, hi: usize) -> R {
        if self.own.is_none() {
            return Ok(());
        }
        for e in lo..hi {
            if self.owner_of(st, e) != Some(self.t) {
                return Err(format!("thread {} changes element {e} of storage {st} it does not own", self.t));
            }
        }
        Ok(())
    }

    fn unowned(&self, st: usize, lo: usize, hi: usize) -> bool {
        (lo..hi).all(|e| self.owner_of(st, e).is_none())
    }

    fn can_read(&self, st: usize, e: usize) -> R {
        if self.own.is_some() {
            match self.owner_of(st, e) {
                None => {}
                Some(t) if t == self.t => {}
                Some(_) => {
                    return Err(format!("thread {} reads element {e} of storage {st} the other thread owns", self.t))
                }
            }
        }
        Ok(())
    }

    fn h2d(&mut self, st: usize, lo: usize, hi: usize, check: bool) -> R {
        if check {
            self.touch(st, lo, hi)?;
        }
        let s = &mut self.st[st];
        for e in lo..hi {
            s.dev[e] = s.host[e];
        }
        Ok(())
    }

    fn d2h(&mut self, st: usize, lo: usize, hi: usize) -> R {
        self.touch(st, lo, hi)?;
        let s = &mut self.st[st];
        for e in lo..hi {
            s.host[e] = s.dev[e];
        }
        Ok(())
    }

    /// Maps `[lo, hi)` of storage `st`: a reference count more on the mapping that
    /// contains it, or a new mapping. `temp`: a target region's own map clause.
    #[allow(clippy::too_many_arguments)]
    fn open(&mut self, st: usize, lo: usize, hi: usize, t: MapT, always: bool, structured: bool, temp: bool) -> R {
        match self.look(st, lo, hi) {
            Look::Partial => Err(format!("storage {st} [{lo},{hi}) partially overlaps a mapping")),
            Look::In(i) => {
                if !temp {
                    self.saw_refcount = true;
                }
                let e = &mut self.st[st].ents[i];
                if structured {
                    e.s += 1
                } else {
                    e.d += 1
                }
                if always && t.copies_in() {
                    self.h2d(st, lo, hi, true)?;
                }
                Ok(())
            }
            Look::Out => {
                let mut check = true;
                if self.own.is_some() {
                    let mine = self.touch(st, lo, hi).is_ok();
                    let shared_read = temp && t == MapT::To && !always && self.unowned(st, lo, hi);
                    if !mine && !shared_read {
                        return Err(format!("thread {} maps storage {st} [{lo},{hi}) it does not own", self.t));
                    }
                    check = mine;
                }
                let owner = self.own.as_ref().map(|_| self.t);
                self.st[st].ents.push(Ent { lo, hi, s: structured as u32, d: (!structured) as u32, owner });
                match t {
                    MapT::To | MapT::ToFrom => self.h2d(st, lo, hi, check)?,
                    MapT::From | MapT::Alloc => {
                        for e in lo..hi {
                            self.st[st].dev[e] = false;
                        }
                    }
                    MapT::Release | MapT::Delete => return Err("release/delete map on entry".into()),
                }
                Ok(())
            }
        }
    }

    /// Unmaps `[lo, hi)`: one reference count less (all dynamic ones for `delete`);
    /// copies back at zero (or with `always`) for `from`/`tofrom`.
    fn close(&mut self, st: usize, lo: usize, hi: usize, t: MapT, always: bool, structured: bool) -> R {
        let Look::In(i) = self.look(st, lo, hi) else {
            return Err(format!("storage {st} [{lo},{hi}) is not mapped at its exit"));
        };
        let in_thread = self.own.is_some();
        let me = self.t;
        let e = &mut self.st[st].ents[i];
        if !structured {
            if e.d == 0 {
                return Err("exit of a mapping without a dynamic reference count".into());
            }
            if in_thread && e.owner != Some(me) {
                return Err("a thread exits a mapping it did not create".into());
            }
            if t == MapT::Delete && e.s > 0 {
                return Err("delete of a mapping a structured construct holds".into());
            }
            if (lo, hi) != (e.lo, e.hi) {
                self.saw_exit_sub = true;
            }
        }
        let e = &mut self.st[st].ents[i];
        match (structured, t) {
            (true, _) => e.s -= 1,
            (false, MapT::Delete) => e.d = 0,
            (false, _) => e.d -= 1,
        }
        let zero = e.s + e.d == 0;
        let owner = e.owner;
        if zero && in_thread && owner != Some(me) {
            return Err("a thread removes a mapping it did not create".into());
        }
        if t.copies_out() && (zero || always) {
            self.d2h(st, lo, hi)?;
        }
        if zero {
            self.st[st].ents.remove(i);
        }
        Ok(())
    }

    /// Applies ops in order.
    pub fn apply_all(&mut self, ops: &[Op]) -> R {
        ops.iter().try_for_each(|o| self.apply(o))
    }

    /// Applies one op, or says why it is invalid (the state is then unspecified).
    pub fn apply(&mut self, op: &Op) -> R {
        match op {
            Op::Region(r) => self.region(r),
            Op::Data { items, cond, body } => {
                let opened = self.open_data(items, *cond)?;
                self.apply_all(body)?;
                self.close_data(&opened)
            }
            Op::Enter { items, .. } => {
                self.distinct(items.iter().map(|i| &i.sec))?;
                for it in items {
                    if !matches!(it.t, MapT::To | MapT::Alloc) || (it.always && it.t != MapT::To) {
                        return Err("enter data maps to or alloc".into());
                    }
                    let (st, lo, hi) = self.item_span(&it.sec)?;
                    self.open(st, lo, hi, it.t, it.always, false, false)?;
                }
                Ok(())
            }
            Op::Exit { items, .. } => {
                self.distinct(items.iter().map(|i| &i.sec))?;
                for it in items {
                    if !matches!(it.t, MapT::From | MapT::Release | MapT::Delete) || (it.always && it.t != MapT::From) {
                        return Err("exit data maps from, release or delete".into());
                    }
                    let (st, lo, hi) = self.item_span(&it.sec)?;
                    self.close(st, lo, hi, it.t, it.always, false)?;
                }
                Ok(())
            }
            Op::Update { motions, .. } => {
                if motions.is_empty() {
                    return Err("empty update".into());
                }
                self.distinct(motions.iter().map(|m| &m.1))?;
                for (to, s, present) in motions {
                    let (st, ranges) = self.sec_ranges(s)?;
                    let (lo, hi) = (ranges[0].0, ranges[ranges.len() - 1].1);
                    match self.look(st, lo, hi) {
                        Look::Partial => return Err("update of a section partly mapped".into()),
                        Look::Out if *present => return Err("update(present: …) of data not on the device".into()),
                        Look::Out => {}
                        Look::In(_) => {
                            for (a, b) in ranges {
                                if *to {
                                    self.h2d(st, a, b, true)?
                                } else {
                                    self.d2h(st, a, b)?
                                }
                            }
                        }
                    }
                }
                Ok(())
            }
            Op::HostWrite { v, rows, cols, self_read, .. } => {
                let (st, off) = self.storage(*v)?;
                let a = self.arr_of_st(st).clone();
                let (r0, r1) = (self.ix(rows.0)? + off, self.ix(rows.1)? + off);
                let (c0, c1) = *cols;
                if r0 < 0 || r1 > a.rows || r0 >= r1 || c0 < 0 || c1 > a.cols || c0 >= c1 {
                    return Err("host write out of bounds".into());
                }
                for r in r0..r1 {
                    for c in c0..c1 {
                        let e = (r * a.cols + c) as usize;
                        if *self_read {
                            self.can_read(st, e)?;
                            if !self.st[st].host[e] {
                                return Err(format!("host reads stale element {e} of storage {st}"));
                            }
                        }
                        self.touch(st, e, e + 1)?;
                        self.st[st].host[e] = true;
                        self.st[st].dev[e] = false;
                    }
                }
                Ok(())
            }
            Op::Print { v, rows } => {
                if self.own.is_some() {
                    return Err("print inside a threads construct".into());
                }
                let (st, off) = self.storage(*v)?;
                let a = self.arr_of_st(st).clone();
                let (r0, r1) = (self.ix(rows.0)? + off, self.ix(rows.1)? + off);
                if r0 < 0 || r1 > a.rows || r0 >= r1 {
                    return Err("print out of bounds".into());
                }
                let (lo, hi) = ((r0 * a.cols) as usize, (r1 * a.cols) as usize);
                if self.st[st].host[lo..hi].iter().all(|h| *h) {
                    Ok(())
                } else {
                    Err("print of stale host data".into())
                }
            }
            Op::Loop { steps, a, b, body } => {
                if self.own.is_some() || self.loops > 0 {
                    return Err("time loop inside a threads construct or a time loop".into());
                }
                let (x, y) = (self.arrs.get(*a).ok_or("no var")?, self.arrs.get(*b).ok_or("no var")?);
                if a == b || !x.is_ptr() || x != y || *steps < 1 {
                    return Err("swapped pointers must be two distinct twins".into());
                }
                self.loops += 1;
                for _ in 0..*steps {
                    self.apply_all(body)?;
                    self.vars.swap(*a, *b);
                }
                self.loops -= 1;
                Ok(())
            }
            Op::Threads { base, len, slices, picks, body } => {
                let saved = self.clone();
                let mut m = self.enter_threads(*base, *len, slices, picks, 0)?;
                m.apply_all(body)?;
                m.t = 1;
                m.lo = Some(base + len);
                m.apply_all(body)?;
                *self = m;
                self.lo = saved.lo;
                self.own = None;
                self.picks.clear();
                self.t = 0;
                for s in &mut self.st {
                    for e in &mut s.ents {
                        e.owner = None;
                    }
                }
                Ok(())
            }
        }
    }

    /// The model inside a threads construct, as thread `t` sees it at its start.
    pub fn enter_threads(&self, base: i64, len: i64, slices: &[usize], picks: &[(usize, usize)], t: usize) -> R<Model> {
        if self.own.is_some() || self.loops > 0 {
            return Err("threads construct inside a threads construct or a time loop".into());
        }
        if len < 1 || base < 0 || (slices.is_empty() && picks.is_empty()) {
            return Err("empty threads construct".into());
        }
        let mut vars_used: Vec<usize> = slices.to_vec();
        let mut own = Vec::new();
        for &v in slices {
            let st = *self.vars.get(v).ok_or("no var")?;
            let a = self.arr_of_st(st);
            if base + 2 * len > a.rows {
                return Err("slice beyond the array".into());
            }
            for tt in 0..2 {
                let r0 = base + tt as i64 * len;
                own.push(Own { st, lo: (r0 * a.cols) as usize, hi: ((r0 + len) * a.cols) as usize, t: tt });
            }
        }
        for &(a, b) in picks {
            let (x, y) = (self.arrs.get(a).ok_or("no var")?, self.arrs.get(b).ok_or("no var")?);
            if a == b || !x.is_ptr() || x != y {
                return Err("picked pointers must be two distinct twins".into());
            }
            vars_used.extend([a, b]);
            for (tt, v) in [a, b].into_iter().enumerate() {
                let st = self.vars[v];
                own.push(Own { st, lo: 0, hi: (x.rows * x.cols) as usize, t: tt });
            }
        }
        let mut sorted = vars_used.clone();
        sorted.sort();
        sorted.dedup();
        if sorted.len() != vars_used.len() {
            return Err("a variable is sliced or picked twice".into());
        }
        let mut m = self.clone();
        m.own = Some(own);
        m.picks = picks.to_vec();
        m.t = t;
        m.lo = Some(base + t as i64 * len);
        Ok(m)
    }

    fn distinct<'a>(&self, secs: impl Iterator<Item = &'a Sec>) -> R {
        let mut seen = Vec::new();
        for s in secs {
            let (st, _) = self.storage(s.v)?;
            if seen.contains(&st) {
                return Err("one array twice in a directive".into());
            }
            seen.push(st);
        }
        Ok(())
    }

    /// Opens the mappings of a `target data` (none when its `if` is false).
    pub fn open_data(&mut self, items: &[Item], cond: Option<bool>) -> R<Vec<Opened>> {
        if items.is_empty() {
            return Err("target data without map clauses".into());
        }
        self.distinct(items.iter().map(|i| &i.sec))?;
        let mut out = Vec::new();
        for it in items {
            if !matches!(it.t, MapT::To | MapT::From | MapT::ToFrom | MapT::Alloc) || (it.always && it.t == MapT::Alloc)
            {
                return Err("bad map type on target data".into());
            }
            let (st, lo, hi) = self.item_span(&it.sec)?;
            if cond != Some(false) {
                self.open(st, lo, hi, it.t, it.always, true, false)?;
                out.push(Opened { st, lo, hi, t: it.t, always: it.always });
            }
        }
        Ok(out)
    }

    /// Closes what [`Model::open_data`] opened.
    pub fn close_data(&mut self, opened: &[Opened]) -> R {
        for o in opened.iter().rev() {
            self.close(o.st, o.lo, o.hi, o.t, o.always, true)?;
        }
        Ok(())
    }

    fn region(&mut self, r: &Region) -> R {
        let (w, reads, reduce) = match &r.body {
            Body::Assign { w, reads, scalar, .. } => {
                if *scalar == Scalar::Step && self.loops == 0 {
                    return Err("step scalar outside a time loop".into());
                }
                (Some(*w), reads.as_slice(), false)
            }
            Body::Reduce { reads } => {
                if self.own.is_some() {
                    return Err("reduction (printed) inside a threads construct".into());
                }
                if r.kind == RKind::Target || reads.is_empty() {
                    return Err("reduction needs a loop construct and a read".into());
                }
                (None, reads.as_slice(), true)
            }
        };
        if reduce && r.fb.is_some() {
            return Err("reduction with a fallback trigger".into());
        }
        // An array reduction names the section of the written array's `tofrom` map
        // item, on a loop construct (the target construct alone takes no reduction).
        if r.reduce_w && (r.kind == RKind::Target || !w.is_some_and(|w| r.maps.iter().any(|m| m.sec.v == w && m.t == MapT::ToFrom && m.sec.rlen > 0))) {
            return Err("array reduction without a loop construct or a tofrom map of the written array".into());
        }
        if r.reduce_w && r.fb == Some(Fb::Nowait) {
            // The reference's libomp (LLVM 19) hangs on a host `target teams distribute
            // parallel for nowait` with an array-section reduction: not a valid test.
            return Err("array reduction on a nowait region".into());
        }
        // Races: in a parallel loop, the written array is read only at the written element.
        for rd in reads {
            if Some(rd.v) == w && (rd.di != 0 || rd.dj != 0) && (r.kind != RKind::Target || rd.dj != 0 || rd.di > 0) {
                return Err("written array read at another element".into());
            }
        }
        let (r0, r1) = (self.ix(r.rows.0)?, self.ix(r.rows.1)?);
        let (c0, c1) = r.cols;
        if r0 >= r1 || c0 >= c1 || (!r.two_d && (c0, c1) != (0, 1)) {
            return Err("empty loop".into());
        }
        // The variables the body names, each with its storage and row offset.
        let mut used: Vec<(VarRef, usize, i64)> = Vec::new();
        for v in reads.iter().map(|x| x.v).chain(w) {
            if used.iter().any(|u| u.0 == v) {
                continue;
            }
            let (st, off) = self.storage(v)?;
            if used.iter().any(|u| u.1 == st) {
                return Err("two names of one array in a region".into());
            }
            let a = self.arr_of_st(st);
            if a.two_d != r.two_d || (r.two_d && c1 > a.cols) {
                return Err("array shape does not fit the loop nest".into());
            }
            used.push((v, st, off));
        }
        if r.kind == RKind::Teams && self.own.is_some() {
            // The reference's libomp (LLVM 19) aborts on a host `target teams` inside
            // `omp parallel` after an earlier top-level one: not a valid test.
            return Err("target teams inside a threads construct".into());
        }
        // Map clauses (also checked when `if` is false: valid either way). A
        // zero-length section `p[0:0]` only names the mapping `p` points into, which
        // must exist (as for a pointer without map clause).
        self.distinct(r.maps.iter().map(|i| &i.sec))?;
        let (zero, maps): (Vec<&Item>, Vec<&Item>) = r.maps.iter().partition(|i| i.sec.rlen == 0);
        let mut zero_bounds: Vec<(usize, usize, usize)> = Vec::new();
        for it in zero {
            let (st, off) = self.storage(it.sec.v)?;
            let a = self.arr_of_st(st);
            if !a.is_ptr() || it.sec.cols.is_some() || it.sec.bare || it.always || self.ix(it.sec.r0)? != 0 {
                return Err("zero-length sections are p[0:0] of pointers".into());
            }
            if !used.iter().any(|u| u.0 == it.sec.v) {
                return Err("zero-length section of an array the body does not use".into());
            }
            let e0 = (off * a.cols) as usize;
            let ent = self.st[st].ents.iter().find(|e| e.lo <= e0 && e0 < e.hi);
            let Some(ent) = ent else { return Err("zero-length section of data that is not present".into()) };
            zero_bounds.push((st, ent.lo, ent.hi));
        }
        for it in &maps {
            let (st, lo, hi) = self.item_span(&it.sec)?;
            if matches!(self.look(st, lo, hi), Look::Partial) {
                return Err("region map clause partially overlaps a mapping".into());
            }
        }
        // An array reduction reads every element of its section (each becomes
        // `original + private`) and writes it: the section's copy the region runs on
        // must be current, and afterwards only that copy is.
        let reduced = match (r.reduce_w, w) {
            (true, Some(w)) => {
                let it = r.maps.iter().find(|m| m.sec.v == w && m.t == MapT::ToFrom && m.sec.rlen > 0).expect("checked above");
                Some(self.item_span(&it.sec)?)
            }
            _ => None,
        };
        if r.fb == Some(Fb::If(false)) {
            if let Some(span) = reduced {
                self.reduce_span(span, true)?;
            }
            return self.region_on_host(r, w, reads, &used);
        }
        let mut opened: Vec<Opened> = Vec::new();
        let mut bounds: Vec<(usize, usize, usize)> = zero_bounds; // storage, element span usable
        for it in &maps {
            if !matches!(it.t, MapT::To | MapT::From | MapT::ToFrom | MapT::Alloc) || (it.always && it.t == MapT::Alloc)
            {
                return Err("bad map type on a target region".into());
            }
            let (st, lo, hi) = self.item_span(&it.sec)?;
            if let Some(u) = used.iter().find(|u| u.1 == st) {
                if u.0 != it.sec.v {
                    return Err("map clause names the array by another name than the body".into());
                }
            }
            self.open(st, lo, hi, it.t, it.always, true, true)?;
            opened.push(Opened { st, lo, hi, t: it.t, always: it.always });
            bounds.push((st, lo, hi));
        }
        for &(v, st, off) in &used {
            if bounds.iter().any(|b| b.0 == st) {
                continue;
            }
            let a = self.arr_of_st(st).clone();
            if matches!(v, VarRef::Arr(_)) && a.kind == Kind::Fixed {
                // Implicit map(tofrom) of the whole array.
                let (lo, hi) = (0, (a.rows * a.cols) as usize);
                self.open(st, lo, hi, MapT::ToFrom, false, true, true)?;
                opened.push(Opened { st, lo, hi, t: MapT::ToFrom, always: false });
                bounds.push((st, lo, hi));
            } else {
                // A pointer without map clause: its data must be present.
                let e0 = (off * a.cols) as usize;
                let ent = self.st[st].ents.iter().find(|e| e.lo <= e0 && e0 < e.hi);
                let Some(ent) = ent else {
                    return Err(format!("{v:?} has no map clause and is not present"));
                };
                bounds.push((st, ent.lo, ent.hi));
            }
        }
        let bound = |st: usize| *bounds.iter().find(|b| b.0 == st).expect("every used storage has a bound");
        let elem = |m: &Model, v: VarRef, i: i64, j: i64| -> R<(usize, usize)> {
            let u = used.iter().find(|u| u.0 == v).expect("used");
            let a = m.arr_of_st(u.1);
            let row = i + u.2;
            if row < 0 || row >= a.rows || j < 0 || j >= a.cols {
                return Err(format!("{v:?}[{i}][{j}] out of bounds"));
            }
            let e = (row * a.cols + j) as usize;
            let (_, lo, hi) = bound(u.1);
            if e < lo || e >= hi {
                return Err(format!("{v:?}[{i}][{j}] outside its mapping"));
            }
            Ok((u.1, e))
        };
        if let Some(span) = reduced {
            self.reduce_span(span, false)?;
        }
        for i in r0..r1 {
            for j in c0..c1 {
                for rd in reads {
                    let (st, e) = elem(self, rd.v, i + rd.di, j + rd.dj)?;
                    self.can_read(st, e)?;
                    if !self.st[st].dev[e] {
                        return Err(format!("region reads stale device element {e} of storage {st}"));
                    }
                }
                if let Some(w) = w {
                    let (st, e) = elem(self, w, i, j)?;
                    self.touch(st, e, e + 1)?;
                    self.st[st].dev[e] = true;
                    self.st[st].host[e] = false;
                }
            }
        }
        for o in opened.iter().rev() {
            self.close(o.st, o.lo, o.hi, o.t, o.always, true)?;
        }
        Ok(())
    }

    /// An array reduction over elements `lo..hi` of storage `st`, run on the host
    /// copies (`on_host`) or the device copies: it reads each element (which must be
    /// current there) and writes it, so afterwards only that copy is current.
    fn reduce_span(&mut self, (st, lo, hi): (usize, usize, usize), on_host: bool) -> R {
        self.touch(st, lo, hi)?;
        for e in lo..hi {
            self.can_read(st, e)?;
            let s = &mut self.st[st];
            let (here, there) = if on_host { (&mut s.host, &mut s.dev) } else { (&mut s.dev, &mut s.host) };
            if !here[e] {
                let copy = if on_host { "host" } else { "device" };
                return Err(format!("array reduction reads stale {copy} element {e} of storage {st}"));
            }
            (here[e], there[e]) = (true, false);
        }
        Ok(())
    }

    /// A region with a false `if`: it runs on the host device, on the host copies.
    fn region_on_host(
        &mut self,
        r: &Region,
        w: Option<VarRef>,
        reads: &[super::Read],
        used: &[(VarRef, usize, i64)],
    ) -> R {
        let (r0, r1) = (self.ix(r.rows.0)?, self.ix(r.rows.1)?);
        let elem = |m: &Model, v: VarRef, i: i64, j: i64| -> R<(usize, usize)> {
            let u = used.iter().find(|u| u.0 == v).expect("used");
            let a = m.arr_of_st(u.1);
            let row = i + u.2;
            if row < 0 || row >= a.rows || j < 0 || j >= a.cols {
                return Err(format!("{v:?}[{i}][{j}] out of bounds"));
            }
            Ok((u.1, (row * a.cols + j) as usize))
        };
        for i in r0..r1 {
            for j in r.cols.0..r.cols.1 {
                for rd in reads {
                    let (st, e) = elem(self, rd.v, i + rd.di, j + rd.dj)?;
                    self.can_read(st, e)?;
                    if !self.st[st].host[e] {
                        return Err(format!("host-device region reads stale host element {e} of storage {st}"));
                    }
                }
                if let Some(w) = w {
                    let (st, e) = elem(self, w, i, j)?;
                    self.touch(st, e, e + 1)?;
                    self.st[st].host[e] = true;
                    self.st[st].dev[e] = false;
                }
            }
        }
        Ok(())
    }

    // ---- queries for the generator (in the current thread's view) ----

    /// The shape of what `v` names.
    pub fn arr(&self, v: VarRef) -> Option<&Arr> {
        self.storage(v).ok().map(|(st, _)| self.arr_of_st(st))
    }

    /// Mappings of the array `v` names, as rows in `v`'s coordinates: `(r0, r1, s, d,
    /// created by this thread)`.
    pub fn entries(&self, v: VarRef) -> Vec<(i64, i64, u32, u32, bool)> {
        let Ok((st, off)) = self.storage(v) else {
            return Vec::new();
        };
        let c = self.arr_of_st(st).cols as usize;
        self.st[st]
            .ents
            .iter()
            .filter(|e| e.lo % c == 0 && e.hi % c == 0)
            .map(|e| {
                (
                    (e.lo / c) as i64 - off,
                    (e.hi / c) as i64 - off,
                    e.s,
                    e.d,
                    self.own.is_none() || e.owner == Some(self.t),
                )
            })
            .collect()
    }

    /// The mapping containing row `row` of `v`, as rows in `v`'s coordinates.
    pub fn present_rows(&self, v: VarRef, row: i64) -> Option<(i64, i64)> {
        self.entries(v).into_iter().find(|e| e.0 <= row && row < e.1).map(|e| (e.0, e.1))
    }

    /// Runs of rows of `v` whose host copy is valid.
    pub fn host_valid_rows(&self, v: VarRef) -> Vec<(i64, i64)> {
        let Ok((st, off)) = self.storage(v) else {
            return Vec::new();
        };
        let a = self.arr_of_st(st);
        let mut runs = Vec::new();
        let mut start = None;
        for r in 0..=a.rows {
            let ok = r < a.rows && {
                let (lo, hi) = ((r * a.cols) as usize, ((r + 1) * a.cols) as usize);
                self.st[st].host[lo..hi].iter().all(|h| *h)
            };
            match (ok, start) {
                (true, None) => start = Some(r),
                (false, Some(s)) => {
                    runs.push((s - off, r - off));
                    start = None;
                }
                _ => {}
            }
        }
        runs.retain(|(a, b)| *a >= 0 && b > a);
        runs
    }

    /// (host-valid, device-valid) element counts of rows `[r0, r1)` of `v`.
    pub fn valid_counts(&self, v: VarRef, r0: i64, r1: i64) -> (usize, usize) {
        let Ok((st, off)) = self.storage(v) else {
            return (0, 0);
        };
        let a = self.arr_of_st(st);
        let (lo, hi) = (((r0 + off).max(0) * a.cols) as usize, ((r1 + off).min(a.rows) * a.cols) as usize);
        if lo >= hi {
            return (0, 0);
        }
        let s = &self.st[st];
        (s.host[lo..hi].iter().filter(|x| **x).count(), s.dev[lo..hi].iter().filter(|x| **x).count())
    }

    /// The variables that currently point at each other's twin (for swaps and picks).
    pub fn nvars(&self) -> usize {
        self.vars.len()
    }

    /// Whether a time loop may start here.
    pub fn in_loop(&self) -> bool {
        self.loops > 0
    }

    /// The end of a case: removes every dynamic mapping (fetching its data first when
    /// the device holds more valid elements than the host) and returns what it did
    /// and, per variable, the runs of host-valid elements to print.
    pub fn finish(&mut self) -> (Vec<Cleanup>, Vec<(usize, usize, usize)>) {
        let mut cleanup = Vec::new();
        for var in 0..self.vars.len() {
            let st = self.vars[var];
            let cols = self.arrs[st].cols as usize;
            while let Some(e) = self.st[st].ents.first().cloned() {
                assert_eq!(e.s, 0, "a structured mapping outlives its construct");
                let s = &self.st[st];
                let hv = s.host[e.lo..e.hi].iter().filter(|x| **x).count();
                let dv = s.dev[e.lo..e.hi].iter().filter(|x| **x).count();
                let fetch = dv > 0 && dv >= hv;
                if fetch {
                    let s = &mut self.st[st];
                    for i in e.lo..e.hi {
                        s.host[i] = s.dev[i];
                    }
                }
                self.st[st].ents.remove(0);
                cleanup.push(Cleanup { var, r0: (e.lo / cols) as i64, r1: (e.hi / cols) as i64, fetch });
            }
        }
        let mut prints = Vec::new();
        for var in 0..self.vars.len() {
            let h = &self.st[self.vars[var]].host;
            let mut i = 0;
            while i < h.len() {
                if h[i] {
                    let s = i;
                    while i < h.len() && h[i] {
                        i += 1;
                    }
                    prints.push((var, s, i - s));
                } else {
                    i += 1;
                }
            }
        }
        (cleanup, prints)
    }
}

#[cfg(test)]
mod tests {
    use super::super::*;
    use super::*;

    fn arrs() -> Vec<Arr> {
        vec![
            Arr { ty: Ty::F32, kind: Kind::Heap, rows: 10, cols: 1, two_d: false, stat: false, member: false, file: false, late: false, aos: false },
            Arr { ty: Ty::F32, kind: Kind::Heap, rows: 10, cols: 1, two_d: false, stat: false, member: false, file: false, late: false, aos: false },
        ]
    }

    fn sec(v: usize, r0: i64, rlen: i64) -> Sec {
        Sec { v: VarRef::Arr(v), r0: Ix::abs(r0), rlen, cols: None, bare: false }
    }

    fn copy(w: usize, r: usize, maps: Vec<Item>) -> Op {
        Op::Region(Region {
            kind: RKind::Teams,
            maps,
            rows: (Ix::abs(0), Ix::abs(10)),
            cols: (0, 1),
            two_d: false,
            body: Body::Assign {
                w: VarRef::Arr(w),
                reads: vec![Read { v: VarRef::Arr(r), di: 0, dj: 0 }],
                cond: false,
                scalar: Scalar::None,
                konst: 0,
            },
            fb: None,
            extra: 0,
            no_collapse: false,
            reduce_w: false,
            row_ptr: false,
            scalar_map: 0,
        })
    }

    #[test]
    fn stale_reads_are_invalid() {
        let a = arrs();
        // Pointers without map clauses and nothing present.
        assert!(Model::new(&a).apply(&copy(0, 1, vec![])).is_err());
        // Mapped per region: fine.
        let to = |v, t| Item { sec: sec(v, 0, 10), t, always: false };
        assert!(Model::new(&a).apply(&copy(0, 1, vec![to(0, MapT::From), to(1, MapT::To)])).is_ok());
        // The read array only allocated: its device copy is undefined.
        assert!(Model::new(&a).apply(&copy(0, 1, vec![to(0, MapT::From), to(1, MapT::Alloc)])).is_err());
        // Inside a data region, the host writes a mapped array: it must be updated
        // before a region reads it.
        let hw = Op::HostWrite {
            v: VarRef::Arr(1),
            rows: (Ix::abs(0), Ix::abs(10)),
            cols: (0, 1),
            self_read: false,
            salt: 0,
        };
        let data = |body| Op::Data { items: vec![to(0, MapT::ToFrom), to(1, MapT::To)], cond: None, body };
        assert!(Model::new(&a).apply(&data(vec![hw.clone(), copy(0, 1, vec![])])).is_err());
        let up = Op::Update { motions: vec![(true, sec(1, 0, 10), false)], nowait: false };
        assert!(Model::new(&a).apply(&data(vec![hw.clone(), up, copy(0, 1, vec![])])).is_ok());
        // After the region, 0's host copy is stale until the data region ends.
        let pr = Op::Print { v: VarRef::Arr(0), rows: (Ix::abs(0), Ix::abs(10)) };
        assert!(Model::new(&a).apply(&data(vec![copy(0, 1, vec![]), pr.clone()])).is_err());
        assert!(Model::new(&a).apply_all(&[data(vec![copy(0, 1, vec![])]), pr]).is_ok());
        // Partial overlap with a mapping.
        let enter = Op::Enter { items: vec![Item { sec: sec(0, 0, 5), t: MapT::To, always: false }], nowait: false };
        let enter2 = Op::Enter { items: vec![Item { sec: sec(0, 3, 5), t: MapT::To, always: false }], nowait: false };
        assert!(Model::new(&a).apply_all(&[enter.clone(), enter2]).is_err());
        // Exit of a mapping only a structured construct holds.
        let exit = Op::Exit { items: vec![Item { sec: sec(0, 0, 10), t: MapT::From, always: false }], nowait: false };
        assert!(Model::new(&a).apply(&data(vec![exit])).is_err());
        // Enter twice, exit once: still present, no copy back.
        let mut m = Model::new(&a);
        let e10 = Op::Enter { items: vec![Item { sec: sec(0, 0, 10), t: MapT::To, always: false }], nowait: false };
        let x10 = Op::Exit { items: vec![Item { sec: sec(0, 0, 10), t: MapT::From, always: false }], nowait: false };
        m.apply_all(&[e10.clone(), e10, copy(0, 1, vec![to(1, MapT::To)]), x10.clone()]).unwrap();
        assert_eq!(m.valid_counts(VarRef::Arr(0), 0, 10), (0, 10));
        m.apply(&x10).unwrap();
        assert_eq!(m.valid_counts(VarRef::Arr(0), 0, 10).0, 10);
        assert!(m.saw_refcount);
    }

    #[test]
    fn threads_must_not_race() {
        let a = arrs();
        let region = |w: usize, lo: i64, hi: i64, di: i64| {
            Op::Region(Region {
                kind: RKind::ParFor,
                maps: vec![Item {
                    sec: Sec { v: VarRef::Arr(w), r0: Ix { k: 0, lo: true }, rlen: 5, cols: None, bare: false },
                    t: MapT::ToFrom,
                    always: false,
                }],
                rows: (Ix { k: lo, lo: true }, Ix { k: hi, lo: true }),
                cols: (0, 1),
                two_d: false,
                body: Body::Assign {
                    w: VarRef::Arr(w),
                    reads: vec![Read { v: VarRef::Arr(w), di, dj: 0 }],
                    cond: false,
                    scalar: Scalar::None,
                    konst: 0,
                },
                fb: None,
                extra: 0,
                no_collapse: false,
                reduce_w: false,
                row_ptr: false,
                scalar_map: 0,
            })
        };
        let th = |body| Op::Threads { base: 0, len: 5, slices: vec![0], picks: vec![], body };
        assert!(Model::new(&a).apply(&th(vec![region(0, 0, 5, 0)])).is_ok());
        // Reads at i + 1 in a parallel loop: a race in the region.
        assert!(Model::new(&a).apply(&th(vec![region(0, 0, 4, 1)])).is_err());
        // Thread rows beyond its slice.
        assert!(Model::new(&a).apply(&th(vec![region(0, 0, 6, 0)])).is_err());
        // `target teams` inside threads: the reference's libomp aborts.
        let Op::Region(mut r) = region(0, 0, 5, 0) else { unreachable!() };
        r.kind = RKind::Teams;
        assert!(Model::new(&a).apply(&th(vec![Op::Region(r)])).is_err());
    }
}
