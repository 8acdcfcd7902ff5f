//! The region IR: the one seam between the clang plugin and the Rust pipeline.
//!
//! The plugin walks a `#pragma omp target` region in clang's AST and writes what it
//! finds as a [`Region`] in JSON (schema version [`IR_VERSION`]). Everything on the
//! Rust side — checks, the polyhedral optimizer, the HLS code generator, the tests —
//! starts from this structure, so every Rust test can load a region from a file
//! without clang.
//!
//! Architecture invariants:
//! - The plugin *extracts*, it never *decides*. Anything it cannot represent becomes
//!   an [`Expr::Unsupported`] / [`Stmt::Unsupported`] node carrying the source text,
//!   and the Rust side turns that into a located reject reason.
//! - Every expression node carries its C type after clang's implicit conversions, and
//!   every implicit conversion is an explicit [`Expr::Cast`]. Re-emitting the tree as
//!   C++ with those casts therefore computes bit for bit what the host computes.
//! - Calls are of three kinds only, all resolved by the plugin from the declaration
//!   clang chose: C math library functions (and their `std::` / `__builtin_` forms)
//!   are [`Expr::Call`] nodes of the closed set [`MathFn`]; calls of functions whose
//!   body clang sees and that are pure (scalar parameters, locals and a `return`) are
//!   inlined, their parameters substituted; the OpenMP queries `omp_get_team_num()`,
//!   `omp_get_num_teams()`, `omp_get_thread_num()`, `omp_get_num_threads()` and
//!   `omp_is_initial_device()` are the constants of the kernel's single team and
//!   thread (0, 1, 0, 1, 0). Every other call is [`Expr::Unsupported`] `call: <why>`.
//! - Compound assignments (`a[i] += x`) are lowered by the plugin into plain
//!   assignments with the computation types clang reports, so the IR has one kind of
//!   assignment.
//! - Variables are listed in [`Region::vars`] in the order the rewritten call passes
//!   their addresses to the runtime; that order is the runtime ABI of the region.

#![warn(missing_docs)]

pub mod data;
pub mod eval;
pub mod manifest;
pub mod mode;
pub mod print;
pub mod reject;
pub mod report;
pub mod tapasco;

pub use mode::{Mode, RunMode};
use serde::{Deserialize, Serialize};

/// Version of the JSON schema of [`Region`]. Bump on any incompatible change.
pub const IR_VERSION: u32 = 1;

/// A source location, as clang presents it (presumed location: after `#line`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Loc {
    /// File name as given to the compiler.
    pub file: String,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub col: u32,
}

impl Loc {
    /// `file:line`, the key the runtime report uses for a region.
    pub fn file_line(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

impl std::fmt::Display for Loc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}:{}", self.file, self.line, self.col)
    }
}

/// One OpenMP target region as extracted by the plugin.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Region {
    /// Schema version; must equal [`IR_VERSION`].
    pub version: u32,
    /// Location of the `#pragma omp target…` directive.
    pub location: Loc,
    /// The directive's file as an absolute, normalised path: `location.file` made
    /// absolute against the compiler's working directory, with `.` and `..` removed.
    /// The plugin adds it; kernel names hash it (`tessera_compiler::region_name`), so
    /// `a/k.c` and `b/k.c` give different kernels. Absent (IR written by hand, fixtures):
    /// `location.file` stands in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Name of the enclosing function (qualified in C++).
    pub function: String,
    /// Index of this region among the target regions of its translation unit (0-based),
    /// used to keep kernel names unique (templates instantiate one pragma many times).
    pub index: u32,
    /// Directive spelling, e.g. `target teams distribute parallel for`.
    pub directive: String,
    /// The `collapse(n)` argument of the directive that owns the loop nest (1 if absent).
    pub collapse: u32,
    /// Clauses the plugin saw but Tessera does not implement (e.g. `is_device_ptr`,
    /// a `reduction` with a modifier), with their locations. Any entry makes the region stay on the host.
    pub unsupported_clauses: Vec<Named>,
    /// Tile sizes requested for this region with `#pragma tessera tile(…)` (on the
    /// line before the directive), overriding the compile-wide option.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tile: Option<TileRequest>,
    /// The directive has an `if` clause (for the target construct): the rewritten call
    /// passes its value, evaluated at the directive, after the variables; when it is
    /// false the region runs on OpenMP's host device, on host memory.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub if_clause: bool,
    /// The target construct has a `device(n)` clause: the rewritten call passes the
    /// device number, evaluated at the directive, last (after the `if` value); a
    /// number that does not name Tessera's device sends the region to OpenMP's host
    /// device, as a false `if` does.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub device_clause: bool,
    /// Every variable the region (or a map clause) refers to, in runtime-argument order.
    pub vars: Vec<Var>,
    /// The scalar variables of `vars` that are members of structs the region reads
    /// (`c.n`, `p->g.ny`, read once at the directive): the call passes the address of
    /// a pointer to the member (null when the chain crosses a null pointer), so that
    /// the runtime can read the member where the region sees it — the device copy of
    /// a struct mapped on the device, else host memory.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<String>,
    /// The members of `members` whose type the region may write (through arrays it
    /// writes): read at the directive only when the runtime finds each outside every
    /// element the region may write; otherwise the region runs on the host, as
    /// written ([`manifest::Manifest::member_checks`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checked_members: Vec<String>,
    /// The scalar reductions of the region (`reduction(op: s)` on the target construct
    /// or on a construct nested in it whose body is the whole region), one per
    /// variable: inside the region the variable is a private copy that starts at the
    /// operator's identity, and at the end the variable becomes `s op private`
    /// (OpenMP 5.2, 5.5.8). Where the result goes is the variable's map: see
    /// [`Var::writes_back`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reductions: Vec<Reduction>,
    /// The reductions on arrays and array sections (`reduction(+: hist[0:n])`, on the
    /// target construct or on a construct whose body is the whole region). Inside the
    /// region the reduced elements are a private copy that starts at the operator's
    /// identity; at the end every element becomes `a op private` (OpenMP 5.2, 5.5.8).
    /// The kernel sees the array as an ordinary written one: the runtime fills the
    /// reduced elements of its device copy with the identity before the launch and
    /// combines them with the values they had afterwards (see
    /// [`manifest::ArrayReductionArg`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub array_reductions: Vec<ArrayReduction>,
    /// The body: the loop nest and whatever else the region contains.
    pub body: Vec<Stmt>,
}

