//! The streaming kernel of mode `dataflow`: the classic stencil architecture of load,
//! compute and store processes under `#pragma HLS DATAFLOW`, connected by
//! `hls::stream`s of wide words (`host/include/tessera_dataflow.h`).
//!
//! ```text
//!  DDR ─ load_A ──A_in──┐                                       ┌──X_out── store_X ─ DDR
//!  DDR ─ load_B ──B_in──┴─ compute: line buffers, V lanes/cycle ─┴──Y_out── store_Y ─ DDR
//! ```
//!
//! - **load** (one per input array, own `m_axi` bundle): the rows of the array's Load
//!   box (`tessera_poly::dataflow`: the box hull of the elements the region reads), in
//!   row order, whole rows — every element of the box is read from DDR exactly once —
//!   realigned to the row's first element and pushed as wide words. With strips
//!   (below) the box is cut into the strips' boxes, streamed strip by strip.
//! - **compute**: for nests of depth 2 and 3 the reuse window along the outermost
//!   dimension lives in a circular buffer of K0 + 1 slots (rows in 2D, planes in 3D; K0
//!   the rows the stencil spans): while output row (plane) i is computed from slots
//!   holding rows i + lo .. i + hi, row i + hi + 1 streams into the spare slot. Slots
//!   are selected by rotating indices (modular indexing without division). For a 1D
//!   nest a ring of words delays the output by the words the stencil reaches ahead,
//!   plus one (in emulation the ring is kept twice over, so a window is read in place).
//!   The pipelined loop (II = 1) produces one output word per cycle: V = W lanes, each
//!   evaluating exactly the source's expression for its iteration (same tree, same
//!   casts, no reassociation: `cpp.rs`), so results are the CPU's bit for bit. With
//!   fewer lanes ([`Analysis::set_lanes`], chosen by the compiler's resource model) the
//!   loop's II is W / V and `ALLOCATION` pragmas limit the floating-point operators to
//!   V lanes' worth, shared over the II; the code per lane, and so every result, is
//!   the same.
//! - **store** (one per output array, own bundle): the output rows, realigned to DDR
//!   words, in bursts with byte strobes for the partial words at the row ends; at most
//!   8 bursts await their responses.
//!
//! The ports are the tiled kernels' (`hls::burst_maxi<tessera::wide_t<W, T>>`, one per
//! array argument, in the region's variable order; scalars `s_axilite`), plus a
//! write-only port `tdf_w_<array>` per in-place array after them
//! (`tessera_ir::manifest::Manifest::write_ports`: the runtime binds the array's one
//! buffer to both), each on its own bundle.
//!
//! **Strips** ([`Analysis::strips`], decided by `choose_strips`). The line (plane)
//! buffers hold whole rows (planes) when every inner trip count is a compile-time
//! constant and the buffers of whole rows fit the block-RAM budget — half of the
//! XCVU9P's 2160 BRAM36 ([`BRAM36_BUDGET`]; the rest is the shell's and the other
//! kernels'), counted over [`Analysis::on_chip`] as the resource model counts it. The
//! kernel is then the one of constant sizes. Otherwise (an inner trip count known only
//! at run time, or rows too large) the innermost loop is strip-mined into strips of S
//! iterations, S the largest multiple of W (up to [`MAX_STRIP`]) whose buffers fit the
//! budget, capped by the loop's constant trip count; in 3D the middle loop too, tiles of
//! min(S, its trip count) × S of the plane. The strips run one after another through
//! the same processes: the load process streams a strip's box (its rows widened by the
//! input's halo columns, in 3D its planes by the halo rows) row by row, the compute
//! process sweeps each strip as an independent nest with buffers of the widest strip's
//! width (its fill, then the outermost loop), the store process writes each strip's
//! rows. The last strip of a row is partial (`tdf_sc` columns, known at run time):
//! lanes beyond it are not computed, not stored (byte strobes, as at the row ends) and
//! read nothing outside the strip's box, which lies inside the region's Load box. Halo
//! columns are read once per strip they belong to: reads exceed the compulsory ones by
//! about 2·halo / S per row (nothing when a row fits one strip, as it does whenever the
//! run-time rows are at most S). A strip reads no column another strip writes: an
//! array the region writes is read only at the element its iteration writes (no halo;
//! asserted where the strips are decided).
//!
//! **In-place arrays.** AXI does not order a port's reads against its writes, so on a
//! bundle that both reads and writes an array a read that may alias an earlier write
//! must wait for that write's response (HLS holds it; with manual bursts the kernel
//! must) — the mechanism behind the in-place designs' slowdown on boards. Here the
//! load process reads the array through its own port and the store process writes it
//! through the write port, so no read is ever ordered behind a write. That is safe
//! because every element is read before its update is computed (the update depends on
//! the value read, through the streams), and no element is read after it is written
//! (point-wise updates only, below): the two ports never touch an element in the
//! other order, so the missing ordering between them cannot be observed. No `ALIAS`
//! pragma: it would restore HLS's dependence analysis between the two ports, and with
//! it the waits.
//!
//! Input class ([`analyze`]; anything else is `dataflow-unsupported` and the region
//! gets the `tessera` kernel): a perfect nest of 1 to 3 loops with step 1 and
//! rectangular affine bounds (`tessera_poly::scop`); every statement assigns an
//! element of an array no other statement writes, with subscripts `loop index +
//! constant` for every loop in order; every read has subscripts of the same form and
//! is of an array the region does not write, or of exactly the element the iteration
//! writes (a point-wise in-place update: its load process reads each element before
//! its store process writes the update, through separate ports) by the
//! statement that writes it or an earlier one — a later statement would need the new
//! value, and the load stream has the old one; a read that may not happen (in a
//! branch of `?:`, right of `&&`/`||`) stays within the offsets of its array's
//! unconditional accesses, since the load process reads the box of every read and the
//! launch checks bound only what surely happens (a boundary stencil over the whole
//! array, `edge ? a[i][j] : a[i - 1][j] + …`, would read row -1); no reduction, no
//! scalar write. Inner
//! trip counts may be compile-time constants (at least 1) or known at run time only
//! (strips); the buffers of strips of W iterations must fit the budget.
//!
//! Known limits of this first version (not checked against a Vitis installation):
//! - strips re-read their halo columns (above), and the load process requests the
//!   first burst of a strip only after the last row of the previous one (one bubble
//!   per strip and input); in 3D the tiles are square (min(S, rows) × S), not shaped
//!   to the stencil's halo;
//! - with strips the compute process's sizes (words per row, rows per plane, steps)
//!   are run-time values, so the pipelined loops have run-time trip counts (no
//!   `LOOP_TRIPCOUNT` pragma: the reports' latencies are unbounded);
//! - the kernel reads the box hull of the Load set (`box \ Load` is in the plan dump:
//!   the corners of a 5-point star, the edges of a 3D star), whole DDR words at the row
//!   ends;
//! - the load process keeps one burst requested ahead, the store process 8 bursts
//!   awaiting responses; every stream is one burst deep ([`Analysis::channels`]), a
//!   depth from the burst length, not from the processes' synthesised latencies (the
//!   emulated device runs the processes concurrently over streams of exactly that
//!   depth, so a depth too small for the processes' order would deadlock there; the
//!   report shows each stream's peak occupancy);
//! - II = 1 of the compute loop rests on the buffer partitioning (one read per bank and
//!   cycle); synthesis has not confirmed it.

use crate::cpp::{self, ident, Leaves};
use crate::Kernel;
use std::cell::Cell;
use std::fmt::Write as _;
use tessera_ir::manifest::{bank_port_name, bank_write_port_name, extra_params, write_port_name};
use tessera_ir::reject::Reason;
use tessera_ir::{Expr, LValue, Region, ScalarType, Stmt, VarKind};
use tessera_poly::{AccessKind, Aff, Scop, Sym};

/// The block RAM a dataflow kernel's on-chip memories may take, in BRAM36: half of the
/// VCU118's XCVU9P (2160 RAMB36E2, DS890). The other half is left to the platform's
/// shell (its DMA engines, memory controllers and interconnect hold their own FIFOs in
/// block RAM) and to the other kernels of the same xclbin; a kernel that took the
/// whole device would not place beside them. The count is the one of the resource
/// model (`tessera_model::resources::bram36_blocks` over [`Analysis::on_chip`], which
/// `shape::dataflow` in the compiler estimates from), so the strip chosen here is
/// the one the estimate shows.
pub const BRAM36_BUDGET: i64 = 2160 / 2;

/// The widest strip, in elements, when an inner trip count is known only at run
/// time (or exceeds it): the compute process counts a strip's words and rows in
/// `int`s and the emulated buffers stay within a few MiB per input.
pub const MAX_STRIP: i64 = 1 << 16;

/// Write bursts a store process leaves awaiting their responses.
const PENDING_WRITES: i64 = 8;

/// Outstanding AXI transactions per port and direction.
const OUTSTANDING: i64 = 16;

/// Prefix of every name the generated code introduces.
const PREFIX: &str = "tdf_";

fn unsupported(detail: impl Into<String>) -> Reason {
    Reason::DataflowUnsupported { detail: detail.into() }
}

/// One loop of the nest.
#[derive(Clone, Debug)]
pub struct DfLoop {
    /// Index name.
    pub var: String,
    /// Index type.
    pub ty: ScalarType,
    /// Lower bound.
    pub lower: Aff,
    /// Exclusive upper bound.
    pub upper: Aff,
    /// Trip count when it is a compile-time constant.
    pub trip: Option<i64>,
}

/// An array the region reads.
#[derive(Clone, Debug)]
pub struct Input {
    /// Source name.
    pub name: String,
    /// Element type.
    pub elem: ScalarType,
    /// Per dimension, the smallest and largest subscript offset of its reads.
    pub offsets: Vec<(i64, i64)>,
}

/// An array the region writes (one statement).
#[derive(Clone, Debug)]
pub struct Output {
    /// Source name.
    pub name: String,
    /// Element type.
    pub elem: ScalarType,
    /// The statement that writes it.
    pub stmt: usize,
    /// Per dimension, the write's subscript offset.
    pub offsets: Vec<i64>,
}

/// Identical on-chip memories of the dataflow kernel ([`Analysis::on_chip`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnChip {
    /// The array in the kernel.
    pub name: String,
    /// How many memories (partitions).
    pub memories: i64,
    /// Words per memory.
    pub words: i64,
    /// Bits per word.
    pub word_bits: i64,
    /// Block RAM (else registers).
    pub in_bram: bool,
}

/// A channel of the dataflow kernel ([`Analysis::channels`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Channel {
    /// The `hls::stream`'s name in the kernel.
    pub stream: String,
    /// The process that writes it.
    pub producer: String,
    /// The process that reads it.
    pub consumer: String,
    /// Element type of its wide words.
    pub elem: ScalarType,
    /// Its depth in wide words.
    pub depth: i64,
    /// Why it is a FIFO and why this depth.
    pub why: String,
}

