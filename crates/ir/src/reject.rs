//! The one closed set of reasons why Tessera does not do something with a region:
//! keep it off the device (input stage), leave it untiled (tiling stage) or not
//! generate a tiled kernel for it (generation stage).
//!
//! Every reason has a stable code (for scripts, tests and `tessera explain`), a
//! [`Kind`] — unsupported input, a resource limit, or a bug in Tessera —, a message in
//! the user's terms and, where one helps, a hint of what to change in the source. The
//! remark a user sees is [`Reason::remark`]: `[code] message; hint`.
//!
//! Who produces what: the compiler's input-class check (`tessera_compiler::check`,
//! data directives in `tessera_compiler::data`) and the plugin (through the region IR's
//! unsupported nodes and `Reason::Unpassable`) the input stage; the optimizer
//! (`tessera_poly`) the tiling stage; the tiled kernel generator (`tessera_hls::paper`)
//! the generation stage. A [`Kind::Bug`] reason never becomes a plain remark: the
//! plugin reports it as an internal error and the tests fail on it.

use crate::Loc;
use serde::{Deserialize, Serialize};

/// Which stage gave up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The region stays on the host (compiler check, plugin).
    Input,
    /// The region runs untiled: the baseline kernel (optimizer).
    Tiling,
    /// The tiled kernel was not generated: the baseline kernel (generator).
    Generation,
}

/// What kind of reason it is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// The input is outside what Tessera handles; the user can change it.
    Unsupported,
    /// A limit of the device or of the optimizer (too deep, too large).
    Limit,
    /// Tessera contradicts itself: a bug. Tests fail on it; users see an internal error.
    Bug,
}

