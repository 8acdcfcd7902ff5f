//! The resource limits a lowered kernel must fit (refusals of kind
//! [`Kind::Limit`](tessera_ir::reject::Kind), `kernel-too-large`): the width of a beat
//! on the AXI data bus, and the registers of the completely partitioned buffers.

use super::limit;
use super::lower::Tiled;
use tessera_ir::reject::Reason;

/// Flip-flops of the VCU118's XCVU9P (DS890; docs/performance-model.md, "Target platform facts"): the most
/// register bits completely partitioned buffers can occupy. A plan beyond it is
/// refused (the region gets the baseline kernel) rather than printed.
const DEVICE_FLIP_FLOPS: i64 = 2_364_480;

/// The widest AXI data bus, in bytes (1024 bits).
const MAX_BEAT_BYTES: i64 = 128;

/// `Err` (a limit) when a beat of some array is wider than the bus or the buffers
/// need more registers than the device has.
pub(super) fn check(k: &Tiled) -> Result<(), Reason> {
    for a in &k.arrays {
        let beat = k.w * a.elem.size() as i64;
        if beat > MAX_BEAT_BYTES {
            return Err(limit(format!(
                "a beat of {} elements of '{}' ({} bits) is wider than an AXI data bus (1024 bits)",
                k.w,
                a.name,
                beat * 8
            )));
        }
    }
    // Completely partitioned buffers are registers: one flip-flop per bit.
    let bits = register_bits(k);
    if bits > DEVICE_FLIP_FLOPS {
        return Err(limit(format!(
            "the cache buffers hold {bits} bits; completely partitioned (ARRAY_PARTITION complete) they need more registers than the XCVU9P's {DEVICE_FLIP_FLOPS} flip-flops: choose smaller tiles"
        )));
    }
    Ok(())
}

/// The bits of all cache buffers (saturating).
fn register_bits(k: &Tiled) -> i64 {
    k.bufs
        .iter()
        .map(|b| b.shape.iter().product::<i64>().saturating_mul(k.arrays[b.array].elem.size() as i64 * 8))
        .fold(0i64, |a, x| a.saturating_add(x))
}
