//! Data directives and the host side of the device data environment.
//!
//! ```text
//! __tessera_data_begin (target data)  ─┐
//! __tessera_data (enter/exit/update)  ─┼→ descriptor cache → Envs::data_begin / Envs::data
//! __tessera_data_end (end of the construct, with begin's handle) → Envs::data_end
//!     choose_data(config): emu → present::DataEnv of the emulated device; xrt (asked
//!     for, or unset with a board that opens) → the XRT device's; otherwise the host
//!     device, where a data directive does nothing (host memory is the data)
//! __tessera_offload falling back to the host → Envs::host_fallback: present data the
//!     region reaches is copied device → host before the host code runs, and
//! __tessera_host_end (after the original directive) copies it back (Envs::host_end)
//! ```
//!
//! Policies (see runtime/README.md, "Data directives"):
//! - A host fallback inside a data region keeps the results identical to a device
//!   run: before the host code, the parts of its arrays that are present are copied
//!   device → host; after it, host → device ([`Envs::host_fallback`]).
//! - A mapping directive (`target data`, `target enter data`) that does not map —
//!   left to the host OpenMP runtime at compile time, or declined at run time — means
//!   the data it names lives in host memory: while such a `target data` is active,
//!   and for the rest of the process after such a `target enter data`, every region
//!   runs on the host ([`Envs::forced_host`]). Launches would otherwise map per
//!   launch and lose `alloc`ated or device-only data between them.
//! - A standalone directive Tessera cannot execute (a `depend` clause, an item it
//!   cannot represent) that names data Tessera holds on the device is fatal: leaving
//!   it to the host OpenMP runtime would silently lose or corrupt that data.
//! - `OMP_TARGET_OFFLOAD=MANDATORY`: a data directive that does not execute on a
//!   device is fatal, like a region. `DISABLED`: every directive is left to the host.

use crate::config::{Config, DeviceRequest, OffloadPolicy};
use crate::data::{self, element0, plan_items, ArrayPlan, HostBuffer};
use crate::device::{Choice, DeviceKind, XrtStatus, NO_DEVICE, XRT_NOT_BUILT};
use crate::present::{DataEnv, Pin, RefKind};
use crate::report::{Record, Transfers};
use crate::{emit, process_config, Launch};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{Arc, Mutex, OnceLock, RwLock};
use tessera_ir::data::{DataDesc, DataOp};
use tessera_ir::manifest::Manifest;

/// Where data directives execute under `config`; see [`choose_data_for`]. Probes the
/// XRT device (opened once per process) only when the choice depends on it.
pub fn choose_data(config: &Config) -> Choice {
    choose_data_for(config, &crate::xrt::data_status)
}

/// Where data directives execute under `config`, given the XRT device's status for
/// data (`xrt`, called only when the choice depends on it). A pure function:
///
/// 1. `OMP_TARGET_OFFLOAD=DISABLED` → host.
/// 2. `TESSERA_DEVICE=emu` → the emulated device; `host` → host.
/// 3. `TESSERA_DEVICE=xrt` → the XRT device when it opens, else host with its reason.
/// 4. Unset → the XRT device when it opens, else host ([`NO_DEVICE`]).
///
/// On the host device a data directive does nothing (host memory is the data), and
/// the regions inside a `target data` that did not map run on the host
/// ([`Envs::forced_host`]).
pub fn choose_data_for(config: &Config, xrt: &dyn Fn() -> XrtStatus) -> Choice {
    if config.offload == OffloadPolicy::Disabled {
        return Choice::Host("OMP_TARGET_OFFLOAD=DISABLED".into());
    }
    match &config.device {
        DeviceRequest::Device(DeviceKind::Emu) => Choice::Offload(DeviceKind::Emu),
        DeviceRequest::Device(DeviceKind::Host) => Choice::Host("TESSERA_DEVICE=host".into()),
        DeviceRequest::Device(DeviceKind::Xrt) => match xrt() {
            XrtStatus::Ready => Choice::Offload(DeviceKind::Xrt),
            XrtStatus::NotBuilt => Choice::Host(XRT_NOT_BUILT.into()),
            XrtStatus::Unavailable(why) => Choice::Host(format!("TESSERA_DEVICE=xrt but {why}")),
        },
        DeviceRequest::Unknown(v) => {
            Choice::Host(format!("TESSERA_DEVICE={v} names no device (expected host, emu or xrt)"))
        }
        DeviceRequest::Auto => match xrt() {
            XrtStatus::Ready => Choice::Offload(DeviceKind::Xrt),
            XrtStatus::NotBuilt => Choice::Host(NO_DEVICE.into()),
            XrtStatus::Unavailable(why) => Choice::Host(format!("{NO_DEVICE}: {why}")),
        },
    }
}

