//! A generator of random, race-free, OpenMP-conforming C programs that exercise the
//! device data environment (`target data`, `target enter/exit data`, `target update`,
//! target regions on present data, host fallbacks inside data regions, regions from
//! two host threads) on the ways programs hold their arrays (heap pointers, fixed
//! and static arrays, pointers to VLA rows, flat 2-D arrays indexed `p[i * m + j]`,
//! pointers held in structs, file-scope arrays reached only through called
//! functions, local row pointers in region bodies), and reduction sums mapped as
//! scalars (with the structs and file-scope scalars of host fallbacks around them).
//! Region bodies come in the spellings users write: a select as `?:` or as
//! `if`/`else` (or, when the body reads the element it writes, `if` without `else`:
//! a guarded write), a value straight or through a local accumulator of an inner loop.
//! Pure: a case seed and a feature set give the program text.
//!
//! A program is a batch of *cases*; each case is one `static void case_<id>(void)`
//! with its own arrays, a sequence of [`Op`]s and its own output lines (prefixed
//! `c<id>.`). Every case is generated from its own seed, so a failing case can be
//! regenerated, emitted alone and shrunk.
//!
//! **Validity.** The reference run is plain `clang -fopenmp` without an offload
//! device: host and device share memory. A generated program is only valid if its
//! output is the same with a discrete device, so the generator keeps a [`Model`] of
//! both copies of every array element (is the host copy / the device copy the value
//! the program means?) and of the present table (entries with structured and dynamic
//! reference counts, OpenMP 5.1). Every op is proposed at random and kept only if the
//! model accepts it: no read of a stale copy, no partial overlap with a mapping, no
//! use of a pointer without a map clause unless its data is present, no race between
//! the two host threads of a `parallel` construct. At the end every dynamic mapping
//! is removed and exactly the host-valid elements are printed.

pub mod emit;
pub mod gen;
pub mod model;
pub mod shrink;

pub use emit::{case_program, program_text};
pub use gen::gen_case;
pub use model::Model;

