//! The optimized kernel: step 5 of Mayer, Brandner, Philippsen, "Employing polyhedral
//! methods to optimize stencils on FPGAs with stencil-specific caches, data reuse, and
//! wide data bursts" (IMPACT 2024, Sec. 4 and Fig. 5/6; `docs/method.md`),
//! printed from the plan of steps 1–4 (`tessera_poly::Plan`).
//!
//! ```text
//! for ti = lb; ti < ub; ti += SZ …            inter-tile loops, original order (steps 1, 3: δ^o = −lb)
//!   [PIPELINE II=1 when d = 1]
//!   x_n = min(SZ, ub − tx)                    real iterations of a partial / padded loop (step 3)
//!   T A_f[…], A_c[…], X_l[…]                  cache buffers, ARRAY_PARTITION complete (step 2, 5)
//!   fill full buffers; pre-load chunk buffers (step 5, ship)
//!   for i = 0; i < i_n; i++                   intra-tile loops in the order p (δ^i = −ti)
//!     load the next chunk slice(s)
//!     for j …   [PIPELINE II=1 on p(d−1)]
//!       for k = 0; k < SZ; k++                padded: constant trip count, unrolled (step 3)
//!         statements, subscripts redirected into the buffers (step 4)
//!       flush the line buffers (trimmed)
//!     flush the chunk's written elements (trimmed); shift the chunks by one slice
//!   flush the full buffers (trimmed)
//! ```
//!
//! [`generate`] runs in four steps, one module each:
//! - `lower.rs`: the plan, checked against the region, becomes the kernel's structure
//!   (`lower::Tiled`): the tiled loops, the arrays and their ports, the cache
//!   buffers, the reduction accumulators, the row loop variables and every access
//!   redirected into a buffer or left uncached — with every name the kernel introduces.
//! - `resources.rs`: the limits of the bus and of the device (a beat of at most 1024
//!   bits, buffer registers within the device's flip-flops).
//! - `shipping.rs`: the data shipment — which arrays the [`Variant::Tessera`] kernel
//!   overlaps, the rows each load and write-back moves, and which helper of
//!   `host/include/tessera_ship.h` moves them.
//! - `print.rs`: the structure printed as C++ (pragmas, loops, statements, ships).
//!
//! Every ship moves rows of the innermost array dimension as wide bursts with strobes;
//! the ports are `hls::burst_maxi<tessera::wide_t<W, T>>`, one bundle per array, in the
//! region's variable order, so the runtime ABI equals the baseline's.
//!
//! [`Variant::Tessera`] prints the same kernel with its round trips overlapped where no
//! read can observe an unacknowledged write: for an array the region only reads, the
//! row loaded inside the pipelined loop (2D) is requested one iteration ahead
//! (`tessera_request_in` before the loop and for `i + 1`, `tessera_receive_in` for
//! `i`), and every other load (pre-loads, 3D slices, full fills) requests all its rows
//! before reading any; for an array it only writes, rows are posted
//! (`tessera_ship_out_posted`: the previous row's responses are awaited after this
//! row's bursts) and drained at the kernel's end. The bursts are exactly the paper
//! variant's (tests compare the per-array histograms).
//!
//! Where this differs from the paper's own generator, and why:
//! - A chunk's next slice is loaded whole at the start of each iteration of p(1)
//!   (docs/method.md, step 5), not row by row inside p(2) as in Fig. 5. In 2D the two are
//!   the same (the slice is one row, loaded inside the pipelined loop); in 3D the
//!   pipelined loop holds the computation and the line write-back only.
//! - A buffer row keeps the plan's layout (box element q at `halo_left + q`) whatever
//!   the row's misalignment: each lane of a beat goes to its element's slot, lanes
//!   outside the box are dropped. The paper pads a whole beat on both sides instead.
//! - Padded iterations skip integer divisions (as they skip uncached accesses): their
//!   operands are garbage there, and a zero divisor traps in emulation.
//!
//! Reductions (`tessera_poly::reduction`): each reduction variable is a local
//! accumulator at the operator's identity, declared before the tiles; its
//! accumulations run where the nest has them, in the tiled order, under the padding
//! guard (a padded iteration never accumulates), and the plan has proved that order to
//! be the loop's wherever the result depends on it. At the end the result, `original
//! op private` (clang's combiner), goes to the variable's one-element port
//! (`tessera::maxi<T>`, the baseline kernel's ABI; bundles after the arrays'). With
//! `reassociate`, a floating sum or product the loop only accumulates into keeps
//! [`crate::baseline::PARTIAL_SUMS`] partial results, indexed by the padded loop's
//! intra-tile index modulo their number (a constant in each unrolled copy), added up
//! pairwise at the end.
//!
//! What makes [`generate`] refuse a plan (the caller then uses the baseline kernel),
//! by the [`Kind`](tessera_ir::reject::Kind) of its reason:
//! - unsupported (`kernel-unsupported`): loops with a step other than 1; a port width
//!   that is not a power of two from 1 to 64; a name of the region that the kernel's
//!   helpers use; an array extent that is unknown past the outermost dimension; a
//!   cached write group that does not write one element per iteration with subscripts
//!   `tile origin + intra index + constant` (so that the elements real iterations
//!   wrote form a box, which the write-back trims to), or whose writes differ; a chunk
//!   that shifts along the innermost dimension or backwards;
//! - a limit (`kernel-too-large`): a beat wider than 1024 bits; buffers with more
//!   bits than the device has flip-flops (they are completely partitioned into
//!   registers);
//! - a bug (`kernel-inconsistent`): a plan that contradicts the region or the options
//!   (laid out for another port width, made for another loop nest or other
//!   statements, buffers or redirections the generator does not know). This is the
//!   only way a contradiction is reported; what lowering has checked, printing relies
//!   on.
//!
//! Lowering reports contradictions and unsupported shapes first, the resource limits
//! of a plan that lowered.

