//! The kernel manifest: what the runtime needs to launch one region.
//!
//! The plugin embeds the manifest (JSON) as a string literal in the rewritten region's
//! runtime call and writes it next to the generated kernel as `<kernel>.manifest.json`.
//! Its `args` are the region's variables in the order the call passes their
//! addresses, which is also the order of the kernel's parameters.

use crate::{Expr, MapKind, ReductionOp, ScalarType, Section, VarKind};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Version of the manifest schema (2: `hash`; 3: `write_ports`; 4: `interleave`;
/// 5: `size_params`; 6: `ArrayArg::untouched`, `members`; 7: `Guard::writes`, `member_checks`).
pub const MANIFEST_VERSION: u32 = 7;

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
    /// Kernel flavour.
    pub mode: crate::Mode,
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
    /// File name of the kernel's own bitstream (`<kernel>.xclbin`, built by `tessera
    /// bitstream --per-kernel`). The XRT backend looks for the program's xclbin first
    /// (`<exe>.xclbin`, every kernel of the program linked into one; its build record
    /// lists this kernel), then for this one (`runtime/src/xrt/mod.rs`).
    pub xclbin: String,
    /// The region has an `if` clause: the call passes one more address after the
    /// arguments, of an `int` holding its value; when it is 0 the region runs on
    /// OpenMP's host device (the original code on host memory, no copies), which is
    /// not a fallback.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub if_clause: bool,
    /// The region has a `device(n)` clause: the call passes one more address, last,
    /// of an `int` holding the device number; when it does not name Tessera's device
    /// (`omp_get_initial_device()`, or no device exists) the region runs on OpenMP's
    /// host device, like with a false `if`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub device_clause: bool,
    /// A region whose variables cannot be passed (`rejected` as unpassable, no
    /// `args`) has a map clause with the `always` modifier: a copy the runtime cannot
    /// make without the variables, so its host run cannot stand for a device run while
    /// data is mapped (as with an `if` or `device` clause, whose value it does not see
    /// either); see [`Manifest::opaque_limit`].
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always_maps: bool,
    /// What the kernel is: [`Manifest::content_hash`] (SHA-256, 64 hex digits) of the
    /// kernel name, mode, arguments, kernel and emulation sources and bitstream name.
    /// `tessera bitstream` records it beside the bitstream it builds
    /// ([`BitstreamRecord`]) and the XRT backend loads a bitstream only when its record
    /// has this hash. Empty when the region is not offloaded.
    #[serde(default)]
    pub hash: String,
    /// The kernel computes a delinearised view of flat arrays (`a[i*n + j]` as
    /// `a[i][j]`), valid only under launch conditions; when one fails the runtime
    /// runs the guard's fallback kernel instead, the baseline kernel of the region as
    /// written (`tessera_compiler::delinearize`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub guard: Option<Guard>,
    /// Arrays the kernel reaches through two `m_axi` parameters: its argument's own
    /// (reads) and a write-only one ([`write_port_name`]), appended after the
    /// arguments in this order (indices into `args`). Both are bound to the array's
    /// one device buffer, in its bank. A dataflow kernel's point-wise in-place array
    /// gets one: its load and store processes then do not share a bundle, so no read
    /// is ordered behind a write (reads and writes of one bundle are, since AXI does
    /// not order a port's read and write channels); every element is read before its
    /// update is computed, so the separate ports cannot see each other's data.
    /// [`Manifest::kernel_params`] lists the kernel's parameters.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_ports: Vec<usize>,
    /// Arrays whose memory the kernel reaches interleaved over two DDR banks
    /// (`banks=2` when no placement of whole arrays balances the banks; see
    /// [`Interleave`]). `None`: every array in the one bank of its `bank` field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave: Option<Interleave>,
    /// Arrays whose size the kernel takes as a scalar parameter
    /// ([`size_param_name`]): the elements of the array's device buffer from its
    /// element 0 on (`KernelArg::Array::elems` in the runtime: the mapped index space,
    /// or for a present argument its mapping from the passed address to the end).
    /// A kernel that does not know an array's outermost extent (a pointer without a
    /// section of its own, a flat array seen as rows) bounds its reads by it, so a read
    /// that may not happen never leads it past the buffer. Appended after every memory
    /// parameter, in this order (indices into `args`); never an interleaved array.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub size_params: Vec<usize>,
    /// Scalar arguments (indices into `args`) that are members of structs
    /// (`Region::members`): the passed address holds a pointer to the member, null
    /// when the member chain crosses a null pointer (the value is then 0). The
    /// runtime reads the device copy of the member when a mapping on the device holds
    /// it (OpenMP maps the struct implicitly, and the region sees the device copy),
    /// else host memory; a host run of the region gets the device copy in place.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<usize>,
    /// Of `members`, those whose type the region may write (`Region::checked_members`):
    /// before a launch the runtime checks that each member's address lies outside
    /// every element the region may write (its write footprints); when one lies
    /// inside, or a written array's footprint is not known, the region runs on the
    /// host, as written.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_checks: Vec<usize>,
}

/// The scalar parameter through which a kernel with [`Manifest::size_params`] learns
/// the elements of array `array`'s device buffer: `tessera_elems_<array>`.
pub fn size_param_name(array: &str) -> String {
    format!("tessera_elems_{array}")
}

