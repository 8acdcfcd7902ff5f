//! Devices: which one a region runs on, and the interface every device implements.
//!
//! The choice ([`choose`]) is a pure function of the configuration, the manifest and
//! the XRT backend's status, so it is tested as a table. A device that can run
//! kernels implements [`Device`]; the orchestration in `lib.rs` is generic over it,
//! which is where the XRT backend (`xrt/`, cargo feature `xrt`) slots in next to the
//! emulated device of `emu.rs`. The host is not a [`Device`]: running on the
//! host means returning 0 so the original region code runs.

use crate::config::{Config, DeviceRequest, OffloadPolicy};
use crate::data::ScalarSlot;
use crate::report::Arrays;
use std::ops::Range;
use tessera_ir::manifest::Manifest;

pub use tessera_ir::report::DeviceKind;

/// Whether the XRT backend could run a given kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum XrtStatus {
    /// The runtime was built without cargo feature `xrt`.
    NotBuilt,
    /// Built with XRT, but no device or no bitstream for this kernel (why).
    Unavailable(String),
    /// A device is present and the kernel's bitstream was found.
    Ready,
}

/// Reason given when no device was requested and no FPGA is usable.
pub const NO_DEVICE: &str = "no FPGA device (set TESSERA_DEVICE=emu to use the emulated device)";

/// Reason given when `TESSERA_DEVICE=xrt` but the runtime lacks the backend.
pub const XRT_NOT_BUILT: &str = "this runtime was built without XRT support (cargo feature `xrt`)";

/// The XRT backend's status for a manifest's kernel in this build (board present,
/// bitstream found; see `crate::xrt::status`).
pub fn xrt_status(config: &Config, manifest: &Manifest) -> XrtStatus {
    crate::xrt::status(config, manifest)
}

/// Where a region runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Choice {
    /// Run the kernel on this device (never [`DeviceKind::Host`]).
    Offload(DeviceKind),
    /// Run the original code on the host, for this reason.
    Host(String),
}

/// Chooses the device for one execution of a region. Rules, first match wins:
///
/// 1. `OMP_TARGET_OFFLOAD=DISABLED` → host.
/// 2. The manifest is `rejected` → host, with the compile-time remark as reason.
/// 3. The manifest names no kernel → host.
/// 4. `TESSERA_DEVICE=host|emu|xrt|tapasco` → that device (`xrt` only when
///    [`XrtStatus::Ready`], otherwise host with the backend's reason; `tapasco` checks
///    its board and kernel when it loads, a failure is a host run with its reason);
///    any other value → host.
/// 5. Unset → XRT when ready, else host ([`NO_DEVICE`]).
///
/// `OMP_TARGET_OFFLOAD=MANDATORY` does not change the choice: the caller turns a host
/// choice into a fatal error (see `crate::mandatory_violation`).
pub fn choose(config: &Config, manifest: &Manifest, xrt: &XrtStatus) -> Choice {
    if config.offload == OffloadPolicy::Disabled {
        return Choice::Host("OMP_TARGET_OFFLOAD=DISABLED".into());
    }
    if let Some(r) = &manifest.rejected {
        return Choice::Host(r.clone());
    }
    if manifest.kernel.is_none() {
        return Choice::Host("the region's manifest names no kernel".into());
    }
    let use_xrt = || match xrt {
        XrtStatus::Ready => Choice::Offload(DeviceKind::Xrt),
        XrtStatus::NotBuilt => Choice::Host(XRT_NOT_BUILT.into()),
        XrtStatus::Unavailable(why) => Choice::Host(format!("TESSERA_DEVICE=xrt but {why}")),
    };
    match &config.device {
        DeviceRequest::Device(DeviceKind::Host) => Choice::Host("TESSERA_DEVICE=host".into()),
        DeviceRequest::Device(DeviceKind::Emu) => Choice::Offload(DeviceKind::Emu),
        DeviceRequest::Device(DeviceKind::Xrt) => use_xrt(),
        // Whether the board opens and holds the kernel is checked by the device
        // itself (`tapasco::TapascoDevice`); a failure runs the region on the host.
        DeviceRequest::Device(DeviceKind::Tapasco) => Choice::Offload(DeviceKind::Tapasco),
        DeviceRequest::Unknown(v) => {
            Choice::Host(format!("TESSERA_DEVICE={v} names no device (expected host, emu, xrt or tapasco)"))
        }
        DeviceRequest::Auto => match xrt {
            XrtStatus::Ready => Choice::Offload(DeviceKind::Xrt),
            XrtStatus::NotBuilt => Choice::Host(NO_DEVICE.into()),
            XrtStatus::Unavailable(why) => Choice::Host(format!("{NO_DEVICE}: {why}")),
        },
    }
}