/// Tile sizes requested in the source, one per loop of the nest, outermost first.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TileRequest {
    /// The sizes.
    pub sizes: Vec<i64>,
    /// Where the pragma is.
    pub loc: Loc,
}

/// One `reduction(op: var)` list item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Reduction {
    /// The reduction identifier.
    pub op: ReductionOp,
    /// The scalar variable (one of [`Region::vars`]); for an unsupported list item,
    /// its source text.
    pub var: String,
    /// Where the clause is.
    pub loc: Loc,
    /// Set when the list item is not one Tessera reduces, to what it is: `strided
    /// array section`, `array section that is not of a variable` (a member's),
    /// `variable of type '…'`, `declared in the region` (a local of the region),
    /// `part of the region` (the construct with the clause is not the whole region,
    /// so its private copies would not cover it), `second operator` (the variable is
    /// reduced with another operator too). Arrays and array sections Tessera reduces
    /// are [`Region::array_reductions`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsupported: Option<String>,
}

/// One `reduction(op: a[l:n]…)` list item on an array or array section.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayReduction {
    /// The reduction identifier.
    pub op: ReductionOp,
    /// The array variable (one of [`Region::vars`], of kind array or pointer).
    pub var: String,
    /// The reduced elements, one entry per subscript given (outermost first; missing
    /// inner dimensions are whole). Empty for a whole array (`reduction(+: a)`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub section: Vec<Section>,
    /// Where the clause is.
    pub loc: Loc,
}

/// The reduction identifiers of OpenMP for scalars of arithmetic type (`-` is `+`,
/// as in OpenMP 5.2, where the combiner of `-` is that of `+`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ReductionOp {
    /// `+` (and `-`): identity 0.
    Add,
    /// `*`: identity 1.
    Mul,
    /// `min`: identity the largest value of the type (for floating types the largest
    /// finite one, as clang initialises it); combiner `s < p ? s : p`.
    Min,
    /// `max`: identity the smallest value of the type (`-FLT_MAX` / `-DBL_MAX` for
    /// floating types); combiner `s > p ? s : p`.
    Max,
    /// `&`: identity `~0`.
    BitAnd,
    /// `|`: identity 0.
    BitOr,
    /// `^`: identity 0.
    BitXor,
    /// `&&`: identity 1.
    LAnd,
    /// `||`: identity 0.
    LOr,
}

impl ReductionOp {
    /// The OpenMP spelling (`+`, `min`, `&&`, …).
    pub fn name(self) -> &'static str {
        match self {
            ReductionOp::Add => "+",
            ReductionOp::Mul => "*",
            ReductionOp::Min => "min",
            ReductionOp::Max => "max",
            ReductionOp::BitAnd => "&",
            ReductionOp::BitOr => "|",
            ReductionOp::BitXor => "^",
            ReductionOp::LAnd => "&&",
            ReductionOp::LOr => "||",
        }
    }

    /// Whether the result depends on the order of the operations for operands of type
    /// `ty`: `+` and `*` on floating types (rounding). Everything else is exact in any
    /// order (integer arithmetic wraps, bitwise and logical operators, min and max).
    pub fn order_sensitive(self, ty: ScalarType) -> bool {
        ty.is_float() && matches!(self, ReductionOp::Add | ReductionOp::Mul)
    }
}

/// A name with a location (used for clauses and diagnostics).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Named {
    /// The spelling, e.g. `nowait`.
    pub name: String,
    /// Where it is.
    pub loc: Loc,
}

/// C scalar types Tessera represents. Everything else is unsupported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ScalarType {
    /// `_Bool` / `bool`.
    Bool,
    /// `signed char` / `char` (x86-64: signed).
    I8,
    /// `unsigned char`.
    U8,
    /// `short`.
    I16,
    /// `unsigned short`.
    U16,
    /// `int`.
    I32,
    /// `unsigned int`.
    U32,
    /// `long` / `long long` (LP64).
    I64,
    /// `unsigned long` / `size_t`.
    U64,
    /// `float`.
    F32,
    /// `double`.
    F64,
}

impl ScalarType {
    /// Size in bytes.
    pub fn size(self) -> usize {
        match self {
            ScalarType::Bool | ScalarType::I8 | ScalarType::U8 => 1,
            ScalarType::I16 | ScalarType::U16 => 2,
            ScalarType::I32 | ScalarType::U32 | ScalarType::F32 => 4,
            ScalarType::I64 | ScalarType::U64 | ScalarType::F64 => 8,
        }
    }