/// Arrays split over two DDR banks in segments: segment `k` of an argument's memory —
/// bytes `[k·s, (k+1)·s)` from its element 0, `s` = [`segment_bytes`](Self::segment_bytes) —
/// lives in bank `k mod 2`, at byte `⌊k/2⌋·s` of that bank's half. The kernel reaches
/// half 0 through the argument's own parameter (and its write port), connected to bank
/// 0, and half 1 through [`bank_port_name`] (and [`bank_write_port_name`]), connected
/// to bank 1. Each of an array's streams then alternates between the banks every
/// segment, so both banks carry half of every stream. A segment is a burst's maximum
/// extent (the kernel's bursts never cross a multiple of it), so every burst lies in
/// one bank. The device keeps each half as one buffer in its bank and copies between
/// the halves and the array's contiguous host view ([`deinterleave`], [`interleave`]).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Interleave {
    /// The interleaved arguments (indices into `args`), in the order of their
    /// second-bank parameters.
    pub args: Vec<usize>,
    /// Bytes per segment (a power of two, at most 4 KiB: AXI bursts do not cross a
    /// 4 KiB boundary).
    pub segment_bytes: u64,
}

impl Interleave {
    /// The bytes of the two halves of an argument of `bytes` bytes (segments counted
    /// whole: the last, partial one takes a whole segment of its half).
    pub fn half_bytes(&self, bytes: usize) -> [usize; 2] {
        let s = self.segment_bytes as usize;
        let segs = bytes.div_ceil(s);
        [segs.div_ceil(2) * s, (segs / 2) * s]
    }

    /// The argument's own bytes in each half of an argument of `bytes` bytes: its
    /// segments there, the last one perhaps partial (a prefix of the half).
    pub fn data_bytes(&self, bytes: usize) -> [usize; 2] {
        let s = self.segment_bytes as usize;
        let (whole, rest) = (bytes / s, bytes % s);
        let mut d = [whole.div_ceil(2) * s, (whole / 2) * s];
        d[whole % 2] += rest;
        d
    }
}

/// Copies the `src.len()` bytes of an argument into its two halves (each at least
/// [`Interleave::half_bytes`] long), segment `k` into half `k mod 2` at `⌊k/2⌋·s`.
pub fn deinterleave(src: &[u8], segment_bytes: usize, halves: [&mut [u8]; 2]) {
    let [h0, h1] = halves;
    for (k, seg) in src.chunks(segment_bytes).enumerate() {
        let at = (k / 2) * segment_bytes;
        let h: &mut [u8] = if k % 2 == 0 { &mut *h0 } else { &mut *h1 };
        h[at..at + seg.len()].copy_from_slice(seg);
    }
}

/// The inverse of [`deinterleave`]: gathers an argument's `dst.len()` bytes from its
/// halves.
pub fn interleave(halves: [&[u8]; 2], segment_bytes: usize, dst: &mut [u8]) {
    for (k, seg) in dst.chunks_mut(segment_bytes).enumerate() {
        let at = (k / 2) * segment_bytes;
        let h = halves[k % 2];
        seg.copy_from_slice(&h[at..at + seg.len()]);
    }
}

/// The parameter through which a kernel with [`Manifest::interleave`] reaches the
/// second half (bank 1) of array `array`: `tdf_b1_<array>`.
pub fn bank_port_name(array: &str) -> String {
    format!("tdf_b1_{array}")
}

/// The write-only parameter of the second half of an interleaved array that has a
/// write port ([`Manifest::write_ports`]): `tdf_w_b1_<array>`.
pub fn bank_write_port_name(array: &str) -> String {
    format!("tdf_w_b1_{array}")
}

/// The memory parameters of a kernel after its arguments' own, in order (names left
/// empty; [`KernelParam::name`] gives them): a write port per entry of `write_ports`,
/// then a second-half port per entry of `interleaved`, then a second-half write port
/// per entry of `write_ports` that is interleaved. The one order of
/// [`Manifest::kernel_params`], the generated kernel's signature and its emulation
/// entry.
pub fn extra_params(write_ports: &[usize], interleaved: &[usize]) -> Vec<KernelParam> {
    let param = |arg, write_port, half| KernelParam { name: String::new(), arg, write_port, half, size: false };
    write_ports
        .iter()
        .map(|&i| param(i, true, 0))
        .chain(interleaved.iter().map(|&i| param(i, false, 1)))
        .chain(write_ports.iter().filter(|i| interleaved.contains(i)).map(|&i| param(i, true, 1)))
        .collect()
}

/// The name of the write-only `m_axi` parameter of array `array` in a kernel with
/// [`Manifest::write_ports`]: `tdf_w_<array>` (the dataflow generator reserves the
/// prefix `tdf_`).
pub fn write_port_name(array: &str) -> String {
    format!("tdf_w_{array}")
}

/// One parameter of a kernel's top function ([`Manifest::kernel_params`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelParam {
    /// The parameter's name as the flows address it: the argument's name, or
    /// [`write_port_name`] of it.
    pub name: String,
    /// The argument (index into [`Manifest::args`]) whose data it passes.
    pub arg: usize,
    /// A write-only port of an array that also has its own ([`Manifest::write_ports`]).
    pub write_port: bool,
    /// Which half of an interleaved array ([`Manifest::interleave`]) it reaches: 0 (the
    /// argument's own parameter and write port, and every parameter of an array that
    /// is not interleaved) or 1 (bank 1).
    pub half: u8,
    /// Not memory: the scalar count of the elements of the argument's device buffer
    /// ([`Manifest::size_params`]).
    pub size: bool,
}