/// Memory of one array argument on a device, with a host-visible view.
///
/// The orchestration copies the mapped section into [`host_view`](Self::host_view),
/// calls [`sync_to_device`](Self::sync_to_device) on the bytes it wrote, launches,
/// calls [`sync_from_device`](Self::sync_from_device) on the bytes it will read and
/// copies the section back out of the view. On the emulated device the view *is* the
/// device memory and the syncs do nothing; an XRT buffer object maps its host copy
/// and syncs the requested byte range over PCIe.
///
/// The view is current only where it was synced: after a kernel ran, bytes outside
/// the ranges synced back may be stale, so a writer that leaves gaps inside the range
/// it syncs to the device syncs that range *from* the device first (see
/// `present::to_device`).
pub trait DeviceBuffer {
    /// The buffer's bytes as seen from the host (length: the whole index space).
    fn host_view(&mut self) -> &mut [u8];
    /// Makes bytes `range` of the host view visible to the kernel.
    fn sync_to_device(&mut self, range: Range<usize>) -> Result<(), String>;
    /// Makes the kernel's writes to bytes `range` visible in the host view.
    fn sync_from_device(&mut self, range: Range<usize>) -> Result<(), String>;
    /// Brings everything the device holds into the host view and gives up the
    /// device-side memory; the next launch allocates it again and fills it from the
    /// view. Called before the device is reconfigured ([`Device::reconfigures`]) for
    /// buffers that stay mapped (present data). Default: nothing to give up.
    fn release(&mut self) -> Result<(), String> {
        Ok(())
    }
}

/// The device type `$name` of a runtime built without its backend's cargo feature: an
/// empty type, so the orchestration compiles the same in both builds, and `new` always
/// fails with `$why` (the backend's "not built" reason).
#[cfg(any(not(feature = "xrt"), not(feature = "tapasco")))]
macro_rules! absent_device {
    ($name:ident, $why:expr, $what:literal) => {
        #[doc = concat!("The ", $what, " device of a runtime built without its cargo feature: an empty type; [`")]
        #[doc = concat!(stringify!($name), "::new`] always fails.")]
        pub enum $name {}

        impl $name {
            #[doc = concat!("Always fails: this runtime was built without ", $what, " support.")]
            pub fn new(_config: &$crate::config::Config) -> Result<$name, String> {
                Err($why.into())
            }
        }

        impl $crate::device::Device for $name {
            type Buffer = $crate::data::HostBuffer;
            type Kernel = ();

            fn kind(&self) -> $crate::device::DeviceKind {
                match *self {}
            }
            fn load(&self, _manifest: &tessera_ir::manifest::Manifest) -> Result<(), String> {
                match *self {}
            }
            fn alloc(&self, _bytes: usize) -> Result<$crate::data::HostBuffer, String> {
                match *self {}
            }
            fn launch(
                &self,
                _kernel: &(),
                _args: &mut [$crate::device::KernelArg<'_, $crate::data::HostBuffer>],
            ) -> Result<$crate::device::LaunchStats, String> {
                match *self {}
            }
        }
    };
}
#[cfg(any(not(feature = "xrt"), not(feature = "tapasco")))]
pub(crate) use absent_device;

/// One kernel argument as a device sees it, in manifest order.
pub enum KernelArg<'a, B> {
    /// An array: its device buffer (the whole index space, row-major).
    Array {
        /// The buffer.
        buffer: &'a mut B,
        /// Bytes from the buffer's start to the argument's element 0: 0, except for a
        /// present argument that points into the middle of its mapping (a multiple of
        /// the element size).
        offset: usize,
        /// The array's name (report, trace, error messages).
        name: &'a str,
        /// Elements the kernel may reach from element 0.
        elems: usize,
        /// Bytes per element.
        elem_size: usize,
    },
    /// A scalar: its value.
    Scalar(&'a mut ScalarSlot),
}

/// What a device measured about one launch.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LaunchStats {
    /// Wall-clock seconds of the kernel call alone (no transfers).
    pub kernel_wall_s: f64,
    /// Exact traffic of every array argument through the kernel's memory ports, in
    /// manifest order (`None` for an array the kernel did not access through a port
    /// object, so nothing was counted). See `docs/performance-model.md`.
    pub arrays: Arrays,
    /// The `hls::stream`s of a dataflow kernel's launch by name (emulated device;
    /// empty otherwise).
    pub streams: std::collections::BTreeMap<String, tessera_ir::report::StreamUse>,
}

