//! Step 4 of the method: index redirection (paper Sec. 4, step 4, and footnote 6).
//!
//! Every access is rewritten over the tiled loop variables: the original index of
//! loop x is `ti_x + i_x` (tile origin plus the intra-tile index that starts at 0
//! after `δ^i = −ti`). A cached access then addresses its buffer at
//! `subscript − box offset`, plus the left alignment halo in the last dimension:
//! - full buffer: the offset is the tile's corner, so the subscripts become relative
//!   to the tile origin — "it suffices to replace the name of the original array";
//!   `V[i,k,j]` becomes `V_f[i][k][j]`;
//! - chunk buffer: the offset also moves with the fixed outermost intra-tile index
//!   (the buffer's shift position), so that dimension becomes a constant:
//!   `A[i,j,k] → A_c[0][j][k]`, `A[i+1,j+1,k+1] → A_c[1][j+1][k+1]` (the paper prints
//!   `A'[1,i+1,j+1]`, a typo);
//! - line buffer: every dimension but the last becomes 0;
//! - `nc`: the original array with the original subscripts, under a guard when
//!   padding exists.
//!
//! The results are [`Aff`]s over [`Sym::Tile`], [`Sym::Intra`] and [`Sym::Param`] for
//! the code generator to print.

use crate::affine::{Aff, Sym};
use crate::buffers::{BufferKind, BufferPlan};
use crate::scop::Scop;
use serde::{Deserialize, Serialize};

/// The redirected form of one access.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Redirect {
    /// Access id.
    pub access: usize,
    /// `R0`, `W0`, …
    pub name: String,
    /// The original array.
    pub array: String,
    /// Index of the buffer in `BufferPlan::buffers` (also for `nc` groups).
    pub buffer: usize,
    /// What the access now addresses: the buffer's name, or the array for `nc`.
    pub target: String,
    /// Whether the access goes to a cache buffer.
    pub cached: bool,
    /// The original subscripts over tile origins and intra-tile indices.
    pub original: Vec<Aff>,
    /// The subscripts into `target`.
    pub subscripts: Vec<Aff>,
    /// Whether the access executes under `if (in original domain)` (padded `nc`).
    pub guarded: bool,
}

/// Step 4 for every access of the SCoP.
pub(crate) fn redirect(scop: &Scop, plan: &BufferPlan, guarded: &[usize]) -> Vec<Redirect> {
    let tiled = |a: &Aff| a.substitute(&|s| match s {
        Sym::Loop(x) => Some(Aff::sym(Sym::Tile(*x)).add(&Aff::sym(Sym::Intra(*x)))),
        _ => None,
    });
    scop.accesses
        .iter()
        .map(|acc| {
            let (bi, b) = plan
                .buffers
                .iter()
                .enumerate()
                .find(|(_, b)| b.accesses.contains(&acc.id))
                .expect("every access belongs to a buffer or nc group");
            let original: Vec<Aff> = acc.subscripts.iter().map(tiled).collect();
            let cached = b.kind != BufferKind::Nc;
            let subscripts = if cached {
                let n = original.len();
                original
                    .iter()
                    .zip(&b.offset)
                    .enumerate()
                    .map(|(j, (o, off))| {
                        let r = o.sub(off);
                        if j + 1 == n {
                            r.add_constant(b.halo_left)
                        } else {
                            r
                        }
                    })
                    .collect()
            } else {
                original.clone()
            };
            Redirect {
                access: acc.id,
                name: acc.name.clone(),
                array: acc.array.clone(),
                buffer: bi,
                target: b.name.clone(),
                cached,
                original,
                subscripts,
                guarded: guarded.contains(&acc.id),
            }
        })
        .collect()
}