/// Why Tessera does not offload, tile, or generate a tiled kernel for a region.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum Reason {
    // ---- Input stage -------------------------------------------------------------
    /// A clause Tessera does not implement (`is_device_ptr`, `lastprivate`, …).
    UnsupportedClause {
        /// Clause name.
        clause: String,
    },
    /// A statement outside the input class (`while`, `break`, a local array, …), or
    /// one the optimizer does not model in a loop body (`if`, a local declaration).
    UnsupportedStatement {
        /// Category.
        what: String,
        /// Source text.
        text: String,
    },
    /// A `for` loop outside OpenMP's canonical loop form (OpenMP 5.2, 4.4.1), or in it
    /// with a step that is not an integer constant (the plugin says why).
    NonCanonicalLoop {
        /// The loop header, `for (…)`.
        text: String,
        /// What makes it non-canonical.
        why: String,
    },
    /// A call Tessera cannot run in a kernel: not a math function of the IR
    /// (`crate::MathFn`), not an OpenMP query it answers, and not a function it can
    /// inline (a visible body, pure, a `return` after local declarations and
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
    /// multiply-add (FP contraction allowed, e.g. C's default `-ffp-contract=on`, for a
    /// target with FMA instructions): the kernel rounds twice, as the source says, and
    /// would differ from the host.
    #[serde(rename = "host-fp-contraction")]
    HostContraction {
        /// The expression.
        text: String,
    },
    /// An expression the IR cannot represent (pointer arithmetic, an unsupported
    /// type, a member access the region may change, …).
    UnsupportedExpression {
        /// Category.
        what: String,
        /// Source text.
        text: String,
    },
    /// A subscript that is not an affine function of loop indices and integer scalars.
    NonAffineSubscript {
        /// The array.
        array: String,
        /// The subscript.
        subscript: String,
    },
    /// A linearised subscript (`a[i*n + j*m]`) of a flat array for which no
    /// multi-dimensional view exists (`tessera_compiler::delinearize`).
    NotDelinearizable {
        /// The array.
        array: String,
        /// The subscript.
        subscript: String,
        /// Why there is no view.
        why: String,
    },
    /// A loop bound that is not affine in outer loop indices and integer scalars.
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
    /// A `reduction` list item Tessera does not reduce (a strided array section, a
    /// local of the region, an array the target construct does not map, …).
    UnsupportedReduction {
        /// `reduction(op: item)`.
        text: String,
        /// What is not supported (a sentence without names, the same for every item
        /// of its kind).
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
    /// The plugin cannot pass the region's (or directive's) variables to the runtime
    /// from where it is (a variable of an enclosing construct it cannot name, memory
    /// reached through pointers inside a struct, …); the directive runs as written.
    Unpassable {
        /// The plugin's description.
        detail: String,
    },

    // ---- Tiling stage (the optimizer) --------------------------------------------
    /// The body is not one perfect loop nest.
    NotALoopNest {
        /// What was found instead.
        what: String,
    },
    /// A loop bound that depends on an enclosing loop index.
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
    /// A `!=` loop on an index that may wrap around past its bound.
    NotEqualTest {
        /// Loop index.
        var: String,
        /// Its C type.
        ty: String,
    },
    /// A loop whose index or comparison is not plain integer arithmetic.
    WrappingLoop {
        /// Loop index.
        var: String,
        /// Its C type.
        ty: String,
        /// The type the comparison is done in.
        cmp: String,
    },
    /// `tile=` gives a different number of sizes than the nest has loops.
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
    /// A reduction the tiled kernels do not accumulate: the loop reads the variable
    /// other than in its own accumulation, or assigns it other than by accumulating
    /// with the clause's operator (`tessera_poly::reduction`). The baseline kernel
    /// runs it, in the loop's order.
    #[serde(rename = "reduction")]
    ReductionNotTiled {
        /// `reduction(op: var)`.
        text: String,
        /// What the loop does with the variable instead.
        why: String,
    },
    /// A floating-point reduction that must be accumulated in the loop's order (its
    /// rounding depends on the order), which every legal tiling of the nest changes.
    ReductionOrder {
        /// `reduction(op: var)`.
        text: String,
        /// `sum`, `product`, `minimum`, `maximum`, … (what the operator accumulates).
        what: String,
        /// Whether `-fplugin-arg-tessera-reassociate` would allow the reordering (a
        /// sum or a product).
        reassociable: bool,
    },
    /// A dependence that rectangular tiling would violate (Gauss–Seidel, SOR).
    TilingIllegal {
        /// The violated dependence, described.
        dependence: String,
    },
    /// isl failed: a bug in the optimizer.
    Internal {
        /// isl's message and what was being computed.
        message: String,
    },

    // ---- Generation stage (the tiled kernel generator) ---------------------------
    /// The plan is one the tiled generator does not emit (a loop step other than 1,
    /// an array without a known extent, a buffer shift or write-back it cannot do).
    KernelUnsupported {
        /// What.
        detail: String,
    },
    /// The tiled kernel would not fit the device (buffers beyond its registers, a
    /// beat wider than an AXI bus).
    KernelTooLarge {
        /// What.
        detail: String,
    },
    /// The plan and the region disagree: a bug in Tessera.
    KernelInconsistent {
        /// What.
        detail: String,
    },
    /// Mode `dataflow`: the region is outside the streaming kernel's input class
    /// (`tessera_hls::dataflow`); it gets the `tessera` mode's kernel instead.
    DataflowUnsupported {
        /// What.
        detail: String,
    },
}

