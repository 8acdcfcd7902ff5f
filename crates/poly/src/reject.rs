//! The closed set of reasons the optimizer declines a region.
//!
//! The optimizer's input class is the paper's (Sec. 4, first paragraph): a canonical
//! loop nest with a rectangular iteration domain that a SCoP represents, affine
//! subscripts, non-overlapping arrays, no side effects except array writes, and no
//! dependence that tiling breaks ("e.g. Gauss-Seidel or SOR methods"). The compiler's
//! input-class check (`crates/compiler/src/check.rs`) already rejects most violations;
//! the structural ones are checked again here (defensively), and the optimizer adds
//! its own: imperfect nests, statements other than assignments in the body,
//! non-rectangular domains, dependences that forbid rectangular tiling, bad tile sizes.
//!
//! Arrays are assumed not to overlap (distinct base pointers): the runtime checks that
//! before it runs a kernel (`shared/design/method.md`, input class), so there is no
//! reason for it here.
//!
//! A rejected region is never miscompiled: it runs as the baseline kernel or on the
//! host. Each reason has a stable code and a message in the user's terms; the lead
//! maps these variants into the compiler's closed set (`RejectReason`).

use serde::{Deserialize, Serialize};
use tessera_ir::Loc;

/// Why the optimizer does not handle a region.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum PolyRejectReason {
    /// The region body is not one perfect loop nest (statements beside a loop,
    /// sibling loops, no loop at all, an empty body).
    NotALoopNest {
        /// What was found instead.
        what: String,
    },
    /// A statement other than an array assignment in the loop body (`if`, a local
    /// declaration, a statement the IR cannot represent).
    UnsupportedStatement {
        /// Category.
        what: String,
        /// Source text (or a printed form).
        text: String,
    },
    /// An expression the optimizer cannot model (a call, an unsupported construct).
    UnsupportedExpression {
        /// Category.
        what: String,
        /// Source text.
        text: String,
    },
    /// The body assigns a scalar (local or of the enclosing function).
    ScalarWrite {
        /// The scalar.
        name: String,
    },
    /// A subscript that is not affine in the loop indices and integer scalars.
    NonAffineSubscript {
        /// The array.
        array: String,
        /// The subscript, printed.
        subscript: String,
    },
    /// A loop bound that is not affine in integer scalars.
    NonAffineBound {
        /// Loop index.
        var: String,
        /// The bound, printed.
        bound: String,
    },
    /// A loop bound that depends on an enclosing loop index: the domain is not
    /// rectangular, so tiles would not form a regular grid.
    NonRectangular {
        /// Loop index.
        var: String,
        /// The bound.
        bound: String,
    },
    /// An access to a name that is not an array of the region, or with the wrong
    /// number of subscripts.
    BadArrayAccess {
        /// The name.
        array: String,
        /// What is wrong.
        what: String,
    },
    /// A loop testing `var != bound` on an index that may wrap around past the bound
    /// with defined behaviour (unsigned, or narrower than `int`): it is not the
    /// `<` / `>` loop the optimizer models (`crate::normalize`).
    NotEqualTest {
        /// Loop index.
        var: String,
        /// Its C type.
        ty: String,
    },
    /// A loop whose index or comparison is not plain integer arithmetic: an index
    /// narrower than `int` (its increments wrap with defined behaviour) or a bound
    /// compared in another type than the index's (`int i < unsigned n` converts a
    /// negative `i` to a huge value). The optimizer models loops over the integers, so
    /// such a loop gets the baseline kernel, which keeps the source's arithmetic.
    WrappingLoop {
        /// Loop index.
        var: String,
        /// Its C type.
        ty: String,
        /// The type the comparison is done in.
        cmp: String,
    },
    /// `--tile` / `tile=` gives a different number of sizes than the nest has loops.
    TileSizeCount {
        /// Loops in the nest.
        depth: usize,
        /// Sizes given.
        given: usize,
    },
    /// A tile size below 1 or not a multiple of its loop's step.
    BadTileSize {
        /// Loop index.
        var: String,
        /// The size.
        size: i64,
        /// The loop step.
        step: i64,
    },
    /// The nest is deeper than the optimizer enumerates permutations for.
    TooDeep {
        /// Depth of the nest.
        depth: usize,
        /// Largest depth handled.
        max: usize,
    },
    /// A dependence that rectangular tiling (with the original loop order) would
    /// violate, e.g. distance (1, −1) of a Gauss–Seidel sweep (paper Sec. 4).
    TilingIllegal {
        /// The violated dependence, described.
        dependence: String,
    },
    /// isl failed (a bug, or the operation limit for pathological inputs).
    Internal {
        /// isl's message and what was being computed.
        message: String,
    },
}