/// The strips of a nest of depth 2 or 3 whose rows (planes) are not streamed whole
/// ([`Analysis::strips`]): the innermost loop runs in strips of `cols` iterations, in
/// 3D the middle loop in strips of `rows` (tiles of `rows` × `cols` of the plane),
/// one after the other through the same processes; the last strip of each loop is
/// partial (its run-time remainder).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Strips {
    /// Iterations of the middle loop per strip (depth 3; 1 in 2D).
    pub rows: i64,
    /// Iterations of the innermost loop per strip: a multiple of W.
    pub cols: i64,
}

/// Limits of the strip decision ([`analyze_with`]); [`Limits::default`] is the
/// device's: the budget [`BRAM36_BUDGET`], strips of at most [`MAX_STRIP`] elements.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// BRAM36 the kernel's block-RAM memories may take.
    pub bram36: i64,
    /// The widest strip (and the widest row streamed whole), in elements.
    pub max_strip: i64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits { bram36: BRAM36_BUDGET, max_strip: MAX_STRIP }
    }
}

/// The fewest RAMB36E2 blocks holding `depth` words of `width` bits, over the block's
/// aspect ratios (UG573: 32K×1, 16K×2, 8K×4, 4K×9, 2K×18, 1K×36, 512×72): the resource
/// model's count (`tessera_model::resources::bram36_blocks`, which this crate does not
/// depend on; the compiler's `shape` tests check that the two agree).
pub fn bram36_blocks(depth: i64, width: i64) -> i64 {
    if depth <= 0 || width <= 0 {
        return 0;
    }
    const ASPECTS: [(i64, i64); 7] = [(32768, 1), (16384, 2), (8192, 4), (4096, 9), (2048, 18), (1024, 36), (512, 72)];
    ASPECTS.iter().map(|&(d, w)| ((depth + d - 1) / d) * ((width + w - 1) / w)).min().expect("aspects")
}

/// The region in the dataflow kernel's terms.
#[derive(Clone, Debug)]
pub struct Analysis {
    /// The SCoP (accesses numbered as the printer meets them).
    pub scop: Scop,
    /// The loops, outermost first.
    pub loops: Vec<DfLoop>,
    /// Arrays read.
    pub inputs: Vec<Input>,
    /// Arrays written.
    pub outputs: Vec<Output>,
    /// Elements per beat.
    pub w: i64,
    /// Lanes the compute process evaluates per cycle (V): W by default, so compute
    /// never limits a port; fewer ([`Analysis::set_lanes`]) when W lanes of the datapath
    /// do not fit, and the compute loop then takes W / V cycles per word ([`Analysis::ii`]).
    pub lanes: i64,
    /// Depth ≥ 2: the strips, or `None` for whole rows (planes), as far as the budget
    /// allows ([`analyze_with`]).
    pub strips: Option<Strips>,
    /// Why the rows are whole or stripped, and at which width (plan file, `tessera
    /// explain`).
    pub strip_note: String,
    /// Its streamed arrays are interleaved over two DDR banks
    /// (`tessera_ir::manifest::Interleave`): each gets a second pair of ports for its
    /// second half ([`Analysis::set_interleave`]).
    pub interleave: bool,
}

impl Input {
    /// Rows of the reuse window along dimension 0 (K0).
    pub fn window(&self) -> i64 {
        self.offsets[0].1 - self.offsets[0].0 + 1
    }
}

impl Analysis {
    /// Depth of the nest.
    pub fn depth(&self) -> usize {
        self.loops.len()
    }

    /// Sets the lane count V: a power of two from 1 to W (so it divides W).
    pub fn set_lanes(&mut self, v: i64) -> Result<(), Reason> {
        if v < 1 || v > self.w || (v & (v - 1)) != 0 {
            return Err(unsupported(format!("{v} lanes: expected a power of two from 1 to the port width {}", self.w)));
        }
        self.lanes = v;
        Ok(())
    }

    /// The compute loop's initiation interval: W / V cycles per output word.
    pub fn ii(&self) -> i64 {
        self.w / self.lanes
    }

    /// Whether output `o` is also an input: a point-wise in-place update, whose store
    /// process writes through a write port of its own.
    pub fn in_place(&self, o: &Output) -> bool {
        self.inputs.iter().any(|i| i.name == o.name)
    }

    /// The region variables (indices) that get a write port: the in-place outputs,
    /// in variable order.
    pub fn write_ports(&self, region: &Region) -> Vec<usize> {
        region
            .vars
            .iter()
            .enumerate()
            .filter(|(_, v)| self.outputs.iter().any(|o| o.name == v.name && self.in_place(o)))
            .map(|(i, _)| i)
            .collect()
    }

    /// The streams each of two DDR banks would carry with whole arrays placed by the
    /// `banks=2` rule (arrays the region writes in bank 1, the others in bank 0): a
    /// stream per array loaded and per array stored.
    pub fn whole_array_streams(&self, region: &Region) -> [usize; 2] {
        let written = |name: &str| region.vars.iter().any(|v| v.name == name && (v.written || v.writes_back()));
        let mut banks = [0usize; 2];
        for a in &self.inputs {
            banks[usize::from(written(&a.name))] += 1;
        }
        banks[1] += self.outputs.len();
        banks
    }

    /// The segment of an interleaved array: a burst's words ([`Analysis::burst_words`]),
    /// in bytes; `None` when the streamed arrays' bursts differ in bytes (element types
    /// of different sizes whose bursts the 256-beat limit cuts short).
    pub fn segment_bytes(&self) -> Option<u64> {
        let elems = self.inputs.iter().map(|a| a.elem).chain(self.outputs.iter().map(|o| o.elem));
        let mut bytes = elems.map(|e| (self.burst_words(e) * self.w * e.size() as i64) as u64);
        let first = bytes.next()?;
        bytes.all(|b| b == first).then_some(first)
    }

    /// Decides, for two DDR banks, whether to interleave the streamed arrays: when
    /// whole arrays cannot split the streams evenly between the banks
    /// ([`Analysis::whole_array_streams`]; e.g. fdtd's read-only array in one bank and
    /// the in-place array's reads and writes in the other, two thirds of the bytes on
    /// one bank), each array is cut into segments alternating between the banks, so
    /// each bank carries half of every stream. Returns why, for the plan.
    pub fn set_interleave(&mut self, region: &Region) -> String {
        let [b0, b1] = self.whole_array_streams(region);
        if b0 == b1 {
            self.interleave = false;
            return format!("two banks: whole arrays, {b0} stream(s) on each (arrays the region writes in bank 1)");
        }
        match self.segment_bytes() {
            Some(seg) => {
                self.interleave = true;
                format!(
                    "two banks: whole arrays would put {b0} stream(s) on bank 0 and {b1} on bank 1; every streamed array \
                     interleaved in segments of {seg} bytes (even segments in bank 0, odd in bank 1), half of each stream on each bank"
                )
            }
            None => {
                self.interleave = false;
                format!(
                    "two banks: whole arrays, {b0} and {b1} stream(s) (not interleaved: the arrays' bursts differ in bytes)"
                )
            }
        }
    }

    /// The streamed arrays' variables (indices), in variable order, when interleaved.
    pub fn interleaved(&self, region: &Region) -> Vec<usize> {
        if !self.interleave {
            return Vec::new();
        }
        let streamed = |n: &str| self.inputs.iter().any(|a| a.name == n) || self.outputs.iter().any(|o| o.name == n);
        region.vars.iter().enumerate().filter(|(_, v)| streamed(&v.name)).map(|(i, _)| i).collect()
    }

    /// Iterations of the innermost loop per row (a strip's, at most), for depth ≥ 2.
    fn cols(&self) -> i64 {
        match &self.strips {
            Some(s) => s.cols,
            None => self.loops[self.depth() - 1].trip.unwrap_or(0),
        }
    }

    /// Iterations of the middle loop per plane (a strip's, at most), for depth 3.
    fn rows(&self) -> i64 {
        match &self.strips {
            Some(s) => s.rows,
            None => self.loops[1].trip.unwrap_or(0),
        }
    }

    /// Halo columns of `a` (the innermost dimension's offset spread).
    fn halo_cols(&self, a: &Input) -> i64 {
        let d = self.depth() - 1;
        a.offsets[d].1 - a.offsets[d].0
    }

    /// Halo rows of `a` (the middle dimension's offset spread, depth 3), else 0.
    fn halo_rows(&self, a: &Input) -> i64 {
        if self.depth() == 3 {
            a.offsets[1].1 - a.offsets[1].0
        } else {
            0
        }
    }

    /// Elements of a row of `a`'s Load box (innermost dimension; of a strip's box,
    /// at most), for depth ≥ 2.
    fn in_cols(&self, a: &Input) -> i64 {
        self.cols() + self.halo_cols(a)
    }

    /// Rows of a plane of `a`'s Load box (depth 3; of a strip's box, at most), else 1.
    fn in_rows(&self, a: &Input) -> i64 {
        if self.depth() == 3 {
            self.rows() + self.halo_rows(a)
        } else {
            1
        }
    }

    /// Words of a row of `a`'s Load box (depth ≥ 2).
    fn in_words(&self, a: &Input) -> i64 {
        (self.in_cols(a) + self.w - 1) / self.w
    }

    /// Output words per row (depth ≥ 2; of a strip, at most).
    fn out_words(&self) -> i64 {
        (self.cols() + self.w - 1) / self.w
    }

    /// Output rows per plane (depth 3; of a strip, at most), else 1.
    fn out_rows(&self) -> i64 {
        if self.depth() == 3 {
            self.rows()
        } else {
            1
        }
    }

    /// BRAM36 of the kernel's block-RAM memories ([`Analysis::on_chip`], counted by
    /// [`bram36_blocks`] per memory): what the strip decision holds to the budget.
    pub fn bram36(&self) -> i64 {
        self.on_chip().iter().filter(|m| m.in_bram).map(|m| m.memories * bram36_blocks(m.words, m.word_bits)).sum()
    }

    /// 1D: how many words ahead of an output word its inputs' windows reach.
    fn lag(&self) -> i64 {
        self.inputs.iter().map(|a| self.window_words(a) - 1).max().unwrap_or(0)
    }

    /// 1D: the words an output word waits for after its own, `lag + 1`: one more than
    /// its window needs, so that its window never holds the word just read (in
    /// emulation, a vector load across a word stored in the same iteration waits for
    /// that store: store-to-load forwarding fails on a partial overlap). The ring holds
    /// `delay + 1` words; on the FPGA the extra word is one register per input and one
    /// cycle of latency.
    fn delay(&self) -> i64 {
        self.lag() + 1
    }