    /// The C/C++ spelling used in generated code.
    pub fn c_name(self) -> &'static str {
        match self {
            ScalarType::Bool => "bool",
            ScalarType::I8 => "signed char",
            ScalarType::U8 => "unsigned char",
            ScalarType::I16 => "short",
            ScalarType::U16 => "unsigned short",
            ScalarType::I32 => "int",
            ScalarType::U32 => "unsigned int",
            ScalarType::I64 => "long",
            ScalarType::U64 => "unsigned long",
            ScalarType::F32 => "float",
            ScalarType::F64 => "double",
        }
    }

    /// True for `float` and `double`.
    pub fn is_float(self) -> bool {
        matches!(self, ScalarType::F32 | ScalarType::F64)
    }

    /// True for integer types (including `bool`).
    pub fn is_integer(self) -> bool {
        !self.is_float()
    }

    /// True for signed integer types.
    pub fn is_signed(self) -> bool {
        matches!(self, ScalarType::I8 | ScalarType::I16 | ScalarType::I32 | ScalarType::I64)
    }
}

/// How the runtime finds a variable's data from the address the rewritten call passes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VarKind {
    /// A scalar: the address points at its value.
    Scalar,
    /// A pointer (also a pointer to a VLA, or an array parameter, which C adjusts to a
    /// pointer): the address points at the pointer, which points at element 0.
    Pointer,
    /// An array object (fixed size or local VLA): the address is element 0's address.
    Array,
}

/// OpenMP map types, with the `always` modifier folded in.
///
/// `release` and `delete` occur only in `target exit data`; the motions of `target
/// update` are `to` and `from`. `present` is never written in a map clause: it marks a
/// manifest argument that is a pointer without a map clause, which OpenMP treats as a
/// zero-length array section — the data it points at must already be mapped (by an
/// enclosing data region), and nothing is copied.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MapKind {
    /// `map(to: …)`: copied to the device before the region.
    #[serde(rename = "to")]
    To,
    /// `map(from: …)`: copied back after the region.
    #[serde(rename = "from")]
    From,
    /// `map(tofrom: …)` (also the implicit map of a whole array).
    #[serde(rename = "tofrom")]
    Tofrom,
    /// `map(alloc: …)`: device storage only.
    #[serde(rename = "alloc")]
    Alloc,
    /// `map(release: …)`: decrements the reference count, never copies.
    #[serde(rename = "release")]
    Release,
    /// `map(delete: …)`: sets the dynamic reference count to zero, never copies.
    #[serde(rename = "delete")]
    Delete,
    /// `map(always, to: …)`: copied to the device even when already present.
    #[serde(rename = "always to")]
    AlwaysTo,
    /// `map(always, from: …)`: copied back even when the mapping stays.
    #[serde(rename = "always from")]
    AlwaysFrom,
    /// `map(always, tofrom: …)`.
    #[serde(rename = "always tofrom")]
    AlwaysTofrom,
    /// A pointer without a map clause (manifests only, see the type's doc).
    #[serde(rename = "present")]
    Present,
}

impl MapKind {
    /// The map type without the `always` modifier.
    pub fn base(self) -> MapKind {
        match self {
            MapKind::AlwaysTo => MapKind::To,
            MapKind::AlwaysFrom => MapKind::From,
            MapKind::AlwaysTofrom => MapKind::Tofrom,
            k => k,
        }
    }
    /// The map type with the `always` modifier (`None` for types that cannot have it).
    pub fn with_always(self) -> Option<MapKind> {
        match self.base() {
            MapKind::To => Some(MapKind::AlwaysTo),
            MapKind::From => Some(MapKind::AlwaysFrom),
            MapKind::Tofrom => Some(MapKind::AlwaysTofrom),
            _ => None,
        }
    }
    /// Whether the `always` modifier is present.
    pub fn is_always(self) -> bool {
        matches!(self, MapKind::AlwaysTo | MapKind::AlwaysFrom | MapKind::AlwaysTofrom)
    }
    /// Whether the host data is copied to the device when the mapping is created
    /// (or on every entry, with `always`).
    pub fn copies_in(self) -> bool {
        matches!(self.base(), MapKind::To | MapKind::Tofrom)
    }
    /// Whether the device data is copied back when the mapping ends (or on every
    /// exit, with `always`).
    pub fn copies_out(self) -> bool {
        matches!(self.base(), MapKind::From | MapKind::Tofrom)
    }
    /// The OpenMP spelling (`always, tofrom` with the modifier).
    pub fn name(self) -> &'static str {
        match self {
            MapKind::To => "to",
            MapKind::From => "from",
            MapKind::Tofrom => "tofrom",
            MapKind::Alloc => "alloc",
            MapKind::Release => "release",
            MapKind::Delete => "delete",
            MapKind::AlwaysTo => "always, to",
            MapKind::AlwaysFrom => "always, from",
            MapKind::AlwaysTofrom => "always, tofrom",
            MapKind::Present => "present",
        }
    }
}

/// One subscript range of an OpenMP array section, `[lower : length]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Section {
    /// First index.
    pub lower: Expr,
    /// Number of elements.
    pub length: Expr,
}

/// A variable the region uses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Var {
    /// Source name (unique within the region; the plugin disambiguates shadowed names).
    pub name: String,
    /// How to reach the data from its address.
    pub kind: VarKind,
    /// Element type for arrays and pointers, the type itself for scalars.
    pub elem: ScalarType,
    /// Array extents from the type, outermost first; `None` where the type does not
    /// say (the pointee of a plain pointer). Empty for scalars. Extents are expressions
    /// over scalar variables in [`Region::vars`].
    pub dims: Vec<Option<Expr>>,
    /// The map clause naming this variable, if any (scalars without one are
    /// firstprivate; a pointer without one reaches data an enclosing data region
    /// mapped, as a zero-length array section). A scalar in a `reduction` clause of a
    /// combined target construct (`target teams distribute parallel for
    /// reduction(+: s)`) and in no map clause has the `tofrom` OpenMP gives it
    /// implicitly (OpenMP 5.2, 5.8.8); the plugin writes it here.
    pub map: Option<MapKind>,
    /// The array section of that map clause, one entry per subscript given (may be
    /// fewer than `dims`: the remaining dimensions are whole). Empty: the whole array.
    pub section: Vec<Section>,
    /// Whether the region writes this variable. A written scalar mapped `tofrom` or
    /// `from` returns its final value to the host ([`Var::writes_back`]); a written
    /// firstprivate scalar (no map clause) is the region's own copy.
    pub written: bool,
    /// Declaration location.
    pub loc: Loc,
}

