//! How a Tessera kernel is known to TaPaSCo (the toolflow and runtime of
//! esa-tu-darmstadt/tapasco), shared by the TaPaSCo flow (`crates/flow/src/tapasco.rs`,
//! `tessera bitstream --flow tapasco`) and the runtime's TaPaSCo device
//! (`runtime/src/tapasco/`).
//!
//! - **Kernel ID.** TaPaSCo identifies a kind of processing element (PE) by the `Id` of
//!   its `kernel.json` (an integer ≥ 1; the runtime's `PEId`, 32 bits in the design's
//!   status core). Tessera derives it from the manifest's hash ([`kernel_id`]): the
//!   first 8 hex digits as a number, top bit cleared, 0 mapped to 1. It is stable (the
//!   same manifest always gets the same ID) and changes whenever the kernel changes,
//!   so a loaded design whose PE of a kernel has another ID was built from another
//!   manifest (stale or foreign) and is refused by the runtime. Two kernels of one
//!   composition with the same ID (a 1 in 2³¹ chance per pair) are refused by the flow.
//! - **VLNV.** TaPaSCo's HLS flow exports each core with vendor
//!   `esa.cs.tu-darmstadt.de`, library `hls`, the kernel's `Name` and `Version`; the
//!   runtime looks a PE up by that string (`tapasco_device_get_pe_id`). Tessera names
//!   the TaPaSCo kernel like the top function and uses version [`VERSION`] ([`vlnv`]).
//! - **Build record.** Beside the `.bit` it copies out of TaPaSCo's composition
//!   directory, `tessera bitstream --flow tapasco` writes `<bit>.json`
//!   ([`TapascoRecord`]): every kernel of the composition with its ID, VLNV and
//!   manifest hash.

use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The vendor of cores made by `tapasco hls` (its `hls.tcl.template` exports with
/// `-vendor esa.cs.tu-darmstadt.de`, library `hls`).
pub const VENDOR: &str = "esa.cs.tu-darmstadt.de";

/// The `Version` of every Tessera kernel's `kernel.json` (identity is in the ID).
pub const VERSION: &str = "1.0";

/// The TaPaSCo kernel ID of the kernel of a manifest with hash `hash` (64 hex digits,
/// `Manifest::hash`): the first 8 hex digits, top bit cleared (IDs stay positive in
/// TaPaSCo's 32-bit `Int` and `uint32` fields), 0 → 1 (IDs are ≥ 1). `None` for a
/// hash that does not start with 8 hex digits (an empty hash: hand-made manifest).
pub fn kernel_id(hash: &str) -> Option<u32> {
    let head = hash.get(..8)?;
    if !head.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let v = u32::from_str_radix(head, 16).ok()? & 0x7fff_ffff;
    Some(v.max(1))
}

/// The VLNV of kernel `kernel`'s PE as TaPaSCo reports it
/// (`esa.cs.tu-darmstadt.de:hls:<kernel>:1.0`).
pub fn vlnv(kernel: &str) -> String {
    format!("{VENDOR}:hls:{kernel}:{VERSION}")
}

/// Version of the [`TapascoRecord`] schema.
pub const TAPASCO_RECORD_VERSION: u32 = 1;

/// One kernel of a TaPaSCo composition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TapascoKernel {
    /// Kernel (top function, and TaPaSCo kernel `Name`).
    pub kernel: String,
    /// Its TaPaSCo kernel ID ([`kernel_id`] of `hash`).
    pub id: u32,
    /// Its VLNV ([`vlnv`]).
    pub vlnv: String,
    /// The hash of the manifest it was built from.
    pub hash: String,
    /// `file:line` of the region.
    pub region: String,
    /// The manifest file it was built from.
    pub manifest: String,
}

/// The build record of a TaPaSCo bitstream, `<bit>.json`: the kernels (and the
/// manifests they were built from) of the composition in it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TapascoRecord {
    /// Schema version, [`TAPASCO_RECORD_VERSION`].
    pub version: u32,
    /// TaPaSCo platform (`vcu118`).
    pub platform: String,
    /// Design clock in MHz.
    pub clock_mhz: u32,
    /// The composition as passed to `tapasco compose`.
    pub composition: String,
    /// The kernels, one PE each.
    pub kernels: Vec<TapascoKernel>,
}

impl TapascoRecord {
    /// Where the record of bitstream `bit` is: `<bit>.json`.
    pub fn path_for(bit: &Path) -> PathBuf {
        let mut p = bit.as_os_str().to_owned();
        p.push(".json");
        PathBuf::from(p)
    }

    /// Parses a record, checking its schema version.
    pub fn from_json(text: &str) -> Result<TapascoRecord, String> {
        let r: TapascoRecord = serde_json::from_str(text).map_err(|e| format!("does not parse: {e}"))?;
        if r.version != TAPASCO_RECORD_VERSION {
            return Err(format!(
                "has schema version {}, this Tessera reads version {TAPASCO_RECORD_VERSION}",
                r.version
            ));
        }
        Ok(r)
    }

    /// The record as pretty JSON (one trailing newline).
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a record is always serialisable") + "\n"
    }

    /// The kernel built from a manifest with hash `hash`, if any.
    pub fn kernel_of(&self, hash: &str) -> Option<&TapascoKernel> {
        self.kernels.iter().find(|k| k.hash == hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_from_hashes() {
        assert_eq!(kernel_id("0000002a7f"), Some(42));
        // Top bit cleared, uppercase accepted.
        assert_eq!(kernel_id(&format!("FFFFFFFF{}", "0".repeat(56))), Some(0x7fff_ffff));
        assert_eq!(kernel_id("80000000"), Some(1), "0 after masking becomes 1");
        assert_eq!(kernel_id("00000000"), Some(1));
        assert_eq!(kernel_id(""), None);
        assert_eq!(kernel_id("1234567"), None);
        assert_eq!(kernel_id("1234567g"), None);
        assert_eq!(vlnv("tessera_k_l7_r0"), "esa.cs.tu-darmstadt.de:hls:tessera_k_l7_r0:1.0");
    }

    #[test]
    fn record_round_trip() {
        let r = TapascoRecord {
            version: TAPASCO_RECORD_VERSION,
            platform: "vcu118".into(),
            clock_mhz: 100,
            composition: "[k x 1]".into(),
            kernels: vec![TapascoKernel {
                kernel: "k".into(),
                id: 7,
                vlnv: vlnv("k"),
                hash: "ab".repeat(32),
                region: "k.c:3".into(),
                manifest: "p.tessera/k.manifest.json".into(),
            }],
        };
        let back = TapascoRecord::from_json(&r.to_json()).unwrap();
        assert_eq!(back, r);
        assert_eq!(back.kernel_of(&"ab".repeat(32)).map(|k| k.id), Some(7));
        assert!(back.kernel_of("cd").is_none());
        let old = r.to_json().replace("\"version\": 1", "\"version\": 9");
        assert!(TapascoRecord::from_json(&old).unwrap_err().contains("schema version 9"));
        assert_eq!(TapascoRecord::path_for(Path::new("b/x.bit")), Path::new("b/x.bit.json"));
    }
}