/// A switchable construct kind. Every feature can be turned off, so a failing
/// program can be regenerated without it (and the shrinker names the features a
/// minimal program still uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Feat {
    /// `T *p = malloc(…)` arrays.
    Heap,
    /// Fixed-size local arrays `T f[N]`, `T f[N][M]` (implicitly mapped tofrom when
    /// a region names them without a map clause).
    Fixed,
    /// `T (*p)[m] = malloc(sizeof(T[n][m]))` pointers to VLA rows.
    Vla2d,
    /// 2D arrays on flat pointers, `T *p = malloc(sizeof *p * n * m)` read and written
    /// as `p[(i + di) * m + j + dj]` with a run-time row length `m` (the optimizer
    /// delinearises them); their sections are `p[r0 * m:rows * m]`.
    Flat,
    /// Heap and flat arrays held in a struct, `struct { T *p; } s` (`s.p[i]` in
    /// regions, `s.p[0:n]` in clauses): the plugin reads the pointer member at the
    /// directive.
    Member,
    /// `int` arrays (float arrays are always there).
    Int,
    /// `double` arrays.
    Double,
    /// `target data map(…) { … }`, nested.
    DataRegion,
    /// `target enter data` / `target exit data`.
    EnterExit,
    /// Entering data already present (reference counts above 1).
    RefCount,
    /// The `always` map-type modifier.
    Always,
    /// `target exit data` of a part of a mapping.
    ExitSub,
    /// `target update to/from`.
    Update,
    /// `target update` of 2D boxes (strided sections).
    UpdateBox,
    /// `nowait` on standalone data directives (followed by `taskwait`).
    DataNowait,
    /// Host loops writing arrays (mapped or not).
    HostWrite,
    /// Printing array sections in the middle of a case.
    Print,
    /// `target teams distribute parallel for`.
    Teams,
    /// `target parallel for`.
    ParFor,
    /// Plain `target` with a sequential loop inside.
    PlainTarget,
    /// Loop-carried recurrences in plain `target` regions (`a[i] = a[i-1]…`).
    Recurrence,
    /// Regions naming pointers without map clauses (present data).
    Present,
    /// Map clauses on target regions.
    RegionMap,
    /// Pointers into the middle of a mapping (`float *q = p + k;`).
    Interior,
    /// Scalars of the host code read in regions (firstprivate).
    Scalars,
    /// Conditional expressions in region bodies.
    Cond,
    /// Time loops swapping two mapped pointers between steps.
    SwapLoop,
    /// Regions calling a non-inline function (host fallback).
    FbCall,
    /// Fixed-size arrays at file scope (`static T sf<case>_<k>[N]`) that regions
    /// read only through a call of a non-inline accessor function: a host fallback
    /// whose footprint the plugin finds in the called function's body, or, when the
    /// function is defined after the case, a region of unknown footprint.
    FbGlobal,
    /// Regions declaring a local array (host fallback).
    FbLocal,
    /// Regions whose body holds a statement the region IR cannot represent (a
    /// `do … while (0)` around the assignment): a host fallback whose variables the
    /// plugin finds only by walking the source, not the IR.
    FbStmt,
    /// Regions whose footprint is unknown (they also write through a file-scope
    /// `int **`, a pointer Tessera cannot follow): the plugin cannot pass their
    /// variables, so they run on the host with the device copy of everything mapped.
    FbOpaque,
    /// `nowait` regions (run undeferred on the device; a deferred host task when they
    /// fall back), followed by `taskwait`.
    FbNowait,
    /// `if(c)` on target regions, true or false.
    FbIf,
    /// `if(c)` on `target data`, true or false.
    DataIf,
    /// `reduction(+: s)` regions (offloaded: the sum is an int, exact in any order).
    Reduction,
    /// `#pragma omp parallel for num_threads(2)`: each thread offloads on its own
    /// section of shared arrays.
    Threads,
    /// Threads offloading on their own array (`T *mine = t ? b : a;`).
    ThreadsPick,
    /// Regions that run on the host (call, local array, `nowait`, `if`, written but
    /// mapped `to`) inside threads constructs, on data the threads share.
    ThreadsFb,
    /// Fixed-size arrays with static storage (`static T f[N];` in the case function).
    StaticArr,
    /// Harmless extra clauses on regions (`num_teams`, `thread_limit`, `schedule`,
    /// `dist_schedule`, `firstprivate`, `num_threads`, …) and 2D nests without
    /// `collapse`.
    Clauses,
    /// Zero-length array sections `p[0:0]` of present pointers in map clauses.
    ZeroLen,
    /// `always` map modifiers on regions that run on the host for `nowait` or for
    /// writing an array mapped `to`.
    AlwaysFb,
    /// OpenMP 5.1's `present` modifier on `target update` motions of mapped data
    /// (`to(present: p[…])`).
    PresentMod,
    /// `reduction(+: <section>)` on the written array of a loop region, over the
    /// section its `tofrom` map clause names: the region writes a private copy that
    /// starts at 0, and each element becomes `original + private`.
    ArrReduce,
    /// Region bodies reaching their arrays through local row pointers
    /// (`T *rp0 = p[i + 1]; … rp0[j - 1]`, `p + (i + 1) * m`, `p + i - 1`), which the
    /// plugin turns back into the arrays' subscripts, and flat arrays also through
    /// index locals (`const int rp1 = (i + 1) * m0; … p[rp1 + j]`); arrays of structs through
    /// pointers to their elements and copies of them (`struct S *rp0 = &p[i];
    /// struct S rp1 = p[i - 1]; rp0->v = rp1.v …`).
    RowPtr,
    /// Scalars and structs in the device data environment around a reduction's
    /// sum (`target data map(tofrom: s)`, `enter data map(to: s)` … `update
    /// from(s)`, a region writing the present scalar, a struct written by a host
    /// fallback, a file-scope scalar written by a called function).
    MapScalar,
    /// Arrays of structs (`struct tsr_rf { float v, w; } *p`): the case's array is
    /// the field `v` of each element (`p[i].v`), which regions see as one more
    /// dimension of the array; sections and pointers are over the structs.
    Aos,
    /// The host scalars regions read (`Feat::Scalars`) as members of a struct
    /// (`ks.kf`, `pk->ki` with `pk = &ks`), the struct also entered into the device
    /// data environment for the whole case (`enter data map(to: ks)`): a region reads
    /// a member where OpenMP says it sees it, the struct's device copy while one is
    /// mapped (the plugin passes the member's address, the runtime reads the copy).
    /// `ks.kf` is read at the directive whatever the region writes (no pointer
    /// reaches `ks`); `pk->kf` in a region writing floats after a launch check that
    /// no write lands on it, but in a region that calls a function it keeps the
    /// region on the host, so not in cases with a parallel region (where such a host
    /// run stops the program).
    KStruct,
}