/// Runs `$body` with `$env` bound to the data environment of device `$kind` (emu or
/// xrt) and `$alloc` to that device's buffer allocator: the operations of
/// [`DataEnv`] are generic over the buffer type, the environments are not.
macro_rules! on_env {
    ($envs:expr, $kind:expr, |$env:ident, $alloc:ident| $body:expr) => {
        match $kind {
            DeviceKind::Xrt => {
                let $env = &$envs.xrt;
                let $alloc = &crate::xrt::new_buffer;
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
pub struct Envs {
    /// The emulated device's present table.
    pub emu: DataEnv<HostBuffer>,
    /// The XRT device's present table (never used without feature `xrt`).
    pub xrt: DataEnv<crate::xrt::Buffer>,
    /// Active `target data` constructs that did not map: (id, reason).
    declined_scopes: Mutex<Vec<(u64, String)>>,
    /// Next id of `declined_scopes`.
    next_scope: Mutex<u64>,
    /// The first `target enter data` that did not map.
    declined: OnceLock<String>,
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

/// A `target data` construct between its begin and end calls.
pub struct Scope {
    region: String,
    /// The device, the evaluated list items and their entries.
    mapped: Option<(DeviceKind, Vec<ArrayPlan>, Vec<Option<usize>>)>,
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
}

impl Envs {
    /// Empty environments.
    pub fn new() -> Envs {
        Envs::default()
    }

    /// The device data directives map on under `config`, if they map at all.
    pub fn data_device(&self, config: &Config) -> Option<DeviceKind> {
        match choose_data(config) {
            Choice::Offload(kind) => Some(kind),
            Choice::Host(_) => None,
        }
    }

    /// Whether nothing is mapped on `kind`.
    fn is_empty(&self, kind: DeviceKind) -> bool {
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

    /// Runs (or declines) one region execution in these environments; see
    /// [`Launch`]. No output.
    ///
    /// # Safety
    /// As for [`crate::offload_with`].
    pub unsafe fn offload(&self, config: &Config, manifest: &Manifest, args: &[*mut c_void]) -> Launch {
        crate::execute(self, config, manifest, args)
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
        mut record: Record,
    ) -> Launch {
        let Some(kind) = self.data_device(config).filter(|&k| !self.is_empty(k)) else {
            return Launch { record, host: None };
        };
        let arrays = data::plan_lenient(manifest, args);
        let refs: Vec<&ArrayPlan> = arrays.iter().collect();
        let mut moved = Transfers::default();
        let begun = match kind {
            DeviceKind::Xrt => self.xrt.host_begin(&refs, &mut moved).map(|p| (p.is_empty(), Pins::Xrt(p))),
            _ => self.emu.host_begin(&refs, &mut moved).map(|p| (p.is_empty(), Pins::Emu(p))),
        };
        match begun {
            Ok((true, _)) => Launch { record, host: None },
            Ok((false, pins)) => Launch { record: record.clone(), host: Some(HostRun { record, pins, moved }) },
            Err(e) => {
                let r = record.reason.take().unwrap_or_default();
                record.reason = Some(format!("{r}; copying its device data to the host failed: {e}"));
                Launch { record, host: None }
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
        };
        if let Err(e) = ended {
            let r = record.reason.take().unwrap_or_default();
            record.reason = Some(format!("{r}; copying its results back to the device failed: {e}"));
        }
        record.with_transfers(moved)
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
        let items = match desc.rejected.clone().map_or_else(|| plan_items(desc, args), Err) {
            Ok(items) => items,
            Err(reason) => {
                let fatal = self.touched(config, desc, args).map(|name| {
                    format!(
                        "tessera: fatal: {}: '{op}' cannot be executed by Tessera ({reason}), but '{name}' is \
                         mapped on the device by Tessera: leaving the directive to the host OpenMP runtime would \
                         lose or corrupt that data",
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
            let id = self.decline_scope(desc, &reason);
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
        let items = match desc.rejected.clone().map_or_else(|| plan_items(desc, args), Err) {
            Ok(items) => items,
            Err(reason) => return declined(reason),
        };
        let kind = match choose_data(config) {
            Choice::Offload(kind) => kind,
            Choice::Host(reason) => return declined(reason),
        };
        let refs: Vec<&ArrayPlan> = items.iter().collect();
        let mut moved = Transfers::default();
        let keys: Result<Vec<Option<usize>>, String> = on_env!(self, kind, |env, alloc| env
            .enter(&refs, RefKind::Structured, alloc, &mut moved)
            .map(|maps| maps.iter().map(|m| m.as_ref().map(|m| m.key)).collect()));
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
    /// when its section cannot be evaluated: then by its element 0).
    unsafe fn touched(&self, config: &Config, desc: &DataDesc, args: &[*mut c_void]) -> Option<String> {
        let kind = self.data_device(config).filter(|&k| !self.is_empty(k))?;
        let probe: Vec<ArrayPlan> = match plan_items(desc, args) {
            Ok(items) => items,
            Err(_) if args.len() == desc.args.len() => desc
                .items
                .iter()
                .filter_map(|it| {
                    let a = desc.args.get(it.arg)?;
                    let addr = *args.get(it.arg)?;
                    (!addr.is_null()).then(|| element0(&a.name, a.kind, a.elem, addr))
                })
                .collect(),
            Err(_) => return None,
        };
        let probe: Vec<&ArrayPlan> = probe.iter().collect();
        on_env!(self, kind, |env, _alloc| env.touches(&probe))
    }

    fn decline_enter(&self, desc: &DataDesc, reason: &str) {
        let _ = self.declined.set(format!(
            "'target enter data' at {} did not map its data ({reason}), so that data lives in host memory",
            desc.region
        ));
    }

    fn decline_scope(&self, desc: &DataDesc, reason: &str) -> u64 {
        let mut next = self.next_scope.lock().unwrap_or_else(|e| e.into_inner());
        *next += 1;
        let id = *next;
        self.declined_scopes.lock().unwrap_or_else(|e| e.into_inner()).push((
            id,
            format!("the enclosing 'target data' at {} did not map its data ({reason})", desc.region),
        ));
        id
    }
}

/// The data environments of the process (the C entry points').
pub fn process_envs() -> &'static Envs {
    static ENVS: OnceLock<Envs> = OnceLock::new();
    ENVS.get_or_init(Envs::new)
}

// ---------------------------------------------------------------------------------
// Host fallbacks in progress, per thread

thread_local! {
    /// Host fallbacks of this thread between `__tessera_offload` and
    /// `__tessera_host_end`, innermost last, with their manifest's address.
    static HOST_RUNS: RefCell<Vec<(usize, HostRun)>> = const { RefCell::new(Vec::new()) };
}

/// Remembers a host fallback until `__tessera_host_end(manifest)`.
pub fn push_host_run(manifest: *const c_char, run: HostRun) {
    HOST_RUNS.with(|r| r.borrow_mut().push((manifest as usize, run)));
}

/// Whether this thread has a host fallback of `manifest` in progress (the rewritten
/// code of a `nowait` region then waits for its host task before the end call).
///
/// # Safety
/// Callable from C with any pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_host_pending(manifest: *const c_char) -> c_int {
    HOST_RUNS.with(|r| r.borrow().iter().any(|(m, _)| *m == manifest as usize)) as c_int
}

/// Ends the host fallback of `manifest` (called after the original directive ran):
/// copies the present data it used back to the device and emits its report line.
/// Does nothing when no such fallback is in progress.
///
/// # Safety
/// Callable from C with any pointer.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_host_end(manifest: *const c_char) {
    let run = HOST_RUNS.with(|r| {
        let mut r = r.borrow_mut();
        let i = r.iter().rposition(|(m, _)| *m == manifest as usize)?;
        Some(r.remove(i).1)
    });
    if let Some(run) = run {
        let record = process_envs().host_end(run);
        emit(process_config(), &record);
    }
}

// ---------------------------------------------------------------------------------
// Data directive entry points

/// A descriptor string as seen at one address, parsed once (as manifests are).
struct ParsedDesc {
    text: Box<[u8]>,
    desc: Result<DataDesc, (String, String)>,
}

fn parsed_desc(ptr: *const c_char, text: &[u8]) -> Arc<ParsedDesc> {
    static DESCS: RwLock<BTreeMap<usize, Arc<ParsedDesc>>> = RwLock::new(BTreeMap::new());
    let key = ptr as usize;
    if let Some(p) = DESCS.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        if *p.text == *text {
            return p.clone();
        }
    }
    let desc = std::str::from_utf8(text)
        .map_err(|e| format!("data directive descriptor is not UTF-8: {e}"))
        .and_then(DataDesc::from_json)
        .map_err(|reason| {
            let region = serde_json::from_slice::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("region")?.as_str().map(String::from))
                .unwrap_or_else(|| "<unknown data directive>".into());
            (region, reason)
        });
    let p = Arc::new(ParsedDesc { text: text.into(), desc });
    DESCS.write().unwrap_or_else(|e| e.into_inner()).insert(key, p.clone());
    p
}

/// Reads the C arguments: the descriptor, or a host record saying why not.
#[allow(clippy::result_large_err)] // the error is the outcome itself, used once
unsafe fn c_desc<'a>(
    desc: *const c_char,
    nargs: c_int,
    args: *const *mut c_void,
    op: &str,
) -> Result<(Arc<ParsedDesc>, &'a [*mut c_void]), DataRun> {
    let bad = |region: String, reason: String| DataRun {
        record: Record::data(region, op, DeviceKind::Host, Some(reason), Transfers::default()),
        handled: false,
        fatal: None,
    };
    if desc.is_null() {
        return Err(bad("<unknown data directive>".into(), "null descriptor".into()));
    }
    let parsed = parsed_desc(desc, CStr::from_ptr(desc).to_bytes());
    match &parsed.desc {
        Err((region, reason)) => Err(bad(region.clone(), reason.clone())),
        Ok(d) if nargs < 0 || (nargs > 0 && args.is_null()) => {
            Err(bad(d.region.clone(), format!("invalid argument vector (nargs = {nargs})")))
        }
        Ok(_) => {
            let args: &[*mut c_void] = if nargs == 0 { &[] } else { std::slice::from_raw_parts(args, nargs as usize) };
            Ok((parsed.clone(), args))
        }
    }
}

/// Emits a data directive's record and stops the process when it must.
fn finish(config: &Config, run: &DataRun) {
    emit(config, &run.record);
    if let Some(msg) = &run.fatal {
        eprintln!("{msg}");
        std::process::exit(1);
    }
    if config.offload == OffloadPolicy::Mandatory && !run.handled {
        eprintln!(
            "tessera: fatal: {}: OMP_TARGET_OFFLOAD=MANDATORY but '{}' cannot be executed on a device: {}",
            run.record.region,
            run.record.op.as_deref().unwrap_or("data directive"),
            run.record.reason.as_deref().unwrap_or("?")
        );
        std::process::exit(1);
    }
}

/// The non-variadic `target enter data` / `target exit data` / `target update` entry:
/// returns 1 when the directive executed on a device, 0 when the caller must run the
/// original directive (the host OpenMP runtime).
///
/// # Safety
/// `desc` is a NUL-terminated descriptor; `args` points at `nargs` addresses as
/// described in `tessera_rt.h`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tessera_data_v(desc: *const c_char, nargs: c_int, args: *const *mut c_void) -> c_int {
    let config = process_config();
    let run = match c_desc(desc, nargs, args, "data directive") {
        Err(run) => run,
        Ok((parsed, args)) => {
            let d = parsed.desc.as_ref().expect("checked by c_desc");
            process_envs().data(config, d, args)
        }
    };
    finish(config, &run);
    run.handled as c_int
}

/// The non-variadic start of a `target data` construct: returns the handle to pass
/// to `__tessera_data_end` (never null).
///
/// # Safety
/// As for [`tessera_data_v`]; the mapped memory must stay valid until the end call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tessera_data_begin_v(desc: *const c_char, nargs: c_int, args: *const *mut c_void) -> *mut c_void {
    let config = process_config();
    let envs = process_envs();
    let (run, scope) = match c_desc(desc, nargs, args, DataOp::Region.name()) {
        Err(run) => {
            let id = envs.decline_scope(
                &DataDesc {
                    version: tessera_ir::data::DATA_VERSION,
                    region: run.record.region.clone(),
                    op: DataOp::Region,
                    rejected: None,
                    args: vec![],
                    items: vec![],
                },
                run.record.reason.as_deref().unwrap_or("?"),
            );
            let region = run.record.region.clone();
            (run, Box::new(Scope { region, mapped: None, declined: Some(id) }))
        }
        Ok((parsed, args)) => {
            let d = parsed.desc.as_ref().expect("checked by c_desc");
            envs.data_begin(config, d, args)
        }
    };
    finish(config, &run);
    Box::into_raw(scope) as *mut c_void
}

/// The end of a `target data` construct.
///
/// # Safety
/// `handle` must come from `__tessera_data_begin` and be passed once (null is
/// ignored).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_data_end(handle: *mut c_void) {
    if handle.is_null() {
        return;
    }
    let scope = Box::from_raw(handle as *mut Scope);
    if let Some(run) = process_envs().data_end(*scope) {
        finish(process_config(), &run);
    }
}

// The variadic entries: naked trampolines to the C functions of entry.c, as for
// `__tessera_offload` (see lib.rs).
unsafe extern "C" {
    fn tessera_data_va(desc: *const c_char, nargs: c_int, ...) -> c_int;
    fn tessera_data_begin_va(desc: *const c_char, nargs: c_int, ...) -> *mut c_void;
}

/// `int __tessera_data(const char *desc, int nargs, ...)`; see `tessera_rt.h`.
///
/// # Safety
/// Call it from C with that signature.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_data() -> c_int {
    core::arch::naked_asm!("jmp {f}", f = sym tessera_data_va)
}

/// `void *__tessera_data_begin(const char *desc, int nargs, ...)`; see
/// `tessera_rt.h`.
///
/// # Safety
/// Call it from C with that signature.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_data_begin() -> *mut c_void {
    core::arch::naked_asm!("jmp {f}", f = sym tessera_data_begin_va)
}

/// `int __tessera_data(const char *desc, int nargs, ...)`; see `tessera_rt.h`.
///
/// # Safety
/// Call it from C with that signature.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_data() -> c_int {
    core::arch::naked_asm!("b {f}", f = sym tessera_data_va)
}

/// `void *__tessera_data_begin(const char *desc, int nargs, ...)`; see
/// `tessera_rt.h`.
///
/// # Safety
/// Call it from C with that signature.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_data_begin() -> *mut c_void {
    core::arch::naked_asm!("b {f}", f = sym tessera_data_begin_va)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;
    use std::path::Path;

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
        // The board is not probed when the choice does not depend on it.
        assert_eq!(choose_data_for(&with(Disabled, Auto), &ready), host("OMP_TARGET_OFFLOAD=DISABLED"));
        assert_eq!(choose_data_for(&with(Default, Device(DeviceKind::Emu)), &ready), Choice::Offload(DeviceKind::Emu));
        assert_eq!(choose_data_for(&with(Mandatory, Device(DeviceKind::Host)), &ready), host("TESSERA_DEVICE=host"));
        assert_eq!(probed.get(), 0);
        assert_eq!(choose_data_for(&with(Default, Device(DeviceKind::Xrt)), &ready), Choice::Offload(DeviceKind::Xrt));
        assert_eq!(choose_data_for(&with(Default, Device(DeviceKind::Xrt)), &none), host(XRT_NOT_BUILT));
        assert_eq!(
            choose_data_for(&with(Default, Device(DeviceKind::Xrt)), &gone),
            host("TESSERA_DEVICE=xrt but no XRT device (xrtDeviceOpen(0) failed)")
        );
        assert_eq!(choose_data_for(&with(Default, Auto), &ready), Choice::Offload(DeviceKind::Xrt));
        assert_eq!(choose_data_for(&with(Default, Auto), &none), host(NO_DEVICE));
        assert_eq!(
            choose_data_for(&with(Default, Auto), &gone),
            host(&format!("{NO_DEVICE}: no XRT device (xrtDeviceOpen(0) failed)"))
        );
        assert_eq!(probed.get(), 6);
    }
}