impl PolyRejectReason {
    /// Stable short code of the reason.
    pub fn code(&self) -> &'static str {
        match self {
            PolyRejectReason::NotALoopNest { .. } => "not-a-loop-nest",
            PolyRejectReason::UnsupportedStatement { .. } => "unsupported-statement",
            PolyRejectReason::UnsupportedExpression { .. } => "unsupported-expression",
            PolyRejectReason::ScalarWrite { .. } => "scalar-write",
            PolyRejectReason::NonAffineSubscript { .. } => "non-affine-subscript",
            PolyRejectReason::NonAffineBound { .. } => "non-affine-bound",
            PolyRejectReason::NonRectangular { .. } => "non-rectangular",
            PolyRejectReason::BadArrayAccess { .. } => "bad-array-access",
            PolyRejectReason::NotEqualTest { .. } => "not-equal-test",
            PolyRejectReason::WrappingLoop { .. } => "wrapping-loop",
            PolyRejectReason::TileSizeCount { .. } => "tile-size-count",
            PolyRejectReason::BadTileSize { .. } => "bad-tile-size",
            PolyRejectReason::TooDeep { .. } => "too-deep",
            PolyRejectReason::TilingIllegal { .. } => "tiling-illegal",
            PolyRejectReason::Internal { .. } => "internal",
        }
    }

    /// The user-facing message (no polyhedral jargon beyond "affine" and "dependence").
    pub fn message(&self) -> String {
        match self {
            PolyRejectReason::NotALoopNest { what } => format!("the region is not a single perfect loop nest ({what})"),
            PolyRejectReason::UnsupportedStatement { what, text } => {
                format!("{what} '{text}' in the loop body is not supported by the optimizer")
            }
            PolyRejectReason::UnsupportedExpression { what, text } => format!("{what} '{text}' is not supported"),
            PolyRejectReason::ScalarWrite { name } => format!("the loop body assigns the scalar '{name}'"),
            PolyRejectReason::NonAffineSubscript { array, subscript } => {
                format!("subscript '{subscript}' of '{array}' is not affine")
            }
            PolyRejectReason::NonAffineBound { var, bound } => format!("bound '{bound}' of loop '{var}' is not affine"),
            PolyRejectReason::NonRectangular { var, bound } => {
                format!("bound '{bound}' of loop '{var}' depends on an enclosing loop index (the iteration space is not rectangular)")
            }
            PolyRejectReason::BadArrayAccess { array, what } => format!("access to '{array}': {what}"),
            PolyRejectReason::NotEqualTest { var, ty } => format!(
                "loop '{var}' tests '!=' on an index of type '{ty}', which can wrap around past its bound; only 'int' and 'long' indices are tiled with a '!=' test"
            ),
            PolyRejectReason::WrappingLoop { var, ty, cmp } => format!(
                "loop '{var}' has an index of type '{ty}' compared as '{cmp}', whose arithmetic can wrap; only 'int', 'long' and their unsigned types, compared in a type that holds every index value, are tiled"
            ),
            PolyRejectReason::TileSizeCount { depth, given } => {
                format!("{given} tile size(s) given for a loop nest of depth {depth}")
            }
            PolyRejectReason::BadTileSize { var, size, step } => {
                format!("tile size {size} for loop '{var}' must be at least 1 and a multiple of its step {step}")
            }
            PolyRejectReason::TooDeep { depth, max } => {
                format!("the loop nest has depth {depth}; the optimizer handles at most {max}")
            }
            PolyRejectReason::TilingIllegal { dependence } => {
                format!("tiling the loops would violate a data dependence: {dependence}")
            }
            PolyRejectReason::Internal { message } => format!("internal optimizer error: {message}"),
        }
    }

    /// True for [`PolyRejectReason::Internal`]: a bug or a resource limit rather than
    /// input outside the class.
    pub fn is_internal(&self) -> bool {
        matches!(self, PolyRejectReason::Internal { .. })
    }
}

/// A reason with the location it concerns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PolyReject {
    /// The reason.
    pub reason: PolyRejectReason,
    /// Where to point the remark.
    pub loc: Loc,
}

impl PolyReject {
    /// A reason at a location.
    pub fn new(reason: PolyRejectReason, loc: &Loc) -> PolyReject {
        PolyReject { reason, loc: loc.clone() }
    }

    /// The user message (see [`PolyRejectReason::message`]).
    pub fn message(&self) -> String {
        self.reason.message()
    }
}

impl std::fmt::Display for PolyReject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {} [{}]", self.loc, self.message(), self.reason.code())
    }
}

impl std::error::Error for PolyReject {}