    /// Words of the window an output word reads from one row of `a`: `NW`.
    fn window_words(&self, a: &Input) -> i64 {
        let d = self.depth() - 1;
        (a.offsets[d].1 - a.offsets[d].0 + self.w - 1).div_euclid(self.w) + 1
    }

    /// Elements the compute process's on-chip buffers hold (line / plane buffers in
    /// words, or the 1D word ring).
    pub fn buffer_elements(&self) -> i64 {
        if self.depth() == 1 {
            return self.inputs.len() as i64 * (self.delay() + 1) * self.w;
        }
        self.inputs.iter().map(|a| (a.window() + 1) * self.in_rows(a) * self.in_words(a) * self.w).sum()
    }

    /// The kernel's on-chip storage as its pragmas declare it: per input the line
    /// (plane) buffer in block RAM — window + 1 slots partitioned completely, in 3D the
    /// rows cyclically by the stencil's row span, the words cyclically by the window's
    /// words — or the 1D word ring and the window words in registers (an upper bound:
    /// every row of the window counted); every stream a FIFO of its depth in block RAM.
    pub fn on_chip(&self) -> Vec<OnChip> {
        let mut out = Vec::new();
        for a in &self.inputs {
            let bits = self.w * a.elem.size() as i64 * 8;
            let nw = self.window_words(a);
            if self.depth() == 1 {
                out.push(OnChip { name: format!("{}_ring", a.name), memories: self.delay() + 1, words: 1, word_bits: bits, in_bram: false });
            } else {
                let three = self.depth() == 3;
                let f_rows = if three && a.offsets[1].1 > a.offsets[1].0 { a.offsets[1].1 - a.offsets[1].0 + 1 } else { 1 };
                let f_words = if nw > 1 { nw } else { 1 };
                let (rows, kw) = (self.in_rows(a), self.in_words(a));
                out.push(OnChip {
                    name: format!("{}_lb", a.name),
                    memories: (a.window() + 1) * f_rows * f_words,
                    words: ((rows + f_rows - 1) / f_rows) * ((kw + f_words - 1) / f_words),
                    word_bits: bits,
                    in_bram: true,
                });
                let rows_spanned = if three { a.offsets[1].1 - a.offsets[1].0 + 1 } else { 1 };
                out.push(OnChip { name: format!("{}_w", a.name), memories: a.window() * rows_spanned * nw, words: 1, word_bits: bits, in_bram: false });
            }
        }
        for ch in self.channels() {
            out.push(OnChip { name: ch.stream, memories: 1, words: ch.depth, word_bits: self.w * ch.elem.size() as i64 * 8, in_bram: true });
        }
        out
    }

    /// Words of one burst of a port of element type `elem`: at most 256 beats and
    /// never across a 4 KiB boundary (AXI4), the `max_*_burst_length` of its `m_axi`.
    pub fn burst_words(&self, elem: ScalarType) -> i64 {
        (4096 / (self.w * elem.size() as i64)).min(256)
    }

    /// The kernel's channels between processes, each an `hls::stream`: per input the
    /// load process to compute, per output compute to the store process.
    ///
    /// Every channel is a FIFO: it has one producer and one consumer, both walk the
    /// rows in the same (row-major) order and the consumer takes every word once, so
    /// the relation from write to read is in order and single-valued — the FIFO test of
    /// Alias' FIFO recovery (`tessera_poly::fifo`), which holds here by construction,
    /// with no split needed. Its depth is one burst of its port
    /// ([`Analysis::burst_words`]): a whole read burst lands while the compute process
    /// waits for another input, and the compute process runs a whole write burst ahead
    /// of the store process; a deeper stream buys nothing the port could use.
    pub fn channels(&self) -> Vec<Channel> {
        let mut out = Vec::new();
        for a in &self.inputs {
            out.push(Channel {
                stream: format!("{}_in", ident(&a.name)),
                producer: format!("load {}", a.name),
                consumer: "compute".into(),
                elem: a.elem,
                depth: self.burst_words(a.elem),
                why: "in order and single-valued (rows of the Load box, row-major, each word read once); depth: one read burst".into(),
            });
        }
        for o in &self.outputs {
            out.push(Channel {
                stream: format!("{}_out", ident(&o.name)),
                producer: "compute".into(),
                consumer: format!("store {}", o.name),
                elem: o.elem,
                depth: self.burst_words(o.elem),
                why: "in order and single-valued (rows of the Store set, row-major, each word written once); depth: one write burst".into(),
            });
        }
        out
    }

    /// Iterations of the compute process's pipelined loops (its cycles at II = 1,
    /// fill included) for an outermost trip count `n0` (the only one that may be
    /// symbolic).
    pub fn compute_iterations(&self, n0: i64) -> i64 {
        if n0 <= 0 {
            return 0;
        }
        let w = self.w;
        if self.depth() == 1 {
            let ko = (n0 + w - 1) / w;
            let ki = self.inputs.iter().map(|a| (n0 + a.offsets[0].1 - a.offsets[0].0 + w - 1) / w).max().unwrap_or(0);
            return ki.max(ko + self.delay());
        }
        // One sweep over the outermost loop for a strip of `sr` rows (3D) × `sc` columns.
        let three = self.depth() == 3;
        let sweep = |sr: i64, sc: i64| {
            let words = |a: &Input| (if three { sr + self.halo_rows(a) } else { 1 }) * ((sc + self.halo_cols(a) + w - 1) / w);
            let fill: i64 = self.inputs.iter().map(|a| a.window() * words(a)).sum();
            let outs = (if three { sr } else { 1 }) * ((sc + w - 1) / w);
            let more = self.inputs.iter().map(words).max().unwrap_or(0).max(outs);
            fill + (n0 - 1) * more + outs
        };
        let Some(st) = &self.strips else { return sweep(self.out_rows(), self.cols()) };
        // Strips: one sweep each, the last of each loop partial; a run-time inner trip
        // count is taken as one whole strip.
        let d = self.depth();
        let split = |trip: Option<i64>, s: i64| -> Vec<i64> {
            match trip {
                Some(n) => (0..n).step_by(s.max(1) as usize).map(|c| (n - c).min(s)).collect(),
                None => vec![s],
            }
        };
        let cols = split(self.loops[d - 1].trip, st.cols);
        let rows = if three { split(self.loops[1].trip, st.rows) } else { vec![1] };
        rows.iter().map(|&sr| cols.iter().map(|&sc| sweep(sr, sc)).sum::<i64>()).sum()
    }
}

/// Whether `region` is in the dataflow kernel's input class at port width `w`, and
/// its description (strips decided for the device's [`Limits`]).
pub fn analyze(region: &Region, port_width: u32) -> Result<Analysis, Reason> {
    analyze_with(region, port_width, &Limits::default())
}

/// [`analyze`] under other [`Limits`] (tests force narrow strips with them).
pub fn analyze_with(region: &Region, port_width: u32, limits: &Limits) -> Result<Analysis, Reason> {
    let w = port_width as i64;
    if !port_width.is_power_of_two() || port_width > 64 {
        return Err(unsupported(format!("port width {port_width} is not a power of two from 1 to 64")));
    }
    if let Some(r) = region.reductions.first() {
        return Err(unsupported(format!("the region has a reduction ('{}')", r.var)));
    }
    let scop = tessera_poly::scop::extract(region).map_err(|r| unsupported(r.message()))?;
    let d = scop.depth();
    if !(1..=3).contains(&d) {
        return Err(unsupported(format!("the loop nest has depth {d}; the dataflow kernel streams nests of depth 1 to 3")));
    }
    // The IR's loops: step 1, `<` tests (a `!=` or decreasing loop is the tessera mode's).
    let mut fors = Vec::new();
    let mut body: &[Stmt] = &region.body;
    while let [Stmt::For { var, ty, step, ne, body: inner, .. }] = body {
        if *step != 1 || *ne {
            return Err(unsupported(format!("loop '{var}' is not 'for ({var} = lb; {var} < ub; {var}++)'")));
        }
        fors.push((var.clone(), *ty));
        body = inner;
    }
    if fors.len() != d || body.len() != scop.statements.len() {
        return Err(Reason::KernelInconsistent { detail: "the region's loop nest does not match its SCoP".into() });
    }
    let mut names: Vec<String> = region.vars.iter().map(|v| v.name.clone()).collect();
    names.extend(fors.iter().map(|(v, _)| v.clone()));
    if let Some(n) = names.iter().find(|n| n.starts_with(PREFIX)) {
        return Err(unsupported(format!("the name '{n}' is reserved for the generated kernel's own variables")));
    }
    let loops: Vec<DfLoop> = scop
        .loops
        .iter()
        .zip(&fors)
        .map(|(l, (_, ty))| DfLoop {
            var: l.var.clone(),
            ty: *ty,
            lower: l.lower.clone(),
            upper: l.upper.clone(),
            trip: l.upper.sub(&l.lower).as_constant(),
        })
        .collect();
    // Accesses.
    let mut outputs: Vec<Output> = Vec::new();
    for (s, st) in scop.statements.iter().enumerate() {
        let &wid = st.accesses.last().expect("a statement writes");
        let a = &scop.accesses[wid];
        let offs = tessera_poly::dataflow::loop_offsets(&scop, &a.subscripts)
            .ok_or_else(|| unsupported(format!("the write {} is not at the loop indices plus constants, in loop order", a.text)))?;
        if outputs.iter().any(|o| o.name == a.array) {
            return Err(unsupported(format!("'{}' is written by two statements", a.array)));
        }
        let elem = scop.array(&a.array).expect("accessed").elem;
        outputs.push(Output { name: a.array.clone(), elem, stmt: s, offsets: offs });
    }
    let mut inputs: Vec<Input> = Vec::new();
    let stmt_of = |id: usize| scop.statements.iter().position(|st| st.accesses.contains(&id));
    for (id, a) in scop.accesses.iter().enumerate().filter(|(_, a)| a.kind == AccessKind::Read) {
        let Some(offs) = tessera_poly::dataflow::loop_offsets(&scop, &a.subscripts) else {
            return Err(unsupported(format!("the read {} is not at the loop indices plus constants, in loop order", a.text)));
        };
        // A read of an array an earlier statement of the same iteration writes needs
        // that statement's new value; the load process streams the values from before
        // the kernel, so such a region is not streamed (it would read stale data).
        let reader = stmt_of(id).ok_or_else(|| Reason::KernelInconsistent { detail: format!("the read {} belongs to no statement", a.text) })?;
        if let Some(o) = outputs.iter().find(|o| o.name == a.array && o.stmt < reader) {
            return Err(unsupported(format!(
                "'{}' is read ({}) after an earlier statement of the same iteration (statement {}) writes it; the load \
                 stream delivers the values from before the kernel, not the new ones",
                a.array,
                a.text,
                o.stmt + 1
            )));
        }
        // An array read and written: only the element the iteration writes (a
        // point-wise update, `ey[i][j] = ey[i][j] - …`), so that every element is read
        // before it is written, whatever the processes' overlap.
        if outputs.iter().any(|o| o.name == a.array && o.offsets != offs) {
            return Err(unsupported(format!(
                "'{}' is both read and written at other elements (an in-place update, {}); the streams read each \
                 element before it is written only in out-of-place or point-wise updates",
                a.array, a.text
            )));
        }
        if !inputs.iter().any(|i| i.name == a.array) {
            let offsets = tessera_poly::dataflow::read_offsets(&scop, &a.array).expect("checked above");
            let elem = scop.array(&a.array).expect("accessed").elem;
            inputs.push(Input { name: a.array.clone(), elem, offsets });
        }
    }
    // The load process reads the box of every read, also of a read that may not
    // happen (`i == 0 ? a[i][j] : a[i - 1][j]`). The launch checks bound only what
    // surely happens, so such a read must stay within the offsets of the array's
    // unconditional accesses; else the box could reach outside the array.
    for input in &inputs {
        let offsets_of = |conditional: bool| -> Vec<Vec<i64>> {
            scop.accesses
                .iter()
                .filter(|a| a.array == input.name && a.conditional == conditional)
                .filter_map(|a| tessera_poly::dataflow::loop_offsets(&scop, &a.subscripts))
                .collect()
        };
        let (sure, maybe) = (offsets_of(false), offsets_of(true));
        for (a, offs) in scop.accesses.iter().filter(|a| a.array == input.name && a.conditional).zip(&maybe) {
            let within = (0..offs.len()).all(|d| {
                sure.iter().any(|s| s[d] <= offs[d]) && sure.iter().any(|s| s[d] >= offs[d])
            });
            if !within {
                return Err(unsupported(format!(
                    "the read {} may not happen (it is under a condition) and reaches beyond the unconditional accesses of \
                     '{}'; the load process reads the box of every read, which could leave the array",
                    a.text, input.name
                )));
            }
        }
    }
    for l in &loops[1..] {
        if l.trip.is_some_and(|t| t < 1) {
            return Err(unsupported(format!("loop '{}' has no iteration", l.var)));
        }
    }
    // Inner extents of every streamed array (row strides).
    for name in inputs.iter().map(|a| &a.name).chain(outputs.iter().map(|o| &o.name)) {
        let v = region.var(name).expect("an array of the region");
        if v.dims[1..].iter().any(|e| e.is_none()) {
            return Err(unsupported(format!("an inner extent of '{name}' is unknown")));
        }
        if w * v.elem.size() as i64 > 128 {
            return Err(unsupported(format!("a beat of {w} elements of '{name}' is wider than an AXI data bus (1024 bits)")));
        }
    }
    let mut an = Analysis { scop, loops, inputs, outputs, w, lanes: w, strips: None, strip_note: String::new(), interleave: false };
    if d == 1 {
        an.strip_note = "strips: none (1D: a ring of words, whatever the trip count)".into();
        return Ok(an);
    }
    choose_strips(&mut an, limits)?;
    // Strips are independent sweeps: strip s + 1 reads its columns (and its halo) after
    // strip s's store process may have written strip s's. That is safe because an
    // array the region writes is read only at the element its iteration writes (checked
    // above: a point-wise update has no halo), so no strip reads a column another strip
    // writes; asserted here, where the strips are decided.
    for o in an.outputs.iter().filter(|o| an.in_place(o)) {
        let a = an.inputs.iter().find(|a| a.name == o.name).expect("in place");
        if a.offsets.iter().any(|&(lo, hi)| lo != hi) {
            return Err(Reason::KernelInconsistent {
                detail: format!("the in-place array '{}' is read with a halo, which a neighbouring strip may have written", o.name),
            });
        }
    }
    Ok(an)
}

