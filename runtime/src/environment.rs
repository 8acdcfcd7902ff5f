//! The device data environment's one owner: [`DataEnvironment`].
//!
//! Every movement of data between host and device goes through its operations, and
//! nothing else in the runtime touches a device's present table
//! ([`present::DataEnv`], the table of one device):
//!
//! | operation | called by |
//! |---|---|
//! | [`DataEnvironment::data_begin`] / [`data_end`](DataEnvironment::data_end) | `target data` (its start and end) |
//! | [`DataEnvironment::data`] | `target enter data`, `target exit data`, `target update` |
//! | [`DataEnvironment::offload`] (launch: map, run, unmap; or the host fallback) | target regions |
//! | [`DataEnvironment::host_end`] | after a region's host fallback ran |
//! | [`DataEnvironment::opaque_host_run`] | a region the plugin could not pass its variables for |
//! | [`DataEnvironment::opaque_violation`] | such a region with an `if`, `device` or `always` it cannot honour |
//!
//! The invariant it enforces: a directive either goes through these operations, or
//! the whole data environment it belongs to is the host OpenMP runtime's —
//! - a mapping directive that does not map (left to the host OpenMP runtime at
//!   compile time, declined at run time) puts its data in host memory: while such a
//!   `target data` is active, and for the rest of the process after such a `target
//!   enter data`, every region runs on the host ([`DataEnvironment::forced_host`]);
//! - a standalone directive Tessera cannot execute that names data held on the
//!   device (or whose list items it cannot locate while anything is mapped) is fatal;
//! - a region whose footprint is unknown runs on the host with the device copy of
//!   everything mapped, which goes back to the device after it
//!   ([`DataEnvironment::opaque_host_run`]); with an `if`, `device` or `always` the
//!   runtime cannot honour without its variables, only while nothing is mapped
//!   ([`DataEnvironment::opaque_violation`]);
//! - a host fallback inside a data region copies the device data of every array the
//!   region may use to the host first and back after
//!   ([`DataEnvironment::host_fallback`], [`present::DataEnv::host_begin`]).
//!
//! `directives.rs` holds the C entry points of data directives, `lib.rs` those of
//! regions; both only parse their arguments and call the owner.

use crate::config::{Config, DeviceRequest, OffloadPolicy};
use crate::data::{self, element0, plan_items, plan_list, ArgPlan, ArrayPlan, HostBuffer, Plan};
use crate::device::{self, Choice, Device, DeviceKind, KernelArg, XrtStatus, NO_DEVICE, XRT_NOT_BUILT};
use crate::present::{self, DataEnv, Pin, RefKind};
use crate::report::{self, Record, Transfers};
use crate::{emu, tapasco, xrt};
use std::ffi::c_void;
use std::sync::{Mutex, OnceLock};
use tessera_ir::data::{DataDesc, DataOp, DescItem};
use tessera_ir::manifest::Manifest;
use tessera_ir::{MapKind, VarKind};

/// Where data directives execute under `config`; see [`choose_data_for`]. Probes the
/// XRT device (opened once per process) only when the choice depends on it.
pub fn choose_data(config: &Config) -> Choice {
    choose_data_for(config, &crate::xrt::data_status, &crate::tapasco::data_status)
}

/// Where data directives execute under `config`, given the XRT device's status for
/// data (`xrt`, called only when the choice depends on it). A pure function:
///
/// 1. `OMP_TARGET_OFFLOAD=DISABLED` → host.
/// 2. `TESSERA_DEVICE=emu` → the emulated device; `host` → host.
/// 3. `TESSERA_DEVICE=xrt` → the XRT device when it opens, else host with its reason;
///    `tapasco` → the TaPaSCo device when it opens, else host with its reason.
/// 4. Unset → the XRT device when it opens, else host ([`NO_DEVICE`]).
///
/// On the host device a data directive does nothing (host memory is the data), and
/// the regions inside a `target data` that did not map run on the host
/// ([`DataEnvironment::forced_host`]).
pub fn choose_data_for(config: &Config, xrt: &dyn Fn() -> XrtStatus, tapasco: &dyn Fn() -> Result<(), String>) -> Choice {
    if config.offload == OffloadPolicy::Disabled {
        return Choice::Host("OMP_TARGET_OFFLOAD=DISABLED".into());
    }
    match &config.device {
        DeviceRequest::Device(DeviceKind::Emu) => Choice::Offload(DeviceKind::Emu),
        DeviceRequest::Device(DeviceKind::Host) => Choice::Host("TESSERA_DEVICE=host".into()),
        DeviceRequest::Device(DeviceKind::Tapasco) => match tapasco() {
            Ok(()) => Choice::Offload(DeviceKind::Tapasco),
            Err(why) if why == crate::tapasco::TAPASCO_NOT_BUILT => Choice::Host(why),
            Err(why) => Choice::Host(format!("TESSERA_DEVICE=tapasco but {why}")),
        },
        DeviceRequest::Device(DeviceKind::Xrt) => match xrt() {
            XrtStatus::Ready => Choice::Offload(DeviceKind::Xrt),
            XrtStatus::NotBuilt => Choice::Host(XRT_NOT_BUILT.into()),
            XrtStatus::Unavailable(why) => Choice::Host(format!("TESSERA_DEVICE=xrt but {why}")),
        },
        DeviceRequest::Unknown(v) => {
            Choice::Host(format!("TESSERA_DEVICE={v} names no device (expected host, emu, xrt or tapasco)"))
        }
        DeviceRequest::Auto => match xrt() {
            XrtStatus::Ready => Choice::Offload(DeviceKind::Xrt),
            XrtStatus::NotBuilt => Choice::Host(NO_DEVICE.into()),
            XrtStatus::Unavailable(why) => Choice::Host(format!("{NO_DEVICE}: {why}")),
        },
    }
}

/// Runs `$body` with `$env` bound to the data environment of device `$kind` (emu, xrt
/// or tapasco) and `$alloc` to that device's buffer allocator: the operations of
/// [`DataEnv`] are generic over the buffer type, the environments are not.
macro_rules! on_env {
    ($envs:expr, $kind:expr, |$env:ident, $alloc:ident| $body:expr) => {
        match $kind {
            DeviceKind::Xrt => {
                let $env = &$envs.xrt;
                let $alloc = &crate::xrt::new_buffer;
                $body
            }
            DeviceKind::Tapasco => {
                let $env = &$envs.tapasco;
                let $alloc = &crate::tapasco::new_buffer;
                $body
            }
            _ => {
                let $env = &$envs.emu;
                let $alloc = &HostBuffer::new;
                $body
            }
        }
    };
}

/// The device data environments of a process (one per device that executes data
/// directives), and the record of mapping directives that did not map.
#[derive(Default)]
pub struct DataEnvironment {
    /// The emulated device's present table.
    emu: DataEnv<HostBuffer>,
    /// The XRT device's present table (never used without feature `xrt`).
    xrt: DataEnv<crate::xrt::Buffer>,
    /// The TaPaSCo device's present table (never used without feature `tapasco`).
    tapasco: DataEnv<crate::tapasco::Buffer>,
    /// Active `target data` constructs that did not map: (id, reason).
    declined_scopes: Mutex<Vec<(u64, String)>>,
    /// Next id of `declined_scopes`.
    next_scope: Mutex<u64>,
    /// The first `target enter data` that did not map.
    declined: OnceLock<String>,
    /// The blocks `omp_target_alloc` returned and not yet freed: address → where
    /// the block lives ([`DeviceKind::Host`] for the host device's).
    blocks: Mutex<std::collections::HashMap<usize, DeviceKind>>,
}

