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
//!         run_on::<D: Device> → load kernel, map (present data: the device data
//!                               environment's buffers; the rest: buffers of its
//!                               own), launch, copy out
//!         host fallback inside a data region → copies around the host run
//!                               (directives::Envs::host_fallback, __tessera_host_end)
//!       → report::append / verbose line
//!   → OMP_TARGET_OFFLOAD=MANDATORY and host: fatal, exit(1)
//! __tessera_data_begin / __tessera_data_end / __tessera_data → directives (data
//!   directives on present::DataEnv, the present table)
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
//! board, buffer objects; cargo feature `xrt`), [`present`] (the present table of a
//! device) and [`directives`] (data directives, host fallbacks inside data regions,
//! their C entry points).

#![warn(missing_docs)]

pub mod abi;
pub mod config;
pub mod data;
pub mod device;
pub mod directives;
pub mod emu;
pub mod present;
pub mod report;
pub mod xrt;

use config::{Config, OffloadPolicy};
use data::{ArgPlan, Plan};
use device::{Choice, Device, DeviceKind, KernelArg};
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
/// [`directives::Envs::offload`] for the general case.
///
/// # Safety
/// `args[i]` must be the address the rewritten call passes for `manifest.args[i]`
/// (see `tessera_rt.h`), valid and not accessed by anything else during the call.
pub unsafe fn offload_with(config: &Config, manifest: &Manifest, args: &[*mut c_void]) -> Record {
    let launch = directives::Envs::new().offload(config, manifest, args);
    emit(config, &launch.record);
    launch.record
}

/// Decides and runs one region execution in the data environments `envs`, without
/// any output. A host fallback whose data is present on a device comes back with the
/// pins to release after the host run ([`Launch::host`]).
unsafe fn execute(envs: &directives::Envs, config: &Config, manifest: &Manifest, args: &[*mut c_void]) -> Launch {
    let host = |reason: String| {
        Record::host(manifest.region.clone(), manifest.kernel.clone(), manifest.mode.clone(), reason)
    };
    let fallback = |record: Record| envs.host_fallback(config, manifest, args, record);
    // A region rejected at compile time may carry no argument list; it only reports.
    if manifest.rejected.is_none() && args.len() != manifest.args.len() {
        return fallback(host(format!(
            "the call passes {} arguments but the manifest lists {}",
            args.len(),
            manifest.args.len()
        )));
    }
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
    let result = match kind {
        DeviceKind::Emu => emu::EmuDevice::new(config).and_then(|dev| run_on(&dev, &envs.emu, manifest, &mut plan)),
        DeviceKind::Xrt => xrt::XrtDevice::new(config).and_then(|dev| run_on(&dev, &envs.xrt, manifest, &mut plan)),
        DeviceKind::Host => Err("internal error: host chosen as a device".into()),
    };
    match result {
        Ok(t) => Launch {
            record: Record { device: kind, reason: None, kernel_wall_s: Some(t.stats.kernel_wall_s), ..host(String::new()) }
                .with_traffic(t.stats.arrays)
                .with_transfers(t.moved),
            host: None,
        },
        Err(reason) => fallback(host(reason)),
    }
}

/// One region execution, as [`directives::Envs::offload`] returns it.
pub struct Launch {
    /// What happened (not yet emitted when `host` is set).
    pub record: Record,
    /// A host fallback inside a data region: the device data its arrays reach was
    /// copied to the host; after the host run, [`directives::Envs::host_end`] copies
    /// it back and returns the record (with those bytes) to emit.
    pub host: Option<directives::HostRun>,
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
) -> Result<Transfer, String> {
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
        dev.launch(&kernel, &mut kargs)
    };
    let stats = match launched {
        Ok(s) => s,
        Err(e) => {
            env.release_launch(&maps);
            return Err(e);
        }
    };
    let arrays = plan.array_slots();
    env.exit_launch(&arrays, std::mem::take(&mut maps), &mut moved)?;
    Ok(Transfer { moved, stats })
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
                let launch = execute(directives::process_envs(), config, m, args);
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
