//! The closed set of reasons a region stays on the host.
//!
//! Each reason has a stable code (for scripts and tests) and a message in the user's
//! terms, without polyhedral jargon beyond "affine". The plugin prints the message as
//! `remark: target region not offloaded: <message>` at the rejection's location.

use tessera_ir::Loc;

/// Why a region is not offloaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RejectReason {
    /// A clause Tessera does not implement (`nowait`, `depend`, `reduction`, …).
    UnsupportedClause {
        /// Clause name.
        clause: String,
    },
    /// A statement outside the input class (`while`, `break`, a call statement, …).
    UnsupportedStatement {
        /// Category from the plugin.
        what: String,
        /// Source text.
        text: String,
    },
    /// A `for` loop outside OpenMP's canonical loop form (OpenMP 5.2, 4.4.1), or in it
    /// with a step that is not an integer constant: its test is not a comparison of
    /// the index with a bound, its increment not a step of the index, the step moves
    /// the index away from the bound, the test is always true, … (the plugin says
    /// which).
    NonCanonicalLoop {
        /// The loop header, `for (…)`.
        text: String,
        /// What makes it non-canonical.
        why: String,
    },
    /// A call Tessera cannot run in a kernel: not a math function of the IR
    /// (`tessera_ir::MathFn`), not an OpenMP query it answers, and not a function it
    /// can inline (a visible body, pure, a `return` after local declarations and
    /// assignments); the plugin says which.
    Call {
        /// Source text of the call.
        text: String,
        /// Why it is not inlined (from the plugin).
        why: String,
    },
    /// A call of a math function whose result differs between math libraries
    /// (`expf`, `log`, `pow`, …) without `-fplugin-arg-tessera-math=relaxed`.
    InexactMath {
        /// The C name, e.g. `expf`.
        func: String,
    },
    /// A floating `a * b + c` that the host compilation contracts into one fused
    /// multiply-add (FP contraction allowed, e.g. C's default `-ffp-contract=on`, for
    /// a target with FMA instructions): the kernel rounds twice, as the source says,
    /// and would differ from the host.
    HostContraction {
        /// The expression.
        text: String,
    },
    /// An expression the IR cannot represent (pointer arithmetic, an unsupported type, …).
    UnsupportedExpression {
        /// Category from the plugin.
        what: String,
        /// Source text.
        text: String,
    },
    /// An array subscript that is not an affine function of loop indices and
    /// integer scalars.
    NonAffineSubscript {
        /// The array.
        array: String,
        /// The subscript.
        subscript: String,
    },
    /// A loop bound that is not affine in the outer loop indices and integer scalars.
    NonAffineBound {
        /// Loop index.
        var: String,
        /// The bound.
        bound: String,
    },
    /// An array whose size neither its type nor a map clause gives.
    UnknownExtent {
        /// The array.
        array: String,
    },
    /// The region assigns a scalar of the enclosing function (needs `reduction` or a
    /// mapped scalar).
    ScalarWrite {
        /// The scalar.
        name: String,
    },
    /// An array written in the region but mapped `to`: the device copy would be
    /// discarded, while the host version would keep the writes.
    WriteToInput {
        /// The array.
        array: String,
    },
}

impl RejectReason {
    /// Stable short code of the reason.
    pub fn code(&self) -> &'static str {
        match self {
            RejectReason::UnsupportedClause { .. } => "unsupported-clause",
            RejectReason::UnsupportedStatement { .. } => "unsupported-statement",
            RejectReason::NonCanonicalLoop { .. } => "non-canonical-loop",
            RejectReason::Call { .. } => "call",
            RejectReason::InexactMath { .. } => "inexact-math",
            RejectReason::HostContraction { .. } => "host-fp-contraction",
            RejectReason::UnsupportedExpression { .. } => "unsupported-expression",
            RejectReason::NonAffineSubscript { .. } => "non-affine-subscript",
            RejectReason::NonAffineBound { .. } => "non-affine-bound",
            RejectReason::UnknownExtent { .. } => "unknown-extent",
            RejectReason::ScalarWrite { .. } => "scalar-write",
            RejectReason::WriteToInput { .. } => "write-to-input",
        }
    }

    /// The user-facing message.
    pub fn message(&self) -> String {
        match self {
            RejectReason::UnsupportedClause { clause } => format!("clause '{clause}' is not supported"),
            RejectReason::UnsupportedStatement { what, text } => format!("{what} '{text}' is not supported"),
            RejectReason::NonCanonicalLoop { text, why } => {
                format!("loop '{text}' is not in the canonical form Tessera offloads: {why}")
            }
            RejectReason::Call { text, why } => format!("call '{text}' is not supported: {why}"),
            RejectReason::InexactMath { func } => format!(
                "'{func}' is not correctly rounded in every math library; the kernel's results could differ \
                 from the host's — use -fplugin-arg-tessera-math=relaxed to accept that"
            ),
            RejectReason::HostContraction { text } => format!(
                "the host compilation fuses '{text}' into one multiply-add (floating-point contraction is on and \
                 the target has FMA instructions), which the kernel does not — compile with -ffp-contract=off, \
                 or write fma() where a fused operation is meant"
            ),
            RejectReason::UnsupportedExpression { what, text } => format!("{what} '{text}' is not supported"),
            RejectReason::NonAffineSubscript { array, subscript } => {
                format!("subscript '{subscript}' of '{array}' is not affine")
            }
            RejectReason::NonAffineBound { var, bound } => {
                format!("bound '{bound}' of loop '{var}' is not affine")
            }
            RejectReason::UnknownExtent { array } => {
                format!("the size of '{array}' is unknown (give it an array section in a map clause, e.g. '{array}[0:n]')")
            }
            RejectReason::ScalarWrite { name } => format!("the region assigns the scalar '{name}' of the enclosing function"),
            RejectReason::WriteToInput { array } => {
                format!("'{array}' is written but mapped 'to' (use 'tofrom' or 'from')")
            }
        }
    }
}

/// A reason with the location it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// The reason.
    pub reason: RejectReason,
    /// Where to point the remark.
    pub loc: Loc,
}

impl Rejection {
    /// `[code] message`-free user message (the code is for tools: see [`RejectReason::code`]).
    pub fn message(&self) -> String {
        self.reason.message()
    }
}