/// Where a device number of OpenMP's device memory routines points under a config
/// with `devices` devices (0 or 1): `0..devices` is Tessera's device, `devices`
/// (`omp_get_initial_device()`) the host.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceNum {
    /// The host device.
    Host,
    /// The device data directives map on.
    Device(DeviceKind),
    /// No such device.
    Invalid,
}

/// The outcome of one data directive execution.
pub struct DataRun {
    /// What happened.
    pub record: Record,
    /// Whether the directive executed on a device (the C return value: when 0, the
    /// original directive runs, on the host device).
    pub handled: bool,
    /// Set when the directive cannot be left to the host OpenMP runtime either: the
    /// process must stop with this message.
    pub fatal: Option<String>,
}

/// Per list item of a `target data`, the entry it mapped (key, generation), if any.
type EntryKeys = Vec<Option<(usize, u64)>>;

/// A `target data` construct between its begin and end calls.
pub struct Scope {
    region: String,
    /// The device, the evaluated list items and their entries.
    mapped: Option<(DeviceKind, Vec<ArrayPlan>, EntryKeys)>,
    /// Its id in `declined_scopes` when it did not map.
    declined: Option<u64>,
}

/// A host fallback whose arrays reach present data: the pins to release after the
/// host run, and the record to emit then.
pub struct HostRun {
    record: Record,
    pins: Pins,
    moved: Transfers,
}

/// The pins of a host run, in the environment of the device that holds the data.
enum Pins {
    Emu(Vec<Pin<HostBuffer>>),
    Xrt(Vec<Pin<crate::xrt::Buffer>>),
    Tapasco(Vec<Pin<crate::tapasco::Buffer>>),
}

impl Pins {
    fn is_empty(&self) -> bool {
        match self {
            Pins::Emu(p) => p.is_empty(),
            Pins::Xrt(p) => p.is_empty(),
            Pins::Tapasco(p) => p.is_empty(),
        }
    }
}

/// `$body` with `$env` bound to the present table of device `$kind` and the result
/// wrapped in that device's [`Pins`] variant. Every device kind that holds data has
/// its arm here (a host run that looked in another device's table would copy
/// nothing and lose the region's writes); `Host` holds none.
macro_rules! pins_on_env {
    ($envs:expr, $kind:expr, |$env:ident| $body:expr) => {
        match $kind {
            DeviceKind::Xrt => {
                let $env = &$envs.xrt;
                $body.map(Pins::Xrt)
            }
            DeviceKind::Tapasco => {
                let $env = &$envs.tapasco;
                $body.map(Pins::Tapasco)
            }
            DeviceKind::Emu => {
                let $env = &$envs.emu;
                $body.map(Pins::Emu)
            }
            DeviceKind::Host => Ok(Pins::Emu(Vec::new())),
        }
    };
}

impl DataEnvironment {
    /// Empty environments.
    pub fn new() -> DataEnvironment {
        DataEnvironment::default()
    }

    /// The device data directives map on under `config`, if they map at all.
    pub fn data_device(&self, config: &Config) -> Option<DeviceKind> {
        match choose_data(config) {
            Choice::Offload(kind) => Some(kind),
            Choice::Host(_) => None,
        }
    }

    /// The mappings of device `kind` (`emu` or `xrt`), in address order (tests,
    /// diagnostics).
    pub fn entries(&self, kind: DeviceKind) -> Vec<present::EntryInfo> {
        on_env!(self, kind, |env, _alloc| env.entries())
    }

    /// Whether nothing is mapped on `kind`.
    pub fn is_empty(&self, kind: DeviceKind) -> bool {
        on_env!(self, kind, |env, _alloc| env.is_empty())
    }

    /// Why every region must run on the host now (a mapping directive that did not
    /// map is in effect), or `None`.
    pub fn forced_host(&self) -> Option<String> {
        if let Some(r) = self.declined.get() {
            return Some(r.clone());
        }
        let scopes = self.declined_scopes.lock().unwrap_or_else(|e| e.into_inner());
        scopes.first().map(|(_, r)| r.clone())
    }

    /// A region whose footprint is unknown (see `__tessera_opaque`: the plugin could
    /// not pass its variables to the runtime) runs on the host with `record`. Its
    /// host code may reach any mapped byte, so while anything is mapped every entry
    /// of the device's table is pinned and its device bytes copied to the host
    /// ([`present::DataEnv::host_begin_all`]); the returned run is ended by
    /// [`host_end`](Self::host_end) after the host code, which puts what it wrote on
    /// the device and the host bytes back. `None` when nothing is mapped (the record
    /// is then complete). `Err` (with the record) when a copy failed: the host run
    /// would see stale data, so the caller stops the program.
    ///
    /// # Safety
    /// The host memory of every mapping must still be valid (OpenMP maps only
    /// memory the program owns until it unmaps it).
    pub unsafe fn opaque_host_run(&self, config: &Config, mut record: Record) -> Result<Option<HostRun>, Box<Record>> {
        let Some(kind) = self.data_device(config).filter(|&k| !self.is_empty(k)) else {
            return Ok(None);
        };
        let mut moved = Transfers::default();
        match pins_on_env!(self, kind, |env| env.host_begin_all(&mut moved)) {
            Ok(pins) if pins.is_empty() => Ok(None),
            Ok(pins) => Ok(Some(HostRun { record, pins, moved })),
            Err(e) => {
                let (names, _) = self.mapped_names(kind);
                let r = record.reason.take().unwrap_or_default();
                record.reason = Some(format!(
                    "{r}; copying the device data it may use ({names}) to the host failed: {e}"
                ));
                Err(Box::new(record))
            }
        }
    }

    /// For a region whose footprint is unknown and whose host run cannot stand for a
    /// device run (`limit` says why), about to run on the host: the fatal message
    /// when data is mapped on the device, where the region may expect it.
    pub fn opaque_violation(&self, config: &Config, record: &Record, limit: &str) -> Option<String> {
        let kind = self.data_device(config).filter(|&k| !self.is_empty(k))?;
        let (names, _) = self.mapped_names(kind);
        Some(format!(
            "tessera: fatal: {}: the target region must run on the host ({}), but its data may be on the device, \
             where Tessera holds {}, and {limit}: the host run could see stale data",
            record.region,
            record.reason.as_deref().unwrap_or("?"),
            names
        ))
    }

    /// The names of what is mapped on `kind`, quoted and comma-separated, and how many.
    fn mapped_names(&self, kind: DeviceKind) -> (String, usize) {
        let mapped = self.entries(kind);
        (mapped.iter().map(|e| format!("'{}'", e.name)).collect::<Vec<_>>().join(", "), mapped.len())
    }

    /// Runs (or declines) one region execution in these environments; see
    /// [`Launch`]. No output.
    ///
    /// # Safety
    /// As for [`crate::offload_with`].
    pub unsafe fn offload(&self, config: &Config, manifest: &Manifest, args: &[*mut c_void]) -> Launch {
        execute(self, config, manifest, args)
    }

    /// A region runs on the host with `record`: when its arrays reach data present
    /// on the device, copies those parts device → host first and returns the pins
    /// (the record is then emitted by [`host_end`](Self::host_end)).
    ///
    /// # Safety
    /// As for [`crate::offload_with`].
    pub unsafe fn host_fallback(
        &self,
        config: &Config,
        manifest: &Manifest,
        args: &[*mut c_void],
        record: Record,
    ) -> Launch {
        self.host_fallback_with(config, manifest, args, &[], record)
    }

