//! Step 5's data shipment (paper Sec. 4, step 5, and Fig. 6: the `ship` macro) as the
//! optimized kernel spells it: a nest of row loops, one per array dimension but the
//! last, around a call that moves one row — the innermost dimension — as wide bursts.
//!
//! The C++ helpers below are emitted into every kernel that uses them (the HLS shim in
//! `host/include` stays generic). Their rules, from `shared/design/perf-model.md`:
//! - a port beat carries `W` lanes; lane `l` of word `k` is array element `k·W + l`, so
//!   every DDR-side offset and length is a whole number of beats (paper: "DDR-side
//!   memory address and the number of array elements … divisible by w");
//! - a burst has at most `SEG` beats and never crosses a multiple of `SEG` words, where
//!   `SEG = min(256, 4096 / beat bytes)`: at most 256 beats and never across a 4 KiB
//!   page (device buffers are 4 KiB aligned);
//! - reads skip words outside the array (rows of boundary tiles are clipped; the last
//!   word may cover the array's end plus allocation padding, which the shim and XRT
//!   allocations allow), lanes outside the requested elements are dropped;
//! - writes carry one byte-enable bit per byte (`ap_uint<W·sizeof(T)>` strobes), set only
//!   for the elements real iterations wrote: halo and padded lanes never reach DDR;
//! - after each write burst the kernel waits for its response (`write_response()`), the
//!   paper's row structure, so later reads of the same array see the data.
//!
//! Every helper loop has a compile-time trip count (from template arguments), so a
//! ship can sit inside a pipelined loop, which unrolls it.

use tessera_poly::{Aff, Sym};

/// `⌊a / b⌋` for `b > 0` (row starts left of element 0 have negative words).
pub(crate) const FLOOR_DIV: &str = r#"// ⌊a / b⌋ for b > 0.
inline long tessera_floor_div(long a, long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
"#;

/// DDR → buffer row.
pub(crate) const SHIP_IN: &str = r#"// Step 5 (ship, paper Fig. 6), DDR -> cache buffer row: array elements e .. e + n - 1 go
// to row[at] .. row[at + n - 1]. The row travels as whole beats from word floor(e / W);
// lanes outside the n elements are dropped (the buffer's alignment halo). A burst never
// crosses a multiple of SEG words (at most 256 beats, never across a 4 KiB page). Words
// outside [0, words) are not read: rows of boundary tiles stop at the array's ends.
template <int W, int SEG, typename T, int LEN>
void tessera_ship_in(hls::burst_maxi<tessera::wide_t<W, T>> port, long words, long e, int n, T (&row)[LEN], int at) {
#pragma HLS INLINE
  constexpr int BEATS = (LEN + 2 * W - 2) / W;  // the most words n <= LEN elements touch
  const long first = tessera_floor_div(e, W);
  const long last = tessera_floor_div(e + n - 1, W);
  const long lo = first > 0 ? first : 0;
  const long hi = last < words - 1 ? last : words - 1;
  for (int b = 0; b < BEATS; b++) {
    const long word = first + b;
    if (word < lo || word > hi) continue;
    if (word == lo || word % SEG == 0) {
      const long end = (word / SEG + 1) * SEG;
      port.read_request(word, (hi + 1 < end ? hi + 1 : end) - word);
    }
    const tessera::wide_t<W, T> beat = port.read();
    for (int l = 0; l < W; l++) {
      const long x = word * W + l - e;
      if (x >= 0 && x < n) row[at + x] = tessera::get_lane<T>(beat, l);
    }
  }
}
"#;

/// Buffer row → DDR, with strobes.
pub(crate) const SHIP_OUT: &str = r#"// Step 5 (ship, paper Fig. 6), cache buffer row -> DDR: row[at] .. row[at + n - 1] go to
// array elements e .. e + n - 1, as whole beats from word floor(e / W) whose byte-enable
// strobes cover exactly those elements (step 3: halo and padded lanes are never
// written). Bursts as in tessera_ship_in; each one waits for its write response.
template <int W, int SEG, typename T, int LEN>
void tessera_ship_out(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, int n, const T (&row)[LEN], int at) {
#pragma HLS INLINE
  constexpr int BEATS = (LEN + 2 * W - 2) / W;  // the most words n <= LEN elements touch
  constexpr int S = static_cast<int>(sizeof(T));
  const long first = tessera_floor_div(e, W);
  const long last = tessera_floor_div(e + n - 1, W);
  for (int b = 0; b < BEATS; b++) {
    const long word = first + b;
    if (word > last) continue;
    const long end = (word / SEG + 1) * SEG;
    if (word == first || word % SEG == 0) port.write_request(word, (last + 1 < end ? last + 1 : end) - word);
    tessera::wide_t<W, T> beat = 0;
    ap_uint<W * S> strobe = 0;
    for (int l = 0; l < W; l++) {
      const long x = word * W + l - e;
      if (x >= 0 && x < n) {
        tessera::set_lane<T>(beat, l, row[at + x]);
        strobe.range(S * l + S - 1, S * l) = (1u << S) - 1;
      }
    }
    port.write(beat, strobe);
    if (word == last || word + 1 == end) port.write_response();
  }
}
"#;

/// One uncached read.
pub(crate) const NC_READ: &str = r#"// An uncached (nc) read of array element e: one single-beat burst.
template <int W, typename T>
T tessera_nc_read(hls::burst_maxi<tessera::wide_t<W, T>> port, long e) {
#pragma HLS INLINE
  port.read_request(e / W, 1);
  return tessera::get_lane<T>(port.read(), static_cast<int>(e % W));
}
"#;

/// One uncached write.
pub(crate) const NC_WRITE: &str = r#"// An uncached (nc) write of array element e: one single-beat burst whose strobe enables
// that element's bytes only, then its write response.
template <int W, typename T>
void tessera_nc_write(hls::burst_maxi<tessera::wide_t<W, T>> port, long e, T v) {
#pragma HLS INLINE
  constexpr int S = static_cast<int>(sizeof(T));
  const int lane = static_cast<int>(e % W);
  tessera::wide_t<W, T> beat = 0;
  tessera::set_lane<T>(beat, lane, v);
  ap_uint<W * S> strobe = 0;
  strobe.range(S * lane + S - 1, S * lane) = (1u << S) - 1;
  port.write_request(e / W, 1);
  port.write(beat, strobe);
  port.write_response();
}
"#;

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
    /// The array's port.
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
}

/// How a ship prints affine expressions and linear array indices.
pub(crate) trait Printer {
    /// An index expression.
    fn aff(&self, a: &Aff) -> String;
    /// The row-major linear index of `array[idx…]`, in `long`.
    fn linear(&self, array_port: &str, idx: &[Aff]) -> String;
}

impl Ship {
    /// Emits the row loops and the burst call. Inside a pipelined loop (`pipelined`),
    /// every loop gets a constant trip count, with a guard for run-time counts.
    pub fn emit(&self, code: &mut Code, p: &dyn Printer, pipelined: bool) {
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
        match self.dir {
            Dir::In => code.line(&format!(
                "tessera_ship_in<{w}, {seg}>({}, {}, {e}, {}, {}{row}, {at});",
                self.port, self.words, self.len, self.buffer
            )),
            Dir::Out => code.line(&format!(
                "tessera_ship_out<{w}, {seg}>({}, {e}, {}, {}{row}, {at});",
                self.port, self.len, self.buffer
            )),
        }
        for _ in 0..opened {
            code.close();
        }
    }
}
