//! The reasons the optimizer declines a region: the one closed set of Tessera's
//! reasons, [`tessera_ir::reject`] (its tiling stage), under the optimizer's names.
//!
//! The optimizer's input class is the paper's (Sec. 4, first paragraph): a canonical
//! loop nest with a rectangular iteration domain that a SCoP represents, affine
//! subscripts, non-overlapping arrays, no side effects except array writes, and no
//! dependence that tiling breaks ("e.g. Gauss-Seidel or SOR methods"). The compiler's
//! input-class check (`crates/compiler/src/check.rs`) already rejects most violations;
//! the structural ones are checked again here (defensively, with the input stage's
//! reasons), and the optimizer adds its own: imperfect nests, statements other than
//! assignments in the body, non-rectangular domains, dependences that forbid
//! rectangular tiling, bad tile sizes.
//!
//! Arrays are assumed not to overlap (distinct base pointers): the runtime checks that
//! before it runs a kernel, so there is no reason for it here.
//!
//! A rejected region is never miscompiled: it runs as the baseline kernel or on the
//! host.

pub use tessera_ir::reject::{Reason as PolyRejectReason, Rejection as PolyReject};