    /// [`host_fallback`](Self::host_fallback) for arguments whose members
    /// ([`Manifest::members`]) are already read ([`resolve_members`]): `members`
    /// holds each member's host address, whose device copy the host run gets in
    /// place like an array element's.
    ///
    /// # Safety
    /// As for [`crate::offload_with`]; every member address is valid.
    unsafe fn host_fallback_with(
        &self,
        config: &Config,
        manifest: &Manifest,
        args: &[*mut c_void],
        members: &[(usize, *mut u8)],
        mut record: Record,
    ) -> Launch {
        let Some(kind) = self.data_device(config).filter(|&k| !self.is_empty(k)) else {
            return Launch { record, host: None, fatal: None };
        };
        // Outside a parallel region nobody else uses the host copies meanwhile: the
        // box (fewer, longer copies) stands for the elements the region touches.
        // Inside one, the other threads may use the rest of the box: only what the
        // region touches is swapped, where its footprint says exactly what that is.
        let in_parallel = crate::in_active_parallel();
        let mut arrays = data::plan_lenient(manifest, args, in_parallel);
        for &(i, addr) in members {
            let a = &manifest.args[i];
            arrays.push(data::one_element(&a.name, a.elem, addr));
        }
        let refs: Vec<&ArrayPlan> = arrays.iter().collect();
        let mut moved = Transfers::default();
        // Arrays whose accesses the region's IR does not hold (a statement Tessera
        // cannot represent uses them): the host run swaps in the device copy of all
        // of each mapping. Inside an active parallel region the other threads may
        // write the host copies of the rest meanwhile, and those writes would be lost
        // (found by the data-environment fuzzer): stop instead.
        let unbounded: Vec<&str> = manifest
            .args
            .iter()
            .filter(|a| a.array.as_ref().is_some_and(|arr| arr.footprint.is_empty() && !arr.untouched))
            .map(|a| a.name.as_str())
            .collect();
        let parallel = !unbounded.is_empty() && in_parallel;
        match pins_on_env!(self, kind, |env| env.host_begin(&refs, &mut moved)) {
            Ok(pins) if pins.is_empty() => Launch { record, host: None, fatal: None },
            Ok(_) if parallel => {
                let fatal = format!(
                    "tessera: fatal: {}: the target region must run on the host ({}), inside a parallel region, but \
                     Tessera cannot tell which parts of {} it uses: its host run would put the device copies of \
                     their whole mappings in place of the host copies, where the other threads' writes would be \
                     lost (give the region statements Tessera can compile, or run it outside the parallel region)",
                    record.region,
                    record.reason.as_deref().unwrap_or("?"),
                    unbounded.iter().map(|n| format!("'{n}'")).collect::<Vec<_>>().join(", ")
                );
                Launch { record, host: None, fatal: Some(fatal) }
            }
            Ok(pins) => Launch { record: record.clone(), host: Some(HostRun { record, pins, moved }), fatal: None },
            Err(e) => {
                let r = record.reason.take().unwrap_or_default();
                record.reason = Some(format!("{r}; copying its device data to the host failed: {e}"));
                let fatal = format!(
                    "tessera: fatal: {}: the target region must run on the host, but copying the device data it uses to \
                     the host failed ({e}): the host run would see stale data",
                    record.region
                );
                Launch { record, host: None, fatal: Some(fatal) }
            }
        }
    }

    /// After the host run of [`host_fallback`](Self::host_fallback): copies the
    /// pinned data host → device, unpins, and returns the region's record with every
    /// byte moved.
    ///
    /// # Safety
    /// The host memory of the pinned arrays must still be valid.
    pub unsafe fn host_end(&self, run: HostRun) -> Record {
        let HostRun { mut record, pins, mut moved } = run;
        let ended = match pins {
            Pins::Emu(p) => self.emu.host_end(p, &mut moved),
            Pins::Xrt(p) => self.xrt.host_end(p, &mut moved),
            Pins::Tapasco(p) => self.tapasco.host_end(p, &mut moved),
        };
        if let Err(e) = ended {
            let r = record.reason.take().unwrap_or_default();
            record.reason = Some(format!("{r}; copying its results back to the device failed: {e}"));
        }
        record.with_transfers(moved)
    }

    /// Why a data directive executes on OpenMP's host device by its own request — a
    /// false `if`, or a `device` clause that does not name Tessera's device —, or
    /// `None`.
    ///
    /// # Safety
    /// `args[i]` must be the address the rewritten call passed for `desc.args[i]`.
    unsafe fn host_device(&self, config: &Config, desc: &DataDesc, args: &[*mut c_void]) -> Option<String> {
        if condition(desc, args) == Some(false) {
            return Some(IF_FALSE.into());
        }
        let num = scalar_arg(desc, args, desc.device?)?;
        device_clause_reason(num, self.device_num(config, i32::try_from(num).unwrap_or(-1)))
    }

    /// How many non-host devices OpenMP programs see (`omp_get_num_devices()`, which
    /// libomp asks the runtime for): 1 when data directives map on a device, else 0.
    pub fn num_devices(&self, config: &Config) -> i32 {
        i32::from(self.data_device(config).is_some())
    }

    /// What device number `num` of a device memory routine stands for.
    pub fn device_num(&self, config: &Config, num: i32) -> DeviceNum {
        let kind = self.data_device(config);
        let n = i32::from(kind.is_some());
        match kind {
            _ if num == n => DeviceNum::Host,
            Some(kind) if (0..n).contains(&num) => DeviceNum::Device(kind),
            _ => DeviceNum::Invalid,
        }
    }

    /// `omp_target_alloc(size, num)`: `size` bytes of memory of device `num`, or null
    /// (size 0, an invalid device, no memory). A device block is an entry of the
    /// device's present table with dynamic count 1, keyed by a host block of the same
    /// size that the returned address points to: a region that names the address
    /// (`is_device_ptr`, or any pointer without a map clause) finds the device
    /// buffer, a host fallback copies around the host run as for any present data,
    /// and [`target_memcpy`](Self::target_memcpy) reaches it. The host block's bytes
    /// are never the data (OpenMP: a device address must not be dereferenced on the
    /// host).
    pub fn target_alloc(&self, config: &Config, size: usize, num: i32) -> *mut c_void {
        let kind = match self.device_num(config, num) {
            _ if size == 0 => return std::ptr::null_mut(),
            DeviceNum::Invalid => return std::ptr::null_mut(),
            DeviceNum::Host => DeviceKind::Host,
            DeviceNum::Device(kind) => kind,
        };
        // SAFETY: plain allocation; zeroed, so host runs save defined bytes.
        let host = unsafe { libc::calloc(size, 1) };
        if host.is_null() {
            return host;
        }
        if kind != DeviceKind::Host {
            let block = block_plan(host, size, MapKind::Alloc);
            let mut moved = Transfers::default();
            // SAFETY: the block is valid for `size` bytes.
            let entered =
                on_env!(self, kind, |env, alloc| unsafe { env.enter(&[&block], RefKind::Dynamic, alloc, &mut moved).is_ok() });
            if !entered {
                // SAFETY: allocated above, never handed out.
                unsafe { libc::free(host) };
                return std::ptr::null_mut();
            }
        }
        self.blocks.lock().unwrap_or_else(|e| e.into_inner()).insert(host as usize, kind);
        host
    }