/// A device that runs kernels.
pub trait Device {
    /// Device memory for one array.
    type Buffer: DeviceBuffer;
    /// A loaded kernel, ready to launch (cheap to clone; devices cache them).
    type Kernel;

    /// Which device this is.
    fn kind(&self) -> DeviceKind;
    /// Whether preparing the manifest's kernel reconfigures the device (an FPGA
    /// loading another bitstream), which discards device memory: buffers that stay
    /// mapped across launches must then be [released](DeviceBuffer::release) first.
    /// Default: never.
    fn reconfigures(&self, _manifest: &Manifest) -> bool {
        false
    }
    /// Prepares the manifest's kernel (compiling or loading a bitstream as needed).
    fn load(&self, manifest: &Manifest) -> Result<Self::Kernel, String>;
    /// Allocates a zero-initialised buffer of `bytes` bytes.
    fn alloc(&self, bytes: usize) -> Result<Self::Buffer, String>;
    /// Runs the kernel to completion on `args` (one per manifest argument).
    fn launch(&self, kernel: &Self::Kernel, args: &mut [KernelArg<'_, Self::Buffer>]) -> Result<LaunchStats, String>;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn manifest(rejected: Option<&str>) -> Manifest {
        Manifest {
            members: Vec::new(),
            member_checks: Vec::new(),
            version: tessera_ir::manifest::MANIFEST_VERSION,
            region: "t.c:3".into(),
            kernel: Some("k".into()),
            rejected: rejected.map(String::from),
            mode: tessera_ir::Mode::Baseline,
            args: vec![],
            kernel_source: String::new(),
            emu_entry_source: String::new(),
            xclbin: "k.xclbin".into(),
            hash: String::new(), if_clause: false, device_clause: false, always_maps: false, guard: None, write_ports: vec![], interleave: None, size_params: vec![],
        }
    }

    #[test]
    fn choice_table() {
        let base = Config::emu(Path::new("/nonexistent"));
        let with = |offload, device| Config { offload, device, ..base.clone() };
        let m = manifest(None);
        let host = |s: &str| Choice::Host(s.into());
        use DeviceRequest::*;
        use OffloadPolicy::*;
        let ready = XrtStatus::Ready;
        let none = XrtStatus::NotBuilt;
        let unavailable = XrtStatus::Unavailable("no device".into());

        let cases: Vec<(Config, &Manifest, &XrtStatus, Choice)> = vec![
            (with(Disabled, Device(DeviceKind::Emu)), &m, &ready, host("OMP_TARGET_OFFLOAD=DISABLED")),
            (with(Default, Device(DeviceKind::Emu)), &m, &none, Choice::Offload(DeviceKind::Emu)),
            (with(Mandatory, Device(DeviceKind::Emu)), &m, &none, Choice::Offload(DeviceKind::Emu)),
            (with(Default, Device(DeviceKind::Host)), &m, &ready, host("TESSERA_DEVICE=host")),
            (with(Default, Device(DeviceKind::Xrt)), &m, &none, host(XRT_NOT_BUILT)),
            (with(Default, Device(DeviceKind::Xrt)), &m, &unavailable, host("TESSERA_DEVICE=xrt but no device")),
            (with(Default, Device(DeviceKind::Xrt)), &m, &ready, Choice::Offload(DeviceKind::Xrt)),
            (with(Default, Device(DeviceKind::Tapasco)), &m, &none, Choice::Offload(DeviceKind::Tapasco)),
            (with(Disabled, Device(DeviceKind::Tapasco)), &m, &none, host("OMP_TARGET_OFFLOAD=DISABLED")),
            (
                with(Default, Unknown("gpu".into())),
                &m,
                &ready,
                host("TESSERA_DEVICE=gpu names no device (expected host, emu, xrt or tapasco)"),
            ),
            (with(Default, Auto), &m, &none, host(NO_DEVICE)),
            (with(Default, Auto), &m, &unavailable, host(&format!("{NO_DEVICE}: no device"))),
            (with(Default, Auto), &m, &ready, Choice::Offload(DeviceKind::Xrt)),
        ];
        for (i, (c, m, x, want)) in cases.iter().enumerate() {
            assert_eq!(&choose(c, m, x), want, "case {i}");
        }

        let r = manifest(Some("t.c:3:1: loop bound is not affine"));
        assert_eq!(choose(&base, &r, &ready), host("t.c:3:1: loop bound is not affine"));
        let mut nk = manifest(None);
        nk.kernel = None;
        assert!(matches!(choose(&base, &nk, &ready), Choice::Host(_)));
    }
}
