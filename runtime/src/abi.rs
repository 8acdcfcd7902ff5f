//! The C ABI between the runtime and an emulation kernel library: Rust mirrors of
//! `host/include/tessera_emu_abi.h` (the header is the reference; both sides assert
//! the same sizes and offsets at compile time).
//!
//! The runtime calls `extern "C" void tessera_emu_entry(void **args, const
//! tessera_port_desc *ports)` with one entry per manifest argument in both arrays.
//! For an array, `args[i]` is its device buffer and `ports[i]` describes the buffer
//! and points at the [`PortStats`] its memory ports count into; for a scalar,
//! `args[i]` points at the value and `ports[i]` has null `base` and `stats`.

use std::ffi::{c_char, c_void};
use std::mem::{offset_of, size_of};

/// `TESSERA_EMU_ABI_VERSION`.
pub const ABI_VERSION: u32 = 3;

/// `TESSERA_AXI_MAX_BURST`: the longest AXI4 incrementing burst, in beats.
pub const MAX_BURST: usize = 256;

/// The embedded `tessera_emu_abi.h` (also one of [`crate::emu::SHIM_HEADERS`]).
pub const HEADER: &str = include_str!("../../host/include/tessera_emu_abi.h");

/// `tessera_port_stats`: the exact traffic of one array.
#[repr(C)]
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PortStats {
    /// Beats read × beat bytes.
    pub read_bytes: u64,
    /// Beats written × beat bytes (whole beats, whatever the strobes).
    pub write_bytes: u64,
    /// Bytes actually stored (strobe bit set).
    pub write_enabled_bytes: u64,
    /// Read transactions.
    pub read_bursts: u64,
    /// Write transactions.
    pub write_bursts: u64,
    /// Read beats.
    pub read_beats: u64,
    /// Write beats.
    pub write_beats: u64,
    /// Nonzero once a port object of the kernel was bound to this buffer: the counts
    /// are exact only then (a kernel using raw pointers counts nothing).
    pub bound: u64,
    /// `[n]`: read bursts of `n` beats.
    pub read_burst_len: [u64; MAX_BURST + 1],
    /// `[n]`: write bursts of `n` beats.
    pub write_burst_len: [u64; MAX_BURST + 1],
    /// Read bursts requested while no earlier read of the port was in flight: their
    /// round trip is on the kernel's critical path.
    pub read_exposed: u64,
    /// Write bursts whose response was awaited with no later write of the port in
    /// flight.
    pub write_exposed: u64,
    /// Read bursts a port object requested after it had requested a write since its
    /// previous read (the first read after writes on one `hls::burst_maxi` and its
    /// copies): ordered behind that write's response. `tessera::maxi` accesses are not
    /// counted.
    pub read_after_write: u64,
}

impl Default for PortStats {
    fn default() -> PortStats {
        PortStats {
            read_bytes: 0,
            write_bytes: 0,
            write_enabled_bytes: 0,
            read_bursts: 0,
            write_bursts: 0,
            read_beats: 0,
            write_beats: 0,
            bound: 0,
            read_burst_len: [0; MAX_BURST + 1],
            write_burst_len: [0; MAX_BURST + 1],
            read_exposed: 0,
            write_exposed: 0,
            read_after_write: 0,
        }
    }
}

/// `tessera_trace_fn`.
pub type TraceFn = unsafe extern "C" fn(ctx: *mut c_void, port: u32, is_write: u32, byte_offset: u64, bytes: u64);

/// `tessera_port_desc`: one kernel argument as the memory ports see it.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PortDesc {
    /// [`ABI_VERSION`].
    pub abi_version: u32,
    /// Argument index.
    pub index: u32,
    /// Element 0 of the device buffer; null for scalars.
    pub base: *mut c_void,
    /// Elements of the array.
    pub elems: u64,
    /// Bytes per element.
    pub elem_size: u64,
    /// Bytes allocated at `base` (whole 4 KiB pages).
    pub capacity: u64,
    /// NUL-terminated array name.
    pub name: *const c_char,
    /// Counters; null for scalars.
    pub stats: *mut PortStats,
    /// Transaction trace callback, or `None`.
    pub trace: Option<TraceFn>,
    /// First argument of `trace`.
    pub trace_ctx: *mut c_void,
}

// The same numbers as the static_asserts of tessera_emu_abi.h.
const _: () = {
    assert!(size_of::<PortStats>() == 64 + 2 * 257 * 8 + 24);
    assert!(offset_of!(PortStats, read_exposed) == 64 + 2 * 257 * 8);
    assert!(offset_of!(PortStats, read_after_write) == 64 + 2 * 257 * 8 + 16);
    assert!(offset_of!(PortStats, bound) == 56);
    assert!(offset_of!(PortStats, read_burst_len) == 64);
    assert!(offset_of!(PortStats, write_burst_len) == 64 + 257 * 8);
    assert!(size_of::<PortDesc>() == 72);
    assert!(offset_of!(PortDesc, base) == 8);
    assert!(offset_of!(PortDesc, capacity) == 32);
    assert!(offset_of!(PortDesc, stats) == 48);
    assert!(offset_of!(PortDesc, trace_ctx) == 64);
    assert!(size_of::<StreamStats>() == 32);
};

/// `extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports)`.
pub type EntryFn = unsafe extern "C" fn(args: *mut *mut c_void, ports: *const PortDesc);

/// `tessera_stream_stats`: one `hls::stream` of a dataflow kernel's launch.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct StreamStats {
    /// NUL-terminated, in the kernel library.
    pub name: *const std::ffi::c_char,
    /// Declared depth (0: unbounded).
    pub depth: u64,
    /// The most values it held at once.
    pub peak: u64,
    /// Values that went through it.
    pub values: u64,
}

/// `size_t tessera_emu_streams_take(tessera_stream_stats *out, size_t cap)`, exported
/// by kernel libraries with streams (tessera_dataflow.h).
pub type StreamsTakeFn = unsafe extern "C" fn(out: *mut StreamStats, cap: usize) -> usize;

/// Its name.
pub const STREAMS_TAKE_SYMBOL: &str = "tessera_emu_streams_take";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_states_the_same_version_and_limits() {
        assert!(HEADER.contains(&format!("#define TESSERA_EMU_ABI_VERSION {ABI_VERSION}u")));
        assert!(HEADER.contains(&format!("#define TESSERA_AXI_MAX_BURST {MAX_BURST}u")));
        for n in ["== 64 + 2 * 257 * 8 + 24", "read_after_write) == 64 + 2 * 257 * 8 + 16", "== 72", "bound) == 56", "trace_ctx) == 64", "stats) == 48", "sizeof(tessera_stream_stats) == 32"] {
            assert!(HEADER.contains(n), "{n}");
        }
    }
}