    /// `omp_target_free(ptr, num)`: frees a block [`target_alloc`](Self::target_alloc)
    /// returned (its device memory with it). Other addresses are left alone (OpenMP
    /// leaves freeing them undefined).
    ///
    /// # Safety
    /// `ptr` must not be used after the call when it is one of those blocks.
    pub unsafe fn target_free(&self, ptr: *mut c_void) {
        let Some(kind) = self.blocks.lock().unwrap_or_else(|e| e.into_inner()).remove(&(ptr as usize)) else {
            return;
        };
        if kind != DeviceKind::Host {
            let block = block_plan(ptr, 1, MapKind::Delete);
            let mut moved = Transfers::default();
            // SAFETY: `delete` copies nothing back; the block is valid.
            // Nothing is copied, so nothing can fail that the program could be told.
            on_env!(self, kind, |env, _alloc| unsafe {
                let _ = env.exit(&[&block], None, RefKind::Dynamic, &mut moved);
            });
        }
        // SAFETY: allocated by target_alloc, removed from the blocks above.
        unsafe { libc::free(ptr) };
    }

    /// `omp_target_memcpy`: copies `len` bytes from `src` on device `src_num` to `dst`
    /// on device `dst_num`. An address on Tessera's device is one that lies in its
    /// device data environment — a block of [`target_alloc`](Self::target_alloc) or
    /// mapped host data — and the copy reaches its device bytes.
    ///
    /// # Safety
    /// Host addresses must be valid for `len` bytes (readable `src`, writable `dst`).
    pub unsafe fn target_memcpy(
        &self,
        config: &Config,
        (dst, dst_num): (*mut u8, i32),
        (src, src_num): (*const u8, i32),
        len: usize,
    ) -> Result<(), String> {
        let (d, s) = (self.device_num(config, dst_num), self.device_num(config, src_num));
        if d == DeviceNum::Invalid || s == DeviceNum::Invalid {
            return Err(format!("device {} does not exist", if d == DeviceNum::Invalid { dst_num } else { src_num }));
        }
        if len == 0 {
            return Ok(());
        }
        let mut staged = Vec::new();
        let bytes: &[u8] = match s {
            DeviceNum::Device(kind) => {
                staged.resize(len, 0u8);
                on_env!(self, kind, |env, _alloc| env.read_device(src as usize, &mut staged))?;
                &staged
            }
            _ => std::slice::from_raw_parts(src, len),
        };
        match d {
            DeviceNum::Device(kind) => on_env!(self, kind, |env, _alloc| env.write_device(dst as usize, bytes)),
            _ => {
                std::ptr::copy(bytes.as_ptr(), dst, len);
                Ok(())
            }
        }
    }

    /// `omp_target_is_present(ptr, num)`: host addresses are always present on the
    /// host device; on Tessera's device, when they lie in its data environment.
    pub fn target_is_present(&self, config: &Config, ptr: *const c_void, num: i32) -> bool {
        match self.device_num(config, num) {
            DeviceNum::Host => true,
            DeviceNum::Device(kind) => on_env!(self, kind, |env, _alloc| env.contains(ptr as usize)),
            DeviceNum::Invalid => false,
        }
    }

    /// Executes a `target enter data`, `target exit data` or `target update`.
    ///
    /// # Safety
    /// `args[i]` must be the address the rewritten call passed for `desc.args[i]`.
    pub unsafe fn data(&self, config: &Config, desc: &DataDesc, args: &[*mut c_void]) -> DataRun {
        let op = desc.op.name();
        let host = |reason: String, fatal: Option<String>| DataRun {
            record: Record::data(desc.region.clone(), op, DeviceKind::Host, Some(reason), Transfers::default()),
            handled: false,
            fatal,
        };
        if desc.op == DataOp::Region {
            return host("internal error: 'target data' passed to __tessera_data".into(), None);
        }
        if config.offload == OffloadPolicy::Disabled {
            // Nothing is ever mapped: the directive is the host device's, as every region.
            return host("OMP_TARGET_OFFLOAD=DISABLED".into(), None);
        }
        if let Some(why) = self.host_device(config, desc, args) {
            return DataRun { handled: true, ..host(why, None) };
        }
        let items = match desc.rejected.clone().map_or_else(|| plan_items(desc, args), Err) {
            Ok(items) => items,
            Err(reason) => {
                let fatal = self.touched(config, desc, args).map(|name| {
                    format!(
                        "tessera: fatal: {}: '{op}' cannot be executed by Tessera ({reason}), but {name}: \
                         leaving the directive to the host OpenMP runtime would lose or corrupt that data",
                        desc.region
                    )
                });
                if desc.op == DataOp::Enter {
                    self.decline_enter(desc, &reason);
                }
                return host(reason, fatal);
            }
        };
        let kind = match choose_data(config) {
            Choice::Offload(kind) => kind,
            Choice::Host(reason) => {
                if desc.op == DataOp::Enter {
                    self.decline_enter(desc, &reason);
                }
                return host(reason, None);
            }
        };
        if let Some(fatal) = self.absent(kind, desc, args) {
            return DataRun { handled: true, ..host(fatal.clone(), Some(fatal)) };
        }
        let refs: Vec<&ArrayPlan> = items.iter().collect();
        let mut moved = Transfers::default();
        let r = on_env!(self, kind, |env, alloc| match desc.op {
            DataOp::Enter => env.enter(&refs, RefKind::Dynamic, alloc, &mut moved).map(|_| ()),
            DataOp::Exit => env.exit(&refs, None, RefKind::Dynamic, &mut moved),
            DataOp::Update => env.update(&refs, &mut moved),
            DataOp::Region => unreachable!("checked above"),
        });
        match r {
            Ok(()) => DataRun {
                record: Record::data(desc.region.clone(), op, kind, None, moved),
                handled: true,
                fatal: None,
            },
            Err(reason) => {
                // An enter maps all or nothing; exit and update fail only when a
                // device sync fails, after which device data is unreliable.
                let fatal = (desc.op != DataOp::Enter)
                    .then(|| format!("tessera: fatal: {}: '{op}' failed on the device: {reason}", desc.region));
                if desc.op == DataOp::Enter {
                    self.decline_enter(desc, &reason);
                }
                let mut run = host(reason, fatal);
                run.record = run.record.with_transfers(moved);
                run
            }
        }
    }

    /// Executes the start of a `target data` construct; the scope goes to
    /// [`data_end`](Self::data_end) at its end.
    ///
    /// # Safety
    /// `args[i]` must be the address the rewritten call passed for `desc.args[i]`;
    /// the mapped host memory must stay valid until the end.
    pub unsafe fn data_begin(&self, config: &Config, desc: &DataDesc, args: &[*mut c_void]) -> (DataRun, Box<Scope>) {
        let op = DataOp::Region.name();
        let declined = |reason: String| {
            let id = self.decline_scope(&desc.region, &reason);
            let record = Record::data(desc.region.clone(), op, DeviceKind::Host, Some(reason), Transfers::default());
            (
                DataRun { record, handled: false, fatal: None },
                Box::new(Scope { region: desc.region.clone(), mapped: None, declined: Some(id) }),
            )
        };
        if desc.op != DataOp::Region {
            return declined(format!("internal error: '{}' passed to __tessera_data_begin", desc.op.name()));
        }
        if config.offload == OffloadPolicy::Disabled {
            return declined("OMP_TARGET_OFFLOAD=DISABLED".into());
        }
        if let Some(why) = self.host_device(config, desc, args) {
            // Maps nothing; the regions inside map for themselves, as they would
            // without the construct.
            let record = Record::data(desc.region.clone(), op, DeviceKind::Host, Some(why), Transfers::default());
            return (
                DataRun { record, handled: true, fatal: None },
                Box::new(Scope { region: desc.region.clone(), mapped: None, declined: None }),
            );
        }
        let items = match desc.rejected.clone().map_or_else(|| plan_items(desc, args), Err) {
            Ok(items) => items,
            Err(reason) => return declined(reason),
        };
        let kind = match choose_data(config) {
            Choice::Offload(kind) => kind,
            Choice::Host(reason) => return declined(reason),
        };
        if let Some(fatal) = self.absent(kind, desc, args) {
            let record = Record::data(desc.region.clone(), op, DeviceKind::Host, Some(fatal.clone()), Transfers::default());
            let scope = Box::new(Scope { region: desc.region.clone(), mapped: None, declined: None });
            return (DataRun { record, handled: true, fatal: Some(fatal) }, scope);
        }
        let refs: Vec<&ArrayPlan> = items.iter().collect();
        let mut moved = Transfers::default();
        let keys: Result<EntryKeys, String> = on_env!(self, kind, |env, alloc| env
            .enter(&refs, RefKind::Structured, alloc, &mut moved)
            .map(|maps| maps.iter().map(|m| m.as_ref().map(|m| (m.key, m.gen))).collect()));
        match keys {
            Ok(keys) => {
                let record = Record::data(desc.region.clone(), op, kind, None, moved);
                (
                    DataRun { record, handled: true, fatal: None },
                    Box::new(Scope { region: desc.region.clone(), mapped: Some((kind, items, keys)), declined: None }),
                )
            }
            Err(reason) => declined(reason),
        }
    }