impl Var {
    /// A scalar whose value at the end of the region reaches the host: written by the
    /// region (or a reduction variable) and mapped `tofrom` or `from`.
    pub fn writes_back(&self) -> bool {
        self.kind == VarKind::Scalar && self.written && self.map.is_some_and(MapKind::copies_out)
    }
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum UnOp {
    /// `-x`
    Neg,
    /// `+x`
    Plus,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
}

/// Binary operators (no assignment forms: the plugin lowers those).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `&`
    BitAnd,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&&`
    LAnd,
    /// `||`
    LOr,
}

impl BinOp {
    /// C spelling.
    pub fn c_op(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Rem => "%",
            BinOp::Shl => "<<",
            BinOp::Shr => ">>",
            BinOp::BitAnd => "&",
            BinOp::BitOr => "|",
            BinOp::BitXor => "^",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Eq => "==",
            BinOp::Ne => "!=",
            BinOp::LAnd => "&&",
            BinOp::LOr => "||",
        }
    }
}

/// An expression tree. `ty` is the C type of the node's value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Expr {
    /// Integer literal (also character literals).
    Int {
        /// Value (unsigned 64-bit literals above `i64::MAX` are stored wrapped).
        value: i64,
        /// Type.
        ty: ScalarType,
    },
    /// Floating literal, stored exactly as the bits of its value widened to `double`.
    Float {
        /// `f64::to_bits` of the value.
        bits: u64,
        /// `f32` or `f64`.
        ty: ScalarType,
    },
    /// A scalar variable: a region variable, a loop index or a local.
    Var {
        /// Name.
        name: String,
        /// Type.
        ty: ScalarType,
    },
    /// An array element read `a[i][j]`, one subscript per dimension, outermost first.
    Read {
        /// Array variable (a [`Var`] of kind pointer or array).
        array: String,
        /// Subscripts.
        index: Vec<Expr>,
        /// Element type.
        ty: ScalarType,
        /// Location of the subscript expression.
        loc: Loc,
    },
    /// A unary operation.
    Unary {
        /// Operator.
        op: UnOp,
        /// Operand.
        arg: Box<Expr>,
        /// Result type.
        ty: ScalarType,
    },
    /// A binary operation; operands already converted to the operation type.
    Binary {
        /// Operator.
        op: BinOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
        /// Result type.
        ty: ScalarType,
    },
    /// A conversion (implicit or explicit in the source).
    Cast {
        /// Operand.
        arg: Box<Expr>,
        /// Target type.
        ty: ScalarType,
    },
    /// `c ? a : b`.
    Select {
        /// Condition.
        cond: Box<Expr>,
        /// Value if true.
        then: Box<Expr>,
        /// Value if false.
        #[serde(rename = "else")]
        otherwise: Box<Expr>,
        /// Type.
        ty: ScalarType,
    },
    /// A call of a C math library function, `func(args…)` in the type `ty` (`f32`:
    /// the `f`-suffixed C function, e.g. `sqrtf`). Every argument is already
    /// converted to `ty` (the plugin records the conversions clang applied, and those
    /// of C++'s `std::` overloads for integer arguments). A call is a pure expression:
    /// it reads what its arguments read and nothing else.
    Call {
        /// The function.
        func: MathFn,
        /// Arguments, [`MathFn::arity`] of them, each of type `ty`.
        args: Vec<Expr>,
        /// `f32` or `f64`.
        ty: ScalarType,
        /// Location of the call; for a call inside an inlined function's body (also a
        /// C++ `std::` overload's), the call of the region that was inlined.
        loc: Loc,
    },
    /// Something the IR cannot represent (a call, a pointer expression, …). The
    /// category `fp-contraction` marks a floating `a * b + c` (or `-`) that the host
    /// compilation may fuse into one multiply-add: clang allows contraction there
    /// (`-ffp-contract=on`, C's and C++'s default in clang 19, or `fast`, or a
    /// `#pragma … contract`) and the target has FMA instructions. On a target without
    /// them (x86-64's baseline) clang's `llvm.fmuladd` is a multiplication and an
    /// addition, each rounded, exactly what a kernel computes, and the plugin records
    /// the plain operations.
    Unsupported {
        /// Short category, e.g. `call: <why>`, `pointer arithmetic`, `increment`.
        what: String,
        /// Source text of the construct.
        text: String,
        /// Where it is.
        loc: Loc,
    },
}

/// The one match over an expression's direct sub-expressions, shared by
/// [`Expr::each_child`] and [`Expr::each_child_mut`] (`iter` / `iter_mut`).
macro_rules! each_child {
    ($e:expr, $f:expr, $iter:ident) => {
        match $e {
            Expr::Read { index: xs, .. } | Expr::Call { args: xs, .. } => xs.$iter().for_each($f),
            Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => $f(arg),
            Expr::Binary { lhs, rhs, .. } => {
                $f(lhs);
                $f(rhs);
            }
            Expr::Select { cond, then, otherwise, .. } => {
                $f(cond);
                $f(then);
                $f(otherwise);
            }
            Expr::Int { .. } | Expr::Float { .. } | Expr::Var { .. } | Expr::Unsupported { .. } => {}
        }
    };
}

