//! The kernel manifest: what the runtime needs to launch one region.
//!
//! The plugin embeds the manifest (JSON) as a string literal in the rewritten region's
//! runtime call and writes it next to the generated kernel as `<kernel>.manifest.json`.
//! Its `args` are the region's variables in the order the call passes their
//! addresses, which is also the order of the kernel's parameters.

use crate::{Expr, MapKind, ScalarType, Section, VarKind};
use serde::{Deserialize, Serialize};

/// Version of the manifest schema.
pub const MANIFEST_VERSION: u32 = 1;

/// Everything the runtime needs to run (or decline to run) one region.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    /// Schema version, [`MANIFEST_VERSION`].
    pub version: u32,
    /// `file:line` of the directive: the key of the runtime report.
    pub region: String,
    /// Kernel (top function) name; `None` when the region is not offloaded.
    pub kernel: Option<String>,
    /// Why the region is not offloaded (the compile-time remark), or `None`.
    pub rejected: Option<String>,
    /// Kernel flavour, e.g. `baseline`.
    pub mode: String,
    /// Arguments in call order.
    pub args: Vec<Arg>,
    /// The Vitis HLS C++ source of the kernel.
    pub kernel_source: String,
    /// C++ source of the emulation entry point: `#include`s the kernel (as
    /// `kernel.cpp`) and defines `extern "C" void tessera_emu_entry(void **args,
    /// const tessera_port_desc *ports)` which builds the kernel's memory ports from the
    /// port descriptors and its scalars from the argument vector, and calls the kernel
    /// (ABI: `host/include/tessera_emu_abi.h`).
    pub emu_entry_source: String,
    /// File name of the bitstream the XRT backend loads (`<kernel>.xclbin`).
    pub xclbin: String,
}

/// One argument of the region call.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Arg {
    /// Variable name.
    pub name: String,
    /// How the data is reached from the passed address.
    pub kind: VarKind,
    /// Element (or scalar) type.
    pub elem: ScalarType,
    /// For arrays: shape and map; `None` for scalars.
    pub array: Option<ArrayArg>,
}

/// Shape and data movement of an array argument.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayArg {
    /// Map type. [`MapKind::Present`] marks a pointer without a map clause: its data
    /// must be present on the device already (mapped by an enclosing data region); its
    /// outermost extent is unknown (`dims[0]` is then `0`, and the runtime takes the
    /// extent from the present mapping) and its section is empty.
    pub map: MapKind,
    /// Extent of every dimension, outermost first, as expressions over the scalar
    /// arguments. The device buffer holds the whole index space `∏ dims`.
    pub dims: Vec<Expr>,
    /// The mapped section, one entry per dimension (whole dimensions are `[0:extent]`).
    /// Only these elements move between host and device.
    pub section: Vec<Section>,
}

impl Manifest {
    /// Parses a manifest.
    pub fn from_json(text: &str) -> Result<Manifest, String> {
        let m: Manifest = serde_json::from_str(text).map_err(|e| format!("manifest does not parse: {e}"))?;
        if m.version != MANIFEST_VERSION {
            return Err(format!(
                "manifest has schema version {}, this runtime reads version {MANIFEST_VERSION}",
                m.version
            ));
        }
        Ok(m)
    }

    /// Compact JSON, as embedded in binaries.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("manifest is always serialisable")
    }
}
