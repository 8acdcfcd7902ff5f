//! The closed set of reasons a region stays on the host.
//!
//! Each reason has a stable code (for scripts and tests) and a message in the user's
//! terms, without polyhedral jargon beyond "affine". The plugin prints the message as
//! `remark: target region not offloaded: <message>` at the rejection's location.

use tessera_ir::Loc;

/// Why a region is not offloaded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RejectReason {
    /// A clause Tessera does not implement (`is_device_ptr`, `lastprivate`, a `reduction`
    /// with a modifier, …).
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
    /// A function call inside the region (may have side effects; no HLS equivalent).
    Call {
        /// Source text of the call.
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
    /// The region assigns (or reduces into) a scalar of the enclosing function that
    /// also gives an array's size or mapped section: the runtime evaluates those from
    /// the scalar's value at the directive, while the scalar itself comes back from
    /// the device.
    ScalarWrite {
        /// The scalar.
        name: String,
    },
    /// A `reduction` list item Tessera does not reduce (an array section, a local of
    /// the region, …).
    UnsupportedReduction {
        /// `reduction(op: item)`.
        text: String,
        /// What is not supported (a sentence without names, the same for every
        /// item of its kind).
        why: String,
        /// What to change.
        hint: String,
    },
    /// An array or scalar written in the region (or a reduction variable) but mapped
    /// `to` or `alloc`: the device copy would be discarded, while the host version
    /// would keep the writes.
    WriteToInput {
        /// The array or scalar.
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
            RejectReason::UnsupportedExpression { .. } => "unsupported-expression",
            RejectReason::NonAffineSubscript { .. } => "non-affine-subscript",
            RejectReason::NonAffineBound { .. } => "non-affine-bound",
            RejectReason::UnknownExtent { .. } => "unknown-extent",
            RejectReason::ScalarWrite { .. } => "scalar-write",
            RejectReason::WriteToInput { .. } => "write-to-input",
            RejectReason::UnsupportedReduction { .. } => "unsupported-reduction",
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
            RejectReason::Call { text } => format!("call '{text}' is not supported (it may have side effects)"),
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
            RejectReason::ScalarWrite { name } => format!(
                "the region assigns the scalar '{name}', which also gives the size of a mapped array (use a copy of it for the size)"
            ),
            RejectReason::WriteToInput { array } => {
                format!("'{array}' is written but mapped 'to' (use 'tofrom' or 'from')")
            }
            RejectReason::UnsupportedReduction { text, why, hint } => format!("{why}: '{text}' ({hint})"),
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