impl Expr {
    /// The C type of the value, `None` for unsupported nodes.
    pub fn ty(&self) -> Option<ScalarType> {
        match self {
            Expr::Int { ty, .. }
            | Expr::Float { ty, .. }
            | Expr::Var { ty, .. }
            | Expr::Read { ty, .. }
            | Expr::Unary { ty, .. }
            | Expr::Binary { ty, .. }
            | Expr::Cast { ty, .. }
            | Expr::Select { ty, .. }
            | Expr::Call { ty, .. } => Some(*ty),
            Expr::Unsupported { .. } => None,
        }
    }

    /// Calls `f` on this node and every sub-expression, pre-order.
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        f(self);
        self.each_child(&mut |c| c.visit(f));
    }

    /// Calls `f` on each direct sub-expression, in order.
    pub fn each_child<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        each_child!(self, f, iter)
    }

    /// [`each_child`](Self::each_child), mutably.
    pub fn each_child_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        each_child!(self, f, iter_mut)
    }

    /// Calls `f` on this node and every sub-expression in [`Expr::visit`]'s order,
    /// with the conditions under which the node is evaluated at all: a branch of
    /// `c ? a : b` is evaluated under `(c, false)` (`a`) or `(c, true)` (`b`, the
    /// condition negated), the right operand of `l && r` under `(l, false)` and of
    /// `l || r` under `(l, true)`, innermost last.
    pub fn visit_guarded<'a>(&'a self, f: &mut dyn FnMut(&'a Expr, &[(&'a Expr, bool)])) {
        fn go<'a>(e: &'a Expr, guards: &mut Vec<(&'a Expr, bool)>, f: &mut dyn FnMut(&'a Expr, &[(&'a Expr, bool)])) {
            f(e, guards);
            fn under<'a>(g: (&'a Expr, bool), x: &'a Expr, guards: &mut Vec<(&'a Expr, bool)>, f: &mut dyn FnMut(&'a Expr, &[(&'a Expr, bool)])) {
                guards.push(g);
                go(x, guards, f);
                guards.pop();
            }
            match e {
                Expr::Read { index, .. } => index.iter().for_each(|x| go(x, guards, f)),
                Expr::Call { args, .. } => args.iter().for_each(|x| go(x, guards, f)),
                Expr::Unary { arg, .. } | Expr::Cast { arg, .. } => go(arg, guards, f),
                Expr::Binary { op: op @ (BinOp::LAnd | BinOp::LOr), lhs, rhs, .. } => {
                    go(lhs, guards, f);
                    under((lhs, *op == BinOp::LOr), rhs, guards, f);
                }
                Expr::Binary { lhs, rhs, .. } => {
                    go(lhs, guards, f);
                    go(rhs, guards, f);
                }
                Expr::Select { cond, then, otherwise, .. } => {
                    go(cond, guards, f);
                    under((cond, false), then, guards, f);
                    under((cond, true), otherwise, guards, f);
                }
                Expr::Int { .. } | Expr::Float { .. } | Expr::Var { .. } | Expr::Unsupported { .. } => {}
            }
        }
        go(self, &mut Vec::new(), f)
    }

    /// Calls `f` on this node and every sub-expression, pre-order, each able to change
    /// the node in place; the children visited are the node's after `f` changed it.
    pub fn visit_mut(&mut self, f: &mut dyn FnMut(&mut Expr)) {
        f(self);
        self.each_child_mut(&mut |c| c.visit_mut(f));
    }

    /// A copy with every node for which `f` returns a replacement replaced by it,
    /// outermost first (a replacement is not searched again).
    pub fn map(&self, f: &mut dyn FnMut(&Expr) -> Option<Expr>) -> Expr {
        let mut out = self.clone();
        out.replace_where(f);
        out
    }

    fn replace_where(&mut self, f: &mut dyn FnMut(&Expr) -> Option<Expr>) {
        match f(self) {
            Some(r) => *self = r,
            None => self.each_child_mut(&mut |c| c.replace_where(f)),
        }
    }

    /// An `int` literal (convenience for tests and generated IR).
    pub fn int(value: i64) -> Expr {
        Expr::Int { value, ty: ScalarType::I32 }
    }

    /// A variable reference (convenience).
    pub fn var(name: &str, ty: ScalarType) -> Expr {
        Expr::Var { name: name.to_string(), ty }
    }
}

