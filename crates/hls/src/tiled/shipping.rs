//! Step 5's data shipment (paper Sec. 4, step 5, and Fig. 6: the `ship` macro): what
//! the tiled kernel moves between DDR and its cache buffers, and how.
//!
//! A ship ([`Ship`]) is a nest of row loops, one per array dimension but the last,
//! around a call that moves one row — the innermost dimension — as wide bursts. The
//! C++ helpers live in the shim header `host/include/tessera_ship.h` (included by
//! every optimized kernel; Vitis gets the same file from `tessera bitstream`), which
//! states their rules: whole-beat offsets and lengths, bursts of at most `SEG` beats
//! that never cross a multiple of `SEG` words (`SEG = min(256, 4096 / beat bytes)`:
//! at most 256 beats, never across a 4 KiB page), reads clipped to the array, writes
//! with byte-enable strobes for exactly the elements real iterations wrote.
//!
//! This module decides
//! - which arrays the [`Variant::Tessera`] kernel ships overlapped ([`decide`],
//!   [`Overlap`]): no read-after-write through DDR, no uncached access on the port;
//! - which rows a buffer's load or write-back moves ([`Printer::load`],
//!   [`Printer::flush`]);
//! - which helper each ship calls ([`How`], [`Printer::ship`]), and how many bursts a
//!   port has outstanding at once (its `num_read_outstanding` /
//!   `num_write_outstanding`).
//!
//! `print.rs` prints the row loops around the call. Every helper loop has a
//! compile-time trip count (from template arguments), so a ship can sit inside a
//! pipelined loop, which unrolls it.

use super::lower::{ArrayInfo, Buf, Target, Tiled};
use super::print::{Code, Printer};
use super::Variant;
use std::fmt::Write as _;
use tessera_poly::{AccessKind, Aff, Sym};

/// The most bursts one row of `len` buffer elements is split into, wherever it starts
/// (`tessera_row_bursts` in `tessera_ship.h`): the words it touches, cut at every
/// multiple of `seg` words.
pub(super) fn row_bursts(w: i64, seg: i64, len: i64) -> i64 {
    let beats = (len + 2 * w - 2) / w;
    (beats + seg - 2) / seg + 1
}

/// Which helper a ship calls.
#[derive(Clone, Copy, Debug)]
pub(super) enum How<'a> {
    /// `tessera_ship_in` / `tessera_ship_out`: every burst a full round trip (paper).
    Blocking,
    /// `tessera_request_in`: only the read requests (a prefetch).
    Request,
    /// `tessera_receive_in`: the beats of an earlier `Request` of the same rows.
    Receive,
    /// `tessera_ship_out_posted`: the writes, then the responses of the port's previous
    /// posted row; `pending` names the port's counter, `pend` bounds a row's bursts.
    Posted { pending: &'a str, pend: i64 },
}

/// The index range of one row dimension.
#[derive(Clone, Debug)]
pub(super) enum Range {
    /// `lo ≤ r < hi`, constants.
    Const { lo: i64, hi: i64 },
    /// `0 ≤ r < count`, `count ≤ max` known only at run time.
    Var { count: String, max: i64 },
}

/// One array dimension (not the last) of the rows a ship moves.
#[derive(Clone, Debug)]
pub(super) struct RowDim {
    /// The row loop variable; inside `ddr` and `buf` it appears as `Sym::Param(var)`.
    pub var: String,
    /// Its range.
    pub range: Range,
    /// Array index of the row in this dimension.
    pub ddr: Aff,
    /// Buffer index of the row in this dimension.
    pub buf: Aff,
}

/// Direction of a ship.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Dir {
    /// DDR → buffer (`tessera_ship_in`).
    In,
    /// Buffer → DDR (`tessera_ship_out`).
    Out,
}

/// One ship: rows of a buffer to or from an array.
pub(super) struct Ship {
    pub dir: Dir,
    /// The array (index into the generator's arrays) and its port.
    pub array: usize,
    pub port: String,
    /// For reads: the variable holding the array's size in words.
    pub words: String,
    /// The buffer.
    pub buffer: String,
    /// Port width (elements per beat) and burst segment (words).
    pub w: i64,
    pub seg: i64,
    /// Every array dimension but the last.
    pub rows: Vec<RowDim>,
    /// Array index, in the last dimension, of the row's first element.
    pub ddr_last: Aff,
    /// Buffer index of that element.
    pub at: Aff,
    /// Elements per row.
    pub len: String,
    /// Elements of a buffer row (its innermost extent).
    pub row_len: i64,
}

