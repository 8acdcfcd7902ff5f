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
//!     → environment::DataEnvironment::offload    the data environment's one owner
//!         device::choose      → host (reason) | emu | xrt | tapasco
//!         data::plan          → scalars, evaluated shapes, section boxes, overlap
//!                               check, accesses checked against the mapped sections
//!         launch              → load kernel, map (present data: the device data
//!                               environment's buffers; the rest: buffers of its
//!                               own), launch, copy out
//!         host fallback inside a data region → copies around the host run
//!                               (DataEnvironment::host_fallback, __tessera_host_end)
//!       → report::append / verbose line / host-run warning
//!   → OMP_TARGET_OFFLOAD=MANDATORY and host: fatal, exit(1)
//! __tessera_opaque (a region whose variables could not be passed) → host run; while
//!   data is mapped on the device, with the device copy of every mapping around it
//!   (DataEnvironment::opaque_host_run, __tessera_host_end)
//! __tessera_data_begin / __tessera_data_end / __tessera_data → directives (C entry
//!   points) → DataEnvironment (data directives on the present tables)
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
//! copies), [`report`] (report lines), [`xrt`] (the XRT device: bitstream lookup,
//! board, buffer objects; cargo feature `xrt`), [`tapasco`] (the TaPaSCo device:
//! the VCU118 through libtapasco; cargo feature `tapasco`), [`present`] (the present table of a
//! device), [`environment`] (the data environment's one owner: data directives,
//! launches, host fallbacks inside data regions), [`directives`] (the C entry
//! points of data directives) and [`memory`] (those of OpenMP's device memory
//! routines).

#![warn(missing_docs)]

pub mod abi;
pub mod config;
pub mod data;
pub mod device;
pub mod directives;
pub mod emu;
pub mod environment;
pub mod memory;
pub mod present;
pub mod reduce;
pub mod report;
pub mod tapasco;
pub mod xrt;

use config::{Config, OffloadPolicy};
use device::DeviceKind;
use report::Record;
use std::collections::BTreeMap;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::{Arc, OnceLock, RwLock};
use tessera_ir::manifest::Manifest;

/// Runs one region execution under `config`: chooses the device, runs the kernel or
/// declines, writes the report line and the verbose line, and returns the record
/// ([`Record::offloaded`] is the C return value). It does not act on
/// `OMP_TARGET_OFFLOAD=MANDATORY`; see [`mandatory_violation`]. The region runs
/// outside any data region (an empty device data environment); see
/// [`environment::DataEnvironment::offload`] for the general case.
///
/// # Safety
/// `args[i]` must be the address the rewritten call passes for `manifest.args[i]`
/// (see `tessera_rt.h`), valid and not accessed by anything else during the call.
pub unsafe fn offload_with(config: &Config, manifest: &Manifest, args: &[*mut c_void]) -> Record {
    let launch = environment::DataEnvironment::new().offload(config, manifest, args);
    emit(config, &launch.record);
    launch.record
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
    } else if let Some(line) = host_warning(config, record) {
        eprintln!("{line}");
    }
}

/// With a device asked for explicitly (`TESSERA_DEVICE=emu|xrt`), a region that runs
/// on the host is worth a warning without `TESSERA_VERBOSE`: one line per region and
/// process (the first host run of that region), with the reason.
fn host_warning(config: &Config, record: &Record) -> Option<String> {
    use config::DeviceRequest;
    static WARNED: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let asked = matches!(config.device, DeviceRequest::Device(DeviceKind::Emu | DeviceKind::Xrt | DeviceKind::Tapasco));
    // An access outside the mapped data is an error in the program: always said.
    let error = record.reason.as_deref().is_some_and(|r| r.starts_with(data::OUT_OF_SECTION));
    if !(asked || error)
        || record.op.is_some()
        || record.offloaded()
        || config.offload == OffloadPolicy::Disabled
        || asked_for_host(record)
    {
        return None;
    }
    let first = WARNED.lock().unwrap_or_else(|e| e.into_inner()).insert(record.region.clone());
    first.then(|| {
        format!(
            "tessera: {}: {}: target region runs on the host: {}",
            if error { "error" } else { "warning" },
            record.region,
            record.reason.as_deref().unwrap_or("?")
        )
    })
}

/// The reason of a region whose `if` clause is false: it runs on OpenMP's host device
/// by the program's own request, which is neither a fallback nor, under `MANDATORY`,
/// an error.
pub const IF_FALSE_REGION: &str = "its 'if' clause is false: it runs on OpenMP's host device";

/// Whether a region ran on OpenMP's host device by the program's own request: a false
/// `if` clause, or a `device` clause naming the host.
fn asked_for_host(record: &Record) -> bool {
    record.reason.as_deref().is_some_and(|r| r == IF_FALSE_REGION || r.starts_with(environment::DEVICE_HOST))
}