/// The C math library functions the IR represents ([`Expr::Call`]), each in its
/// `double` and `float` form (`sqrt` / `sqrtf`).
///
/// The *exact* ones ([`MathFn::is_exact`]) have one correct result for every
/// argument: IEEE 754 requires `sqrt` and `fma` correctly rounded, and the others
/// (`fabs`, `fmin`, `fmax`, `floor`, `ceil`, `trunc`, `round`, `copysign`) return a
/// value representable in the type without any rounding. Every conforming library
/// computes the same bits, so a kernel computes what the host computes. The others
/// are approximated differently by each library (glibc, Vitis HLS' `hls_math.h`, …):
/// a kernel runs them only with `-fplugin-arg-tessera-math=relaxed`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MathFn {
    /// `sqrt(x)`, correctly rounded.
    Sqrt,
    /// `fabs(x)` (also C++ `std::abs` of a floating value).
    Fabs,
    /// `fmin(x, y)`: the smaller; the other one when one is a NaN.
    Fmin,
    /// `fmax(x, y)`: the larger; the other one when one is a NaN.
    Fmax,
    /// `floor(x)`.
    Floor,
    /// `ceil(x)`.
    Ceil,
    /// `trunc(x)`.
    Trunc,
    /// `round(x)`: halfway cases away from zero.
    Round,
    /// `copysign(x, y)`.
    Copysign,
    /// `fma(x, y, z)`: `x * y + z` rounded once.
    Fma,
    /// `exp(x)` (library-dependent).
    Exp,
    /// `exp2(x)` (library-dependent).
    Exp2,
    /// `expm1(x)` (library-dependent).
    Expm1,
    /// `log(x)` (library-dependent).
    Log,
    /// `log2(x)` (library-dependent).
    Log2,
    /// `log10(x)` (library-dependent).
    Log10,
    /// `log1p(x)` (library-dependent).
    Log1p,
    /// `pow(x, y)` (library-dependent).
    Pow,
    /// `sin(x)` (library-dependent).
    Sin,
    /// `cos(x)` (library-dependent).
    Cos,
    /// `tan(x)` (library-dependent).
    Tan,
    /// `asin(x)` (library-dependent).
    Asin,
    /// `acos(x)` (library-dependent).
    Acos,
    /// `atan(x)` (library-dependent).
    Atan,
    /// `atan2(y, x)` (library-dependent).
    Atan2,
    /// `sinh(x)` (library-dependent).
    Sinh,
    /// `cosh(x)` (library-dependent).
    Cosh,
    /// `tanh(x)` (library-dependent).
    Tanh,
    /// `cbrt(x)` (library-dependent).
    Cbrt,
    /// `hypot(x, y)` (library-dependent).
    Hypot,
}

impl MathFn {
    /// Every function, exact ones first.
    pub const ALL: [MathFn; 30] = [
        MathFn::Sqrt,
        MathFn::Fabs,
        MathFn::Fmin,
        MathFn::Fmax,
        MathFn::Floor,
        MathFn::Ceil,
        MathFn::Trunc,
        MathFn::Round,
        MathFn::Copysign,
        MathFn::Fma,
        MathFn::Exp,
        MathFn::Exp2,
        MathFn::Expm1,
        MathFn::Log,
        MathFn::Log2,
        MathFn::Log10,
        MathFn::Log1p,
        MathFn::Pow,
        MathFn::Sin,
        MathFn::Cos,
        MathFn::Tan,
        MathFn::Asin,
        MathFn::Acos,
        MathFn::Atan,
        MathFn::Atan2,
        MathFn::Sinh,
        MathFn::Cosh,
        MathFn::Tanh,
        MathFn::Cbrt,
        MathFn::Hypot,
    ];

    /// The C name of the `double` form (`sqrt`); also the IR's JSON spelling.
    pub fn name(self) -> &'static str {
        match self {
            MathFn::Sqrt => "sqrt",
            MathFn::Fabs => "fabs",
            MathFn::Fmin => "fmin",
            MathFn::Fmax => "fmax",
            MathFn::Floor => "floor",
            MathFn::Ceil => "ceil",
            MathFn::Trunc => "trunc",
            MathFn::Round => "round",
            MathFn::Copysign => "copysign",
            MathFn::Fma => "fma",
            MathFn::Exp => "exp",
            MathFn::Exp2 => "exp2",
            MathFn::Expm1 => "expm1",
            MathFn::Log => "log",
            MathFn::Log2 => "log2",
            MathFn::Log10 => "log10",
            MathFn::Log1p => "log1p",
            MathFn::Pow => "pow",
            MathFn::Sin => "sin",
            MathFn::Cos => "cos",
            MathFn::Tan => "tan",
            MathFn::Asin => "asin",
            MathFn::Acos => "acos",
            MathFn::Atan => "atan",
            MathFn::Atan2 => "atan2",
            MathFn::Sinh => "sinh",
            MathFn::Cosh => "cosh",
            MathFn::Tanh => "tanh",
            MathFn::Cbrt => "cbrt",
            MathFn::Hypot => "hypot",
        }
    }

    /// The C name of the form for `ty`: `sqrtf` for `f32`, `sqrt` otherwise.
    pub fn c_name(self, ty: ScalarType) -> String {
        match ty {
            ScalarType::F32 => format!("{}f", self.name()),
            _ => self.name().to_string(),
        }
    }

    /// Number of arguments.
    pub fn arity(self) -> usize {
        match self {
            MathFn::Fma => 3,
            MathFn::Fmin | MathFn::Fmax | MathFn::Copysign | MathFn::Pow | MathFn::Atan2 | MathFn::Hypot => 2,
            _ => 1,
        }
    }

    /// Whether IEEE 754 fixes the result bit for bit (see the type's documentation).
    pub fn is_exact(self) -> bool {
        matches!(
            self,
            MathFn::Sqrt
                | MathFn::Fabs
                | MathFn::Fmin
                | MathFn::Fmax
                | MathFn::Floor
                | MathFn::Ceil
                | MathFn::Trunc
                | MathFn::Round
                | MathFn::Copysign
                | MathFn::Fma
        )
    }
}

/// The target of an assignment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum LValue {
    /// An array element.
    Element {
        /// Array variable.
        array: String,
        /// Subscripts, outermost first.
        index: Vec<Expr>,
        /// Element type.
        ty: ScalarType,
        /// Location of the subscript expression.
        loc: Loc,
    },
    /// A local scalar declared inside the region ([`Stmt::Let`]).
    Local {
        /// Name.
        name: String,
        /// Type.
        ty: ScalarType,
    },
    /// A scalar variable of the enclosing function (written inside the region).
    Scalar {
        /// Name.
        name: String,
        /// Type.
        ty: ScalarType,
        /// Location.
        loc: Loc,
    },
}