impl Feat {
    /// Every feature, in a fixed order.
    pub const ALL: [Feat; 49] = [
        Feat::Heap,
        Feat::Fixed,
        Feat::Vla2d,
        Feat::Flat,
        Feat::Member,
        Feat::Int,
        Feat::Double,
        Feat::DataRegion,
        Feat::EnterExit,
        Feat::RefCount,
        Feat::Always,
        Feat::ExitSub,
        Feat::Update,
        Feat::UpdateBox,
        Feat::DataNowait,
        Feat::HostWrite,
        Feat::Print,
        Feat::Teams,
        Feat::ParFor,
        Feat::PlainTarget,
        Feat::Recurrence,
        Feat::Present,
        Feat::RegionMap,
        Feat::Interior,
        Feat::Scalars,
        Feat::Cond,
        Feat::SwapLoop,
        Feat::FbCall,
        Feat::FbGlobal,
        Feat::FbLocal,
        Feat::FbStmt,
        Feat::FbOpaque,
        Feat::FbNowait,
        Feat::FbIf,
        Feat::DataIf,
        Feat::Reduction,
        Feat::Threads,
        Feat::ThreadsPick,
        Feat::ThreadsFb,
        Feat::StaticArr,
        Feat::Clauses,
        Feat::ZeroLen,
        Feat::AlwaysFb,
        Feat::PresentMod,
        Feat::ArrReduce,
        Feat::RowPtr,
        Feat::MapScalar,
        Feat::Aos,
        Feat::KStruct,
    ];

    /// The feature's name on command lines and in reports (kebab case).
    pub fn name(self) -> &'static str {
        match self {
            Feat::Heap => "heap",
            Feat::Fixed => "fixed",
            Feat::Vla2d => "vla2d",
            Feat::Flat => "flat",
            Feat::Member => "member",
            Feat::Int => "int",
            Feat::Double => "double",
            Feat::DataRegion => "data-region",
            Feat::EnterExit => "enter-exit",
            Feat::RefCount => "refcount",
            Feat::Always => "always",
            Feat::ExitSub => "exit-sub",
            Feat::Update => "update",
            Feat::UpdateBox => "update-box",
            Feat::DataNowait => "data-nowait",
            Feat::HostWrite => "host-write",
            Feat::Print => "print",
            Feat::Teams => "teams",
            Feat::ParFor => "parfor",
            Feat::PlainTarget => "plain-target",
            Feat::Recurrence => "recurrence",
            Feat::Present => "present",
            Feat::RegionMap => "region-map",
            Feat::Interior => "interior",
            Feat::Scalars => "scalars",
            Feat::Cond => "cond",
            Feat::SwapLoop => "swap-loop",
            Feat::FbCall => "fb-call",
            Feat::FbGlobal => "fb-global",
            Feat::FbLocal => "fb-local",
            Feat::FbStmt => "fb-stmt",
            Feat::FbOpaque => "fb-opaque",
            Feat::FbNowait => "fb-nowait",
            Feat::FbIf => "fb-if",
            Feat::DataIf => "data-if",
            Feat::Reduction => "reduction",
            Feat::Threads => "threads",
            Feat::ThreadsPick => "threads-pick",
            Feat::ThreadsFb => "threads-fb",
            Feat::StaticArr => "static-arr",
            Feat::Clauses => "clauses",
            Feat::ZeroLen => "zero-len",
            Feat::AlwaysFb => "always-fb",
            Feat::PresentMod => "present-mod",
            Feat::ArrReduce => "arr-reduce",
            Feat::RowPtr => "row-ptr",
            Feat::MapScalar => "map-scalar",
            Feat::Aos => "aos",
            Feat::KStruct => "kstruct",
        }
    }

    /// The feature of a name.
    pub fn parse(s: &str) -> Option<Feat> {
        Feat::ALL.iter().copied().find(|f| f.name() == s)
    }
}

/// A set of features.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Features(u64);