/// The strip decision (depth ≥ 2). Whole rows (planes), the kernel of constant inner
/// trip counts, when every inner trip count is a compile-time constant of at most
/// `max_strip` and the buffers of whole rows fit the budget; otherwise strips of S
/// iterations of the innermost loop, S the largest multiple of W up to `max_strip`
/// whose buffers fit (in 3D tiles of min(S, rows of the plane) × S: square tiles keep
/// the halo re-read per tile small in both directions), each capped by its loop's
/// constant trip count. Strips re-read each input's halo columns (rows) once per strip:
/// reads exceed the compulsory ones by about 2·halo / S per row, nothing when a row
/// fits one strip. Refused when even strips of W iterations exceed the budget.
fn choose_strips(an: &mut Analysis, limits: &Limits) -> Result<(), Reason> {
    let d = an.depth();
    let w = an.w;
    let inner: Vec<(String, Option<i64>)> = an.loops[1..].iter().map(|l| (l.var.clone(), l.trip)).collect();
    let why = match inner.iter().find(|(_, t)| !t.is_some_and(|t| t <= limits.max_strip)) {
        Some((v, None)) => format!("the trip count of loop '{v}' is not a compile-time constant"),
        Some((v, Some(t))) => format!("loop '{v}' runs {t} iterations, more than a strip's {}", limits.max_strip),
        None => {
            let b = an.bram36();
            if b <= limits.bram36 {
                an.strip_note = format!(
                    "strips: whole {} (the inner trip counts are constants and the buffers of whole {} take {b} of the \
                     budget's {} BRAM36)",
                    if d == 3 { "planes" } else { "rows" },
                    if d == 3 { "planes" } else { "rows" },
                    limits.bram36
                );
                return Ok(());
            }
            format!("whole {} need {b} BRAM36, more than the budget's {}", if d == 3 { "planes" } else { "rows" }, limits.bram36)
        }
    };
    let round_up = |t: i64| (t + w - 1) / w * w;
    let strips_of = |s: i64| Strips {
        rows: if d == 3 { an.loops[1].trip.map_or(s, |t| t.min(s)) } else { 1 },
        cols: an.loops[d - 1].trip.map_or(s, |t| round_up(t).min(s)),
    };
    // The BRAM36 count grows with S: the largest fitting multiple of W by bisection.
    let (mut lo, mut hi) = (0i64, limits.max_strip / w);
    while lo < hi {
        let m = (lo + hi + 1) / 2;
        an.strips = Some(strips_of(m * w));
        if an.bram36() <= limits.bram36 {
            lo = m;
        } else {
            hi = m - 1;
        }
    }
    if lo == 0 {
        an.strips = Some(strips_of(w));
        return Err(unsupported(format!(
            "{why}, and even strips of {w} columns need {} BRAM36, more than the budget's {}",
            an.bram36(),
            limits.bram36
        )));
    }
    let st = strips_of(lo * w);
    an.strips = Some(st.clone());
    let b = an.bram36();
    let tile = if d == 3 { format!("{} rows × {} columns", st.rows, st.cols) } else { format!("{} columns", st.cols) };
    let halo = an.inputs.iter().map(|a| an.halo_cols(a)).max().unwrap_or(0);
    let reread = if halo == 0 {
        "no halo columns, so no element is read twice".to_string()
    } else {
        format!("halo columns re-read once per strip: {halo} element(s) per row and strip, ≈ {halo}/{} above the compulsory reads", st.cols)
    };
    an.strip_note = format!(
        "strips: {tile} ({why}; the largest multiple of W = {w} whose buffers fit the budget: {b} of {} BRAM36, half \
         the XCVU9P's); {reread}",
        limits.bram36
    );
    Ok(())
}

/// Generates the dataflow kernel `name` for `region`; also returns the text the plan
/// dump gets (the processes and the exact Load / Store sets).
pub fn generate(region: &Region, name: &str, port_width: u32) -> Result<(Kernel, String), Reason> {
    generate_with(region, name, port_width, &Limits::default())
}

/// [`generate`] under other [`Limits`].
pub fn generate_with(region: &Region, name: &str, port_width: u32, limits: &Limits) -> Result<(Kernel, String), Reason> {
    generate_from(region, name, &analyze_with(region, port_width, limits)?)
}

/// The kernel of an analysis of `region` (its lane count possibly changed,
/// [`Analysis::set_lanes`]), and its plan text.
pub fn generate_from(region: &Region, name: &str, an: &Analysis) -> Result<(Kernel, String), Reason> {
    let port_width = an.w;
    let sets = tessera_poly::dataflow::sets(&an.scop).map_err(|m| Reason::Internal { message: m })?;
    let g = Gen { region, an, name };
    let kernel = g.kernel();
    let mut plan = String::new();
    let _ = writeln!(plan, "dataflow kernel (port width {port_width}):");
    let _ = writeln!(plan, "  {}", an.strip_note);
    for a in &an.inputs {
        if an.strips.is_some() {
            let _ = writeln!(plan, "  load {}: rows of its Load box strip by strip, each strip's rows widened by its halo", a.name);
        } else {
            let _ = writeln!(plan, "  load {}: rows of its Load box, whole rows, each element read once", a.name);
        }
    }
    if an.lanes == an.w {
        let _ = writeln!(plan, "  compute: {} output word(s) of {port_width} lanes per cycle", an.outputs.len());
    } else {
        let _ = writeln!(
            plan,
            "  compute: {} output word(s) of {port_width} lanes every {} cycles ({} lanes per cycle, operators shared)",
            an.outputs.len(),
            an.ii(),
            an.lanes
        );
    }
    for o in &an.outputs {
        let _ = writeln!(plan, "  store {}: rows of its Store set, strobed partial words", o.name);
    }
    plan.push_str(&describe_channels(&an.channels()));
    let _ = writeln!(plan, "Load and Store sets (isl):");
    plan.push_str(&tessera_poly::dataflow::describe(&sets));
    Ok((kernel, plan))
}

/// The channels as text (plan files, `tessera explain`): one line each.
pub fn describe_channels(channels: &[Channel]) -> String {
    let mut s = String::from("channels:\n");
    for ch in channels {
        let _ = writeln!(s, "  {}: {} -> {}, FIFO, depth {} words: {}", ch.stream, ch.producer, ch.consumer, ch.depth, ch.why);
    }
    s
}

struct Gen<'a> {
    region: &'a Region,
    an: &'a Analysis,
    name: &'a str,
}

/// Extents and section bounds mention scalars only.
struct NoArrays;

impl Leaves for NoArrays {
    fn read(&self, array: &str, _index: &[Expr]) -> String {
        unreachable!("array extents do not read array '{array}'")
    }
}

/// The leaves of a statement in the compute process: the k-th read is the
/// statement's k-th read access, a lane of a window word.
struct Body<'g> {
    g: &'g Gen<'g>,
    reads: &'g [usize],
    next: Cell<usize>,
}

impl Leaves for Body<'_> {
    fn read(&self, _array: &str, _index: &[Expr]) -> String {
        let k = self.next.get();
        self.next.set(k + 1);
        self.g.lane_read(self.reads[k])
    }
}