    /// Executes the end of a `target data` construct: unmaps what its start mapped.
    /// Returns the record (`None` when the start did not map).
    ///
    /// # Safety
    /// The host memory the start mapped must still be valid.
    pub unsafe fn data_end(&self, scope: Scope) -> Option<DataRun> {
        let Scope { region, mapped, declined } = scope;
        if let Some(id) = declined {
            self.declined_scopes.lock().unwrap_or_else(|e| e.into_inner()).retain(|(i, _)| *i != id);
        }
        let (kind, items, keys) = mapped?;
        let refs: Vec<&ArrayPlan> = items.iter().collect();
        let mut moved = Transfers::default();
        let op = "end target data";
        let r = on_env!(self, kind, |env, _alloc| env.exit(&refs, Some(&keys), RefKind::Structured, &mut moved));
        Some(match r {
            Ok(()) => DataRun { record: Record::data(region, op, kind, None, moved), handled: true, fatal: None },
            Err(e) => DataRun {
                fatal: Some(format!("tessera: fatal: {region}: the end of 'target data' failed on the device: {e}")),
                record: Record::data(region, op, DeviceKind::Host, Some(e), moved),
                handled: false,
            },
        })
    }

    /// The first list item of `desc` that reaches data present on the device (also
    /// when its section cannot be evaluated: then by its element 0; every array the
    /// directive names counts, resolved item or not). When some item cannot be
    /// located at all (`desc.unlocated`) and anything is mapped, that is the answer
    /// too: the directive may name that data.
    unsafe fn touched(&self, config: &Config, desc: &DataDesc, args: &[*mut c_void]) -> Option<String> {
        let kind = self.data_device(config).filter(|&k| !self.is_empty(k))?;
        if (desc.unlocated > 0 || args.len() != desc.args.len()) && matches!(desc.op, DataOp::Exit | DataOp::Update) {
            let (names, count) = self.mapped_names(kind);
            return Some(format!(
                "Tessera cannot locate some of its list items while {names} {} mapped on the device by Tessera",
                if count == 1 { "is" } else { "are" }
            ));
        }
        if args.len() != desc.args.len() {
            return None;
        }
        let mut probe: Vec<ArrayPlan> = plan_items(desc, args).unwrap_or_default();
        probe.extend(plan_list(desc, &desc.probes, args).unwrap_or_default());
        probe.extend(desc.args.iter().zip(args).filter(|(a, addr)| a.kind != VarKind::Scalar && !addr.is_null()).map(
            |(a, &addr)| element0(&a.name, a.kind, a.elem, addr),
        ));
        let probe: Vec<&ArrayPlan> = probe.iter().collect();
        on_env!(self, kind, |env, _alloc| env.touches(&probe))
            .map(|name| format!("'{name}' is mapped on the device by Tessera"))
    }

    /// The fatal message when a list item with the `present` modifier is not
    /// present on device `kind` (OpenMP: the program stops with an error), else
    /// `None`.
    ///
    /// # Safety
    /// As for [`data`](Self::data).
    unsafe fn absent(&self, kind: DeviceKind, desc: &DataDesc, args: &[*mut c_void]) -> Option<String> {
        let present: Vec<DescItem> = desc.items.iter().filter(|it| it.present).cloned().collect();
        if present.is_empty() {
            return None;
        }
        let plans = plan_list(desc, &present, args).ok()?;
        let refs: Vec<&ArrayPlan> = plans.iter().collect();
        let name = on_env!(self, kind, |env, _alloc| env.absent(&refs))?;
        Some(format!(
            "tessera: fatal: {}: '{}': '{name}' is not present on the device, which its 'present' modifier requires",
            desc.region,
            desc.op.name()
        ))
    }

    fn decline_enter(&self, desc: &DataDesc, reason: &str) {
        let _ = self.declined.set(format!(
            "'target enter data' at {} did not map its data ({reason}), so that data lives in host memory",
            desc.region
        ));
    }

    /// The scope of a `target data` construct that does not map (its descriptor is
    /// unreadable): the regions inside run on the host until its end.
    pub fn declined_scope(&self, region: &str, reason: &str) -> Box<Scope> {
        let id = self.decline_scope(region, reason);
        Box::new(Scope { region: region.to_string(), mapped: None, declined: Some(id) })
    }

    /// Records an active `target data` at `region` that did not map; returns its id.
    fn decline_scope(&self, region: &str, reason: &str) -> u64 {
        let mut next = self.next_scope.lock().unwrap_or_else(|e| e.into_inner());
        *next += 1;
        let id = *next;
        self.declined_scopes.lock().unwrap_or_else(|e| e.into_inner()).push((
            id,
            format!("the enclosing 'target data' at {region} did not map its data ({reason})"),
        ));
        id
    }
}

/// The reason of a data directive whose `if` clause is false.
const IF_FALSE: &str = "its 'if' clause is false: it executes on OpenMP's host device, where there is no data to move";

/// The value of the `if` condition of `desc` (see [`DataDesc::condition`]), when it has one.
///
/// # Safety
/// As for [`DataEnvironment::data`].
unsafe fn condition(desc: &DataDesc, args: &[*mut c_void]) -> Option<bool> {
    scalar_arg(desc, args, desc.condition?).map(|v| v != 0)
}

/// The integer value of scalar argument `i` of a data directive.
unsafe fn scalar_arg(desc: &DataDesc, args: &[*mut c_void], i: usize) -> Option<i128> {
    let (a, &addr) = (desc.args.get(i)?, args.get(i)?);
    if addr.is_null() || a.kind != VarKind::Scalar {
        return None;
    }
    crate::data::ScalarSlot::read(a.elem, addr).as_i128()
}

/// Why a directive or region with a `device(num)` clause executes on OpenMP's host
/// device: `num` is `omp_get_initial_device()` (or no device exists) — the program's
/// request —, or names no device at all (not conforming; like libomptarget, the host
/// device then runs it, which `OMP_TARGET_OFFLOAD=MANDATORY` makes an error).
fn device_clause_reason(num: i128, names: DeviceNum) -> Option<String> {
    match names {
        DeviceNum::Device(_) => None,
        DeviceNum::Host => Some(format!("{DEVICE_HOST} ({num})")),
        DeviceNum::Invalid => Some(format!("its 'device' clause names no device ({num})")),
    }
}

