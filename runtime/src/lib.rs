//! Tessera's runtime: the C entry point that rewritten OpenMP target regions call, and
//! the orchestration of one region execution.
//!
//! The clang plugin rewrites each `#pragma omp target` region into
//! `if (!__tessera_offload(manifest_json, nargs, &v0, &v1, …)) { <original region> }`.
//! The runtime parses the manifest, chooses a device, moves the mapped array sections,
//! runs the kernel and returns 1 — or returns 0 so the original code runs on the host
//! (host fallback), always with a reason.
//!
//! ```text
//! __tessera_offload (entry.c: va_list → array)
//!   → tessera_offload_v (C ABI: manifest cache, process Config)
//!     → offload_with(Config, Manifest, args)        pure w.r.t. the environment
//!         device::choose      → host (reason) | emu | xrt
//!         data::plan          → scalars, evaluated shapes, section boxes, overlap check
//!         run_on::<D: Device> → load kernel, alloc, copy in, launch, copy out
//!       → report::append / verbose line
//!   → OMP_TARGET_OFFLOAD=MANDATORY and host: fatal, exit(1)
//! ```
//!
//! Invariants:
//! - Host memory is written only after the kernel ran and every device buffer synced
//!   back, by infallible copies: a fallback never leaves host data half-updated, so
//!   the original code can always still run.
//! - Nothing panics across the C boundary: errors are `Result<_, String>` reasons that
//!   end in a host fallback (the workspace builds with `panic = "abort"`).
//! - Only `config.rs` reads the environment ([`config::Config::from_env`], and `PATH`
//!   in the test helper [`config::Config::emu`]).
//!
//! Modules: [`config`] (environment), [`device`] (device choice and the device
//! interface), [`emu`] (emulated device: compile cache, shim headers, launch, trace),
//! [`abi`] (the C structs shared with emulation kernels: port descriptors and
//! traffic counters), [`data`] (argument values, shapes, section boxes, buffers,
//! copies), [`report`] (report lines).

#![warn(missing_docs)]

pub mod abi;
pub mod config;
pub mod data;
pub mod device;
pub mod emu;
pub mod report;

use config::{Config, OffloadPolicy};
use data::{ArgPlan, Plan};
use device::{Choice, Device, DeviceBuffer, DeviceKind, KernelArg};
use report::Record;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{Arc, OnceLock, RwLock};
use tessera_ir::manifest::Manifest;

/// Runs one region execution under `config`: chooses the device, runs the kernel or
/// declines, writes the report line and the verbose line, and returns the record
/// ([`Record::offloaded`] is the C return value). It does not act on
/// `OMP_TARGET_OFFLOAD=MANDATORY`; see [`mandatory_violation`].
///
/// # Safety
/// `args[i]` must be the address the rewritten call passes for `manifest.args[i]`
/// (see `tessera_rt.h`), valid and not accessed by anything else during the call.
pub unsafe fn offload_with(config: &Config, manifest: &Manifest, args: &[*mut c_void]) -> Record {
    let record = execute(config, manifest, args);
    emit(config, &record);
    record
}

/// Decides and runs, without any output.
unsafe fn execute(config: &Config, manifest: &Manifest, args: &[*mut c_void]) -> Record {
    let host = |reason: String| {
        Record::host(manifest.region.clone(), manifest.kernel.clone(), manifest.mode.clone(), reason)
    };
    // A region rejected at compile time carries no argument list; it only reports.
    if manifest.rejected.is_none() && args.len() != manifest.args.len() {
        return host(format!(
            "the call passes {} arguments but the manifest lists {}",
            args.len(),
            manifest.args.len()
        ));
    }
    let kind = match device::choose(config, manifest, &device::xrt_status(manifest)) {
        Choice::Host(reason) => return host(reason),
        Choice::Offload(kind) => kind,
    };
    let mut plan = match data::plan(manifest, args) {
        Ok(p) => p,
        Err(reason) => return host(reason),
    };
    let result = match kind {
        DeviceKind::Emu => emu::EmuDevice::new(config).and_then(|dev| run_on(&dev, manifest, &mut plan)),
        // Never chosen until the XRT backend exists (`xrt_status` is never Ready).
        DeviceKind::Xrt => Err("the XRT backend is not implemented in this version of the runtime".into()),
        DeviceKind::Host => Err("internal error: host chosen as a device".into()),
    };
    match result {
        Ok(t) => Record {
            device: kind,
            reason: None,
            bytes_to_device: t.bytes_to_device,
            bytes_from_device: t.bytes_from_device,
            kernel_wall_s: Some(t.stats.kernel_wall_s),
            ..host(String::new())
        }
        .with_traffic(t.stats.arrays),
        Err(reason) => host(reason),
    }
}