impl Reason {
    /// Stable short code.
    pub fn code(&self) -> &'static str {
        match self {
            Reason::UnsupportedClause { .. } => "unsupported-clause",
            Reason::UnsupportedStatement { .. } => "unsupported-statement",
            Reason::NonCanonicalLoop { .. } => "non-canonical-loop",
            Reason::Call { .. } => "call",
            Reason::InexactMath { .. } => "inexact-math",
            Reason::HostContraction { .. } => "host-fp-contraction",
            Reason::UnsupportedExpression { .. } => "unsupported-expression",
            Reason::NonAffineSubscript { .. } => "non-affine-subscript",
            Reason::NotDelinearizable { .. } => "not-delinearizable",
            Reason::NonAffineBound { .. } => "non-affine-bound",
            Reason::UnknownExtent { .. } => "unknown-extent",
            Reason::ScalarWrite { .. } => "scalar-write",
            Reason::WriteToInput { .. } => "write-to-input",
            Reason::UnsupportedReduction { .. } => "unsupported-reduction",
            Reason::ReductionNotTiled { .. } => "reduction",
            Reason::ReductionOrder { .. } => "reduction-order",
            Reason::Unpassable { .. } => "unpassable",
            Reason::NotALoopNest { .. } => "not-a-loop-nest",
            Reason::NonRectangular { .. } => "non-rectangular",
            Reason::BadArrayAccess { .. } => "bad-array-access",
            Reason::NotEqualTest { .. } => "not-equal-test",
            Reason::WrappingLoop { .. } => "wrapping-loop",
            Reason::TileSizeCount { .. } => "tile-size-count",
            Reason::BadTileSize { .. } => "bad-tile-size",
            Reason::TooDeep { .. } => "too-deep",
            Reason::TilingIllegal { .. } => "tiling-illegal",
            Reason::Internal { .. } => "internal",
            Reason::KernelUnsupported { .. } => "kernel-unsupported",
            Reason::KernelTooLarge { .. } => "kernel-too-large",
            Reason::KernelInconsistent { .. } => "kernel-inconsistent",
            Reason::DataflowUnsupported { .. } => "dataflow-unsupported",
        }
    }

    /// The stage that gave up. The variants the optimizer re-checks defensively
    /// (statements, expressions, subscripts, bounds, scalar writes) belong to the
    /// input stage, where the compiler's check finds them first.
    pub fn stage(&self) -> Stage {
        match self {
            Reason::UnsupportedClause { .. }
            | Reason::UnsupportedStatement { .. }
            | Reason::NonCanonicalLoop { .. }
            | Reason::Call { .. }
            | Reason::InexactMath { .. }
            | Reason::HostContraction { .. }
            | Reason::UnsupportedExpression { .. }
            | Reason::NonAffineSubscript { .. }
            | Reason::NotDelinearizable { .. }
            | Reason::NonAffineBound { .. }
            | Reason::UnknownExtent { .. }
            | Reason::ScalarWrite { .. }
            | Reason::WriteToInput { .. }
            | Reason::UnsupportedReduction { .. }
            | Reason::Unpassable { .. } => Stage::Input,
            Reason::NotALoopNest { .. }
            | Reason::NonRectangular { .. }
            | Reason::BadArrayAccess { .. }
            | Reason::NotEqualTest { .. }
            | Reason::WrappingLoop { .. }
            | Reason::TileSizeCount { .. }
            | Reason::BadTileSize { .. }
            | Reason::TooDeep { .. }
            | Reason::TilingIllegal { .. }
            | Reason::ReductionNotTiled { .. }
            | Reason::ReductionOrder { .. }
            | Reason::Internal { .. } => Stage::Tiling,
            Reason::KernelUnsupported { .. }
            | Reason::KernelTooLarge { .. }
            | Reason::KernelInconsistent { .. }
            | Reason::DataflowUnsupported { .. } => Stage::Generation,
        }
    }

    /// Unsupported input, a limit, or a bug.
    pub fn kind(&self) -> Kind {
        match self {
            Reason::TooDeep { .. } | Reason::KernelTooLarge { .. } => Kind::Limit,
            Reason::Internal { .. } | Reason::KernelInconsistent { .. } => Kind::Bug,
            _ => Kind::Unsupported,
        }
    }

    /// The message: what Tessera found, in the user's terms.
    pub fn message(&self) -> String {
        match self {
            Reason::UnsupportedClause { clause } => format!("clause '{clause}' is not supported"),
            Reason::UnsupportedStatement { what, text } => format!("{what} '{text}' is not supported"),
            Reason::NonCanonicalLoop { text, why } => {
                format!("loop '{text}' is not in the canonical form Tessera offloads: {why}")
            }
            Reason::Call { text, why } => format!("call '{text}' is not supported: {why}"),
            Reason::InexactMath { func } => {
                format!("'{func}' is not correctly rounded in every math library; the kernel's results could differ from the host's")
            }
            Reason::HostContraction { text } => format!(
                "the host compilation fuses '{text}' into one multiply-add (floating-point contraction is on and the target has FMA instructions), which the kernel does not"
            ),
            Reason::UnsupportedExpression { what, text } => format!("{what} '{text}' is not supported"),
            Reason::NonAffineSubscript { array, subscript } => {
                format!("subscript '{subscript}' of '{array}' is not affine")
            }
            Reason::NotDelinearizable { array, subscript, why } => {
                format!("subscript '{subscript}' of '{array}' is not affine, and '{array}' has no multi-dimensional view: {why}")
            }
            Reason::NonAffineBound { var, bound } => format!("bound '{bound}' of loop '{var}' is not affine"),
            Reason::UnknownExtent { array } => format!("the size of '{array}' is unknown"),
            Reason::ScalarWrite { name } => {
                format!("the region assigns the scalar '{name}', which also gives the size of a mapped array")
            }
            Reason::UnsupportedReduction { text, why, .. } => format!("{why}: '{text}'"),
            Reason::WriteToInput { array } => format!("'{array}' is written but mapped 'to'"),
            Reason::ReductionNotTiled { text, why } => format!("the tiled kernels do not accumulate '{text}': {why}"),
            Reason::ReductionOrder { text, what, .. } => format!(
                "the floating-point {what} '{text}' must be accumulated in the loop's order to match the host bit for bit; tiling the loops would reorder it"
            ),
            Reason::Unpassable { detail } => detail.clone(),
            Reason::NotALoopNest { what } => format!("the region is not a single perfect loop nest ({what})"),
            Reason::NonRectangular { var, bound } => format!(
                "bound '{bound}' of loop '{var}' depends on an enclosing loop index (the iteration space is not rectangular)"
            ),
            Reason::BadArrayAccess { array, what } => format!("access to '{array}': {what}"),
            Reason::NotEqualTest { var, ty } => format!(
                "loop '{var}' tests '!=' on an index of type '{ty}', which can wrap around past its bound; only 'int' and 'long' indices are tiled with a '!=' test"
            ),
            Reason::WrappingLoop { var, ty, cmp } => format!(
                "loop '{var}' has an index of type '{ty}' compared as '{cmp}', whose arithmetic can wrap; only 'int', 'long' and their unsigned types, compared in a type that holds every index value, are tiled"
            ),
            Reason::TileSizeCount { depth, given } => format!("{given} tile size(s) given for a loop nest of depth {depth}"),
            Reason::BadTileSize { var, size, step } => {
                format!("tile size {size} for loop '{var}' must be at least 1 and a multiple of its step {step}")
            }
            Reason::TooDeep { depth, max } => format!("the loop nest has depth {depth}; the optimizer handles at most {max}"),
            Reason::TilingIllegal { dependence } => {
                format!("tiling the loops would violate a data dependence: {dependence}")
            }
            Reason::Internal { message } => format!("internal optimizer error: {message}"),
            Reason::KernelUnsupported { detail } | Reason::KernelTooLarge { detail } => detail.clone(),
            Reason::KernelInconsistent { detail } => format!("internal generator error: {detail}"),
            Reason::DataflowUnsupported { detail } => format!("no dataflow kernel: {detail}"),
        }
    }

    /// What to change in the source (or the options), where Tessera can say.
    pub fn hint(&self) -> Option<String> {
        let h = match self {
            Reason::UnsupportedStatement { what, .. } if what.contains("while") || what.contains("do loop") => {
                "write the loop as a counted 'for' loop".to_string()
            }
            Reason::NonCanonicalLoop { .. } => {
                "write it as 'for (int i = lb; i < ub; i += c)' with a constant step c".to_string()
            }
            Reason::InexactMath { .. } => "use -fplugin-arg-tessera-math=relaxed to accept that".to_string(),
            Reason::HostContraction { .. } => {
                "compile with -ffp-contract=off, or write fma() where a fused operation is meant".to_string()
            }
            Reason::NonAffineSubscript { subscript, .. } if subscript.contains('[') => {
                "the index is read from memory; Tessera offloads regular access patterns only".to_string()
            }
            Reason::NonAffineSubscript { .. } => "write subscripts as sums of loop indices times constants or loop-invariant sizes (a[i*n + j]); products of two loop indices and division or remainder by a variable are not supported".to_string(),
            Reason::NotDelinearizable { array, .. } => format!(
                "index '{array}' with one row length per dimension in every access ('{array}[i*n + j]', '{array}[(i*ny + j)*nz + k]'), or use a pointer to a VLA"
            ),
            Reason::NonAffineBound { .. } => {
                "loop bounds must be sums of outer loop indices times constants and loop-invariant scalars".to_string()
            }
            Reason::UnknownExtent { array } => format!("give it an array section in a map clause, e.g. '{array}[0:n]'"),
            Reason::ScalarWrite { .. } => "use a copy of it for the size".to_string(),
            Reason::UnsupportedReduction { hint, .. } => hint.clone(),
            Reason::WriteToInput { .. } => "map it 'tofrom' or 'from'".to_string(),
            Reason::NonRectangular { .. } => "triangular loop nests run untiled".to_string(),
            Reason::NotALoopNest { what } if what.contains("beside") => {
                "put every statement in the innermost loop; an initialisation of the element the inner loop accumulates into \
                 ('C[i][j] = beta * C[i][j]; for (k …) C[i][j] += …'), or a local accumulator of the element's type stored \
                 once after it ('s = 0; for (j …) s += …; y[i] = s;'), is folded into the inner loop"
                    .to_string()
            }
            Reason::TilingIllegal { .. } => {
                "a sweep that reads values it wrote in the same sweep (Gauss-Seidel, SOR) runs untiled".to_string()
            }
            Reason::ReductionNotTiled { .. } => "accumulate only with the clause's operator ('s += e', 's = s * e', 's = e < s ? e : s', 'if (e < s) s = e' or 's = fmin(s, e)' for min) and read the variable nowhere else in the loop".to_string(),
            Reason::ReductionOrder { reassociable: true, .. } => {
                "use -fplugin-arg-tessera-reassociate to allow partial sums (this changes the rounding, like -ffast-math); a 1-D loop, or inner loops within one tile, keep the order".to_string()
            }
            Reason::ReductionOrder { reassociable: false, .. } => {
                "a 1-D loop, or inner loops within one tile (#pragma tessera tile(…)), keep the order".to_string()
            }
            Reason::TileSizeCount { .. } | Reason::BadTileSize { .. } => {
                "fix '#pragma tessera tile(…)' or -fplugin-arg-tessera-tile".to_string()
            }
            Reason::KernelTooLarge { .. } => "choose smaller tiles (#pragma tessera tile(…))".to_string(),
            Reason::DataflowUnsupported { .. } => "the dataflow kernel streams out-of-place stencils: a perfect nest of 1 to 3 \
                 step-1 loops, each statement writing its own array at the loop indices (plus constants) from arrays read \
                 at the loop indices plus constants (the written one only at the element written), rows of compile-time \
                 length; the region runs the tessera kernel"
                .to_string(),
            Reason::Internal { .. } | Reason::KernelInconsistent { .. } => {
                "this is a bug in Tessera: please report it with the region".to_string()
            }
            _ => return None,
        };
        Some(h)
    }

    /// The remark a user sees: `[code] message`, then `; hint` when there is one.
    pub fn remark(&self) -> String {
        match self.hint() {
            Some(h) => format!("[{}] {}; {h}", self.code(), self.message()),
            None => format!("[{}] {}", self.code(), self.message()),
        }
    }

    /// True for [`Kind::Bug`].
    pub fn is_internal(&self) -> bool {
        self.kind() == Kind::Bug
    }
}