impl KernelParam {
    /// Its name for array `array`: the array's own, [`write_port_name`],
    /// [`bank_port_name`] or [`bank_write_port_name`].
    pub fn name(&self, array: &str) -> String {
        if self.size {
            return size_param_name(array);
        }
        match (self.write_port, self.half) {
            (false, 0) => array.to_string(),
            (true, 0) => write_port_name(array),
            (false, _) => bank_port_name(array),
            (true, _) => bank_write_port_name(array),
        }
    }
}

/// Launch conditions of a kernel and the kernel that runs when one fails.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Guard {
    /// All must be nonzero, evaluated over the scalar arguments.
    pub conditions: Vec<GuardCondition>,
    /// Writes the kernel makes where the region as written may not: an element the
    /// source assigns under `if (c)` without `else`, which the kernel assigns always
    /// (its old value when `c` is false; `tessera_compiler::branches`). Each must lie
    /// in the data the device holds of its array — the mapped section, or for a
    /// `present` argument the mapping it points into — else the fallback kernel runs
    /// (the source never writes there when `c` is false, and may be right not to).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub writes: Vec<GuardWrite>,
    /// The kernel for the other case: name, mode (`baseline`), sources, bitstream.
    pub fallback: FallbackKernel,
}

/// One launch condition.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GuardCondition {
    /// An integer expression over the scalar arguments.
    pub expr: Expr,
    /// What it says, for the report: `0 <= j < n for 'a[i * n + j]'`.
    pub text: String,
}

/// A write of the kernel that the region as written may not make ([`Guard::writes`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GuardWrite {
    /// The array argument it writes.
    pub arg: String,
    /// What it writes (not `may`: the kernel writes every element of the box).
    pub footprint: Footprint,
}

/// A second kernel of the same region, with the same arguments.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FallbackKernel {
    /// Top function name.
    pub kernel: String,
    /// Its mode.
    pub mode: crate::Mode,
    /// Its Vitis HLS C++.
    pub kernel_source: String,
    /// Its emulation entry.
    pub emu_entry_source: String,
    /// Its bitstream's file name.
    pub xclbin: String,
    /// The [`Manifest::content_hash`] of [`Manifest::fallback`] (what its bitstream
    /// record must carry).
    pub hash: String,
    /// Its [`Manifest::write_ports`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub write_ports: Vec<usize>,
    /// Its [`Manifest::interleave`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interleave: Option<Interleave>,
    /// Its [`Manifest::size_params`].
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub size_params: Vec<usize>,
}

/// One argument of the region call.
///
/// A scalar the region writes and returns to the host (`tessera_ir::Var::writes_back`)
/// is an argument of kind [`VarKind::Array`] with one element (`dims` `[1]`, section
/// `[0:1]`, the scalar's map type): the address the call passes is the scalar's, which
/// is element 0 of that array, so the runtime maps, copies back and reports it like any
/// array, and the kernel reaches it through a memory port.
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
    /// Where the region's accesses of the array land, one entry per access, when the
    /// compiler could derive it from the loop nest (empty otherwise). The runtime
    /// checks it against the mapped section (or the present mapping) before a launch:
    /// an access outside is undefined behaviour in OpenMP, which a device would turn
    /// into garbage or a fault; Tessera reports it and runs the region on the host.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub footprint: Vec<Footprint>,
    /// The DDR bank of the kernel's port for this array, counted from 0 (`banks=2`:
    /// arrays the region writes in bank 1, the others in bank 0). `tessera bitstream`
    /// links the port to that bank (`sp=`), so XRT allocates the buffer there
    /// (its argument's memory group); the model charges each bank its own traffic.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bank: u32,
    /// Set when the region reduces (part of) the array (`reduction(+: a[l:n])`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reduction: Option<ArrayReductionArg>,
    /// The compiler knows every access of the region (`footprint` has them all) and
    /// none is of this array: a clause names it, no statement touches it. A host run
    /// of the region moves none of it (an empty `footprint` alone means unknown).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub untouched: bool,
}

/// A reduction on an array argument. The kernel updates the reduced elements in place
/// in the loop's order; around the launch the runtime turns that into OpenMP's private
/// copy: before it, it saves the elements' device values and sets them to the
/// operator's identity; after it, each element becomes `saved op kernel's value`
/// (`tessera_rt`'s `reduce` module). The result is the host's with one thread, bit for
/// bit, and exact in any thread count for operators other than floating `+` and `*`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ArrayReductionArg {
    /// The reduction identifier.
    pub op: ReductionOp,
    /// The reduced elements, one entry per dimension, inside the mapped section.
    pub section: Vec<Section>,
}

fn is_zero(b: &u32) -> bool {
    *b == 0
}