/// The start of the reason of a directive or region sent to OpenMP's host device by
/// its `device` clause, which is the program's request, not a fallback.
pub const DEVICE_HOST: &str = "its 'device' clause names the host device";

/// The arguments with every member of a struct ([`Manifest::members`]: the call
/// passes the address of a pointer to it) replaced by the address of its value in
/// `slots` — the device copy's when a mapping on the data device holds the member
/// (OpenMP maps the struct implicitly, and the region sees that copy; a host run
/// that changed it, or host code that changed the host copy since, makes the two
/// differ), else host memory's; 0 through a null pointer — and each member's host
/// address. A device copy that cannot be read is the host value and the error,
/// for which the region runs on the host (whose copy of the member fails too).
///
/// # Safety
/// As for [`crate::offload_with`]; `slots` has one entry per member.
unsafe fn resolve_members(
    envs: &DataEnvironment,
    config: &Config,
    manifest: &Manifest,
    args: &[*mut c_void],
    slots: &mut [u64],
) -> (Vec<*mut c_void>, Vec<(usize, *mut u8)>, Option<String>) {
    let mut resolved = args.to_vec();
    let mut addrs = Vec::new();
    let mut error = None;
    if manifest.members.is_empty() || args.len() != manifest.args.len() {
        return (resolved, addrs, error);
    }
    let kind = envs.data_device(config).filter(|&k| !envs.is_empty(k));
    for (slot, &i) in slots.iter_mut().zip(&manifest.members) {
        let (Some(a), Some(&holder)) = (manifest.args.get(i), args.get(i)) else { continue };
        if holder.is_null() || a.array.is_some() {
            continue;
        }
        let addr = *(holder as *const *mut u8);
        let mut bytes = [0u8; 8];
        let size = a.elem.size().min(8);
        if !addr.is_null() {
            let on_device = kind.filter(|&k| on_env!(envs, k, |env, _alloc| env.contains(addr as usize)));
            let read = on_device.map(|k| on_env!(envs, k, |env, _alloc| env.read_device(addr as usize, &mut bytes[..size])));
            if let Some(Err(e)) = &read {
                error.get_or_insert(format!("cannot read the device copy of the member '{}': {e}", a.name));
            }
            if !matches!(read, Some(Ok(()))) {
                std::ptr::copy_nonoverlapping(addr, bytes.as_mut_ptr(), size);
            }
            addrs.push((i, addr));
        }
        *slot = u64::from_ne_bytes(bytes);
        resolved[i] = slot as *mut u64 as *mut c_void;
    }
    (resolved, addrs, error)
}

/// Decides and runs one region execution in the data environments `envs`, without
/// any output. A host fallback whose data is present on a device comes back with the
/// pins to release after the host run ([`Launch::host`]).
unsafe fn execute(envs: &DataEnvironment, config: &Config, manifest: &Manifest, args: &[*mut c_void]) -> Launch {
    let host = |reason: String| {
        Record::host(manifest.region.clone(), manifest.kernel.clone(), reason)
    };
    // `if(c)`: the call passes c's address after the arguments. False: the region runs
    // on OpenMP's host device, on host memory, as written — no copies, no fallback.
    // `device(num)`: its value comes last. A number that is not Tessera's device
    // sends the region to OpenMP's host device, like a false `if`.
    let args = match (manifest.device_clause, args.split_last()) {
        (true, Some((&num, rest))) if !num.is_null() => {
            let num = *(num as *const std::ffi::c_int);
            // With offloading disabled every number is the host's; that is the reason.
            if config.offload != OffloadPolicy::Disabled {
                if let Some(why) = device_clause_reason(num.into(), envs.device_num(config, num)) {
                    return Launch { record: host(why), host: None, fatal: None };
                }
            }
            rest
        }
        _ => args,
    };
    let args = match (manifest.if_clause, args.split_last()) {
        (true, Some((&cond, rest))) if rest.len() == manifest.args.len() && !cond.is_null() => {
            if *(cond as *const std::ffi::c_int) == 0 {
                return Launch { record: host(crate::IF_FALSE_REGION.into()), host: None, fatal: None };
            }
            rest
        }
        _ => args,
    };
    // Members of structs (`c.n`): read where the region sees them.
    let mut slots = vec![0u64; manifest.members.len()];
    let (resolved, members, unread) = resolve_members(envs, config, manifest, args, &mut slots);
    let args: &[*mut c_void] = &resolved;
    let fallback = |record: Record| envs.host_fallback_with(config, manifest, args, &members, record);
    if let Some(why) = unread {
        return fallback(host(why));
    }
    // A region rejected at compile time may carry no argument list; it only reports.
    if manifest.rejected.is_none() && args.len() != manifest.args.len() {
        return fallback(host(format!(
            "the call passes {} arguments but the manifest lists {}",
            args.len(),
            manifest.args.len()
        )));
    }
    // A delinearised kernel's launch conditions: when one fails, the region's other
    // kernel (the baseline of the region as written) runs instead, and the report
    // names it and the condition.
    let fallback_manifest;
    let mut guard_note = None;
    let manifest = match data::failed_guard(manifest, args) {
        Some(text) => match manifest.fallback() {
            Some(m) => {
                fallback_manifest = m;
                guard_note = Some(format!("launch condition failed: {text}; the baseline kernel ran"));
                &fallback_manifest
            }
            None => manifest,
        },
        None => manifest,
    };
    let host = |reason: String| {
        Record::host(manifest.region.clone(), manifest.kernel.clone(), reason)
    };
    let fallback = |record: Record| envs.host_fallback_with(config, manifest, args, &members, record);
    let kind = match device::choose(config, manifest, &device::xrt_status(config, manifest)) {
        Choice::Host(reason) => return fallback(host(reason)),
        Choice::Offload(kind) => kind,
    };
    if let Some(reason) = envs.forced_host() {
        return fallback(host(reason));
    }
    let mut plan = match data::plan(manifest, args) {
        Ok(p) => p,
        Err(reason) => return fallback(host(reason)),
    };
    // A member read at the directive whose type the region writes: only when no
    // write of the region can land on it.
    if let Some(reason) = data::member_aliased(manifest, &plan, &members) {
        return fallback(host(reason));
    }
    let run = |manifest: &Manifest, plan: &mut data::Plan| match kind {
        DeviceKind::Emu => {
            emu::EmuDevice::new(config).map_err(RunError::from).and_then(|dev| run_on(&dev, &envs.emu, manifest, plan))
        }
        DeviceKind::Xrt => {
            xrt::XrtDevice::new(config).map_err(RunError::from).and_then(|dev| run_on(&dev, &envs.xrt, manifest, plan))
        }
        DeviceKind::Tapasco => tapasco::TapascoDevice::new(config)
            .map_err(RunError::from)
            .and_then(|dev| run_on(&dev, &envs.tapasco, manifest, plan)),
        DeviceKind::Host => Err(RunError::from("internal error: host chosen as a device".to_string())),
    };
    let mut result = run(manifest, &mut plan);
    // A guarded write of the kernel that would leave the device's data: the region's
    // other kernel, the baseline of the region as written, runs instead.
    let written_fallback;
    let manifest = match &result {
        Err(RunError::Guard(text)) => match manifest.fallback() {
            Some(m) => {
                guard_note = Some(format!("launch condition failed: {text}; the baseline kernel ran"));
                written_fallback = m;
                result = run(&written_fallback, &mut plan);
                &written_fallback
            }
            None => manifest,
        },
        _ => manifest,
    };
    let host = |reason: String| Record::host(manifest.region.clone(), manifest.kernel.clone(), reason);
    let fallback = |record: Record| envs.host_fallback_with(config, manifest, args, &members, record);
    let result = result.map_err(|e| match e {
        RunError::Guard(text) => format!("a guarded write leaves the device's data ({text}) and the region has no other kernel"),
        RunError::Failed(text) => text,
    });
    // The launch's integer scalars (its sizes), for the report.
    let scalars = manifest
        .args
        .iter()
        .zip(&plan.args)
        .filter_map(|(a, p)| match p {
            data::ArgPlan::Scalar(slot) => Some((a.name.clone(), i64::try_from(slot.as_i128()?).ok()?)),
            data::ArgPlan::Array(_) => None,
        })
        .collect();
    match result {
        Ok(t) => Launch {
            record: Record {
                device: kind,
                mode: manifest.mode.into(),
                reason: guard_note,
                kernel_wall_s: Some(t.stats.kernel_wall_s),
                streams: t.stats.streams,
                scalars,
                ..host(String::new())
            }
                .with_traffic(t.stats.arrays)
                .with_transfers(t.moved),
            host: None,
            fatal: None,
        },
        Err(reason) => fallback(host(reason)),
    }
}