impl Ship {
    /// How many rows the ship moves (at most, for run-time counts).
    pub fn row_count(&self) -> i64 {
        self.rows
            .iter()
            .map(|r| match &r.range {
                Range::Const { lo, hi } => hi - lo,
                Range::Var { max, .. } => *max,
            })
            .product()
    }
}

/// How an array's rows ship in the Tessera variant (all blocking in the paper's).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Overlap {
    /// An array the region writes and never reads: its rows are posted; the counter
    /// `ArrayInfo::pending` holds the bursts of the last posted row, at most `pend`
    /// (0: nothing is written through a buffer).
    pub posted: bool,
    pub pend: i64,
    /// An array the region reads and never writes: rows loaded inside the pipelined
    /// loop are prefetched one iteration ahead, the rows of any other load are all
    /// requested before their beats are read.
    pub prefetch: bool,
}

/// Tessera variant: which arrays ship overlapped (no read-after-write through DDR).
/// An uncached access shares the port's in-order queues with the rows (it would
/// receive a prefetched row's beats or another burst's response): such a port
/// blocks.
pub(super) fn decide(k: &mut Tiled, variant: Variant) {
    if variant != Variant::Tessera {
        return;
    }
    let scop = &k.plan.scop;
    for a in 0..k.arrays.len() {
        let arr = &k.arrays[a];
        let accessed = |kind: AccessKind| scop.accesses.iter().any(|x| x.array == arr.name && x.kind == kind);
        let (read, written) = (accessed(AccessKind::Read), accessed(AccessKind::Write));
        let uncached = k.accesses.iter().any(|x| matches!(x.target, Target::Array { array, .. } if array == a));
        let posted = written && !read && !uncached;
        let written_rows = k.bufs.iter().filter(|b| b.array == a && b.write.is_some());
        let pend = if posted {
            written_rows.map(|b| row_bursts(k.w, arr.seg, *b.shape.last().expect("buffers have a dimension"))).max().unwrap_or(0)
        } else {
            0
        };
        let prefetch = read && !written && !uncached;
        k.arrays[a].overlap = Overlap { posted, pend, prefetch };
    }
}

impl Printer<'_> {
    /// The load of `b`'s box rows, with the slices `slices` (lo, hi) along the chunk's
    /// shift dimension (all of them for `None`); `moving`: the fixed loop's index is in
    /// scope (per-iteration load), else 0 (before the tile's first iteration).
    pub(super) fn load(&self, b: &Buf, slices: Option<(i64, i64)>, moving: bool) -> Ship {
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
    pub(super) fn flush(&self, b: &Buf, fixed: &[usize]) -> Ship {
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
    pub(super) fn ship(&self, code: &mut Code, comment: &str, s: Ship, pipelined: bool) {
        code.line(comment);
        let arr = &self.arrays[s.array];
        let how = match s.dir {
            Dir::Out if arr.overlap.posted => {
                code.line("// (posted: then the responses of this port's previous row; nothing reads this array)");
                How::Posted { pending: &arr.pending, pend: arr.overlap.pend }
            }
            Dir::In if arr.overlap.prefetch => {
                code.line("// (every row requested first, then the beats read: the round trips overlap)");
                self.note_reads(&s, s.row_count());
                self.emit(code, &s, pipelined, How::Request);
                How::Receive
            }
            _ => How::Blocking,
        };
        self.emit(code, &s, pipelined, how);
    }

    /// Records that `rows` rows of `s` are requested before any is read.
    pub(super) fn note_reads(&self, s: &Ship, rows: i64) {
        let n = rows * row_bursts(self.w, s.seg, s.row_len);
        let mut o = self.read_outstanding.borrow_mut();
        o[s.array] = o[s.array].max(n);
    }

    /// Outstanding-transaction limits beyond Vitis' default of 16 per direction, for
    /// ports whose overlapped rows need more: all rows of a batched load, two rows of
    /// a prefetched one, two rows of posted writes (the row in flight and the
    /// unacknowledged one). Call after the body is printed.
    pub(super) fn outstanding(&self, index: usize, a: &ArrayInfo) -> String {
        let mut s = String::new();
        let reads = self.read_outstanding.borrow()[index];
        if reads > 16 {
            let _ = write!(s, " num_read_outstanding={reads}");
        }
        if 2 * a.overlap.pend > 16 {
            let _ = write!(s, " num_write_outstanding={}", 2 * a.overlap.pend);
        }
        s
    }
}