/// The index range one access of a region covers, over the whole iteration domain.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Footprint {
    /// The access as written (`a[i + 1]`).
    pub access: String,
    /// Whether it writes (else it reads).
    pub write: bool,
    /// Per dimension, the smallest index it takes (an expression over the scalars).
    pub lo: Vec<Expr>,
    /// Per dimension, the largest index it takes.
    pub hi: Vec<Expr>,
    /// The iteration domain is non-empty exactly when `lower < upper` for every pair
    /// (the loops' bounds); otherwise the access never happens.
    pub nonempty: Vec<(Expr, Expr)>,
    /// The range bounds what the access *may* touch, not what it does: an access of
    /// an array that the region reads under `c ? … : …`, which may never happen. Such
    /// a range only narrows the copies around a host run (which may copy more than
    /// the region touches); the runtime never refuses a launch for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub may: bool,
    /// Exactly the indices the access takes (when it happens; for a `may` access,
    /// may take), as a lattice over the loops of its nest. Every affine subscript over
    /// a box-shaped domain is one: `a[i][i]`, `a[i + j]`, `a[2*i][j + 1]`, and a
    /// delinearised view linearised. A host run inside a parallel region swaps only
    /// these elements, since the other threads may use the rest of the box. `None`:
    /// the box only bounds the access.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lattice: Option<Lattice>,
}

/// The indices an access takes over a box-shaped iteration domain: with every `t_k`
/// running over `0..counts[k]`, the index of dimension `d` is
/// `base[d] + Σ_k t_k · delta[d][k]` — every combination and nothing else.
/// Expressions over the region's scalars, like [`Footprint::lo`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Lattice {
    /// Per loop of the nest (outermost first), how many iterations it runs when the
    /// domain is non-empty.
    pub counts: Vec<Expr>,
    /// Per dimension, the subscript at the first iteration of every loop.
    pub base: Vec<Expr>,
    /// Per dimension, per loop, what one more iteration of that loop adds to the
    /// subscript (its coefficient times the loop's step).
    pub delta: Vec<Vec<Expr>>,
}

impl Manifest {
    /// For a region whose variables cannot be passed (`__tessera_opaque`): why its host
    /// run cannot stand for a device run even with the device copy of every mapping
    /// around it — a clause whose value the runtime does not see, or an `always` copy it
    /// cannot make — or `None` when it can. The runtime then stops the program while data
    /// is mapped, and the plugin keeps every enclosing `target data` from mapping.
    pub fn opaque_limit(&self) -> Option<&'static str> {
        if self.if_clause {
            Some("its 'if' clause may send it to the host device, on host data")
        } else if self.device_clause {
            Some("its 'device' clause may send it to the host device, on host data")
        } else if self.always_maps {
            Some("its 'always' maps need copies Tessera cannot make without its variables")
        } else {
            None
        }
    }

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

    /// The kernel's identity: SHA-256 (hex) over everything that decides what the
    /// kernel computes and how it is called — schema version, kernel name, mode,
    /// arguments (order, types, maps, shapes), the kernel's C++ and the emulation
    /// entry, and the bitstream name. Not over `region` (the report key; the kernel
    /// name already holds the line), `rejected` or `hash` itself.
    pub fn content_hash(&self) -> String {
        #[derive(Serialize)]
        struct Identity<'a> {
            version: u32,
            kernel: &'a Option<String>,
            mode: &'a str,
            args: &'a [Arg],
            kernel_source: &'a str,
            emu_entry_source: &'a str,
            xclbin: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            guard: &'a Option<Guard>,
            #[serde(skip_serializing_if = "<[usize]>::is_empty")]
            write_ports: &'a [usize],
            #[serde(skip_serializing_if = "Option::is_none")]
            interleave: &'a Option<Interleave>,
            #[serde(skip_serializing_if = "<[usize]>::is_empty")]
            size_params: &'a [usize],
        }
        let id = Identity {
            version: self.version,
            kernel: &self.kernel,
            mode: self.mode.name(),
            args: &self.args,
            kernel_source: &self.kernel_source,
            emu_entry_source: &self.emu_entry_source,
            xclbin: &self.xclbin,
            guard: &self.guard,
            write_ports: &self.write_ports,
            interleave: &self.interleave,
            size_params: &self.size_params,
        };
        sha256_hex(&serde_json::to_vec(&id).expect("manifest is always serialisable"))
    }

    /// The manifest of the guard's fallback kernel: the same region and arguments,
    /// its kernel, without a guard. `None` without a guard.
    pub fn fallback(&self) -> Option<Manifest> {
        let g = self.guard.as_ref()?;
        let f = &g.fallback;
        Some(Manifest {
            kernel: Some(f.kernel.clone()),
            mode: f.mode,
            kernel_source: f.kernel_source.clone(),
            emu_entry_source: f.emu_entry_source.clone(),
            xclbin: f.xclbin.clone(),
            hash: f.hash.clone(),
            guard: None,
            write_ports: f.write_ports.clone(),
            interleave: f.interleave.clone(),
            size_params: f.size_params.clone(),
            ..self.clone()
        })
    }

    /// The parameters of the kernel's top function, in order: one per argument (its
    /// name), then one per [`write_ports`](Self::write_ports) entry, then, with
    /// [`interleave`](Self::interleave), one per interleaved argument (its second
    /// half, [`bank_port_name`]) and one per write port of an interleaved argument
    /// ([`bank_write_port_name`]), then one scalar per [`size_params`](Self::size_params)
    /// entry ([`size_param_name`]). The XRT and TaPaSCo backends pass an array's buffer
    /// (of an interleaved array: the buffer of the parameter's half) to each of its
    /// memory parameters and its buffer's element count to its size parameter; the
    /// flows connect each memory parameter to its bank ([`Manifest::param_bank`]).
    pub fn kernel_params(&self) -> Vec<KernelParam> {
        let own = self.args.iter().enumerate().map(|(i, a)| KernelParam {
            name: a.name.clone(),
            arg: i,
            write_port: false,
            half: 0,
            size: false,
        });
        let il: &[usize] = self.interleave.as_ref().map_or(&[], |il| &il.args);
        let sizes = self.size_params.iter().map(|&arg| KernelParam { name: String::new(), arg, write_port: false, half: 0, size: true });
        let extra = extra_params(&self.write_ports, il).into_iter().chain(sizes).filter_map(|p| {
            let a = self.args.get(p.arg)?;
            Some(KernelParam { name: p.name(&a.name), ..p })
        });
        own.chain(extra).collect()
    }

    /// Checks what a board backend relies on before it binds [`kernel_params`](Self::kernel_params):
    /// every interleaved argument, write port and size parameter names an array
    /// argument, and a size parameter's array is not interleaved (one buffer). The
    /// error names the kernel `name` and the offending argument.
    pub fn check_params(&self, name: &str) -> Result<(), String> {
        let not_array = |a: usize| self.args.get(a).is_none_or(|x| x.array.is_none());
        let il: &[usize] = self.interleave.as_ref().map_or(&[], |il| &il.args);
        if let Some(&a) = il.iter().find(|&&a| not_array(a)) {
            return Err(format!("kernel {name}: the manifest interleaves argument {a}, which is not an array"));
        }
        if let Some(&a) = self.write_ports.iter().find(|&&a| not_array(a)) {
            return Err(format!("kernel {name}: the manifest's write port names argument {a}, which is not an array"));
        }
        if let Some(&a) = self.size_params.iter().find(|&&a| not_array(a) || il.contains(&a)) {
            return Err(format!(
                "kernel {name}: the manifest's size parameter names argument {a}, which is not an array of one buffer"
            ));
        }
        Ok(())
    }

    /// The DDR bank of kernel parameter `p`: its half for an interleaved array, else
    /// its argument's `bank`.
    pub fn param_bank(&self, p: &KernelParam) -> u32 {
        let interleaved = self.interleave.as_ref().is_some_and(|il| il.args.contains(&p.arg));
        if interleaved {
            return u32::from(p.half);
        }
        self.args.get(p.arg).and_then(|a| a.array.as_ref()).map_or(0, |a| a.bank)
    }

    /// The first launch condition that does not hold for the scalar values `env`
    /// (one that cannot be evaluated — an unbound name, a division by zero — does
    /// not hold), or `None` when all hold or there is no guard.
    pub fn failed_condition(&self, env: &dyn Fn(&str) -> Option<i128>) -> Option<&GuardCondition> {
        let g = self.guard.as_ref()?;
        g.conditions.iter().find(|c| crate::eval::eval_int(&c.expr, env).map_or(true, |v| v == 0))
    }

    /// The manifest with `hash` set to its [`content_hash`](Self::content_hash).
    pub fn with_hash(mut self) -> Manifest {
        self.hash = self.content_hash();
        self
    }
}