impl Features {
    /// Every feature.
    pub fn all() -> Features {
        Features(Feat::ALL.iter().fold(0, |m, f| m | (1 << *f as u64)))
    }

    /// No feature.
    pub fn none() -> Features {
        Features(0)
    }

    /// Whether `f` is in the set.
    pub fn has(self, f: Feat) -> bool {
        self.0 & (1 << f as u64) != 0
    }

    /// The set with `f`.
    pub fn with(self, f: Feat) -> Features {
        Features(self.0 | (1 << f as u64))
    }

    /// The set without `f`.
    pub fn without(self, f: Feat) -> Features {
        Features(self.0 & !(1 << f as u64))
    }

    /// The members, in [`Feat::ALL`] order.
    pub fn list(self) -> Vec<Feat> {
        Feat::ALL.iter().copied().filter(|f| self.has(*f)).collect()
    }

    /// `a,b,c`.
    pub fn names(self) -> String {
        self.list().iter().map(|f| f.name()).collect::<Vec<_>>().join(",")
    }

    /// Applies a specification: a comma-separated list of names, each `name`,
    /// `+name` (add) or `-name` (remove); a list of bare names replaces the set,
    /// `all` and `none` are the obvious sets. `"-fb-if,-threads"` is every feature but
    /// two when applied to [`Features::all`].
    pub fn apply_spec(self, spec: &str) -> Result<Features, String> {
        let mut out = self;
        let mut replaced = false;
        for w in spec.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            let (op, name) = match w.as_bytes()[0] {
                b'+' => ('+', &w[1..]),
                b'-' => ('-', &w[1..]),
                _ => ('=', w),
            };
            let set = match name {
                "all" => Some(Features::all()),
                "none" => Some(Features::none()),
                _ => None,
            };
            match (op, set) {
                ('=', Some(s)) => {
                    out = s;
                    replaced = true;
                }
                (_, Some(_)) => return Err(format!("'{w}': use 'all' or 'none' without a sign")),
                (op, None) => {
                    let f = Feat::parse(name).ok_or_else(|| format!("unknown feature '{name}'"))?;
                    out = match op {
                        '+' => out.with(f),
                        '-' => out.without(f),
                        _ => {
                            if !replaced {
                                out = Features::none();
                                replaced = true;
                            }
                            out.with(f)
                        }
                    };
                }
            }
        }
        Ok(out)
    }
}

/// A small seeded generator (SplitMix64): the programs depend only on the seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator for `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (`n > 0`).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n
    }

    /// Uniform in `lo..=hi`.
    pub fn range(&mut self, lo: i64, hi: i64) -> i64 {
        assert!(lo <= hi, "empty range {lo}..={hi}");
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// True with probability `p` percent.
    pub fn pct(&mut self, p: u64) -> bool {
        self.below(100) < p
    }

    /// One element of a non-empty slice.
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }

    /// An index drawn with the given weights (at least one positive).
    pub fn weighted(&mut self, ws: &[u64]) -> usize {
        let total: u64 = ws.iter().sum();
        let mut x = self.below(total);
        for (i, w) in ws.iter().enumerate() {
            if x < *w {
                return i;
            }
            x -= w;
        }
        unreachable!()
    }
}

/// The seed of case `i` of a run with seed `seed`.
pub fn case_seed(seed: u64, i: u64) -> u64 {
    let mut r = Rng::new(seed.wrapping_mul(0x2545_F491_4F6C_DD1D) ^ i.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    r.next_u64() >> 16 // short enough to type, and unique in practice
}

/// Element type of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ty {
    /// `float`
    F32,
    /// `double`
    F64,
    /// `int`
    I32,
}

impl Ty {
    /// The C type.
    pub fn c(self) -> &'static str {
        match self {
            Ty::F32 => "float",
            Ty::F64 => "double",
            Ty::I32 => "int",
        }
    }
}

/// How an array is declared.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// `T *p = malloc(n * sizeof *p)` (1D).
    Heap,
    /// `T f[N]` or `T f[N][M]`, local to the case function.
    Fixed,
    /// `T (*p)[m] = malloc(sizeof(T[n][m]))` (2D).
    Vla,
    /// `T *p = malloc(sizeof *p * n * m)`, accessed as `p[i * m + j]` (2D).
    Flat,
}

