//! The reasons a region stays on the host: the one closed set of Tessera's reasons,
//! [`tessera_ir::reject`], under the compiler's names. The plugin prints
//! [`Rejection::remark`] as `remark: target region not offloaded: [code] message; hint`
//! at the rejection's location.

pub use tessera_ir::reject::{Kind, Reason as RejectReason, Rejection, Stage};