impl std::fmt::Display for Reason {
    /// The remark ([`Reason::remark`]).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.remark())
    }
}

/// A reason with the location it concerns.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Rejection {
    /// The reason.
    pub reason: Reason,
    /// Where to point the remark.
    pub loc: Loc,
}

impl Rejection {
    /// A reason at a location.
    pub fn new(reason: Reason, loc: &Loc) -> Rejection {
        Rejection { reason, loc: loc.clone() }
    }

    /// The message (see [`Reason::message`]).
    pub fn message(&self) -> String {
        self.reason.message()
    }

    /// The remark (see [`Reason::remark`]).
    pub fn remark(&self) -> String {
        self.reason.remark()
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.loc, self.remark())
    }
}

impl std::error::Error for Rejection {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Codes are unique and remarks start with them.
    #[test]
    fn codes_are_unique_and_lead_the_remark() {
        let s = || "x".to_string();
        let all = vec![
            Reason::UnsupportedClause { clause: s() },
            Reason::UnsupportedStatement { what: s(), text: s() },
            Reason::NonCanonicalLoop { text: s(), why: s() },
            Reason::Call { text: s(), why: s() },
            Reason::InexactMath { func: s() },
            Reason::HostContraction { text: s() },
            Reason::UnsupportedExpression { what: s(), text: s() },
            Reason::NonAffineSubscript { array: s(), subscript: s() },
            Reason::NotDelinearizable { array: s(), subscript: s(), why: s() },
            Reason::NonAffineBound { var: s(), bound: s() },
            Reason::UnknownExtent { array: s() },
            Reason::ScalarWrite { name: s() },
            Reason::WriteToInput { array: s() },
            Reason::UnsupportedReduction { text: s(), why: s(), hint: s() },
            Reason::ReductionNotTiled { text: s(), why: s() },
            Reason::ReductionOrder { text: s(), what: s(), reassociable: true },
            Reason::Unpassable { detail: s() },
            Reason::NotALoopNest { what: s() },
            Reason::NonRectangular { var: s(), bound: s() },
            Reason::BadArrayAccess { array: s(), what: s() },
            Reason::NotEqualTest { var: s(), ty: s() },
            Reason::WrappingLoop { var: s(), ty: s(), cmp: s() },
            Reason::TileSizeCount { depth: 2, given: 1 },
            Reason::BadTileSize { var: s(), size: 0, step: 1 },
            Reason::TooDeep { depth: 9, max: 4 },
            Reason::TilingIllegal { dependence: s() },
            Reason::Internal { message: s() },
            Reason::KernelUnsupported { detail: s() },
            Reason::KernelTooLarge { detail: s() },
            Reason::KernelInconsistent { detail: s() },
            Reason::DataflowUnsupported { detail: s() },
        ];
        let mut codes: Vec<&str> = all.iter().map(Reason::code).collect();
        codes.sort_unstable();
        codes.dedup();
        assert_eq!(codes.len(), all.len(), "duplicate codes");
        for r in &all {
            assert!(r.remark().starts_with(&format!("[{}] ", r.code())), "{}", r.remark());
            // The serde tag is the code: the JSON of a reason names it.
            let json = serde_json::to_string(r).unwrap();
            assert!(json.contains(&format!("\"code\":\"{}\"", r.code())), "{json}");
        }
        assert_eq!(all.iter().filter(|r| r.kind() == Kind::Bug).count(), 2);
        assert_eq!(all.iter().filter(|r| r.stage() == Stage::Generation).count(), 4);
    }