/// One array of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Arr {
    /// Element type.
    pub ty: Ty,
    /// Declaration.
    pub kind: Kind,
    /// Rows (the length of a 1D array).
    pub rows: i64,
    /// Columns (1 for a 1D array).
    pub cols: i64,
    /// Whether the array has two dimensions.
    pub two_d: bool,
    /// A fixed-size array with static storage duration.
    pub stat: bool,
    /// A heap or flat array whose pointer is the member `p` of a struct `s<i>`.
    pub member: bool,
    /// A static fixed-size array declared at file scope (`sf<case>_<i>`), with an
    /// accessor function `sg<case>_<i>(row[, col])` that regions with
    /// [`Fb::Global`] read it through.
    pub file: bool,
    /// The accessor is defined after the case function (declared before it): the
    /// plugin cannot see its body at the regions, whose footprint is then unknown.
    pub late: bool,
    /// A heap or fixed-size array of structs (`Feat::Aos`) whose field `v` holds
    /// the array.
    pub aos: bool,
}

impl Arr {
    /// Whether the variable is a pointer (can be swapped, used without map clause).
    pub fn is_ptr(&self) -> bool {
        self.kind != Kind::Fixed
    }
}

/// How a case names an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VarRef {
    /// The case's array variable `i` (`p<i>` or `f<i>`); after pointer swaps it may
    /// point at another array's storage.
    Arr(usize),
    /// `q<i>_<k>`, declared as `T *q = p<i> + k;` just before the region (1D heap).
    Interior(usize, i64),
    /// `mine<k>` of a threads construct: `t == 0 ? a : b`.
    Pick(usize),
}

/// A row index: `k`, or `lo + k` inside a threads construct.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ix {
    /// Constant part.
    pub k: i64,
    /// Whether `lo` (the thread's first row) is added.
    pub lo: bool,
}

impl Ix {
    /// A constant index.
    pub fn abs(k: i64) -> Ix {
        Ix { k, lo: false }
    }
}

/// An array section: rows `[r0, r0 + rlen)`, all columns or a box `cols`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Sec {
    /// The array.
    pub v: VarRef,
    /// First row.
    pub r0: Ix,
    /// Number of rows (≥ 1).
    pub rlen: i64,
    /// A column range `(first, length)` (updates of 2D boxes only).
    pub cols: Option<(i64, i64)>,
    /// Printed as the bare array name (a fixed array, whole).
    pub bare: bool,
}

/// A map type (or a motion for [`Op::Update`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapT {
    /// `to`
    To,
    /// `from`
    From,
    /// `tofrom`
    ToFrom,
    /// `alloc`
    Alloc,
    /// `release`
    Release,
    /// `delete`
    Delete,
}

impl MapT {
    /// The clause word.
    pub fn name(self) -> &'static str {
        match self {
            MapT::To => "to",
            MapT::From => "from",
            MapT::ToFrom => "tofrom",
            MapT::Alloc => "alloc",
            MapT::Release => "release",
            MapT::Delete => "delete",
        }
    }

    /// Copies host → device when a mapping is created (or with `always`).
    pub fn copies_in(self) -> bool {
        matches!(self, MapT::To | MapT::ToFrom)
    }

    /// Copies device → host when a mapping is removed (or with `always`).
    pub fn copies_out(self) -> bool {
        matches!(self, MapT::From | MapT::ToFrom)
    }
}

/// One list item of a map clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    /// The section.
    pub sec: Sec,
    /// Map type.
    pub t: MapT,
    /// `always` modifier.
    pub always: bool,
}

/// The construct of a target region.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RKind {
    /// `target teams distribute parallel for`
    Teams,
    /// `target parallel for`
    ParFor,
    /// `target` with a sequential loop inside.
    Target,
}

/// What makes a region fall back to the host (or run on the host device).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fb {
    /// The body calls a non-inline function.
    Call,
    /// The body reads file-scope arrays through non-inline accessor functions.
    Global,
    /// The body declares a local array.
    Local,
    /// The assignment sits in a `do … while (0)` statement.
    Stmt,
    /// The body also writes through `tsr_opq`, a null file-scope `int **` (never
    /// executed): the region's footprint is unknown to Tessera.
    Opaque,
    /// `nowait` (then `taskwait`).
    Nowait,
    /// `if(c_on)` (true) or `if(c_off)` (false: the region runs on the host device,
    /// on the host copies).
    If(bool),
}