impl Gen<'_> {
    fn w(&self) -> i64 {
        self.an.w
    }

    fn depth(&self) -> usize {
        self.an.depth()
    }

    fn word(&self, elem: ScalarType) -> String {
        format!("tessera::wide_t<{}, {}>", self.w(), elem.c_name())
    }

    fn seg(&self, elem: ScalarType) -> i64 {
        self.an.burst_words(elem)
    }

    fn aff(&self, a: &Aff) -> String {
        if let Some(c) = a.as_constant() {
            return format!("{c}L");
        }
        format!(
            "({})",
            a.format(&|s| match s {
                Sym::Param(p) => format!("(long){}", ident(p)),
                other => unreachable!("loop bounds mention parameters only: {other:?}"),
            })
        )
    }

    fn input(&self, name: &str) -> &Input {
        self.an.inputs.iter().find(|a| a.name == name).expect("an input")
    }

    /// The scalar parameters every process takes.
    fn scalars(&self) -> Vec<&tessera_ir::Var> {
        self.region.vars.iter().filter(|v| v.kind == VarKind::Scalar && !v.writes_back()).collect()
    }

    fn scalar_params(&self) -> String {
        self.scalars().iter().map(|v| format!(", {} {}", v.elem.c_name(), ident(&v.name))).collect()
    }

    fn scalar_args(&self) -> String {
        self.scalars().iter().map(|v| format!(", {}", ident(&v.name))).collect()
    }

    /// The start of every process: scalars marked used, derived parameters, the
    /// loop bounds (`tdf_L<d>`) and the outermost trip count (`tdf_n0`).
    fn prologue(&self, c: &mut String) {
        for v in self.scalars() {
            let _ = writeln!(c, "  (void){};", ident(&v.name));
        }
        for dp in &self.an.scop.derived {
            let _ = writeln!(c, "  const {} {} = {};", dp.ty.c_name(), ident(&dp.name), cpp::expr_with(&dp.expr, &NoArrays));
            let _ = writeln!(c, "  (void){};", ident(&dp.name));
        }
        for (d, l) in self.an.loops.iter().enumerate() {
            let _ = writeln!(c, "  const long tdf_L{d} = {};", self.aff(&l.lower));
            let _ = writeln!(c, "  (void)tdf_L{d};");
        }
        let l0 = &self.an.loops[0];
        let _ = writeln!(c, "  const long tdf_n0 = {} - tdf_L0;", self.aff(&l0.upper));
        let _ = writeln!(c, "  if (tdf_n0 <= 0) return;");
        if self.an.strips.is_some() {
            // Strips: the inner trip counts (`tdf_n<d>`), known at run time.
            for (d, l) in self.an.loops.iter().enumerate().skip(1) {
                let _ = writeln!(c, "  const long tdf_n{d} = {} - tdf_L{d};", self.aff(&l.upper));
                let _ = writeln!(c, "  if (tdf_n{d} <= 0) return;");
            }
        }
    }

    /// Strips: opens the loops over the strips (3D: `tdf_r0` over the middle loop's
    /// iterations, `tdf_sr` the strip's rows; `tdf_c0` over the innermost's, `tdf_sc`
    /// its columns, the last strip partial) and returns how many it opened.
    fn strips_open(&self, c: &mut String) -> usize {
        let st = self.an.strips.as_ref().expect("strips");
        let d = self.depth();
        let mut ind = String::from("  ");
        let mut open = 0;
        if d == 3 {
            let sj = st.rows;
            let _ = writeln!(c, "{ind}for (long tdf_r0 = 0; tdf_r0 < tdf_n1; tdf_r0 += {sj}) {{");
            let _ = writeln!(c, "{ind}  const long tdf_sr = tdf_n1 - tdf_r0 < {sj} ? tdf_n1 - tdf_r0 : {sj}L;  // rows of this strip");
            ind.push_str("  ");
            open += 1;
        }
        let sk = st.cols;
        let n = format!("tdf_n{}", d - 1);
        let _ = writeln!(c, "{ind}for (long tdf_c0 = 0; tdf_c0 < {n}; tdf_c0 += {sk}) {{");
        let _ = writeln!(c, "{ind}  const long tdf_sc = {n} - tdf_c0 < {sk} ? {n} - tdf_c0 : {sk}L;  // columns of this strip");
        open + 1
    }

    /// Closes `open` strip loops.
    fn strips_close(&self, c: &mut String, open: usize) {
        for k in (0..open).rev() {
            let _ = writeln!(c, "{}}}", "  ".repeat(k + 1));
        }
    }

    /// `((long)(r0) * E1 + r1) * E2 + c`: the element index of `array[idx…]`.
    fn linear(&self, array: &str, idx: &[String]) -> String {
        let v = self.region.var(array).expect("an array");
        let mut s = format!("(long)({})", idx[0]);
        for (j, i) in idx.iter().enumerate().skip(1) {
            let e = cpp::expr_with(v.dims[j].as_ref().expect("checked"), &NoArrays);
            let lhs = if j == 1 { s.clone() } else { format!("({s})") };
            s = format!("{lhs} * (long)({e}) + ({i})");
        }
        s
    }

    /// The element where row `r` (flat row counter, a C++ expression) of a box starts:
    /// the box's corner `tdf_L<d> + off[d]`, rows of `per_plane` per plane in 3D.
    /// With strips the box is the strip's: its corner moves by `tdf_r0` rows (3D) and
    /// `tdf_c0` columns.
    fn row_start(&self, array: &str, off: &[i64], r: &str, per_plane: &str) -> String {
        let d = self.depth();
        let o = |x: i64| match x {
            0 => String::new(),
            x if x < 0 => format!(" - {}", -x),
            x => format!(" + {x}"),
        };
        let (r0, c0) = if self.an.strips.is_some() { (" + tdf_r0", " + tdf_c0") } else { ("", "") };
        let idx: Vec<String> = match d {
            1 => vec![format!("tdf_L0{}", o(off[0]))],
            2 => vec![format!("tdf_L0{} + {r}", o(off[0])), format!("tdf_L1{}{c0}", o(off[1]))],
            _ => vec![
                format!("tdf_L0{} + ({r}) / {per_plane}", o(off[0])),
                format!("tdf_L1{}{r0} + ({r}) % {per_plane}", o(off[1])),
                format!("tdf_L2{}{c0}", o(off[2])),
            ],
        };
        self.linear(array, &idx)
    }

    fn load_process(&self, c: &mut String, a: &Input) {
        let port = ident(&a.name);
        let ty = self.word(a.elem);
        let two = self.an.interleave;
        let _ = writeln!(c, "// Load process of '{}': the rows of its Load box in row order, each element read once.", a.name);
        if two {
            let _ = writeln!(c, "// Interleaved: segment k of {} words through {port}_b{{k % 2}}.", self.seg(a.elem));
        }
        let ports = if two { format!("hls::burst_maxi<{ty}> {port}_b0, hls::burst_maxi<{ty}> {port}_b1") } else { format!("hls::burst_maxi<{ty}> {port}") };
        let _ = writeln!(
            c,
            "static void {}_load_{port}({ports}, hls::stream<{ty}> &{port}_in{}) {{",
            self.name,
            self.scalar_params()
        );
        let (ports, suffix) = if two { (format!("{port}_b0, {port}_b1"), "2") } else { (port.clone(), "") };
        self.prologue(c);
        let lo: Vec<i64> = a.offsets.iter().map(|o| o.0).collect();
        let strips = self.an.strips.is_some();
        let (rows, n, per_plane) = match self.depth() {
            1 => ("1L".to_string(), format!("tdf_n0 + {}", a.offsets[0].1 - a.offsets[0].0), "1".to_string()),
            // A strip's box: its rows widened by the halo columns, its planes by the
            // halo rows.
            d if strips => (
                format!("(tdf_n0 + {}) * {}", a.window() - 1, if d == 3 { "tdf_pr" } else { "1" }),
                format!("tdf_sc + {}", self.an.halo_cols(a)),
                "tdf_pr".to_string(),
            ),
            _ => (
                format!("(tdf_n0 + {}) * {}", a.window() - 1, self.an.in_rows(a)),
                format!("{}L", self.an.in_cols(a)),
                self.an.in_rows(a).to_string(),
            ),
        };
        let mut body = String::new();
        let b = &mut body;
        if strips && self.depth() == 3 {
            let _ = writeln!(b, "  const long tdf_pr = tdf_sr + {};  // rows of a plane of the strip's box", self.an.halo_rows(a));
        }
        let _ = writeln!(b, "  const long tdf_rows = {rows};");
        let _ = writeln!(b, "  const long tdf_n = {n};");
        let _ = writeln!(b, "  tessera_df_request_first{suffix}<{}, {}>({ports}, {}, tdf_n);", self.w(), self.seg(a.elem), self.row_start(&a.name, &lo, "0L", &per_plane));
        let _ = writeln!(b, "  for (long tdf_r = 0; tdf_r < tdf_rows; tdf_r++) {{");
        let _ = writeln!(b, "    const bool tdf_next = tdf_r + 1 < tdf_rows;");
        let _ = writeln!(
            b,
            "    tessera_df_read_row{suffix}<{}, {}, {}>({ports}, {}, tdf_n, {port}_in, tdf_next ? {} : 0L, tdf_next ? tdf_n : 0L);",
            self.w(),
            self.seg(a.elem),
            a.elem.c_name(),
            self.row_start(&a.name, &lo, "tdf_r", &per_plane),
            self.row_start(&a.name, &lo, "tdf_r + 1", &per_plane)
        );
        let _ = writeln!(b, "  }}");
        self.in_strips(c, &body);
        let _ = writeln!(c, "}}\n");
    }

    /// `body` (lines indented for the process's top level) as is, or inside the strip
    /// loops.
    fn in_strips(&self, c: &mut String, body: &str) {
        if self.an.strips.is_none() {
            c.push_str(body);
            return;
        }
        let open = self.strips_open(c);
        for line in body.lines() {
            if !line.is_empty() && !line.starts_with('#') {
                c.push_str(&"  ".repeat(open));
            }
            c.push_str(line);
            c.push('\n');
        }
        self.strips_close(c, open);
    }

    fn store_process(&self, c: &mut String, o: &Output) {
        let port = ident(&o.name);
        let ty = self.word(o.elem);
        let two = self.an.interleave;
        let _ = writeln!(c, "// Store process of '{}': the rows of its Store set, partial words strobed.", o.name);
        if two {
            let _ = writeln!(c, "// Interleaved: segment k of {} words through {port}_b{{k % 2}}.", self.seg(o.elem));
        }
        let ports = if two { format!("hls::burst_maxi<{ty}> {port}_b0, hls::burst_maxi<{ty}> {port}_b1") } else { format!("hls::burst_maxi<{ty}> {port}") };
        let _ = writeln!(
            c,
            "static void {}_store_{port}({ports}, hls::stream<{ty}> &{port}_out{}) {{",
            self.name,
            self.scalar_params()
        );
        let (ports, suffix, pending) =
            if two { (format!("{port}_b0, {port}_b1"), "2", "tdf_pending0, tdf_pending1") } else { (port.clone(), "", "tdf_pending") };
        let decl = if two { "  int tdf_pending0 = 0, tdf_pending1 = 0;" } else { "  int tdf_pending = 0;" };
        self.prologue(c);
        let d = self.depth();
        let strips = self.an.strips.is_some();
        let (rows, n, per_plane) = match d {
            1 => ("1L".to_string(), "tdf_n0".to_string(), "1".to_string()),
            _ if strips => (format!("tdf_n0 * {}", if d == 3 { "tdf_sr" } else { "1" }), "tdf_sc".to_string(), "tdf_sr".to_string()),
            _ => (
                format!("tdf_n0 * {}", self.an.out_rows()),
                format!("{}L", self.an.loops[d - 1].trip.unwrap_or(0)),
                self.an.out_rows().to_string(),
            ),
        };
        let mut body = String::new();
        let _ = writeln!(body, "  const long tdf_rows = {rows};");
        if strips {
            let _ = writeln!(c, "{decl}");
        } else {
            let _ = writeln!(body, "{decl}");
        }
        let _ = writeln!(body, "  for (long tdf_r = 0; tdf_r < tdf_rows; tdf_r++) {{");
        let _ = writeln!(
            body,
            "    tessera_df_write_row{suffix}<{}, {}, {PENDING_WRITES}, {}>({ports}, {}, {n}, {port}_out, {pending});",
            self.w(),
            self.seg(o.elem),
            o.elem.c_name(),
            self.row_start(&o.name, &o.offsets, "tdf_r", &per_plane)
        );
        let _ = writeln!(body, "  }}");
        self.in_strips(c, &body);
        if two {
            let _ = writeln!(c, "  tessera_df_write_drain({port}_b0, tdf_pending0);");
            let _ = writeln!(c, "  tessera_df_write_drain({port}_b1, tdf_pending1);");
        } else {
            let _ = writeln!(c, "  tessera_df_write_drain({port}, tdf_pending);");
        }
        let _ = writeln!(c, "}}\n");
    }

    /// The window of words a read access's lanes come from: `<array>_w<k0>[_<k1>]`
    /// (k: the access's row offsets relative to the array's smallest).
    fn window_name(&self, array: &str, offs: &[i64]) -> String {
        let a = self.input(array);
        let d = self.depth();
        let mut s = format!("{}_w", ident(array));
        for (j, (o, lo)) in offs.iter().zip(&a.offsets).take(d - 1).enumerate() {
            let _ = write!(s, "{}{}", if j == 0 { "" } else { "_" }, o - lo.0);
        }
        s
    }

    /// A read access as the lane `tdf_l` of its window.
    fn lane_read(&self, access: usize) -> String {
        let acc = &self.an.scop.accesses[access];
        let offs = tessera_poly::dataflow::loop_offsets(&self.an.scop, &acc.subscripts).expect("checked");
        let a = self.input(&acc.array);
        let d = self.depth();
        let e = offs[d - 1] - a.offsets[d - 1].0;
        let win = self.window_name(&acc.array, &offs);
        let pos = if e == 0 { "tdf_l".to_string() } else { format!("{e} + tdf_l") };
        format!("tessera::window_lane<{}>({win}, {pos})", a.elem.c_name())
    }

    /// The windows the statements read (name, array, row offsets).
    fn windows(&self) -> Vec<(String, String, Vec<i64>)> {
        let mut v: Vec<(String, String, Vec<i64>)> = Vec::new();
        for acc in self.an.scop.accesses.iter().filter(|a| a.kind == AccessKind::Read) {
            let offs = tessera_poly::dataflow::loop_offsets(&self.an.scop, &acc.subscripts).expect("checked");
            let name = self.window_name(&acc.array, &offs);
            if !v.iter().any(|x| x.0 == name) {
                v.push((name, acc.array.clone(), offs));
            }
        }
        v.sort();
        v
    }

    /// The lanes of one output word: every statement's value for its iteration.
    /// `windows`: the code filling the window words the lanes read (the copies the
    /// kernel synthesises); `fast_windows`: in emulation, for a word whose lanes are all
    /// iterations, the same windows as pointers into the line buffers instead of copies
    /// (`None`: the copies serve both paths).
    fn lanes(&self, c: &mut String, ind: &str, rel_last: &str, outer: &[String], windows: &str, fast_windows: Option<&str>) {
        let w = self.w();
        let d = self.depth();
        for o in &self.an.outputs {
            let _ = writeln!(c, "{ind}{} {}_o = 0;", self.word(o.elem), ident(&o.name));
        }
        if fast_windows.is_none() {
            c.push_str(windows);
        }
        let last = &self.an.loops[d - 1];
        let strips = self.an.strips.is_some();
        let n_last = match last.trip {
            _ if d > 1 && strips => "tdf_sc".to_string(),
            Some(t) if d > 1 => format!("{t}"),
            _ => "tdf_n0".to_string(),
        };
        // One lane's iteration: its loop indices in the source's types, then every
        // statement's value (indented for the lane loop's body).
        let lane_body = |ind2: &str| {
            let mut b = String::new();
            let mut rel: Vec<String> = outer.to_vec();
            rel.push(if strips && d > 1 { "tdf_c0 + tdf_j" } else { "tdf_j" }.into());
            for (x, l) in self.an.loops.iter().enumerate() {
                let _ = writeln!(b, "{ind2}const {ty} {v} = ({ty})(tdf_L{x} + {r});", ty = l.ty.c_name(), v = ident(&l.var), r = rel[x]);
                let _ = writeln!(b, "{ind2}(void){};", ident(&l.var));
            }
            for o in &self.an.outputs {
                let Stmt::Assign { value, target: LValue::Element { .. }, .. } = self.stmt(o.stmt) else { unreachable!("checked") };
                let ids = &self.an.scop.statements[o.stmt].accesses;
                let body = Body { g: self, reads: &ids[..ids.len() - 1], next: Cell::new(0) };
                let value = cpp::expr_with(value, &body);
                let _ = writeln!(b, "{ind2}tessera::set_lane<{t}>({}_o, tdf_l, static_cast<{t}>({value}));", ident(&o.name), t = o.elem.c_name());
            }
            b
        };
        // Emulation: a word whose lanes are all iterations (every word but a row's
        // last) runs the lanes without the test, which the C++ compiler vectorises;
        // the same expressions in the same order, so the same bits. Vitis compiles
        // only the loop below (the test is free in an unrolled datapath).
        let _ = writeln!(c, "#ifndef TESSERA_HLS_VITIS");
        let _ = writeln!(c, "{ind}if (({rel_last} + 1) * {w} <= {n_last}) {{");
        if let Some(f) = fast_windows {
            c.push_str(f);
        }
        let _ = writeln!(c, "{ind}  for (int tdf_l = 0; tdf_l < {w}; tdf_l++) {{");
        let _ = writeln!(c, "{ind}    const long tdf_j = {rel_last} * {w} + tdf_l;");
        c.push_str(&lane_body(&format!("{ind}    ")));
        let _ = writeln!(c, "{ind}  }}");
        let _ = writeln!(c, "{ind}}} else");
        let _ = writeln!(c, "#endif");
        let _ = writeln!(c, "{ind}{{");
        if fast_windows.is_some() {
            c.push_str(windows);
        }
        let _ = writeln!(c, "{ind}for (int tdf_l = 0; tdf_l < {w}; tdf_l++) {{");
        let _ = writeln!(c, "#pragma HLS UNROLL");
        let _ = writeln!(c, "{ind}  const long tdf_j = {rel_last} * {w} + tdf_l;");
        let _ = writeln!(c, "{ind}  if (tdf_j < {n_last}) {{");
        c.push_str(&lane_body(&format!("{ind}    ")));
        let _ = writeln!(c, "{ind}  }}");
        let _ = writeln!(c, "{ind}}}");
        let _ = writeln!(c, "{ind}}}");
        for o in &self.an.outputs {
            let _ = writeln!(c, "{ind}{p}_out.write({p}_o);", p = ident(&o.name));
        }
    }

    /// The floating-point operators of one lane (every statement once), by Vitis HLS
    /// operation name (UG1399, `config_op`): additions, subtractions, multiplications,
    /// divisions and square roots in single (`f…`) and double (`d…`) precision.
    fn lane_fp_ops(&self) -> std::collections::BTreeMap<String, i64> {
        let mut ops = std::collections::BTreeMap::new();
        for o in &self.an.outputs {
            let Stmt::Assign { value, .. } = self.stmt(o.stmt) else { unreachable!("checked") };
            value.visit(&mut |e| {
                let (op, ty) = match e {
                    Expr::Binary { op: tessera_ir::BinOp::Add, lhs, ty, .. } => ("add", lhs.ty().unwrap_or(*ty)),
                    Expr::Binary { op: tessera_ir::BinOp::Sub, lhs, ty, .. } => ("sub", lhs.ty().unwrap_or(*ty)),
                    Expr::Binary { op: tessera_ir::BinOp::Mul, lhs, ty, .. } => ("mul", lhs.ty().unwrap_or(*ty)),
                    Expr::Binary { op: tessera_ir::BinOp::Div, lhs, ty, .. } => ("div", lhs.ty().unwrap_or(*ty)),
                    Expr::Call { func: tessera_ir::MathFn::Sqrt, ty, .. } => ("sqrt", *ty),
                    _ => return,
                };
                let precision = match ty {
                    ScalarType::F32 => "f",
                    ScalarType::F64 => "d",
                    _ => return,
                };
                *ops.entry(format!("{precision}{op}")).or_insert(0) += 1;
            });
        }
        ops
    }

    fn stmt(&self, s: usize) -> &Stmt {
        let mut body: &[Stmt] = &self.region.body;
        while let [Stmt::For { body: inner, .. }] = body {
            body = inner;
        }
        &body[s]
    }

    fn stream_params(&self) -> String {
        let mut p = Vec::new();
        for a in &self.an.inputs {
            p.push(format!("hls::stream<{}> &{}_in", self.word(a.elem), ident(&a.name)));
        }
        for o in &self.an.outputs {
            p.push(format!("hls::stream<{}> &{}_out", self.word(o.elem), ident(&o.name)));
        }
        p.join(", ")
    }

    fn compute_process(&self, c: &mut String) {
        let an = self.an;
        if an.lanes == an.w {
            let _ = writeln!(c, "// Compute process: the reuse window in on-chip buffers, {} lanes per cycle.", self.w());
        } else {
            let _ = writeln!(
                c,
                "// Compute process: the reuse window in on-chip buffers, a word of {} lanes every {} cycles: {} lanes' operators, shared.",
                an.w,
                an.ii(),
                an.lanes
            );
        }
        let _ = writeln!(c, "static void {}_compute({}{}) {{", self.name, self.stream_params(), self.scalar_params());
        if an.lanes < an.w {
            // The operators of V lanes, shared over the II of W / V cycles (UG1399,
            // ALLOCATION: HLS otherwise builds all W lanes' operators).
            for (op, n) in self.lane_fp_ops() {
                let _ = writeln!(c, "#pragma HLS ALLOCATION operation instances={op} limit={}", n * an.lanes);
            }
        }
        self.prologue(c);
        if self.depth() == 1 {
            self.compute_1d(c);
        } else {
            self.compute_nd(c);
        }
        let _ = writeln!(c, "}}\n");
    }

    fn compute_1d(&self, c: &mut String) {
        let an = self.an;
        let w = self.w();
        let (lag, delay) = (an.lag(), an.delay());
        let ring = delay + 1;
        let _ = writeln!(
            c,
            "  // Each output word needs the input words from its own to {lag} word(s) ahead and is computed {delay} word(s) \
             after its own was read: a ring of {ring}."
        );
        for a in &an.inputs {
            let p = ident(&a.name);
            let _ = writeln!(c, "  TESSERA_PROCESS_STATE {} {p}_ring[{ring}];", self.word(a.elem));
            let _ = writeln!(c, "#pragma HLS ARRAY_PARTITION variable={p}_ring dim=1 complete");
            // Emulation: the ring twice over (slot k also at k + ring), so a window is
            // contiguous and is read in place, like the line buffers of 2D and 3D.
            let _ = writeln!(c, "#ifndef TESSERA_HLS_VITIS");
            let _ = writeln!(c, "  TESSERA_PROCESS_STATE {} {p}_lin[{}];", self.word(a.elem), 2 * ring);
            let _ = writeln!(c, "#endif");
            let _ = writeln!(c, "  const long {p}_words = (tdf_n0 + {} + {}) / {w};", a.offsets[0].1 - a.offsets[0].0, w - 1);
        }
        let _ = writeln!(c, "  const long tdf_out_words = (tdf_n0 + {}) / {w};", w - 1);
        let mut total = format!("tdf_out_words + {delay}");
        for a in &an.inputs {
            let p = ident(&a.name);
            total = format!("({p}_words > {total} ? {p}_words : {total})");
        }
        let _ = writeln!(c, "  const long tdf_steps = {total};");
        let _ = writeln!(c, "  int tdf_pos = 0;");
        let _ = writeln!(c, "  for (long tdf_s = 0; tdf_s < tdf_steps; tdf_s++) {{");
        let _ = writeln!(c, "#pragma HLS PIPELINE II={}", an.ii());
        for a in &an.inputs {
            let p = ident(&a.name);
            let _ = writeln!(c, "    if (tdf_s < {p}_words) {{");
            let _ = writeln!(c, "      {p}_ring[tdf_pos] = {p}_in.read();");
            let _ = writeln!(c, "#ifndef TESSERA_HLS_VITIS");
            let _ = writeln!(c, "      {p}_lin[tdf_pos] = {p}_lin[tdf_pos + {ring}] = {p}_ring[tdf_pos];");
            let _ = writeln!(c, "#endif");
            let _ = writeln!(c, "    }}");
        }
        let _ = writeln!(c, "    if (tdf_s >= {delay} && tdf_s - {delay} < tdf_out_words) {{");
        let _ = writeln!(c, "      const long tdf_ow = tdf_s - {delay};");
        let mut windows = String::new();
        let mut fast = String::new();
        for (win, array, _) in self.windows() {
            let a = self.input(&array);
            let nw = an.window_words(a);
            let word = self.word(a.elem);
            let _ = writeln!(windows, "      {word} {win}[{nw}];");
            let _ = writeln!(windows, "      for (int tdf_d = 0; tdf_d < {nw}; tdf_d++) {{");
            let _ = writeln!(windows, "#pragma HLS UNROLL");
            let _ = writeln!(windows, "        const int tdf_q = tdf_pos + 1 + tdf_d;  // word tdf_ow + tdf_d");
            let _ = writeln!(windows, "        {win}[tdf_d] = {}_ring[tdf_q >= {ring} ? tdf_q - {ring} : tdf_q];", ident(&array));
            let _ = writeln!(windows, "      }}");
            let _ = writeln!(fast, "        const {word} *{win} = &{}_lin[tdf_pos + 1];", ident(&array));
        }
        self.lanes(c, "      ", "tdf_ow", &[], &windows, Some(&fast));
        let _ = writeln!(c, "    }}");
        let _ = writeln!(c, "    tdf_pos = tdf_pos + 1 == {ring} ? 0 : tdf_pos + 1;");
        let _ = writeln!(c, "  }}");
    }

    fn compute_nd(&self, out: &mut String) {
        let an = self.an;
        let three = self.depth() == 3;
        let strips = an.strips.is_some();
        let w = self.w();
        for a in &an.inputs {
            let p = ident(&a.name);
            let (s, rows, kw) = (a.window() + 1, an.in_rows(a), an.in_words(a));
            let dims = if three { format!("[{s}][{rows}][{kw}]") } else { format!("[{s}][{kw}]") };
            let _ = writeln!(
                out,
                "  // '{}': {} slots (the {} {} the stencil spans and one being loaded), {kw} words per row{}.",
                a.name,
                s,
                a.window(),
                if three { "planes" } else { "rows" },
                if strips { " (of the widest strip)" } else { "" }
            );
            let _ = writeln!(out, "  TESSERA_PROCESS_STATE {} {p}_lb{dims};", self.word(a.elem));
            let _ = writeln!(out, "#pragma HLS ARRAY_PARTITION variable={p}_lb dim=1 complete");
            let last_dim = if three { 3 } else { 2 };
            if three && a.offsets[1].1 > a.offsets[1].0 {
                let _ = writeln!(out, "#pragma HLS ARRAY_PARTITION variable={p}_lb dim=2 cyclic factor={}", a.offsets[1].1 - a.offsets[1].0 + 1);
            }
            let nw = an.window_words(a);
            if nw > 1 {
                let _ = writeln!(out, "#pragma HLS ARRAY_PARTITION variable={p}_lb dim={last_dim} cyclic factor={nw}");
            }
            let _ = writeln!(out, "#pragma HLS BIND_STORAGE variable={p}_lb type=ram_2p impl=bram");
        }
        // The sizes of a sweep: constants for whole rows; per strip, its words per row
        // (`<array>_kw`), rows per plane (`<array>_rw`), output words per row
        // (`tdf_ko`), output words per plane (`tdf_outs`) and the steps of a row
        // (plane) with a next one to load (`tdf_most`).
        let kw_of = |a: &Input| if strips { format!("{}_kw", ident(&a.name)) } else { an.in_words(a).to_string() };
        let fill_of = |a: &Input| match (strips, three) {
            (true, true) => format!("{p}_rw * {p}_kw", p = ident(&a.name)),
            (true, false) => format!("{}_kw", ident(&a.name)),
            _ => (an.in_rows(a) * an.in_words(a)).to_string(),
        };
        let nr = an.out_rows();
        let ko = if strips { "tdf_ko".to_string() } else { an.out_words().to_string() };
        let outs_n = nr * an.out_words();
        let more_n = an.inputs.iter().map(|a| an.in_rows(a) * an.in_words(a)).max().unwrap_or(0).max(outs_n);
        let (outs, more) = if strips { ("tdf_outs".to_string(), "tdf_most".to_string()) } else { (outs_n.to_string(), more_n.to_string()) };
        let mut body = String::new();
        let c = &mut body;
        if strips {
            for a in &an.inputs {
                let p = ident(&a.name);
                if three {
                    let _ = writeln!(c, "  const long {p}_rw = tdf_sr + {};  // rows of a plane of the strip's box", an.halo_rows(a));
                }
                let _ = writeln!(c, "  const long {p}_kw = (tdf_sc + {} + {}) / {w};  // words of a row of the strip's box", an.halo_cols(a), w - 1);
            }
            let _ = writeln!(c, "  const long tdf_ko = (tdf_sc + {}) / {w};", w - 1);
            let _ = writeln!(c, "  const long tdf_outs = {} * tdf_ko;", if three { "tdf_sr" } else { "1" });
            let _ = writeln!(c, "  long tdf_most = tdf_outs;");
            for a in &an.inputs {
                let f = fill_of(a);
                let _ = writeln!(c, "  if ({f} > tdf_most) tdf_most = {f};");
            }
        }
        let _ = writeln!(c, "  // Fill: the first {} of every window.", if three { "planes" } else { "rows" });
        for a in &an.inputs {
            let p = ident(&a.name);
            let kw = kw_of(a);
            let _ = writeln!(c, "  for (int tdf_r = 0; tdf_r < {}; tdf_r++) {{", a.window());
            if strips && three {
                let _ = writeln!(c, "    int {p}_fr = 0, {p}_fq = 0;");
            }
            let _ = writeln!(c, "    for (int tdf_q = 0; tdf_q < {}; tdf_q++) {{", fill_of(a));
            let _ = writeln!(c, "#pragma HLS PIPELINE II=1");
            if strips && three {
                let _ = writeln!(c, "      {p}_lb[tdf_r][{p}_fr][{p}_fq] = {p}_in.read();");
                let _ = writeln!(c, "      if (++{p}_fq == {kw}) {{ {p}_fq = 0; {p}_fr++; }}");
            } else if three {
                let _ = writeln!(c, "      {p}_lb[tdf_r][tdf_q / {kw}][tdf_q % {kw}] = {p}_in.read();");
            } else {
                let _ = writeln!(c, "      {p}_lb[tdf_r][tdf_q] = {p}_in.read();");
            }
            let _ = writeln!(c, "    }}");
            let _ = writeln!(c, "  }}");
            let _ = writeln!(c, "  int {p}_head = 0;  // the slot of the window's first row");
        }
        let _ = writeln!(c, "  for (long tdf_i = 0; tdf_i < tdf_n0; tdf_i++) {{");
        let _ = writeln!(c, "    const bool tdf_more = tdf_i + 1 < tdf_n0;  // a next row to load");
        for a in &an.inputs {
            let p = ident(&a.name);
            let s = a.window() + 1;
            for k in 0..=a.window() {
                let _ = writeln!(c, "    const int {p}_k{k} = {p}_head + {k} >= {s} ? {p}_head + {k} - {s} : {p}_head + {k};");
                let _ = writeln!(c, "    (void){p}_k{k};");
            }
            let _ = writeln!(c, "    int {p}_r = 0, {p}_q = 0;  // next row / word to load into slot {p}_k{}", a.window());
        }
        let _ = writeln!(c, "    int tdf_oj = 0, tdf_ow = 0;  // next output row / word");
        let _ = writeln!(c, "    const {} tdf_steps = tdf_more ? {more} : {outs};", if strips { "long" } else { "int" });
        let _ = writeln!(c, "    for (int tdf_t = 0; tdf_t < tdf_steps; tdf_t++) {{");
        let _ = writeln!(c, "#pragma HLS PIPELINE II={}", an.ii());
        for a in &an.inputs {
            let p = ident(&a.name);
            let kw = kw_of(a);
            let spare = format!("{p}_k{}", a.window());
            let _ = writeln!(c, "      if (tdf_more && tdf_t < {}) {{", fill_of(a));
            if three {
                let _ = writeln!(c, "        {p}_lb[{spare}][{p}_r][{p}_q] = {p}_in.read();");
                let _ = writeln!(c, "        if (++{p}_q == {kw}) {{ {p}_q = 0; {p}_r++; }}");
            } else {
                let _ = writeln!(c, "        {p}_lb[{spare}][{p}_q] = {p}_in.read();");
                let _ = writeln!(c, "        {p}_q++;");
                let _ = writeln!(c, "        (void){p}_r;");
            }
            let _ = writeln!(c, "      }}");
        }
        let _ = writeln!(c, "      if (tdf_t < {outs}) {{");
        let (mut windows, mut fast) = (String::new(), String::new());
        for (win, array, offs) in self.windows() {
            let a = self.input(&array);
            let p = ident(&array);
            let nw = an.window_words(a);
            let kw = kw_of(a);
            let slot = format!("{p}_k{}", offs[0] - a.offsets[0].0);
            let row = if three { format!("[tdf_oj + {}]", offs[1] - a.offsets[1].0) } else { String::new() };
            let _ = writeln!(windows, "        {} {win}[{nw}];", self.word(a.elem));
            let _ = writeln!(windows, "        for (int tdf_d = 0; tdf_d < {nw}; tdf_d++) {{");
            let _ = writeln!(windows, "#pragma HLS UNROLL");
            let _ = writeln!(windows, "          const int tdf_q = tdf_ow + tdf_d;");
            let _ = writeln!(windows, "          {win}[tdf_d] = tdf_q < {kw} ? {p}_lb[{slot}]{row}[tdf_q] : {}(0);", self.word(a.elem));
            let _ = writeln!(windows, "        }}");
            // Every lane an iteration: every word it reads lies in the row (before {kw}).
            let _ = writeln!(fast, "          const {} *{win} = &{p}_lb[{slot}]{row}[tdf_ow];", self.word(a.elem));
        }
        let outer: Vec<String> = match (three, strips) {
            (true, true) => vec!["tdf_i".into(), "tdf_r0 + tdf_oj".into()],
            (true, false) => vec!["tdf_i".into(), "tdf_oj".into()],
            _ => vec!["tdf_i".into()],
        };
        self.lanes(c, "        ", "tdf_ow", &outer, &windows, Some(&fast));
        if three {
            let _ = writeln!(c, "        if (++tdf_ow == {ko}) {{ tdf_ow = 0; tdf_oj++; }}");
        } else {
            let _ = writeln!(c, "        tdf_ow++;");
            let _ = writeln!(c, "        (void)tdf_oj;");
        }
        let _ = writeln!(c, "      }}");
        let _ = writeln!(c, "    }}");
        for a in &an.inputs {
            let p = ident(&a.name);
            let _ = writeln!(c, "    {p}_head = {p}_head + 1 == {} ? 0 : {p}_head + 1;", a.window() + 1);
        }
        let _ = writeln!(c, "  }}");
        self.in_strips(out, &body);
    }

    fn kernel(&self) -> Kernel {
        let region = self.region;
        let an = self.an;
        let name = self.name;
        let mut c = String::new();
        let loc = &region.location;
        let _ = writeln!(c, "// Tessera kernel {name}");
        let _ = writeln!(c, "// Region: {} in {}(), `#pragma omp {}`.", loc, region.function, region.directive);
        let _ = writeln!(c, "// Mode: dataflow — load, compute and store processes under #pragma HLS DATAFLOW,");
        let _ = writeln!(c, "// connected by streams of {}-element words: every input element read from DDR once", self.w());
        match &an.strips {
            None => {
                let _ = writeln!(c, "// (whole rows of its Load box), the reuse window in on-chip buffers, {} outputs per", self.w());
            }
            Some(st) => {
                let _ = writeln!(
                    c,
                    "// per strip of {} of its Load box; halo columns once per strip), the reuse window in",
                    if self.depth() == 3 { format!("{} rows x {} columns", st.rows, st.cols) } else { format!("{} columns", st.cols) }
                );
                let _ = writeln!(c, "// on-chip buffers of a strip's width, {} outputs per", self.w());
            }
        }
        let _ = writeln!(c, "// cycle, rows written back in strobed bursts. Every implicit conversion of the source is");
        let _ = writeln!(c, "// an explicit cast and each lane evaluates the source's expression, so results match the");
        let _ = writeln!(c, "// host bit for bit.");
        let _ = writeln!(c);
        let _ = writeln!(c, "#include \"tessera_wide.h\"");
        let _ = writeln!(c, "#include \"tessera_dataflow.h\"");
        if cpp::uses_math(region) {
            let _ = writeln!(c, "#include \"{}\"", cpp::MATH_HEADER);
        }
        let _ = writeln!(c);
        for a in &an.inputs {
            self.load_process(&mut c, a);
        }
        self.compute_process(&mut c);
        for o in &an.outputs {
            self.store_process(&mut c, o);
        }
        let write_ports = an.write_ports(region);
        let interleaved = an.interleaved(region);
        // Memory parameters after the variables' own: the write ports, then (two banks,
        // interleaved) the second halves and their write ports.
        let extra: Vec<(usize, String)> =
            extra_params(&write_ports, &interleaved).iter().map(|p| (p.arg, p.name(&region.vars[p.arg].name))).collect();
        let params: Vec<String> = region
            .vars
            .iter()
            .map(|v| match v.kind {
                VarKind::Scalar if !v.writes_back() => format!("{} {}", v.elem.c_name(), ident(&v.name)),
                _ => format!("{} {}", self.port_type(v.elem), ident(&v.name)),
            })
            .chain(extra.iter().map(|(i, p)| format!("{} {p}", self.port_type(region.vars[*i].elem))))
            .collect();
        let _ = writeln!(c, "extern \"C\" void {name}({}) {{", params.join(", "));
        // Every memory parameter its own bundle; a write port only writes (its
        // array's own port only reads), so no read waits for a write.
        let memory = region
            .vars
            .iter()
            .filter(|v| v.kind != VarKind::Scalar || v.writes_back())
            .map(|v| (v, ident(&v.name)))
            .chain(extra.iter().map(|(i, p)| (&region.vars[*i], p.clone())));
        for (bundle, (v, port)) in memory.enumerate() {
            let seg = self.seg(v.elem);
            let _ = writeln!(
                c,
                "#pragma HLS INTERFACE mode=m_axi port={port} offset=slave bundle=gmem{bundle} max_read_burst_length={seg} max_write_burst_length={seg} num_read_outstanding={OUTSTANDING} num_write_outstanding={OUTSTANDING}",
            );
        }
        for v in self.scalars() {
            let _ = writeln!(c, "#pragma HLS INTERFACE mode=s_axilite port={}", ident(&v.name));
        }
        let _ = writeln!(c, "#pragma HLS INTERFACE mode=s_axilite port=return");
        let streamed: Vec<&str> = an.inputs.iter().map(|a| a.name.as_str()).chain(an.outputs.iter().map(|o| o.name.as_str())).collect();
        for v in region.vars.iter().filter(|v| (v.kind != VarKind::Scalar || v.writes_back()) && !streamed.contains(&v.name.as_str())) {
            let _ = writeln!(c, "  (void){};", ident(&v.name));
        }
        let _ = writeln!(c, "#pragma HLS DATAFLOW");
        let channels = an.channels();
        for ch in &channels {
            let st = &ch.stream;
            let _ = writeln!(c, "  hls::stream<{}, {}> {st}(\"{st}\");", self.word(ch.elem), ch.depth);
            let _ = writeln!(c, "#pragma HLS STREAM variable={st} depth={}", ch.depth);
        }
        let sargs = self.scalar_args();
        let streams: Vec<&str> = channels.iter().map(|ch| ch.stream.as_str()).collect();
        // The processes in program order: (name, call).
        let mut procs: Vec<(String, String)> = Vec::new();
        for a in &an.inputs {
            let p = ident(&a.name);
            let ports = if an.interleave { format!("{p}, {}", bank_port_name(&a.name)) } else { p.clone() };
            procs.push((format!("load_{p}"), format!("{name}_load_{p}({ports}, {p}_in{sargs})")));
        }
        procs.push(("compute".into(), format!("{name}_compute({}{sargs})", streams.join(", "))));
        for o in &an.outputs {
            let p = ident(&o.name);
            let mut port = if an.in_place(o) { write_port_name(&o.name) } else { p.clone() };
            if an.interleave {
                let half = if an.in_place(o) { bank_write_port_name(&o.name) } else { bank_port_name(&o.name) };
                port = format!("{port}, {half}");
            }
            procs.push((format!("store_{p}"), format!("{name}_store_{p}({port}, {p}_out{sargs})")));
        }
        let _ = writeln!(c, "#ifdef TESSERA_HLS_VITIS");
        for (_, call) in &procs {
            let _ = writeln!(c, "  {call};");
        }
        let _ = writeln!(c, "#else");
        let _ = writeln!(c, "  // Emulation: the processes as coroutines, each stream bounded by its depth.");
        let _ = writeln!(c, "  tessera::emu::dataflow tdf_region(\"{name}\");");
        for (pname, call) in &procs {
            let _ = writeln!(c, "  tdf_region.process(\"{pname}\", [&] {{ {call}; }});");
        }
        let _ = writeln!(c, "  tdf_region.run();");
        let _ = writeln!(c, "#endif");
        let _ = writeln!(c, "}}");
        let emu_entry = crate::emu_entry(region, name, &|v| self.port_type(v.elem), &write_ports, &interleaved, &[]);
        let interleave = an.interleave.then(|| tessera_ir::manifest::Interleave {
            args: interleaved,
            segment_bytes: an.segment_bytes().expect("set_interleave checked the segments"),
        });
        Kernel { name: name.to_string(), source: c, emu_entry, write_ports, interleave, size_params: Vec::new() }
    }

    fn port_type(&self, elem: ScalarType) -> String {
        format!("hls::burst_maxi<{}>", self.word(elem))
    }
}