/// A statement.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Stmt {
    /// A counted loop in OpenMP's canonical loop form (OpenMP 5.2, 4.4.1), in the
    /// direction of its source and with its iteration order:
    ///
    /// - `step > 0`: `for (ty var = lower; var < upper; var += step)`;
    /// - `step < 0`: `for (ty var = lower; var > upper; var += step)` (a decreasing
    ///   loop: `lower` is where it starts, `upper` the exclusive end below it);
    /// - with `ne`, the test is `var != upper` instead.
    ///
    /// The plugin normalises every canonical form into this one: `b op var` into
    /// `var op' b`; `var <= b` into `var < b + 1` and `var >= b` into `var > b - 1`
    /// (in the comparison's type, so `upper` is always the exclusive end);
    /// `++`/`--`/`+= c`/`-= c`/`var = var + c`/`var = c + var`/`var = var - c` into
    /// the signed constant `step`. Forms outside the canonical one (a step towards the
    /// wrong side of the bound, a test that is always true, a non-constant step) are
    /// [`Stmt::Unsupported`] `non-canonical loop: <why>`.
    For {
        /// Index variable.
        var: String,
        /// Index type.
        ty: ScalarType,
        /// Initial value.
        lower: Expr,
        /// Exclusive end in the direction of `step`, as converted for the source's
        /// comparison (the right-hand side of `var < …` / `var > …` / `var != …`).
        upper: Expr,
        /// Nonzero constant increment: positive for an increasing loop, negative for
        /// a decreasing one. It fits the index type's signed range.
        step: i64,
        /// The source tests `var != upper`. That is the loop `var < upper` (`step > 0`)
        /// or `var > upper` (`step < 0`) whenever the index reaches `upper` exactly
        /// (OpenMP requires it of a loop a directive is associated with); an index of
        /// an unsigned or narrower-than-`int` type may instead wrap around past
        /// `upper` with defined behaviour, so generated loops keep the `!=`.
        #[serde(default, skip_serializing_if = "is_false")]
        ne: bool,
        /// Loop body.
        body: Vec<Stmt>,
        /// Location of the `for`.
        loc: Loc,
    },
    /// `target = value;` (value already converted to the target's type).
    Assign {
        /// Where to store.
        target: LValue,
        /// What to store.
        value: Expr,
        /// Location of the statement.
        loc: Loc,
    },
    /// A local scalar declaration, `ty name = init;`.
    Let {
        /// Name (unique in the region).
        name: String,
        /// Type.
        ty: ScalarType,
        /// Initialiser.
        init: Option<Expr>,
        /// Location.
        loc: Loc,
    },
    /// `if (cond) { then } else { otherwise }`.
    If {
        /// Condition (an `int`/`bool` valued expression).
        cond: Expr,
        /// Taken branch.
        then: Vec<Stmt>,
        /// Other branch (may be empty).
        #[serde(rename = "else")]
        otherwise: Vec<Stmt>,
        /// Location.
        loc: Loc,
    },
    /// A statement the IR cannot represent.
    Unsupported {
        /// Short category, e.g. `while loop`, `non-canonical loop`, `call`.
        what: String,
        /// Source text.
        text: String,
        /// Where it is.
        loc: Loc,
    },
}

impl Stmt {
    /// The statement's location.
    pub fn loc(&self) -> &Loc {
        match self {
            Stmt::For { loc, .. }
            | Stmt::Assign { loc, .. }
            | Stmt::Let { loc, .. }
            | Stmt::If { loc, .. }
            | Stmt::Unsupported { loc, .. } => loc,
        }
    }

    /// Calls `f` on every expression directly or transitively inside this statement
    /// (loop bounds, subscripts of written elements, values, conditions).
    pub fn visit_exprs<'a>(&'a self, f: &mut dyn FnMut(&'a Expr)) {
        match self {
            Stmt::For { lower, upper, body, .. } => {
                lower.visit(f);
                upper.visit(f);
                body.iter().for_each(|s| s.visit_exprs(f));
            }
            Stmt::Assign { target, value, .. } => {
                if let LValue::Element { index, .. } = target {
                    index.iter().for_each(|e| e.visit(f));
                }
                value.visit(f);
            }
            Stmt::Let { init, .. } => {
                if let Some(e) = init {
                    e.visit(f);
                }
            }
            Stmt::If { cond, then, otherwise, .. } => {
                cond.visit(f);
                then.iter().chain(otherwise).for_each(|s| s.visit_exprs(f));
            }
            Stmt::Unsupported { .. } => {}
        }
    }

    /// Calls `f` on this statement and every nested statement, pre-order.
    pub fn visit<'a>(&'a self, f: &mut dyn FnMut(&'a Stmt)) {
        f(self);
        match self {
            Stmt::For { body, .. } => body.iter().for_each(|s| s.visit(f)),
            Stmt::If { then, otherwise, .. } => then.iter().chain(otherwise).for_each(|s| s.visit(f)),
            Stmt::Assign { .. } | Stmt::Let { .. } | Stmt::Unsupported { .. } => {}
        }
    }
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Errors reading a region file.
#[derive(Debug)]
pub enum IrError {
    /// The JSON does not parse as a region.
    Json(serde_json::Error),
    /// The schema version is not [`IR_VERSION`].
    Version(u32),
}

impl std::fmt::Display for IrError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            IrError::Json(e) => write!(f, "region IR does not parse: {e}"),
            IrError::Version(v) => {
                write!(f, "region IR has schema version {v}, this Tessera reads version {IR_VERSION}")
            }
        }
    }
}