/// A read `v[i + di][j + dj]` in a region body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Read {
    /// The array.
    pub v: VarRef,
    /// Row offset.
    pub di: i64,
    /// Column offset (2D).
    pub dj: i64,
}

/// A scalar of the host code added in a region body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// Nothing.
    None,
    /// `kf` (a float variable).
    Kf,
    /// `ki` (an int variable).
    Ki,
    /// `s`, the step of the enclosing time loop.
    Step,
}

/// The body of a region's loop nest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// `w[i][j] = f(reads…)`; `recur`: one read is `w[i-1]` (plain target only).
    Assign {
        /// The written array.
        w: VarRef,
        /// Reads (of other arrays at offsets, of `w` itself at offset 0, or -1 with `recur`).
        reads: Vec<Read>,
        /// `(i + j) % 3 == 0 ? f : k`.
        cond: bool,
        /// A host scalar added.
        scalar: Scalar,
        /// Picks the constants.
        konst: u8,
    },
    /// `s += g(reads…)` with `reduction(+: s)`, then `s` is printed.
    Reduce {
        /// Reads.
        reads: Vec<Read>,
    },
}

/// A target region: one loop (or a 2D nest) over rows `[rows.0, rows.1)` and
/// columns `[cols.0, cols.1)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Region {
    /// Construct.
    pub kind: RKind,
    /// Map clauses.
    pub maps: Vec<Item>,
    /// Row range.
    pub rows: (Ix, Ix),
    /// Column range (`(0, 1)` in 1D).
    pub cols: (i64, i64),
    /// Whether the loop nest is 2D.
    pub two_d: bool,
    /// Body.
    pub body: Body,
    /// Host fallback trigger.
    pub fb: Option<Fb>,
    /// An extra clause (0: none; see `emit`), and a 2D nest without `collapse(2)`.
    pub extra: u8,
    /// A 2D nest of a loop construct without `collapse(2)`.
    pub no_collapse: bool,
    /// `reduction(+: …)` on the written array, over the section of its `tofrom` map
    /// item (`Feat::ArrReduce`).
    pub reduce_w: bool,
    /// The body reaches its arrays through local row pointers (`Feat::RowPtr`).
    pub row_ptr: bool,
    /// A reduction's sum in the device data environment (`Feat::MapScalar`): 0
    /// none, else one of the forms of `emit` (1 to [`SCALAR_MAPS`]).
    pub scalar_map: u8,
}

/// The number of forms of [`Region::scalar_map`].
pub const SCALAR_MAPS: u8 = 11;

/// One operation of a case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Op {
    /// A target region.
    Region(Region),
    /// `target data map(items) [if(cond)] { body }`.
    Data {
        /// List items.
        items: Vec<Item>,
        /// `if(c_on)` / `if(c_off)`.
        cond: Option<bool>,
        /// Body.
        body: Vec<Op>,
    },
    /// `target enter data map(items)`.
    Enter {
        /// List items (`to`, `alloc`).
        items: Vec<Item>,
        /// `nowait` + `taskwait`.
        nowait: bool,
    },
    /// `target exit data map(items)`.
    Exit {
        /// List items (`from`, `release`, `delete`).
        items: Vec<Item>,
        /// `nowait` + `taskwait`.
        nowait: bool,
    },
    /// `target update to(…) from(…)`.
    Update {
        /// Motions: `(to, section, present)`, `to` for `to(…)` rather than
        /// `from(…)`, `present` for the `present` modifier.
        motions: Vec<(bool, Sec, bool)>,
        /// `nowait` + `taskwait`.
        nowait: bool,
    },
    /// A host loop writing `v` over rows × cols; `self_read`: it reads `v` too.
    HostWrite {
        /// Array.
        v: VarRef,
        /// Rows.
        rows: (Ix, Ix),
        /// Columns.
        cols: (i64, i64),
        /// Reads the old value.
        self_read: bool,
        /// Varies the values.
        salt: u8,
    },
    /// Prints rows of an array (host copy).
    Print {
        /// Array.
        v: VarRef,
        /// Rows.
        rows: (Ix, Ix),
    },
    /// `for (s = 0; s < steps; s++) { body; swap(p<a>, p<b>); }`.
    Loop {
        /// Steps.
        steps: i64,
        /// Swapped variables.
        a: usize,
        /// Swapped variables.
        b: usize,
        /// Body.
        body: Vec<Op>,
    },
    /// `parallel for num_threads(2)` over `t = 0, 1`, `lo = base + t * len`; thread
    /// `t` owns rows `[lo, lo + len)` of each array in `slices` and the `t`-th array
    /// of each pair in `picks` (as `mine<k>`).
    Threads {
        /// First row of thread 0.
        base: i64,
        /// Rows per thread.
        len: i64,
        /// Variables sliced between the threads.
        slices: Vec<usize>,
        /// Variable pairs picked per thread.
        picks: Vec<(usize, usize)>,
        /// Body.
        body: Vec<Op>,
    },
}