/// The list item standing for a block of `omp_target_alloc`: `size` bytes at `host`.
fn block_plan(host: *mut c_void, size: usize, map: MapKind) -> ArrayPlan {
    ArrayPlan {
        name: "omp_target_alloc block".into(),
        map,
        shape: data::BoxShape { elem_size: 1, dims: vec![size], lower: vec![0], len: vec![size] },
        host: host as *mut u8,
        exact_runs: None,
    }
}

/// One region execution, as [`DataEnvironment::offload`] returns it.
pub struct Launch {
    /// What happened (not yet emitted when `host` is set).
    pub record: Record,
    /// A host fallback inside a data region: the device data its arrays reach was
    /// copied to the host; after the host run, [`DataEnvironment::host_end`] copies
    /// it back and returns the record (with those bytes) to emit.
    pub host: Option<HostRun>,
    /// Set when the region can run neither on the device nor on the host: its
    /// device data could not be copied to the host, where the host run would see
    /// stale data. The caller stops the program with this message.
    pub fatal: Option<String>,
}

/// Why [`run_on`] did not run a kernel.
enum RunError {
    /// A guarded write of the kernel (`tessera_ir::manifest::Guard::writes`) would
    /// leave the device's data of its array: the text says which; nothing ran.
    Guard(String),
    /// Anything else.
    Failed(String),
}

impl From<String> for RunError {
    fn from(e: String) -> RunError {
        RunError::Failed(e)
    }
}

/// What one launch moved and measured.
struct Transfer {
    moved: report::Transfers,
    stats: device::LaunchStats,
}