    #[test]
    fn hints_say_what_to_change() {
        let r = Reason::NonAffineSubscript { array: "a".into(), subscript: "idx[i]".into() };
        assert_eq!(
            r.remark(),
            "[non-affine-subscript] subscript 'idx[i]' of 'a' is not affine; the index is read from memory; Tessera offloads regular access patterns only"
        );
        let r = Reason::UnknownExtent { array: "p".into() };
        assert_eq!(r.remark(), "[unknown-extent] the size of 'p' is unknown; give it an array section in a map clause, e.g. 'p[0:n]'");
        assert_eq!(Reason::Unpassable { detail: "cannot pass 't'".into() }.remark(), "[unpassable] cannot pass 't'");
        let r = Reason::ReductionOrder { text: "reduction(+: s)".into(), what: "sum".into(), reassociable: true };
        assert_eq!(
            r.remark(),
            "[reduction-order] the floating-point sum 'reduction(+: s)' must be accumulated in the loop's order to match the host bit for bit; tiling the loops would reorder it; use -fplugin-arg-tessera-reassociate to allow partial sums (this changes the rounding, like -ffast-math); a 1-D loop, or inner loops within one tile, keep the order"
        );
        assert_eq!(r.stage(), Stage::Tiling);
        let r = Reason::ReductionNotTiled { text: "reduction(+: s)".into(), why: "'s' is read in 'b[i] = s'".into() };
        assert!(r.remark().starts_with("[reduction] the tiled kernels do not accumulate 'reduction(+: s)': 's' is read in 'b[i] = s'; accumulate only"), "{}", r.remark());
    }
}
