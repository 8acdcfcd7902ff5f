//! Tessera's Vitis HLS C++ generator.
//!
//! [`baseline`] emits the region's original loop nest as an HLS top function (the
//! paper's baseline: what Vitis builds from the plain code with default settings).
//! [`paper`] emits the optimized kernel from the polyhedral optimizer's plan (step 5 of
//! the paper: tiles, cache buffers, redirected subscripts, wide bursts; `ship` holds
//! the data-shipment helpers). [`cpp`] prints IR expressions as C++ that computes
//! exactly what the host computes: every implicit conversion clang applied is an
//! explicit cast in the output; both kernels share it.

#![warn(missing_docs)]

pub mod baseline;
pub mod cpp;
pub mod paper;
mod ship;

/// A generated kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kernel {
    /// Top function name.
    pub name: String,
    /// The HLS C++ source (`<name>.cpp`).
    pub source: String,
    /// Emulation entry: includes the kernel as `kernel.cpp` and defines
    /// `extern "C" void tessera_emu_entry(void **args, const tessera_port_desc *ports)`
    /// (see `host/include/tessera_emu_abi.h`).
    pub emu_entry: String,
}