/// Loads the kernel, maps every array (present data from `env`, the rest into
/// buffers of its own), launches, and copies back. Host memory is written only at
/// the very end, after every buffer synced back.
unsafe fn run_on<D: Device>(
    dev: &D,
    env: &present::DataEnv<D::Buffer>,
    manifest: &Manifest,
    plan: &mut Plan,
) -> Result<Transfer, RunError> {
    if dev.reconfigures(manifest) {
        // Reconfiguring discards device memory: present data comes into the host
        // views first and is reallocated by the launches that use it next.
        env.release_all().map_err(|e| {
            format!("the device must load another bitstream, but its mapped data could not be saved first: {e}")
        })?;
    }
    let kernel = dev.load(manifest)?;
    let mut moved = report::Transfers::default();
    let arrays = plan.array_slots();
    let mut maps = env.enter_launch(&arrays, &|bytes| dev.alloc(bytes), &mut moved)?;
    // A `present` argument's accesses must stay inside the mapping it points into.
    for (i, m) in maps.iter().enumerate() {
        if let (Some(present::LaunchMap::Present(m)), Some(arr)) = (m, arrays[i]) {
            if arr.map == tessera_ir::MapKind::Present {
                let valid = data::Valid::Linear { dims: &arr.shape.dims, avail: m.avail / arr.shape.elem_size.max(1) };
                if let Err(e) = data::check_reaches(&arr.name, &plan.footprints[i], valid) {
                    env.release_launch(&maps);
                    return Err(e.into());
                }
            }
        }
    }
    // The kernel's guarded writes must land in the device's data too: the section the
    // call maps, or the mapping a `present` argument points into.
    let checked = data::guard_writes(manifest, plan).and_then(|writes| {
        for (i, reaches) in writes {
            let (Some(arr), map) = (arrays[i], &maps[i]) else { continue };
            let section = arr.shape.section();
            let valid = match map {
                Some(present::LaunchMap::Present(m)) if arr.map == tessera_ir::MapKind::Present => {
                    data::Valid::Linear { dims: &arr.shape.dims, avail: m.avail / arr.shape.elem_size.max(1) }
                }
                _ => data::Valid::Section(&section),
            };
            data::check_reaches(&arr.name, &reaches, valid)?;
        }
        Ok(())
    });
    if let Err(e) = checked {
        env.release_launch(&maps);
        return Err(RunError::Guard(e));
    }
    // Present buffers are held for the kernel's run, in address order (no deadlock
    // between launches sharing several of them).
    let mut order: Vec<usize> = (0..maps.len()).filter(|&i| matches!(maps[i], Some(present::LaunchMap::Present(_)))).collect();
    order.sort_by_key(|&i| match &maps[i] {
        Some(present::LaunchMap::Present(m)) => m.key,
        _ => 0,
    });
    let launched = {
        // (argument, buffer, bytes from the argument's element 0 to the buffer's end,
        // offset of element 0 in the buffer)
        let shared: Vec<(usize, present::Shared<D::Buffer>, usize, usize)> = order
            .iter()
            .map(|&i| match &maps[i] {
                Some(present::LaunchMap::Present(m)) => {
                    // enter_launch refuses arguments before their buffer's start.
                    (i, m.buffer.clone(), m.avail, usize::try_from(m.offset).expect("offset checked by enter_launch"))
                }
                _ => unreachable!("filtered above"),
            })
            .collect();
        let mut guards: Vec<(usize, std::sync::MutexGuard<'_, D::Buffer>)> = Vec::new();
        for (i, b, _, _) in &shared {
            guards.push((*i, b.lock().unwrap_or_else(|e| e.into_inner())));
        }
        let avail: Vec<Option<(usize, usize)>> =
            (0..maps.len()).map(|i| shared.iter().find(|s| s.0 == i).map(|s| (s.2, s.3))).collect();
        let mut present_bufs: Vec<Option<&mut D::Buffer>> = (0..maps.len()).map(|_| None).collect();
        for (i, g) in guards.iter_mut() {
            present_bufs[*i] = Some(&mut **g);
        }
        let mut kargs: Vec<KernelArg<'_, D::Buffer>> = Vec::with_capacity(plan.args.len());
        for (((a, m), p), av) in plan.args.iter_mut().zip(maps.iter_mut()).zip(present_bufs).zip(avail) {
            kargs.push(match (a, m, p) {
                (ArgPlan::Scalar(s), _, _) => KernelArg::Scalar(s),
                (ArgPlan::Array(arr), Some(present::LaunchMap::Private(b)), _) => KernelArg::Array {
                    buffer: b,
                    offset: 0,
                    name: &arr.name,
                    elems: arr.shape.dims.iter().product(),
                    elem_size: arr.shape.elem_size,
                },
                (ArgPlan::Array(arr), Some(present::LaunchMap::Present(_)), Some(b)) => KernelArg::Array {
                    buffer: b,
                    offset: av.map_or(0, |a| a.1),
                    name: &arr.name,
                    // A present argument sees its entry's buffer from its element 0
                    // on (for `present` arguments, whose extent is unknown, all of it).
                    elems: av.map_or(0, |a| a.0) / arr.shape.elem_size,
                    elem_size: arr.shape.elem_size,
                },
                _ => unreachable!("every array has a mapping"),
            });
        }
        // Array reductions: the device copy of the reduced elements is the private
        // copy for the kernel's run.
        let name = |i: usize| manifest.args[i].name.clone();
        crate::reduce::around(&mut kargs, &plan.reductions, name, |kargs| dev.launch(&kernel, kargs))
    };
    let stats = match launched {
        Ok(s) => s,
        Err(e) => {
            env.release_launch(&maps);
            return Err(e.into());
        }
    };
    let arrays = plan.array_slots();
    env.exit_launch(&arrays, std::mem::take(&mut maps), &mut moved)?;
    Ok(Transfer { moved, stats })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::DeviceRequest;
    use std::cell::Cell;
    use std::path::Path;

    /// OpenMP's device memory routines on the emulated device: device 0 is Tessera's,
    /// device 1 the host; a block is a present-table entry until freed; copies reach
    /// its device bytes, not the host block the address points to, and stay inside it.
    #[test]
    fn device_memory_routines() {
        let config = Config::emu(Path::new("/nonexistent"));
        let envs = DataEnvironment::new();
        assert_eq!(envs.num_devices(&config), 1);
        assert_eq!(envs.device_num(&config, 0), DeviceNum::Device(DeviceKind::Emu));
        assert_eq!(envs.device_num(&config, 1), DeviceNum::Host);
        assert_eq!(envs.device_num(&config, 2), DeviceNum::Invalid);
        assert!(envs.target_alloc(&config, 0, 0).is_null());
        assert!(envs.target_alloc(&config, 16, 7).is_null());
        let d = envs.target_alloc(&config, 16, 0) as *mut u8;
        assert!(!d.is_null());
        assert_eq!(envs.entries(DeviceKind::Emu).len(), 1);
        assert!(envs.target_is_present(&config, d.wrapping_add(15) as *const c_void, 0));
        assert!(!envs.target_is_present(&config, d.wrapping_add(16) as *const c_void, 0));
        let src: Vec<u8> = (1..=16).collect();
        let mut dst = vec![0u8; 16];
        unsafe {
            envs.target_memcpy(&config, (d, 0), (src.as_ptr(), 1), 16).unwrap();
            // The device bytes changed, the host block did not.
            assert_eq!(std::slice::from_raw_parts(d, 16), &[0u8; 16]);
            envs.target_memcpy(&config, (dst.as_mut_ptr(), 1), (d.wrapping_add(4), 0), 12).unwrap();
            assert_eq!(&dst[..12], &src[4..]);
            // Past the block's end, outside any block, to a device that does not exist.
            let past = envs.target_memcpy(&config, (d.wrapping_add(8), 0), (src.as_ptr(), 1), 9).unwrap_err();
            assert!(past.contains("run past the end"), "{past}");
            let none = envs.target_memcpy(&config, (dst.as_mut_ptr(), 1), (src.as_ptr(), 0), 4).unwrap_err();
            assert!(none.contains("not device memory"), "{none}");
            assert!(envs.target_memcpy(&config, (dst.as_mut_ptr(), 2), (src.as_ptr(), 1), 4).is_err());
        }
        unsafe { envs.target_free(d as *mut c_void) };
        assert!(envs.entries(DeviceKind::Emu).is_empty());
        // Without a device, device 0 is the host and blocks are host memory.
        let host = Config { device: DeviceRequest::Device(DeviceKind::Host), ..config };
        assert_eq!((envs.num_devices(&host), envs.device_num(&host, 0)), (0, DeviceNum::Host));
        let h = envs.target_alloc(&host, 8, 0);
        assert!(!h.is_null() && envs.entries(DeviceKind::Emu).is_empty());
        unsafe { envs.target_free(h) };
    }

    #[test]
    fn where_data_directives_execute() {
        let base = Config::emu(Path::new("/nonexistent"));
        let with = |offload, device| Config { offload, device, ..base.clone() };
        let host = |s: &str| Choice::Host(s.into());
        use DeviceRequest::*;
        use OffloadPolicy::*;
        let probed = Cell::new(0);
        let status = |s: XrtStatus| {
            let probed = &probed;
            move || {
                probed.set(probed.get() + 1);
                s.clone()
            }
        };
        let ready = status(XrtStatus::Ready);
        let none = status(XrtStatus::NotBuilt);
        let gone = status(XrtStatus::Unavailable("no XRT device (xrtDeviceOpen(0) failed)".into()));
        let tapasco_probed = Cell::new(0);
        let tapasco = |r: Result<(), String>| {
            let probed = &tapasco_probed;
            move || {
                probed.set(probed.get() + 1);
                r.clone()
            }
        };
        let no_tapasco = tapasco(Err("no TaPaSCo device (the tlkm driver lists none)".into()));
        // The board is not probed when the choice does not depend on it.
        assert_eq!(choose_data_for(&with(Disabled, Auto), &ready, &no_tapasco), host("OMP_TARGET_OFFLOAD=DISABLED"));
        assert_eq!(choose_data_for(&with(Default, Device(DeviceKind::Emu)), &ready, &no_tapasco), Choice::Offload(DeviceKind::Emu));
        assert_eq!(choose_data_for(&with(Mandatory, Device(DeviceKind::Host)), &ready, &no_tapasco), host("TESSERA_DEVICE=host"));
        assert_eq!(probed.get(), 0);
        assert_eq!(choose_data_for(&with(Default, Device(DeviceKind::Xrt)), &ready, &no_tapasco), Choice::Offload(DeviceKind::Xrt));
        assert_eq!(choose_data_for(&with(Default, Device(DeviceKind::Xrt)), &none, &no_tapasco), host(XRT_NOT_BUILT));
        assert_eq!(
            choose_data_for(&with(Default, Device(DeviceKind::Xrt)), &gone, &no_tapasco),
            host("TESSERA_DEVICE=xrt but no XRT device (xrtDeviceOpen(0) failed)")
        );
        assert_eq!(choose_data_for(&with(Default, Auto), &ready, &no_tapasco), Choice::Offload(DeviceKind::Xrt));
        assert_eq!(choose_data_for(&with(Default, Auto), &none, &no_tapasco), host(NO_DEVICE));
        assert_eq!(
            choose_data_for(&with(Default, Auto), &gone, &no_tapasco),
            host(&format!("{NO_DEVICE}: no XRT device (xrtDeviceOpen(0) failed)"))
        );
        // TaPaSCo: its board is probed only under TESSERA_DEVICE=tapasco.
        assert_eq!(tapasco_probed.get(), 0);
        let t = with(Default, Device(DeviceKind::Tapasco));
        assert_eq!(choose_data_for(&t, &ready, &tapasco(Ok(()))), Choice::Offload(DeviceKind::Tapasco));
        assert_eq!(
            choose_data_for(&t, &ready, &no_tapasco),
            host("TESSERA_DEVICE=tapasco but no TaPaSCo device (the tlkm driver lists none)")
        );
        assert_eq!(choose_data_for(&t, &ready, &tapasco(Err(tapasco::TAPASCO_NOT_BUILT.into()))), host(tapasco::TAPASCO_NOT_BUILT));
        assert_eq!(choose_data_for(&with(Disabled, Device(DeviceKind::Tapasco)), &ready, &no_tapasco), host("OMP_TARGET_OFFLOAD=DISABLED"));
        assert_eq!(tapasco_probed.get(), 3);
        assert_eq!(probed.get(), 6);
    }
}
