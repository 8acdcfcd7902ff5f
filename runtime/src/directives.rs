//! The C entry points of data directives and of the host-fallback end, which parse
//! their arguments and hand them to the data environment's owner
//! ([`DataEnvironment`], `environment.rs`), the only code that moves data between
//! host and device.
//!
//! ```text
//! __tessera_data_begin (target data)  ─┐
//! __tessera_data (enter/exit/update)  ─┼→ descriptor cache → DataEnvironment::data_begin / data
//! __tessera_data_end (end of the construct, with begin's handle) → DataEnvironment::data_end
//! __tessera_host_pending / __tessera_host_end (after a region's host fallback)
//!     → the thread's pending HostRun → DataEnvironment::host_end
//! ```
//!
//! A directive that cannot be executed and must stop the process (see the owner's
//! rules) does so here ([`finish`]): the message goes to stderr, the status is 1.
//! `OMP_TARGET_OFFLOAD=MANDATORY`: a data directive that does not execute on a
//! device is fatal, like a region.

use crate::config::{Config, OffloadPolicy};
use crate::device::DeviceKind;
use crate::environment::{DataEnvironment, DataRun, HostRun, Scope};
use crate::report::{Record, Transfers};
use crate::{emit, process_config};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{Arc, OnceLock, RwLock};
use tessera_ir::data::{DataDesc, DataOp};

/// The data environments of the process (the C entry points').
pub fn process_envs() -> &'static DataEnvironment {
    static ENVS: OnceLock<DataEnvironment> = OnceLock::new();
    ENVS.get_or_init(DataEnvironment::new)
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
        Err((region, reason)) => {
            // Left to the host OpenMP runtime, which holds none of Tessera's device
            // data: with data mapped there, the directive's copies would be lost.
            let mut run = bad(region.clone(), reason.clone());
            run.fatal = process_envs().opaque_violation(process_config(), &run.record, "its descriptor is invalid");
            Err(run)
        }
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
            // The descriptor does not even parse: the construct does not map.
            let scope = envs.declined_scope(&run.record.region, run.record.reason.as_deref().unwrap_or("?"));
            (run, scope)
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