mod lower;
mod print;
mod resources;
mod shipping;

use crate::Kernel;
use tessera_ir::reject::Reason;
use tessera_ir::Region;
use tessera_poly::Plan;

/// Generates the optimized kernel `name` for `region` from its plan, with ports of
/// `port_width` elements per beat (the width the plan's halos were computed for).
/// `Err` says why the plan is not supported (one of the generation stage's reasons of
/// [`tessera_ir::reject`]; a plan that contradicts the region is a bug); no code is
/// generated then.
pub fn generate(region: &Region, plan: &Plan, name: &str, port_width: u32, variant: Variant) -> Result<Kernel, Reason> {
    // The region as the optimizer planned it: decreasing loops counting up (over
    // their negated index, or over their own when the order is free). The optimizer
    // normalized this region with this normalization, so a failure here means the
    // plan was made for another region.
    let region = tessera_poly::normalize::apply(region, &plan.normalization)
        .map_err(|e| bug(format!("the plan's loop normalization does not apply to the region: {}", e.reason.message())))?;
    let mut tiled = lower::lower(&region, plan, port_width)?;
    resources::check(&tiled)?;
    shipping::decide(&mut tiled, variant);
    Ok(print::kernel(&tiled, variant, name))
}

/// How the tiled kernel ships its rows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// Mode `paper`: the paper's structure, every burst a blocking round trip — per
    /// pipelined row a read request and burst, the unrolled computation, a write
    /// request and burst, then the wait for its response.
    Paper,
    /// Mode `tessera`: the same tiles, buffers and bursts, with the round trips
    /// overlapped where no data hazard can exist: an array the region only reads has
    /// the row of the next iteration of the pipelined loop requested before the
    /// current row's beats are read (prefetch, in 2D nests where the row is loaded
    /// inside the pipelined loop); an array the region only writes posts its rows and
    /// waits for a row's write responses one row later (at the kernel's end for the
    /// last one). Arrays both read and written keep the paper's blocking shipment.
    Tessera,
}

