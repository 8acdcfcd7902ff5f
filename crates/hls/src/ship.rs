//! Step 5's data shipment (paper Sec. 4, step 5, and Fig. 6: the `ship` macro) as the
//! optimized kernel spells it: a nest of row loops, one per array dimension but the
//! last, around a call that moves one row — the innermost dimension — as wide bursts.
//!
//! The C++ helpers live in the shim header `host/include/tessera_ship.h` (included by
//! every optimized kernel; Vitis gets the same file from `tessera bitstream`), which
//! states their rules: whole-beat offsets and lengths, bursts of at most `SEG` beats
//! that never cross a multiple of `SEG` words (`SEG = min(256, 4096 / beat bytes)`:
//! at most 256 beats, never across a 4 KiB page), reads clipped to the array, writes
//! with byte-enable strobes for exactly the elements real iterations wrote. This
//! module decides which helper each ship calls ([`How`]) and prints the row loops
//! around it.
//!
//! Every helper loop has a compile-time trip count (from template arguments), so a
//! ship can sit inside a pipelined loop, which unrolls it.

use tessera_poly::{Aff, Sym};

/// The most bursts one row of `len` buffer elements is split into, wherever it starts
/// (`tessera_row_bursts` in `tessera_ship.h`): the words it touches, cut at every
/// multiple of `seg` words.
pub(crate) fn row_bursts(w: i64, seg: i64, len: i64) -> i64 {
    let beats = (len + 2 * w - 2) / w;
    (beats + seg - 2) / seg + 1
}

/// Which helper a ship calls.
#[derive(Clone, Copy, Debug)]
pub(crate) enum How<'a> {
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

/// Lines of C++ at an indentation depth (pragmas at column 0, as Vitis examples do).
#[derive(Default)]
pub(crate) struct Code {
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

/// The index range of one row dimension.
#[derive(Clone, Debug)]
pub(crate) enum Range {
    /// `lo ≤ r < hi`, constants.
    Const { lo: i64, hi: i64 },
    /// `0 ≤ r < count`, `count ≤ max` known only at run time.
    Var { count: String, max: i64 },
}

/// One array dimension (not the last) of the rows a ship moves.
#[derive(Clone, Debug)]
pub(crate) struct RowDim {
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
pub(crate) enum Dir {
    /// DDR → buffer (`tessera_ship_in`).
    In,
    /// Buffer → DDR (`tessera_ship_out`).
    Out,
}

/// One ship: rows of a buffer to or from an array.
pub(crate) struct Ship {
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

/// How a ship prints affine expressions and linear array indices.
pub(crate) trait Printer {
    /// An index expression.
    fn aff(&self, a: &Aff) -> String;
    /// The row-major linear index of `array[idx…]`, in `long`.
    fn linear(&self, array_port: &str, idx: &[Aff]) -> String;
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

    /// Emits the row loops and the call of the helper `how` says. Inside a pipelined
    /// loop (`pipelined`), every loop gets a constant trip count, with a guard for
    /// run-time counts.
    pub fn emit(&self, code: &mut Code, p: &dyn Printer, pipelined: bool, how: How) {
        let mut opened = 0;
        let mut ddr = Vec::new();
        let mut buf = Vec::new();
        for r in &self.rows {
            let fixed = |k: i64| {
                let at = |a: &Aff| a.substitute(&|s| matches!(s, Sym::Param(n) if *n == r.var).then(|| Aff::constant(k)));
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
        ddr.push(self.ddr_last.clone());
        let row: String = buf.iter().map(|b| format!("[{}]", p.aff(b))).collect();
        let e = p.linear(&self.port, &ddr);
        let at = p.aff(&self.at);
        let (w, seg) = (self.w, self.seg);
        let (port, words, len, buffer, row_len) = (&self.port, &self.words, &self.len, &self.buffer, self.row_len);
        let line = match (self.dir, how) {
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
}