/// Under `OMP_TARGET_OFFLOAD=MANDATORY`, the fatal message for a region that ran on
/// the host (running on the host is then an error, even when `TESSERA_DEVICE=host`
/// asked for it), unless its `if` or `device` clause sent it there.
pub fn mandatory_violation(config: &Config, record: &Record) -> Option<String> {
    (config.offload == OffloadPolicy::Mandatory && !record.offloaded() && !asked_for_host(record)).then(|| {
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
        Record::host("<unknown region>".into(), None, "null manifest".into())
    } else {
        let parsed = parsed_manifest(manifest, CStr::from_ptr(manifest).to_bytes());
        match &parsed.manifest {
            Err((region, reason)) => {
                // The host code runs on host memory, but nothing says which device
                // data it uses (a stale object file, a manifest of another version):
                // with data mapped on the device it could see stale data.
                let record = Record::host(region.clone(), None, reason.clone());
                if let Some(msg) = directives::process_envs().opaque_violation(config, &record, "its manifest is invalid") {
                    emit(config, &record);
                    eprintln!("{msg}");
                    std::process::exit(1);
                }
                record
            }
            Ok(m) if nargs < 0 || (nargs > 0 && args.is_null()) => Record::host(
                m.region.clone(),
                m.kernel.clone(),
                format!("invalid argument vector (nargs = {nargs})"),
            ),
            Ok(m) => {
                let args: &[*mut c_void] =
                    if nargs == 0 { &[] } else { std::slice::from_raw_parts(args, nargs as usize) };
                let launch = directives::process_envs().offload(config, m, args);
                if let Some(msg) = &launch.fatal {
                    emit(config, &launch.record);
                    eprintln!("{msg}");
                    std::process::exit(1);
                }
                if let Some(run) = launch.host {
                    // The record is emitted by __tessera_host_end, with the bytes.
                    if let Some(msg) = mandatory_violation(config, &launch.record) {
                        emit(config, &launch.record);
                        eprintln!("{msg}");
                        std::process::exit(1);
                    }
                    directives::push_host_run(manifest, run);
                    return 0;
                }
                launch.record
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

/// A target region whose variables the plugin could not pass to the runtime (the
/// manifest's `rejected` says why) runs on the host as written, reading and writing
/// host memory; its footprint is unknown. Called right before the original
/// directive, which the rewritten code follows with `__tessera_host_end` (and, for a
/// `nowait` region, a `taskwait` first while `__tessera_host_pending` says so).
/// While anything is mapped on the device, the device copy of every mapping goes to
/// the host first and back after the host code, which may reach any of it
/// ([`environment::DataEnvironment::opaque_host_run`]). Under
/// `OMP_TARGET_OFFLOAD=MANDATORY`, or when those copies fail, the process stops with
/// a message.
///
/// # Safety
/// `manifest` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn __tessera_opaque(manifest: *const c_char) {
    let config = process_config();
    // Why the host run cannot stand for a device run even with the device data
    // around it: a clause whose value the runtime does not see, or an `always` copy
    // it cannot make (None: it can).
    let (mut record, limit) = if manifest.is_null() {
        (Record::host("<unknown region>".into(), None, "null manifest".into()), Some("its manifest is missing"))
    } else {
        let parsed = parsed_manifest(manifest, CStr::from_ptr(manifest).to_bytes());
        match &parsed.manifest {
            Err((region, reason)) => (Record::host(region.clone(), None, reason.clone()), Some("its manifest is invalid")),
            Ok(m) => (
                Record::host(
                    m.region.clone(),
                    None,
                    m.rejected.clone().unwrap_or_else(|| "its variables cannot be passed to the Tessera runtime".into()),
                ),
                m.opaque_limit(),
            ),
        }
    };
    // Under DISABLED every region runs on the host for that reason, as a region
    // Tessera could compile does (and nothing is mapped).
    if config.offload == OffloadPolicy::Disabled {
        record.reason = Some("OMP_TARGET_OFFLOAD=DISABLED".into());
    }
    if let Some(msg) = mandatory_violation(config, &record) {
        emit(config, &record);
        eprintln!("{msg}");
        std::process::exit(1);
    }
    // Inside an active parallel region the other threads may read and write the host
    // copies of mapped data while the host run below swaps the device copies in:
    // that would lose their writes (found by the data-environment fuzzer).
    let limit = limit.or_else(|| {
        in_active_parallel().then_some(
            "it runs inside a parallel region, whose other threads may use the host copies of mapped data \
             while its host run puts the device copies in their place (give the region its arrays directly, \
             or run it outside the parallel region)",
        )
    });
    let envs = directives::process_envs();
    if let Some(limit) = limit {
        emit(config, &record);
        if let Some(msg) = envs.opaque_violation(config, &record, limit) {
            eprintln!("{msg}");
            std::process::exit(1);
        }
        return;
    }
    match envs.opaque_host_run(config, record.clone()) {
        Ok(None) => emit(config, &record),
        // The record is emitted by __tessera_host_end, with the bytes moved.
        Ok(Some(run)) => directives::push_host_run(manifest, run),
        Err(record) => {
            emit(config, &record);
            eprintln!(
                "tessera: fatal: {}: the target region must run on the host, and its device data could not be \
                 copied there: {}",
                record.region,
                record.reason.as_deref().unwrap_or("?")
            );
            std::process::exit(1);
        }
    }
}

/// Whether the calling thread is inside an active parallel region (OpenMP's
/// `omp_in_parallel()`, looked up in the process: false when no OpenMP runtime is
/// loaded, as in the runtime's own tests).
pub(crate) fn in_active_parallel() -> bool {
    static F: OnceLock<Option<unsafe extern "C" fn() -> c_int>> = OnceLock::new();
    let f = F.get_or_init(|| {
        // SAFETY: dlsym with a NUL-terminated name; the symbol, when present, is
        // libomp's `int omp_in_parallel(void)`.
        let p = unsafe { libc::dlsym(libc::RTLD_DEFAULT, c"omp_in_parallel".as_ptr()) };
        (!p.is_null()).then(|| unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn() -> c_int>(p) })
    });
    // SAFETY: omp_in_parallel takes no arguments and only reads the caller's state.
    f.is_some_and(|f| unsafe { f() } != 0)
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