/// SHA-256 of `data` as 64 lower-case hex digits.
pub fn sha256_hex(data: &[u8]) -> String {
    Sha256::digest(data).iter().map(|b| format!("{b:02x}")).collect()
}

/// Version of the [`BitstreamRecord`] schema written today (2: `kernels`, every kernel
/// linked into the bitstream). Version 1 records (one kernel: `kernel`, `hash`,
/// `region`, `manifest` at the top level) are still read, as a list of one.
pub const BITSTREAM_RECORD_VERSION: u32 = 2;

/// The build record `tessera bitstream` writes beside a bitstream it built,
/// `<xclbin>.json` ([`BitstreamRecord::path_for`]): which manifests the bitstream was
/// built from. A program's kernels are linked into one bitstream, so the record lists
/// every kernel in it with its manifest's [`hash`](Manifest::hash). The XRT backend
/// runs a kernel from a bitstream only when its record lists that kernel with the
/// running manifest's hash; a bitstream without a record, without the kernel or with
/// another hash is stale (built before the source or the compiler changed) or foreign
/// (built from another program), and the kernel is not run from it.
///
/// Schema (one line of JSON):
/// `{"version":2,"kernels":[{"kernel":…,"hash":…,"region":…,"manifest":…},…],"target":…,"platform":…}`.
/// Version 1 had the one kernel's fields at the top level instead of `kernels`;
/// [`from_json`](Self::from_json) reads both.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct BitstreamRecord {
    /// Schema version, [`BITSTREAM_RECORD_VERSION`].
    pub version: u32,
    /// Every kernel linked into the bitstream, in link order.
    pub kernels: Vec<RecordedKernel>,
    /// Build target: `sw_emu`, `hw_emu` or `hw`.
    pub target: String,
    /// The Vitis platform (`.xpfm` path or name) it was built for.
    pub platform: String,
}

/// One kernel of a [`BitstreamRecord`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedKernel {
    /// Kernel (top function) name.
    pub kernel: String,
    /// The manifest's [`hash`](Manifest::hash).
    pub hash: String,
    /// `file:line` of the region (for people reading the record).
    pub region: String,
    /// The manifest file the kernel was built from.
    pub manifest: String,
}

/// What a record file may hold: version 2 (`kernels`) or version 1 (one kernel's
/// fields at the top level).
#[derive(Deserialize)]
struct RecordFile {
    version: u32,
    #[serde(default)]
    kernels: Option<Vec<RecordedKernel>>,
    #[serde(default)]
    kernel: Option<String>,
    #[serde(default)]
    hash: Option<String>,
    #[serde(default)]
    region: Option<String>,
    #[serde(default)]
    manifest: Option<String>,
    target: String,
    platform: String,
}