/// What one launch moved and measured.
struct Transfer {
    bytes_to_device: u64,
    bytes_from_device: u64,
    stats: device::LaunchStats,
}

/// Loads the kernel, allocates a buffer per array, copies the mapped sections in,
/// launches, and copies them back. Host memory is written only at the very end.
unsafe fn run_on<D: Device>(dev: &D, manifest: &Manifest, plan: &mut Plan) -> Result<Transfer, String> {
    let kernel = dev.load(manifest)?;
    let mut to_device = 0u64;
    let mut buffers: Vec<Option<D::Buffer>> = Vec::with_capacity(plan.args.len());
    for a in &plan.args {
        buffers.push(match a {
            ArgPlan::Scalar(_) => None,
            ArgPlan::Array(arr) => {
                let mut b = dev.alloc(arr.shape.total_bytes())?;
                if arr.copies_in() {
                    to_device += arr.copy_in(b.host_view());
                    b.sync_to_device()?;
                }
                Some(b)
            }
        });
    }
    let stats = {
        let mut kargs: Vec<KernelArg<'_, D::Buffer>> = plan
            .args
            .iter_mut()
            .zip(buffers.iter_mut())
            .map(|(a, b)| match (a, b) {
                (ArgPlan::Scalar(s), _) => KernelArg::Scalar(s),
                (ArgPlan::Array(arr), Some(b)) => {
                    let arr: &data::ArrayPlan = arr;
                    KernelArg::Array {
                        buffer: b,
                        name: &arr.name,
                        elems: arr.shape.dims.iter().product(),
                        elem_size: arr.shape.elem_size,
                    }
                }
                (ArgPlan::Array(_), None) => unreachable!("every array has a buffer"),
            })
            .collect();
        dev.launch(&kernel, &mut kargs)?
    };
    // Sync everything back first (may fail), then copy (cannot fail).
    for (a, b) in plan.args.iter().zip(buffers.iter_mut()) {
        if let (ArgPlan::Array(arr), Some(b)) = (a, b) {
            if arr.copies_out() {
                b.sync_from_device()?;
            }
        }
    }
    let mut from_device = 0u64;
    for (a, b) in plan.args.iter().zip(buffers.iter_mut()) {
        if let (ArgPlan::Array(arr), Some(b)) = (a, b) {
            if arr.copies_out() {
                from_device += arr.copy_out(b.host_view());
            }
        }
    }
    Ok(Transfer { bytes_to_device: to_device, bytes_from_device: from_device, stats })
}

/// Writes the report line (`TESSERA_REPORT`) and the verbose line (`TESSERA_VERBOSE`).
pub fn emit(config: &Config, record: &Record) {
    if let Some(path) = &config.report {
        if let Err(e) = report::append(path, record) {
            static WARNED: OnceLock<()> = OnceLock::new();
            WARNED.get_or_init(|| eprintln!("tessera: warning: cannot write the report {}: {e}", path.display()));
        }
    }
    if config.verbose {
        eprintln!("{}", record.verbose_line());
    }
}

/// Under `OMP_TARGET_OFFLOAD=MANDATORY`, the fatal message for a region that ran on
/// the host (running on the host is then an error, even when `TESSERA_DEVICE=host`
/// asked for it).
pub fn mandatory_violation(config: &Config, record: &Record) -> Option<String> {
    (config.offload == OffloadPolicy::Mandatory && !record.offloaded()).then(|| {
        format!(
            "tessera: fatal: {}: OMP_TARGET_OFFLOAD=MANDATORY but the region cannot be offloaded: {}",
            record.region,
            record.reason.as_deref().unwrap_or("?")
        )
    })
}

/// The configuration of the C entry point: one environment snapshot, taken at the
/// process's first offload.
pub fn process_config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(Config::from_env)
}

/// A manifest string as seen at one address, parsed once.
struct Parsed {
    /// The exact bytes, to detect a different string at a reused address.
    text: Box<[u8]>,
    /// The manifest, or (region name if readable, reason).
    manifest: Result<Manifest, (String, String)>,
}