impl Variant {
    /// The mode's name, as in options and manifests.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Paper => "paper",
            Variant::Tessera => "tessera",
        }
    }
}

// The three kinds of refusal (`tessera_ir::reject::Kind`), one constructor each: every
// error path of the generator names its kind here.

/// An input shape the generator does not handle ([`Kind::Unsupported`](tessera_ir::reject::Kind)).
fn unsupported(detail: String) -> Reason {
    Reason::KernelUnsupported { detail }
}

/// A limit of the bus or the device ([`Kind::Limit`](tessera_ir::reject::Kind)).
fn limit(detail: String) -> Reason {
    Reason::KernelTooLarge { detail }
}

/// A plan that contradicts the region, the options or itself ([`Kind::Bug`](tessera_ir::reject::Kind)).
fn bug(detail: String) -> Reason {
    Reason::KernelInconsistent { detail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::reject::Kind;
    use tessera_poly::PolyOptions;

    fn small(name: &str) -> Region {
        let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../tests/ir/small/{name}.ir.json"));
        let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        Region::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn plan(r: &Region, tile: Option<Vec<i64>>, w: u32) -> Plan {
        tessera_poly::optimize(r, &PolyOptions { tile, port_width: w, ..Default::default() }).unwrap_or_else(|e| panic!("{}", e.message()))
    }

    fn refusal(r: &Region, p: &Plan, w: u32) -> Reason {
        match generate(r, p, "k", w, Variant::Tessera) {
            Ok(_) => panic!("the plan was not refused"),
            Err(e) => e,
        }
    }

    #[test]
    fn unsupported_shapes_are_unsupported() {
        let r = small("strided");
        let e = refusal(&r, &plan(&r, None, 4), 4);
        assert_eq!((e.kind(), e.code()), (Kind::Unsupported, "kernel-unsupported"), "{e}");
        assert!(e.message().contains("step 2"), "{e}");
        let r = small("2D-5p");
        let e = refusal(&r, &plan(&r, None, 4), 3);
        assert_eq!(e.kind(), Kind::Unsupported, "{e}");
        assert!(e.message().contains("port width 3"), "{e}");
    }

    #[test]
    fn resource_limits_are_limits() {
        // Tiles of 1024 in 3D: megabytes of registers.
        let r = small("3D-heat");
        let e = refusal(&r, &plan(&r, Some(vec![1024]), 4), 4);
        assert_eq!((e.kind(), e.code()), (Kind::Limit, "kernel-too-large"), "{e}");
        assert!(e.message().contains("flip-flops"), "{e}");
        // 64 floats a beat: 2048 bits, wider than an AXI data bus.
        let r = small("2D-5p");
        let e = refusal(&r, &plan(&r, None, 64), 64);
        assert_eq!(e.kind(), Kind::Limit, "{e}");
        assert!(e.message().contains("wider than an AXI data bus"), "{e}");
    }

    #[test]
    fn contradicting_plans_are_bugs() {
        // A plan laid out for another port width.
        let r = small("2D-5p");
        let e = refusal(&r, &plan(&r, None, 8), 4);
        assert_eq!((e.kind(), e.code()), (Kind::Bug, "kernel-inconsistent"), "{e}");
        assert!(e.message().contains("port width 8"), "{e}");
        // A plan made for another region.
        let other = small("3D-heat");
        let e = refusal(&r, &plan(&other, None, 4), 4);
        assert_eq!(e.kind(), Kind::Bug, "{e}");
        assert!(e.is_internal(), "{e}");
    }

    #[test]
    fn plans_of_the_region_are_generated() {
        let r = small("2D-5p");
        let p = plan(&r, None, 4);
        for v in [Variant::Paper, Variant::Tessera] {
            let k = generate(&r, &p, "k", 4, v).unwrap_or_else(|e| panic!("{e}"));
            assert!(k.source.contains(&format!("// Mode: {}", v.name())), "{}", k.source);
        }
    }
}