impl BitstreamRecord {
    /// Where the record of bitstream `xclbin` is: `<xclbin>.json`.
    pub fn path_for(xclbin: &Path) -> PathBuf {
        let mut p = xclbin.as_os_str().to_owned();
        p.push(".json");
        PathBuf::from(p)
    }

    /// Parses a record of version 2, or of version 1 (as a record of one kernel).
    pub fn from_json(text: &str) -> Result<BitstreamRecord, String> {
        let f: RecordFile = serde_json::from_str(text).map_err(|e| format!("does not parse: {e}"))?;
        let kernels = match (f.version, f.kernels) {
            (BITSTREAM_RECORD_VERSION, Some(k)) => k,
            (1, None) => match (f.kernel, f.hash, f.region, f.manifest) {
                (Some(kernel), Some(hash), Some(region), Some(manifest)) => {
                    vec![RecordedKernel { kernel, hash, region, manifest }]
                }
                _ => return Err("does not parse: a version 1 record needs kernel, hash, region and manifest".into()),
            },
            (BITSTREAM_RECORD_VERSION, None) => return Err("does not parse: missing field `kernels`".into()),
            (v, _) => {
                return Err(format!(
                    "has schema version {v}, this Tessera reads versions 1 and {BITSTREAM_RECORD_VERSION}"
                ))
            }
        };
        Ok(BitstreamRecord { version: BITSTREAM_RECORD_VERSION, kernels, target: f.target, platform: f.platform })
    }

    /// The entry of kernel `name`, if the bitstream holds it.
    pub fn kernel(&self, name: &str) -> Option<&RecordedKernel> {
        self.kernels.iter().find(|k| k.kernel == name)
    }

    /// The kernel names, comma-separated (for messages).
    pub fn kernel_names(&self) -> String {
        self.kernels.iter().map(|k| k.kernel.as_str()).collect::<Vec<_>>().join(", ")
    }