/// Parses the manifest at `ptr`, caching by address (the manifest is a string literal
/// of the program, so its address is stable; the bytes are compared on every hit in
/// case a library was unloaded and another string now lives there).
fn parsed_manifest(ptr: *const c_char, text: &[u8]) -> Arc<Parsed> {
    static MANIFESTS: RwLock<BTreeMap<usize, Arc<Parsed>>> = RwLock::new(BTreeMap::new());
    let key = ptr as usize;
    if let Some(p) = MANIFESTS.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        if *p.text == *text {
            return p.clone();
        }
    }
    let manifest = std::str::from_utf8(text)
        .map_err(|e| format!("manifest is not UTF-8: {e}"))
        .and_then(Manifest::from_json)
        .map_err(|reason| {
            let region = serde_json::from_slice::<serde_json::Value>(text)
                .ok()
                .and_then(|v| v.get("region")?.as_str().map(String::from))
                .unwrap_or_else(|| "<unknown region>".into());
            (region, reason)
        });
    let p = Arc::new(Parsed { text: text.into(), manifest });
    MANIFESTS.write().unwrap_or_else(|e| e.into_inner()).insert(key, p.clone());
    p
}

/// The non-variadic entry point: `args` holds `nargs` addresses, one per manifest
/// argument, in manifest order. Returns 1 when the region ran on a device, 0 when the
/// caller must run the original code. Under `OMP_TARGET_OFFLOAD=MANDATORY` a region
/// that cannot be offloaded terminates the process with status 1 instead.
///
/// # Safety
/// `manifest` is a NUL-terminated string; `args` points at `nargs` addresses as
/// described in `tessera_rt.h`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn tessera_offload_v(manifest: *const c_char, nargs: c_int, args: *const *mut c_void) -> c_int {
    let config = process_config();
    let record = if manifest.is_null() {
        Record::host("<unknown region>".into(), None, String::new(), "null manifest".into())
    } else {
        let parsed = parsed_manifest(manifest, CStr::from_ptr(manifest).to_bytes());
        match &parsed.manifest {
            Err((region, reason)) => Record::host(region.clone(), None, String::new(), reason.clone()),
            Ok(m) if nargs < 0 || (nargs > 0 && args.is_null()) => Record::host(
                m.region.clone(),
                m.kernel.clone(),
                m.mode.clone(),
                format!("invalid argument vector (nargs = {nargs})"),
            ),
            Ok(m) => {
                let args: &[*mut c_void] =
                    if nargs == 0 { &[] } else { std::slice::from_raw_parts(args, nargs as usize) };
                execute(config, m, args)
            }
        }
    };
    emit(config, &record);
    if let Some(msg) = mandatory_violation(config, &record) {
        eprintln!("{msg}");
        std::process::exit(1);
    }
    record.offloaded() as c_int
}

// `__tessera_offload(const char *manifest, int nargs, ...)`, the variadic entry that
// rewritten regions call. Stable Rust cannot define a variadic function, so
// `src/entry.c` defines `tessera_offload_va`, which collects the `va_list` into an
// array and calls `tessera_offload_v`. The exported name is a one-instruction naked
// Rust function that tail-jumps to it with every register and stack slot untouched,
// so the C function sees the original variadic call. Defining the symbol in Rust is
// what makes rustc export it from the cdylib (rustc's version script hides every
// symbol of linked C objects) and what pulls entry.c's object into the link.
unsafe extern "C" {
    fn tessera_offload_va(manifest: *const c_char, nargs: c_int, ...) -> c_int;
}

/// The variadic entry point rewritten regions call; see `tessera_rt.h`. (Its Rust
/// signature is nominal: it is a jump to the C variadic function of `entry.c`.)
///
/// # Safety
/// Call it from C as `int __tessera_offload(const char *manifest, int nargs, ...)`.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_offload() -> c_int {
    core::arch::naked_asm!("jmp {f}", f = sym tessera_offload_va)
}

/// The variadic entry point rewritten regions call; see `tessera_rt.h`. (Its Rust
/// signature is nominal: it is a jump to the C variadic function of `entry.c`.)
///
/// # Safety
/// Call it from C as `int __tessera_offload(const char *manifest, int nargs, ...)`.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_offload() -> c_int {
    core::arch::naked_asm!("b {f}", f = sym tessera_offload_va)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
compile_error!("tessera-rt: add the __tessera_offload trampoline for this architecture");