impl std::error::Error for IrError {}

impl Region {
    /// A plain `target` region at `location` with these variables and body, and
    /// every other field at its default (function `f`, index 0, no clauses): what
    /// tests and tools that build regions by hand start from.
    pub fn new(location: Loc, vars: Vec<Var>, body: Vec<Stmt>) -> Region {
        Region {
            version: IR_VERSION,
            location,
            source: None,
            function: "f".into(),
            index: 0,
            directive: "target".into(),
            collapse: 1,
            unsupported_clauses: Vec::new(),
            tile: None,
            if_clause: false,
            device_clause: false,
            reductions: Vec::new(),
            array_reductions: Vec::new(),
            vars,
            members: Vec::new(),
            checked_members: Vec::new(),
            body,
        }
    }

    /// Parses a region from the plugin's JSON.
    pub fn from_json(text: &str) -> Result<Region, IrError> {
        let r: Region = serde_json::from_str(text).map_err(IrError::Json)?;
        if r.version != IR_VERSION {
            return Err(IrError::Version(r.version));
        }
        Ok(r)
    }

    /// Pretty JSON, the format of `*.ir.json` files.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("region IR is always serialisable")
    }

    /// The reduction of variable `name`, if it is a reduction variable.
    pub fn reduction(&self, name: &str) -> Option<&Reduction> {
        self.reductions.iter().find(|r| r.var == name && r.unsupported.is_none())
    }

    /// The array reduction of variable `name`, if the region reduces (part of) it.
    pub fn array_reduction(&self, name: &str) -> Option<&ArrayReduction> {
        self.array_reductions.iter().find(|r| r.var == name)
    }

    /// Looks a region variable up by name.
    pub fn var(&self, name: &str) -> Option<&Var> {
        self.vars.iter().find(|v| v.name == name)
    }

    /// Calls `f` on every statement of the body, pre-order.
    pub fn visit_stmts<'a>(&'a self, f: &mut dyn FnMut(&'a Stmt)) {
        self.body.iter().for_each(|s| s.visit(f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `map` replaces outermost first and does not search a replacement again;
    /// `visit_mut` visits the children a node has after it was changed, in `visit`'s
    /// order.
    #[test]
    fn map_and_visit_mut_rewrite_in_pre_order() {
        let i = Expr::var("i", ScalarType::I32);
        let read = |index: Expr| Expr::Read { array: "a".into(), index: vec![index], ty: ScalarType::I32, loc: Loc::default() };
        let add = |l: Expr, r: Expr| Expr::Binary { op: BinOp::Add, lhs: Box::new(l), rhs: Box::new(r), ty: ScalarType::I32 };
        // a[a[i]] + i, every `i` replaced by `i + 1` (once each: the replacement's own `i` stays).
        let e = add(read(read(i.clone())), i.clone());
        let m = e.map(&mut |x| (*x == i).then(|| add(i.clone(), Expr::int(1))));
        assert_eq!(m, add(read(read(add(i.clone(), Expr::int(1)))), add(i.clone(), Expr::int(1))));
        // visit_mut: the outer read rewritten to a[i]: its new subscript is visited.
        let mut e = read(read(Expr::int(7)));
        let mut seen = Vec::new();
        e.visit_mut(&mut |x| {
            seen.push(print::expr(x));
            if let Expr::Read { index, .. } = x {
                if index[0] != i {
                    index[0] = i.clone();
                }
            }
        });
        assert_eq!(e, read(i.clone()));
        assert_eq!(seen, ["a[a[7]]", "i"]);
    }

    /// A math call is tagged `call` with the function's C name, and reads back equal;
    /// `visit` reaches the reads inside its arguments.
    #[test]
    fn calls_round_trip_and_are_visited() {
        let read = |a: &str| Expr::Read { array: a.into(), index: vec![Expr::var("i", ScalarType::I32)], ty: ScalarType::F32, loc: Loc::default() };
        let call = Expr::Call { func: MathFn::Fma, args: vec![read("a"), read("b"), Expr::Float { bits: 1.0f64.to_bits(), ty: ScalarType::F32 }], ty: ScalarType::F32, loc: Loc::default() };
        let json = serde_json::to_value(&call).unwrap();
        assert_eq!(json["kind"], "call");
        assert_eq!(json["func"], "fma");
        assert_eq!(json["ty"], "f32");
        assert_eq!(serde_json::from_value::<Expr>(json).unwrap(), call);
        let mut arrays = Vec::new();
        call.visit(&mut |e| {
            if let Expr::Read { array, .. } = e {
                arrays.push(array.as_str());
            }
        });
        assert_eq!(arrays, ["a", "b"]);
        assert_eq!(call.ty(), Some(ScalarType::F32));
        assert_eq!(print::expr(&call), "fmaf(a[i], b[i], 1.0f)");
        // Every function's JSON spelling is its C name, and arities are C's.
        for f in MathFn::ALL {
            assert_eq!(serde_json::to_value(f).unwrap(), f.name());
            assert_eq!(f.c_name(ScalarType::F64), f.name());
        }
        assert_eq!(MathFn::ALL.iter().filter(|f| f.is_exact()).count(), 10);
        assert_eq!((MathFn::Atan2.arity(), MathFn::Sqrt.arity(), MathFn::Copysign.arity()), (2, 1, 2));
        assert!(serde_json::from_str::<MathFn>("\"sqrtf\"").is_err(), "the float form is the type, not the name");
    }
}