/// One generated case.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Case {
    /// Its seed (also its name: `case_<id>`).
    pub id: u64,
    /// Arrays.
    pub arrs: Vec<Arr>,
    /// Operations.
    pub ops: Vec<Op>,
    /// Where regions read the host scalars `kf`, `ki` (`Feat::KStruct`): 0 the
    /// variables; 1 the members of a struct `ks`; 2 the same, `ks` entered into the
    /// device data environment for the whole case; 3 as 2, through `pk = &ks`
    /// (`pk->kf`).
    pub kstruct: u8,
}

impl Case {
    /// The features the case actually uses (for reports and minimisation).
    pub fn used(&self) -> Features {
        let mut f = Features::none();
        if self.kstruct != 0 {
            f = f.with(Feat::KStruct);
        }
        for a in &self.arrs {
            f = f.with(match a.kind {
                Kind::Heap => Feat::Heap,
                Kind::Fixed => Feat::Fixed,
                Kind::Vla => Feat::Vla2d,
                Kind::Flat => Feat::Flat,
            });
            if a.stat {
                f = f.with(Feat::StaticArr);
            }
            if a.member {
                f = f.with(Feat::Member);
            }
            if a.aos {
                f = f.with(Feat::Aos);
            }
            match a.ty {
                Ty::F64 => f = f.with(Feat::Double),
                Ty::I32 => f = f.with(Feat::Int),
                Ty::F32 => {}
            }
        }
        fn walk(ops: &[Op], f: &mut Features, in_threads: &mut bool) {
            for op in ops {
                match op {
                    Op::Region(r) => {
                        let written_to = match &r.body {
                            Body::Assign { w, .. } => r.maps.iter().any(|m| m.sec.v == *w && m.t == MapT::To),
                            Body::Reduce { .. } => false,
                        };
                        if *in_threads && (r.fb.is_some() || written_to) {
                            *f = f.with(Feat::ThreadsFb);
                        }
                        if r.maps.iter().any(|m| m.always) && (r.fb == Some(Fb::Nowait) || written_to) {
                            *f = f.with(Feat::AlwaysFb);
                        }
                        *f = f.with(match r.kind {
                            RKind::Teams => Feat::Teams,
                            RKind::ParFor => Feat::ParFor,
                            RKind::Target => Feat::PlainTarget,
                        });
                        if !r.maps.is_empty() {
                            *f = f.with(Feat::RegionMap);
                        }
                        if r.extra != 0 || r.no_collapse {
                            *f = f.with(Feat::Clauses);
                        }
                        if r.maps.iter().any(|m| m.always) {
                            *f = f.with(Feat::Always);
                        }
                        if r.maps.iter().any(|m| m.sec.rlen == 0) {
                            *f = f.with(Feat::ZeroLen);
                        }
                        if r.row_ptr {
                            *f = f.with(Feat::RowPtr);
                        }
                        if r.scalar_map != 0 {
                            *f = f.with(Feat::MapScalar);
                        }
                        if r.reduce_w {
                            *f = f.with(Feat::ArrReduce);
                        }
                        let (reads, w) = match &r.body {
                            Body::Assign { w, reads, cond, scalar, .. } => {
                                if *cond {
                                    *f = f.with(Feat::Cond);
                                }
                                if *scalar != Scalar::None {
                                    *f = f.with(Feat::Scalars);
                                }
                                if reads.iter().any(|rd| rd.v == *w && rd.di < 0) {
                                    *f = f.with(Feat::Recurrence);
                                }
                                (reads.clone(), Some(*w))
                            }
                            Body::Reduce { reads } => {
                                *f = f.with(Feat::Reduction);
                                (reads.clone(), None)
                            }
                        };
                        let mut used: Vec<VarRef> = reads.iter().map(|r| r.v).chain(w).collect();
                        used.dedup();
                        for v in used {
                            if matches!(v, VarRef::Interior(..)) {
                                *f = f.with(Feat::Interior);
                            }
                            if !r.maps.iter().any(|m| m.sec.v == v) {
                                *f = f.with(Feat::Present);
                            }
                        }
                        match r.fb {
                            Some(Fb::Call) => *f = f.with(Feat::FbCall),
                            Some(Fb::Global) => *f = f.with(Feat::FbGlobal),
                            Some(Fb::Local) => *f = f.with(Feat::FbLocal),
                            Some(Fb::Stmt) => *f = f.with(Feat::FbStmt),
                            Some(Fb::Opaque) => *f = f.with(Feat::FbOpaque),
                            Some(Fb::Nowait) => *f = f.with(Feat::FbNowait),
                            Some(Fb::If(_)) => *f = f.with(Feat::FbIf),
                            None => {}
                        }
                    }
                    Op::Data { items, cond, body } => {
                        *f = f.with(Feat::DataRegion);
                        if cond.is_some() {
                            *f = f.with(Feat::DataIf);
                        }
                        if items.iter().any(|m| m.always) {
                            *f = f.with(Feat::Always);
                        }
                        walk(body, f, in_threads);
                    }
                    Op::Enter { items, nowait } | Op::Exit { items, nowait } => {
                        *f = f.with(Feat::EnterExit);
                        if *nowait {
                            *f = f.with(Feat::DataNowait);
                        }
                        if items.iter().any(|m| m.always) {
                            *f = f.with(Feat::Always);
                        }
                    }
                    Op::Update { motions, nowait } => {
                        *f = f.with(Feat::Update);
                        if *nowait {
                            *f = f.with(Feat::DataNowait);
                        }
                        if motions.iter().any(|(_, s, _)| s.cols.is_some()) {
                            *f = f.with(Feat::UpdateBox);
                        }
                        if motions.iter().any(|m| m.2) {
                            *f = f.with(Feat::PresentMod);
                        }
                    }
                    Op::HostWrite { .. } => *f = f.with(Feat::HostWrite),
                    Op::Print { .. } => *f = f.with(Feat::Print),
                    Op::Loop { body, .. } => {
                        *f = f.with(Feat::SwapLoop);
                        walk(body, f, in_threads);
                    }
                    Op::Threads { slices, picks, body, .. } => {
                        if !slices.is_empty() {
                            *f = f.with(Feat::Threads);
                        }
                        if !picks.is_empty() {
                            *f = f.with(Feat::ThreadsPick);
                        }
                        *in_threads = true;
                        walk(body, f, in_threads);
                        *in_threads = false;
                    }
                }
            }
        }
        walk(&self.ops, &mut f, &mut false);
        // Reference counts and exits of parts are properties of the run, not of one op.
        let (refcount, exit_sub) = Model::new(&self.arrs).refcount_usage(&self.ops);
        if refcount {
            f = f.with(Feat::RefCount);
        }
        if exit_sub {
            f = f.with(Feat::ExitSub);
        }
        f
    }

    /// Number of ops, nested ones included (a size measure for shrinking).
    pub fn size(&self) -> usize {
        fn n(ops: &[Op]) -> usize {
            ops.iter()
                .map(|o| {
                    1 + match o {
                        Op::Data { body, items, .. } => n(body) + items.len(),
                        Op::Loop { body, steps, .. } => n(body) + *steps as usize,
                        Op::Threads { body, .. } => n(body) + 1,
                        Op::Region(r) => r.maps.len(),
                        Op::Enter { items, .. } | Op::Exit { items, .. } => items.len(),
                        Op::Update { motions, .. } => motions.len(),
                        _ => 0,
                    }
                })
                .sum()
        }
        n(&self.ops) + self.arrs.iter().map(|a| (a.rows * a.cols) as usize / 64).sum::<usize>()
    }
}