    /// One line of JSON with a final newline, as written to the file.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a record is always serialisable") + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn manifest() -> Manifest {
        Manifest {
            version: MANIFEST_VERSION,
            region: "k.c:2".into(),
            kernel: Some("tessera_k_0123abcd_l2_r0_89abcdef".into()),
            rejected: None,
            mode: crate::Mode::Baseline,
            args: vec![Arg { name: "n".into(), kind: VarKind::Scalar, elem: ScalarType::I32, array: None }],
            kernel_source: "void k(int n) {}".into(),
            emu_entry_source: "#include \"kernel.cpp\"".into(),
            xclbin: "tessera_k_0123abcd_l2_r0_89abcdef.xclbin".into(),
            hash: String::new(), if_clause: false, device_clause: false, always_maps: false, guard: None, write_ports: vec![], interleave: None, size_params: vec![], members: vec![], member_checks: vec![],
        }
        .with_hash()
    }

    /// A write port is one more kernel parameter, after the arguments, on the same
    /// argument; it is part of the kernel's identity and survives JSON.
    #[test]
    fn write_ports_are_parameters_after_the_arguments() {
        let mut m = manifest();
        m.args.push(Arg { name: "ey".into(), kind: VarKind::Array, elem: ScalarType::F32, array: None });
        m.args.push(Arg { name: "hz".into(), kind: VarKind::Array, elem: ScalarType::F32, array: None });
        let without = m.content_hash();
        let names = |m: &Manifest| m.kernel_params().iter().map(|p| (p.name.clone(), p.arg, p.write_port)).collect::<Vec<_>>();
        assert_eq!(names(&m), [("n".to_string(), 0, false), ("ey".into(), 1, false), ("hz".into(), 2, false)]);
        m.write_ports = vec![1];
        assert_eq!(names(&m)[3], ("tdf_w_ey".to_string(), 1, true));
        assert_eq!(names(&m).len(), 4);
        assert_ne!(m.content_hash(), without);
        let back = Manifest::from_json(&m.to_json()).unwrap();
        assert_eq!(back.write_ports, [1]);
        assert!(!manifest().to_json().contains("write_ports"), "absent when empty");
    }

    /// Interleaved arrays: a second-half parameter per array and per write port of
    /// one, after the write ports, each in its half's bank; part of the identity.
    #[test]
    fn interleaved_arrays_have_a_parameter_per_half() {
        let mut m = manifest();
        for a in ["ey", "hz"] {
            let array = ArrayArg { map: MapKind::Tofrom, dims: vec![], section: vec![], footprint: vec![], bank: 1, reduction: None, untouched: false };
            m.args.push(Arg { name: a.into(), kind: VarKind::Array, elem: ScalarType::F32, array: Some(array) });
        }
        m.write_ports = vec![1];
        let plain = m.content_hash();
        m.interleave = Some(Interleave { args: vec![2, 1], segment_bytes: 4096 });
        assert_ne!(m.content_hash(), plain);
        let params = m.kernel_params();
        let got: Vec<(&str, usize, bool, u8, u32)> =
            params.iter().map(|p| (p.name.as_str(), p.arg, p.write_port, p.half, m.param_bank(p))).collect();
        assert_eq!(
            got,
            [
                ("n", 0, false, 0, 0),
                ("ey", 1, false, 0, 0),
                ("hz", 2, false, 0, 0),
                ("tdf_w_ey", 1, true, 0, 0),
                ("tdf_b1_hz", 2, false, 1, 1),
                ("tdf_b1_ey", 1, false, 1, 1),
                ("tdf_w_b1_ey", 1, true, 1, 1),
            ]
        );
        assert_eq!(Manifest::from_json(&m.to_json()).unwrap().interleave, m.interleave);
        // Not interleaved: the argument's bank.
        m.interleave = None;
        assert_eq!(m.param_bank(&m.kernel_params()[1]), 1);
    }

    /// A size parameter is a scalar after every memory parameter, named after its
    /// array; part of the identity, survives JSON, and the fallback kernel has its own.
    #[test]
    fn size_params_come_last() {
        let mut m = manifest();
        m.args.push(Arg { name: "a".into(), kind: VarKind::Array, elem: ScalarType::F32, array: None });
        m.write_ports = vec![1];
        let plain = m.content_hash();
        m.size_params = vec![1];
        assert_ne!(m.content_hash(), plain);
        let got: Vec<(String, usize, bool, bool)> = m.kernel_params().iter().map(|p| (p.name.clone(), p.arg, p.write_port, p.size)).collect();
        assert_eq!(
            got,
            [("n".to_string(), 0, false, false), ("a".into(), 1, false, false), ("tdf_w_a".into(), 1, true, false), ("tessera_elems_a".into(), 1, false, true)]
        );
        assert_eq!(Manifest::from_json(&m.to_json()).unwrap().size_params, [1]);
        assert!(!manifest().to_json().contains("size_params"), "absent when empty");
    }

    /// check_params: interleaved arguments, write ports and size parameters name
    /// arrays, and a size parameter's array has one buffer.
    #[test]
    fn parameter_checks_name_the_offending_argument() {
        let mut m = manifest();
        for a in ["ey", "hz"] {
            let array = ArrayArg { map: MapKind::Tofrom, dims: vec![], section: vec![], footprint: vec![], bank: 0, reduction: None, untouched: false };
            m.args.push(Arg { name: a.into(), kind: VarKind::Array, elem: ScalarType::F32, array: Some(array) });
        }
        m.write_ports = vec![1];
        m.size_params = vec![2];
        m.interleave = Some(Interleave { args: vec![1], segment_bytes: 4096 });
        assert_eq!(m.check_params("k"), Ok(()));
        let broken = |f: &dyn Fn(&mut Manifest)| {
            let mut b = m.clone();
            f(&mut b);
            b.check_params("k").unwrap_err()
        };
        assert!(broken(&|b| b.write_ports = vec![0]).contains("write port names argument 0"));
        assert!(broken(&|b| b.write_ports = vec![7]).contains("write port names argument 7"));
        assert!(broken(&|b| b.interleave.as_mut().unwrap().args = vec![0]).contains("interleaves argument 0"));
        assert!(broken(&|b| b.size_params = vec![0]).contains("size parameter names argument 0"));
        assert!(broken(&|b| b.size_params = vec![1]).contains("not an array of one buffer"));
    }

    /// deinterleave and interleave are inverse, segment k lands in half k mod 2 at
    /// floor(k/2) segments, and the halves are as long as half_bytes says.
    #[test]
    fn halves_round_trip() {
        for bytes in [0usize, 1, 63, 64, 65, 128, 129, 1000, 4096] {
            for seg in [1usize, 4, 64] {
                let il = Interleave { args: vec![], segment_bytes: seg as u64 };
                let src: Vec<u8> = (0..bytes).map(|i| (i * 7 + 3) as u8).collect();
                let [b0, b1] = il.half_bytes(bytes);
                assert!(b0 + b1 >= bytes && b0 + b1 < bytes + 2 * seg, "{bytes} {seg}");
                let real = [0, 1].map(|h| src.chunks(seg).enumerate().filter(|(k, _)| k % 2 == h).map(|(_, c)| c.len()).sum::<usize>());
                assert_eq!(il.data_bytes(bytes), real, "{bytes} {seg}");
                let (mut h0, mut h1) = (vec![0u8; b0], vec![0u8; b1]);
                deinterleave(&src, seg, [&mut h0, &mut h1]);
                for (i, &v) in src.iter().enumerate() {
                    let k = i / seg;
                    let at = (k / 2) * seg + i % seg;
                    assert_eq!(if k % 2 == 0 { h0[at] } else { h1[at] }, v);
                }
                let mut back = vec![0u8; bytes];
                interleave([&h0, &h1], seg, &mut back);
                assert_eq!(back, src);
            }
        }
    }

    /// A guarded manifest: its fallback is the same region with the other kernel, and
    /// the first condition that fails (or cannot be evaluated) is reported.
    #[test]
    fn guards_choose_the_fallback_kernel() {
        use crate::{BinOp, Expr};
        let mut m = manifest();
        assert!(m.fallback().is_none());
        assert!(m.failed_condition(&|_| Some(1)).is_none());
        let n = Expr::var("n", ScalarType::I32);
        let cond = |op, k| Expr::Binary { op, lhs: Box::new(n.clone()), rhs: Box::new(Expr::int(k)), ty: ScalarType::I32 };
        let unguarded = m.hash.clone();
        let fb = Manifest { kernel: Some("k_linear".into()), xclbin: "k_linear.xclbin".into(), ..m.clone() };
        m.guard = Some(Guard {
            conditions: vec![
                GuardCondition { expr: cond(BinOp::Lt, 10), text: "n < 10".into() },
                GuardCondition { expr: cond(BinOp::Div, 0), text: "n / 0".into() },
            ],
            writes: vec![],
            fallback: FallbackKernel {
                kernel: "k_linear".into(),
                mode: crate::Mode::Baseline,
                kernel_source: m.kernel_source.clone(),
                emu_entry_source: m.emu_entry_source.clone(),
                xclbin: "k_linear.xclbin".into(),
                hash: fb.content_hash(),
                write_ports: vec![], interleave: None, size_params: vec![],
            },
        });
        let m = m.with_hash();
        assert_ne!(m.hash, unguarded, "the guard is part of what the kernel is");
        let f = m.fallback().unwrap();
        assert_eq!((f.kernel.as_deref(), f.guard.is_none(), f.hash == f.content_hash()), (Some("k_linear"), true, true));
        assert_eq!(f.args, m.args);
        let env = |v: i128| move |name: &str| (name == "n").then_some(v);
        assert_eq!(m.failed_condition(&env(12)).map(|c| c.text.as_str()), Some("n < 10"));
        // n < 10 holds; n / 0 cannot be evaluated: it does not hold.
        assert_eq!(m.failed_condition(&env(3)).map(|c| c.text.as_str()), Some("n / 0"));
        assert_eq!(m.failed_condition(&|_| None).map(|c| c.text.as_str()), Some("n < 10"));
    }

    #[test]
    fn the_hash_covers_what_the_kernel_computes() {
        let m = manifest();
        assert_eq!(m.hash.len(), 64);
        assert!(m.hash.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()));
        assert_eq!(m.hash, m.content_hash(), "deterministic");
        // The report key and the hash field itself are not part of it.
        let moved = Manifest { region: "other.c:9".into(), hash: "x".into(), ..m.clone() };
        assert_eq!(moved.content_hash(), m.hash);
        let changes: [fn(&mut Manifest); 6] = [
            |m| m.kernel_source.push(' '),
            |m| m.emu_entry_source.push(' '),
            |m| m.mode = crate::Mode::Tessera,
            |m| m.args[0].elem = ScalarType::I64,
            |m| m.kernel = Some("other".into()),
            |m| m.xclbin = "other.xclbin".into(),
        ];
        for change in changes {
            let mut c = m.clone();
            change(&mut c);
            assert_ne!(c.content_hash(), m.hash, "{c:?}");
        }
        // It survives the JSON round trip of the embedded manifest.
        assert_eq!(Manifest::from_json(&m.to_json()).unwrap(), m);
    }

    #[test]
    fn older_schemas_are_refused_by_version() {
        let mut v: serde_json::Value = serde_json::from_str(&manifest().to_json()).unwrap();
        v["version"] = 1.into();
        v.as_object_mut().unwrap().remove("hash");
        let e = Manifest::from_json(&v.to_string()).unwrap_err();
        assert_eq!(e, format!("manifest has schema version 1, this runtime reads version {MANIFEST_VERSION}"));
    }

    #[test]
    fn bitstream_records() {
        assert_eq!(BitstreamRecord::path_for(Path::new("b/hw/k.xclbin")), Path::new("b/hw/k.xclbin.json"));
        let k = |name: &str, hash: &str| RecordedKernel {
            kernel: name.into(),
            hash: hash.into(),
            region: "k.c:2".into(),
            manifest: format!("p.tessera/{name}.manifest.json"),
        };
        let r = BitstreamRecord {
            version: BITSTREAM_RECORD_VERSION,
            kernels: vec![k("k", "ab"), k("j", "cd")],
            target: "hw".into(),
            platform: "u250".into(),
        };
        assert_eq!(BitstreamRecord::from_json(&r.to_json()).unwrap(), r);
        assert_eq!(r.kernel("j").map(|e| e.hash.as_str()), Some("cd"));
        assert_eq!(r.kernel("x"), None);
        assert_eq!(r.kernel_names(), "k, j");
        assert!(BitstreamRecord::from_json("{}").unwrap_err().starts_with("does not parse"));
        assert_eq!(r.to_json().lines().count(), 1);
        assert!(r.to_json().starts_with("{\"version\":2,\"kernels\":[{\"kernel\":\"k\","), "{}", r.to_json());
        let v7 = r.to_json().replace("\"version\":2", "\"version\":7");
        assert_eq!(BitstreamRecord::from_json(&v7).unwrap_err(), "has schema version 7, this Tessera reads versions 1 and 2");
        let v2_without_kernels = r#"{"version":2,"target":"hw","platform":"u250"}"#;
        assert!(BitstreamRecord::from_json(v2_without_kernels).unwrap_err().contains("`kernels`"));
        // Version 1 (one kernel per bitstream) is read as a record of one kernel.
        let v1 = r#"{"version":1,"kernel":"k","hash":"ab","region":"k.c:2","manifest":"p.tessera/k.manifest.json","target":"hw","platform":"u250"}"#;
        let old = BitstreamRecord::from_json(v1).unwrap();
        assert_eq!(old.kernels, vec![k("k", "ab")]);
        assert_eq!((old.version, old.target.as_str(), old.platform.as_str()), (2, "hw", "u250"));
        assert!(BitstreamRecord::from_json(r#"{"version":1,"kernel":"k","target":"hw","platform":"u250"}"#).is_err());
    }
}
