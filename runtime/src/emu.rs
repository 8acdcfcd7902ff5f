//! The emulated device (the Vitis `sw_emu` analogue): the kernel's HLS C++ compiled
//! for the host into a shared library, cached on disk, loaded once per process, and
//! called on host-memory buffers.
//!
//! Compile cache. A kernel is identified by the SHA-256 of everything that determines
//! the binary: both sources, the compiler's path and `--version` output, the flags,
//! the CPU the flags target (`-march=native`), the runtime version and the embedded
//! shim headers. Its directory
//! `<cache root>/<hash>/` holds `kernel.cpp`, `entry.cpp`, `kernel.so` and, after a
//! failure, `compile.log`. Every file is written to a temporary name and renamed into
//! place, so concurrent processes compiling the same kernel never see a partial file;
//! within one process a kernel is compiled and loaded once (a per-directory
//! `OnceLock`), and the library stays loaded for the process lifetime.
//!
//! Headers. Every compile gets the HLS emulation shim ([`SHIM_HEADERS`], embedded from
//! `host/include/`) on its include path. A kernel that mentions [`WIDE_HEADER`] also
//! gets Xilinx's `ap_int.h` and friends (hls4ml's `ap_types`, see
//! [`hls_header_dirs`]), copied into the cache and passed with `-isystem`; their
//! contents are part of the kernel hash.
//!
//! Launch. The entry is `tessera_emu_entry(void **args, const tessera_port_desc
//! *ports)` ([`crate::abi`]): every array gets a descriptor with its shape and a
//! zeroed `tessera_port_stats` that the kernel's memory ports count into; after the
//! call the counters become [`LaunchStats::arrays`]. With `TESSERA_EMU_TRACE` set, the
//! descriptors also carry a callback that appends every transaction to that file.

use crate::abi::{self, PortDesc, PortStats};
use crate::config::Config;
use crate::data::HostBuffer;
use crate::device::{Device, DeviceBuffer, DeviceKind, KernelArg, LaunchStats};
use crate::report::Arrays;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ffi::{c_void, CString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use tessera_ir::manifest::Manifest;

/// Flags of every emulation compile (before `-I` and `-o`), at the default
/// optimisation level ([`cxx_flags`] gives them at another). `-ffp-contract=off` and
/// `-fno-fast-math` keep floating point identical to the unfused host computation
/// (vectorised or not, at any optimisation level: no contraction, no reassociation,
/// no flush to zero);
/// `-O3 -march=native` let the compiler vectorise the kernel's lanes with this
/// machine's instructions (the CPU's model and features are therefore part of the
/// cache key, [`cpu_identity`]);
/// `-Wl,-Bsymbolic` binds the kernel's calls to its own functions even when the host
/// program defines a function of the same name.
pub const CXX_FLAGS: &[&str] = &[
    "-std=c++17",
    "-O3",
    "-march=native",
    "-fPIC",
    "-shared",
    "-ffp-contract=off",
    "-fno-fast-math",
    "-Wno-unknown-pragmas",
    "-Wl,-Bsymbolic",
];

/// [`CXX_FLAGS`] with the optimisation level `opt` (`Config::emu_opt`, 0–3) in place
/// of `-O3`. Lower levels compile a kernel in about half the time and run it slower;
/// the results are the same bits (the floating-point flags above hold at every level).
pub fn cxx_flags(opt: u8) -> Vec<&'static str> {
    const LEVELS: [&str; 4] = ["-O0", "-O1", "-O2", "-O3"];
    let level = LEVELS[usize::from(opt.min(3))];
    CXX_FLAGS.iter().map(|f| if *f == "-O3" { level } else { f }).collect()
}

/// Headers the runtime materialises into an include directory of every emulation
/// compile: `(file name, contents)`, embedded from `host/include/` at build time;
/// their contents are part of the kernel hash.
pub const SHIM_HEADERS: &[(&str, &str)] = &[
    ("tessera_emu_abi.h", abi::HEADER),
    ("tessera_hls.h", include_str!("../../host/include/tessera_hls.h")),
    ("tessera_wide.h", include_str!("../../host/include/tessera_wide.h")),
    ("tessera_ship.h", include_str!("../../host/include/tessera_ship.h")),
    ("tessera_dataflow.h", include_str!("../../host/include/tessera_dataflow.h")),
    ("tessera_math.h", include_str!("../../host/include/tessera_math.h")),
];

/// A kernel whose sources mention this header gets the vendor headers (`ap_int.h`).
pub const WIDE_HEADER: &str = "tessera_wide.h";

/// Name of the entry point every emulation library defines.
pub const ENTRY_SYMBOL: &str = "tessera_emu_entry";

/// Lines of compiler output quoted in a fallback reason.
const QUOTED_LINES: usize = 8;

/// A compiled, loaded emulation kernel.
pub struct EmuKernel {
    /// Keeps the library mapped (never dropped: the process cache owns it).
    _lib: libloading::os::unix::Library,
    entry: abi::EntryFn,
    /// `tessera_emu_streams_take`, in kernels with streams.
    streams_take: Option<abi::StreamsTakeFn>,
    /// The kernel's name (trace header).
    pub name: String,
    /// The shared library.
    pub so_path: PathBuf,
    /// `Manifest::interleave`: arrays the kernel reaches as two halves.
    pub interleave: Option<tessera_ir::manifest::Interleave>,
}

/// A kernel's slot in the process cache: filled once, by the first thread that needs
/// it, with the loaded kernel or the reason it cannot be used.
type KernelCell = OnceLock<Result<Arc<EmuKernel>, String>>;

/// The emulated device for one configuration.
pub struct EmuDevice {
    root: PathBuf,
    compiler: PathBuf,
    /// [`cxx_flags`] at `Config::emu_opt`.
    flags: Vec<&'static str>,
    hls_headers: Option<PathBuf>,
    trace: Option<PathBuf>,
    /// `Config::emu_dataflow_sequential`: stream peaks may exceed their depths.
    sequential: bool,
}

impl EmuDevice {
    /// Resolves the cache directory and compiler of `config`.
    pub fn new(config: &Config) -> Result<EmuDevice, String> {
        let root = config.cache_dir.clone().ok_or_else(|| {
            "no cache directory for emulation kernels (set TESSERA_CACHE_DIR, XDG_CACHE_HOME or HOME)".to_string()
        })?;
        Ok(EmuDevice {
            root,
            compiler: config.compiler()?,
            flags: cxx_flags(config.emu_opt),
            hls_headers: config.hls_headers.clone(),
            trace: config.emu_trace.clone(),
            sequential: config.emu_dataflow_sequential,
        })
    }

    /// The vendor headers a manifest's kernel needs: `None` unless it mentions
    /// [`WIDE_HEADER`]; an error (the fallback reason) when it does and none are found.
    fn vendor(&self, manifest: &Manifest) -> Result<Option<Arc<VendorHeaders>>, String> {
        if !needs_vendor_headers(manifest) {
            return Ok(None);
        }
        vendor_headers(self.hls_headers.as_deref()).map(Some).map_err(|why| {
            format!(
                "kernel {} includes {WIDE_HEADER}, which needs Xilinx's ap_int.h: {why}. Run \
                 scripts/fetch-hls-headers.sh (it unpacks the headers of the PyPI package hls4ml into \
                 target/hls-headers) or set TESSERA_HLS_HEADERS to a directory holding ap_int.h",
                manifest.kernel.as_deref().unwrap_or("?")
            )
        })
    }

    /// The cache directory a manifest's kernel compiles into (computes the hash; runs
    /// the compiler's `--version` once per process).
    pub fn kernel_dir(&self, manifest: &Manifest) -> Result<PathBuf, String> {
        let vendor = self.vendor(manifest)?;
        self.kernel_dir_with(manifest, vendor.as_deref())
    }

    fn kernel_dir_with(&self, manifest: &Manifest, vendor: Option<&VendorHeaders>) -> Result<PathBuf, String> {
        let version = compiler_version(&self.compiler)?;
        let vendor_hash = vendor.map(|v| v.hash.as_str());
        Ok(self.root.join(kernel_hash(manifest, &self.compiler, &version, &self.flags, SHIM_HEADERS, vendor_hash)))
    }
}

impl Device for EmuDevice {
    type Buffer = HostBuffer;
    type Kernel = Arc<EmuKernel>;

    fn kind(&self) -> DeviceKind {
        DeviceKind::Emu
    }

    fn load(&self, manifest: &Manifest) -> Result<Arc<EmuKernel>, String> {
        static KERNELS: Mutex<BTreeMap<PathBuf, Arc<KernelCell>>> = Mutex::new(BTreeMap::new());
        let vendor = self.vendor(manifest)?;
        let dir = self.kernel_dir_with(manifest, vendor.as_deref())?;
        let cell = {
            let mut map = KERNELS.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(dir.clone()).or_default().clone()
        };
        // Other kernels compile in parallel; threads wanting this one wait here.
        cell.get_or_init(|| {
            build_and_load(&self.root, &dir, &self.compiler, &self.flags, manifest, vendor.as_deref())
                .map(|k| Arc::new(EmuKernel { interleave: manifest.interleave.clone(), ..k }))
        })
        .clone()
    }

    fn alloc(&self, bytes: usize) -> Result<HostBuffer, String> {
        HostBuffer::new(bytes)
    }

    fn launch(&self, kernel: &Arc<EmuKernel>, args: &mut [KernelArg<'_, HostBuffer>]) -> Result<LaunchStats, String> {
        let n = args.len();
        // Interleaved arrays (`Manifest::interleave`): each half a buffer of its own,
        // filled from the array before the launch and gathered back after it, the
        // second half's descriptor after the arguments' (the entry's order).
        let interleave = kernel.interleave.as_ref();
        let il: &[usize] = interleave.map_or(&[], |il| &il.args);
        let seg = interleave.map_or(1, |il| il.segment_bytes as usize);
        let mut halves: Vec<(usize, usize, [HostBuffer; 2])> = Vec::with_capacity(il.len());
        if let Some(layout) = interleave {
            for &i in &layout.args {
                let Some(KernelArg::Array { buffer, offset, elems, elem_size, .. }) = args.get_mut(i) else {
                    return Err(format!("internal error: kernel {}: interleaved argument {i} is not an array", kernel.name));
                };
                let bytes = *elems * *elem_size;
                if *offset + bytes > buffer.capacity() {
                    return Err(format!("array argument {i} reaches beyond its device buffer"));
                }
                let [b0, b1] = layout.half_bytes(bytes);
                let mut h = [HostBuffer::new(b0.max(1))?, HostBuffer::new(b1.max(1))?];
                let [h0, h1] = &mut h;
                let src = &buffer.host_view()[*offset..*offset + bytes];
                tessera_ir::manifest::deinterleave(src, seg, [&mut h0.host_view()[..b0], &mut h1.host_view()[..b1]]);
                halves.push((i, bytes, h));
            }
        }
        let names: Vec<CString> = args
            .iter()
            .enumerate()
            .map(|(i, a)| match a {
                KernelArg::Array { name, .. } => name.to_string(),
                KernelArg::Scalar(_) => format!("arg{i}"),
            })
            .chain(il.iter().map(|&i| match &args[i] {
                KernelArg::Array { name, .. } => tessera_ir::manifest::bank_port_name(name),
                KernelArg::Scalar(_) => unreachable!("checked above"),
            }))
            .map(|name| CString::new(name.replace('\0', "?")).unwrap_or_default())
            .collect();
        let total = n + il.len();
        // Counters for every argument (scalars' stay unused) and second half; not moved
        // while the kernel holds pointers into them.
        let mut stats: Vec<PortStats> = vec![PortStats::default(); total];
        let stats_ptr = stats.as_mut_ptr();
        let mut sink = self.trace.as_deref().and_then(|p| {
            TraceSink::open(p, &kernel.name, names.iter().map(|c| c.to_string_lossy().into_owned()).collect())
        });
        let (trace, trace_ctx): (Option<abi::TraceFn>, *mut c_void) = match sink.as_mut() {
            Some(s) => (Some(trace_line), &mut **s as *mut TraceSink as *mut c_void),
            None => (None, std::ptr::null_mut()),
        };
        let mut ptrs: Vec<*mut c_void> = Vec::with_capacity(n);
        let mut descs: Vec<PortDesc> = Vec::with_capacity(total);
        let desc = |index: usize| PortDesc {
            abi_version: abi::ABI_VERSION,
            index: index as u32,
            base: std::ptr::null_mut(),
            elems: 0,
            elem_size: 0,
            capacity: 0,
            name: names[index].as_ptr(),
            // SAFETY: index < total = stats.len().
            stats: unsafe { stats_ptr.add(index) },
            trace,
            trace_ctx,
        };
        for (i, a) in args.iter_mut().enumerate() {
            let mut d = desc(i);
            match a {
                KernelArg::Array { buffer, offset, elems, elem_size, .. } => {
                    if *offset > buffer.capacity() {
                        return Err(format!("array argument {i} starts beyond its device buffer"));
                    }
                    // SAFETY: within the allocation (checked above). A present
                    // argument inside its mapping starts `offset` bytes in.
                    let base = unsafe { buffer.as_mut_ptr().add(*offset) } as *mut c_void;
                    ptrs.push(base);
                    d.base = base;
                    d.elems = *elems as u64;
                    d.elem_size = *elem_size as u64;
                    d.capacity = (buffer.capacity() - *offset) as u64;
                }
                KernelArg::Scalar(s) => {
                    ptrs.push(s.as_mut_ptr());
                    d.stats = std::ptr::null_mut();
                }
            }
            descs.push(d);
        }
        // Each half's descriptor: the argument's own for the first, a new one after the
        // arguments' for the second; elements: the array's own in that half.
        for (k, (i, bytes, h)) in halves.iter_mut().enumerate() {
            descs.push(desc(n + k));
            let elem_size = descs[*i].elem_size;
            let data = interleave.expect("halves are of interleaved arrays").data_bytes(*bytes);
            for (half, d) in [*i, n + k].into_iter().enumerate() {
                let dd = &mut descs[d];
                dd.base = h[half].as_mut_ptr() as *mut c_void;
                dd.elems = data[half] as u64 / elem_size.max(1);
                dd.elem_size = elem_size;
                dd.capacity = h[half].capacity() as u64;
            }
        }
        let start = Instant::now();
        // SAFETY: the entry unpacks exactly the manifest's arguments, which `ptrs` and
        // `descs` hold in order (then the second halves'); buffers cover each array's
        // whole index space (a half: its segments) and the descriptors' counters and
        // names outlive the call.
        unsafe { (kernel.entry)(ptrs.as_mut_ptr(), descs.as_ptr()) };
        let kernel_wall_s = start.elapsed().as_secs_f64();
        drop(descs);
        if let Some(s) = sink.as_mut() {
            s.flush();
        }
        for (i, bytes, mut h) in halves {
            let [h0, h1] = &mut h;
            if let KernelArg::Array { buffer, offset, .. } = &mut args[i] {
                let dst = &mut buffer.host_view()[*offset..*offset + bytes];
                tessera_ir::manifest::interleave([h0.host_view(), h1.host_view()], seg, dst);
            }
        }
        let counted = |st: &PortStats| (st.bound != 0).then(|| crate::report::array_traffic(st));
        let arrays = args
            .iter()
            .zip(&stats)
            .filter_map(|(a, st)| match a {
                KernelArg::Array { name, .. } => Some((name.to_string(), counted(st))),
                KernelArg::Scalar(_) => None,
            })
            .chain((0..il.len()).map(|k| (names[n + k].to_string_lossy().into_owned(), counted(&stats[n + k]))))
            .collect();
        Ok(LaunchStats { kernel_wall_s, arrays: Arrays(arrays), streams: take_streams(kernel, self.sequential)? })
    }
}

/// The streams of the launch that just ran on this thread (a dataflow kernel's), by
/// name. Under the concurrent schedule (not `sequential`) a stream that held more
/// values than its declared depth would be a bug of the emulation; it fails the launch.
fn take_streams(kernel: &EmuKernel, sequential: bool) -> Result<std::collections::BTreeMap<String, tessera_ir::report::StreamUse>, String> {
    let mut out = std::collections::BTreeMap::new();
    let Some(take) = kernel.streams_take else { return Ok(out) };
    let mut buf = vec![abi::StreamStats { name: std::ptr::null(), depth: 0, peak: 0, values: 0 }; 256];
    // SAFETY: `take` writes at most `buf.len()` entries; launches run on the calling
    // thread, whose streams it returns.
    let n = unsafe { take(buf.as_mut_ptr(), buf.len()) };
    if n > buf.len() {
        return Err(format!("internal error: kernel {} reported {n} streams, more than {}", kernel.name, buf.len()));
    }
    for s in &buf[..n] {
        let name = if s.name.is_null() {
            "?".to_string()
        } else {
            // SAFETY: a NUL-terminated string literal of the loaded kernel library.
            unsafe { std::ffi::CStr::from_ptr(s.name) }.to_string_lossy().into_owned()
        };
        if !sequential && s.depth > 0 && s.peak > s.depth {
            return Err(format!(
                "internal error: stream {name} of kernel {} held {} values, more than its depth {}",
                kernel.name, s.peak, s.depth
            ));
        }
        out.insert(name, tessera_ir::report::StreamUse { depth: s.depth, peak: s.peak, values: s.values });
    }
    Ok(out)
}

/// Whether a manifest's kernel needs the vendor headers: its sources mention
/// [`WIDE_HEADER`].
pub fn needs_vendor_headers(manifest: &Manifest) -> bool {
    manifest.kernel_source.contains(WIDE_HEADER) || manifest.emu_entry_source.contains(WIDE_HEADER)
}

/// Where the runtime looks for the vendor headers (a directory holding `ap_int.h`),
/// in order: `TESSERA_HLS_HEADERS` alone when set; otherwise `share/tessera/hls-headers/`
/// one level above the directory of the object the runtime lives in (an installed
/// `<prefix>/lib/libtessera_rt.so` → `<prefix>/share/tessera/hls-headers`), then
/// `hls-headers/` one and two levels above that directory
/// (`target/release/libtessera_rt.so` → `target/hls-headers`; a test executable in
/// `target/release/deps/` → the same), then the build tree's `target/hls-headers`.
pub fn hls_header_dirs(explicit: Option<&Path>) -> Vec<PathBuf> {
    if let Some(d) = explicit {
        return vec![d.to_path_buf()];
    }
    let mut dirs = Vec::new();
    if let Some(obj) = own_object_path() {
        // An installed tree (`make install`): <prefix>/lib/libtessera_rt.so →
        // <prefix>/share/tessera/hls-headers.
        if let Some(prefix) = obj.parent().and_then(Path::parent) {
            dirs.push(prefix.join("share/tessera/hls-headers"));
        }
        let mut up = obj.parent();
        for _ in 0..2 {
            match up.and_then(Path::parent) {
                Some(p) => {
                    dirs.push(p.join("hls-headers"));
                    up = Some(p);
                }
                None => break,
            }
        }
    }
    let build_tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/hls-headers");
    if !dirs.contains(&build_tree) {
        dirs.push(build_tree);
    }
    dirs
}

/// The file the runtime's code was loaded from (`libtessera_rt.so`, or the executable
/// it is linked into).
fn own_object_path() -> Option<PathBuf> {
    // SAFETY: dladdr only reads the loader's tables; `info` is plain data.
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    let found = unsafe { libc::dladdr(own_object_path as *const c_void, &mut info) } != 0;
    if found && !info.dli_fname.is_null() {
        // SAFETY: dli_fname is a NUL-terminated string owned by the loader.
        let name = unsafe { std::ffi::CStr::from_ptr(info.dli_fname) };
        let p = PathBuf::from(<std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(name.to_bytes()));
        if let Ok(c) = p.canonicalize() {
            return Some(c);
        }
    }
    std::env::current_exe().ok().and_then(|p| p.canonicalize().ok())
}

/// Vendor headers found on disk: their files and the hash of their contents.
pub struct VendorHeaders {
    /// Where they were found.
    pub dir: PathBuf,
    /// Hex SHA-256 (64 bits) over every file name and content.
    pub hash: String,
    files: Vec<(String, Vec<u8>)>,
}

/// Finds and reads the vendor headers (once per directory per process).
fn vendor_headers(explicit: Option<&Path>) -> Result<Arc<VendorHeaders>, String> {
    static FOUND: Mutex<BTreeMap<PathBuf, Arc<VendorHeaders>>> = Mutex::new(BTreeMap::new());
    let dirs = hls_header_dirs(explicit);
    let Some(dir) = dirs.iter().find(|d| d.join("ap_int.h").is_file()) else {
        let list: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
        return Err(format!("no ap_int.h in {}", list.join(", ")));
    };
    let mut map = FOUND.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(v) = map.get(dir) {
        return Ok(v.clone());
    }
    let mut files = Vec::new();
    read_tree(dir, "", &mut files)?;
    files.sort();
    let mut h = Sha256::new();
    for (name, bytes) in &files {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    let v = Arc::new(VendorHeaders { dir: dir.clone(), hash: hex(&h.finalize()[..8]), files });
    map.insert(dir.clone(), v.clone());
    Ok(v)
}

/// Every regular file under `dir` as (relative path with `/`, contents); hidden
/// entries are skipped.
fn read_tree(dir: &Path, prefix: &str, out: &mut Vec<(String, Vec<u8>)>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    for e in entries {
        let e = e.map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with('.') {
            continue;
        }
        let path = e.path();
        let rel = if prefix.is_empty() { name } else { format!("{prefix}/{name}") };
        if path.is_dir() {
            read_tree(&path, &rel, out)?;
        } else if path.is_file() {
            let bytes = std::fs::read(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            out.push((rel, bytes));
        }
    }
    Ok(())
}

/// One launch's transaction trace: whole lines buffered, appended to the file in
/// chunks (each one `write(2)` on an `O_APPEND` file, so concurrent launches never
/// split a line). Line: `<launch> <array> R|W <byte offset> <bytes>`.
struct TraceSink {
    file: std::fs::File,
    buf: Vec<u8>,
    id: String,
    names: Vec<String>,
}

impl TraceSink {
    fn open(path: &Path, kernel: &str, names: Vec<String>) -> Option<Box<TraceSink>> {
        use std::sync::atomic::{AtomicU64, Ordering};
        static LAUNCH: AtomicU64 = AtomicU64::new(0);
        match std::fs::OpenOptions::new().create(true).append(true).open(path) {
            Ok(file) => {
                let id = format!("{}.{}", std::process::id(), LAUNCH.fetch_add(1, Ordering::Relaxed));
                let buf = format!("# launch {id} kernel {kernel}\n").into_bytes();
                Some(Box::new(TraceSink { file, buf, id, names }))
            }
            Err(e) => {
                static WARNED: OnceLock<()> = OnceLock::new();
                WARNED.get_or_init(|| {
                    eprintln!("tessera: warning: cannot open TESSERA_EMU_TRACE={}: {e}", path.display())
                });
                None
            }
        }
    }

    fn flush(&mut self) {
        use std::io::Write;
        if !self.buf.is_empty() {
            let _ = self.file.write_all(&self.buf);
            self.buf.clear();
        }
    }
}

/// The `tessera_trace_fn` the descriptors carry when tracing.
unsafe extern "C" fn trace_line(ctx: *mut c_void, port: u32, is_write: u32, byte_offset: u64, bytes: u64) {
    use std::io::Write;
    // SAFETY: ctx is the launch's boxed TraceSink, alive for the whole kernel call;
    // a kernel runs on one thread.
    let sink = unsafe { &mut *(ctx as *mut TraceSink) };
    let TraceSink { buf, id, names, .. } = &mut *sink;
    let name = names.get(port as usize).map_or("?", String::as_str);
    let dir = if is_write != 0 { 'W' } else { 'R' };
    let _ = writeln!(buf, "{id} {name} {dir} {byte_offset} {bytes}");
    if sink.buf.len() >= 1 << 16 {
        sink.flush();
    }
}

/// The cache key of a kernel: hex SHA-256 (128 bits) over every input of the compile,
/// each length-prefixed.
pub fn kernel_hash(
    manifest: &Manifest,
    compiler: &Path,
    version: &str,
    flags: &[&str],
    headers: &[(&str, &str)],
    vendor: Option<&str>,
) -> String {
    let mut h = Sha256::new();
    let mut field = |b: &[u8]| {
        h.update((b.len() as u64).to_le_bytes());
        h.update(b);
    };
    field(b"tessera-emu-cache-1");
    field(manifest.kernel_source.as_bytes());
    field(manifest.emu_entry_source.as_bytes());
    field(compiler.as_os_str().as_encoded_bytes());
    field(version.as_bytes());
    field(flags.join(" ").as_bytes());
    field(cpu_identity().as_bytes());
    field(env!("CARGO_PKG_VERSION").as_bytes());
    for (name, text) in headers {
        field(name.as_bytes());
        field(text.as_bytes());
    }
    if let Some(v) = vendor {
        field(b"vendor-headers");
        field(v.as_bytes());
    }
    hex(&h.finalize()[..16])
}

/// What `-march=native` compiles for: the first processor's `model name` and `flags`
/// lines of `/proc/cpuinfo` (empty where there is none). In the kernel hash, so a
/// cache directory shared by different machines (a home directory on a cluster's
/// nodes) never gives one machine a kernel built for another's instruction set.
fn cpu_identity() -> &'static str {
    static ID: OnceLock<String> = OnceLock::new();
    ID.get_or_init(|| {
        let info = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let mut id = String::new();
        for key in ["model name", "flags", "Features", "CPU part"] {
            if let Some(line) = info.lines().find(|l| l.split(':').next().is_some_and(|k| k.trim() == key)) {
                id.push_str(line.trim());
                id.push('\n');
            }
        }
        id
    })
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `<compiler> --version`, run once per compiler per process.
fn compiler_version(compiler: &Path) -> Result<String, String> {
    static VERSIONS: Mutex<BTreeMap<PathBuf, Result<String, String>>> = Mutex::new(BTreeMap::new());
    let mut map = VERSIONS.lock().unwrap_or_else(|e| e.into_inner());
    map.entry(compiler.to_path_buf())
        .or_insert_with(|| {
            Command::new(compiler)
                .arg("--version")
                .stdin(Stdio::null())
                .output()
                .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
                .map_err(|e| format!("cannot run the C++ compiler {}: {e}", compiler.display()))
        })
        .clone()
}

/// Compiles (unless cached on disk) and loads one kernel.
fn build_and_load(
    root: &Path,
    dir: &Path,
    compiler: &Path,
    flags: &[&str],
    manifest: &Manifest,
    vendor: Option<&VendorHeaders>,
) -> Result<EmuKernel, String> {
    let so = dir.join("kernel.so");
    let name = manifest.kernel.as_deref().unwrap_or("?");
    if so.is_file() {
        match load(&so, name) {
            Ok(k) => return Ok(k),
            // A cached library that no longer loads (e.g. a system library it needs
            // changed) is rebuilt once.
            Err(_) => {
                let _ = std::fs::remove_file(&so);
            }
        }
    }
    // A first run compiles the kernel (about a second and a half per kernel): say so
    // where someone is watching (a terminal), as a progress line would; logs and tests
    // capturing stderr see nothing.
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("tessera: compiling kernel {name} for the emulated device (first run; cached in {})", dir.display());
    }
    compile(root, dir, compiler, flags, manifest, vendor)?;
    load(&so, name)
}

/// Writes the sources into `dir` and compiles `kernel.so` there.
fn compile(
    root: &Path,
    dir: &Path,
    compiler: &Path,
    flags: &[&str],
    manifest: &Manifest,
    vendor: Option<&VendorHeaders>,
) -> Result<(), String> {
    let kernel = manifest.kernel.as_deref().unwrap_or("?");
    let io = |what: &str, p: &Path, e: std::io::Error| format!("cannot {what} {}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| io("create the kernel cache directory", dir, e))?;
    write_atomic(&dir.join("kernel.cpp"), manifest.kernel_source.as_bytes())?;
    write_atomic(&dir.join("entry.cpp"), manifest.emu_entry_source.as_bytes())?;

    let inc = materialise_headers(root, SHIM_HEADERS)?;
    let vendor_dir = match vendor {
        Some(v) => {
            let files: Vec<(&str, &[u8])> = v.files.iter().map(|(n, b)| (n.as_str(), b.as_slice())).collect();
            Some(materialise(root, "hls", &files)?)
        }
        None => None,
    };
    let includes = |cmd: &mut Command| {
        if let Some(inc) = &inc {
            cmd.arg("-I").arg(inc);
        }
        if let Some(v) = &vendor_dir {
            // -isystem: the vendor headers are not held to the kernel's warning flags.
            cmd.arg("-isystem").arg(v);
        }
    };
    let tmp = dir.join(format!("kernel.so.tmp.{}", std::process::id()));
    let pch = inc.as_deref().and_then(|inc| precompiled_headers(root, compiler, flags, inc, vendor_dir.as_deref()));
    let kernel_cmd = |pch: Option<&Path>| {
        let mut cmd = Command::new(compiler);
        cmd.args(flags);
        if let Some(p) = pch {
            cmd.arg("-include").arg(p);
        }
        cmd.arg("-I").arg(dir);
        includes(&mut cmd);
        cmd.arg("-o").arg(&tmp).arg(dir.join("entry.cpp")).stdin(Stdio::null());
        cmd
    };
    let run = |mut cmd: Command| {
        let out = cmd.output().map_err(|e| format!("cannot run the C++ compiler {}: {e}", compiler.display()))?;
        Ok::<_, String>((cmd, out))
    };
    let (mut cmd, mut out) = run(match pch.as_deref() {
        // Bounded: a broken precompiled header can make the compiler allocate without
        // end (seen with GCC 12), which must cost one failed attempt, not the machine.
        Some(p) => limit_memory(kernel_cmd(Some(p)), PCH_COMPILE_MEMORY),
        None => kernel_cmd(None),
    })?;
    if !out.status.success() {
        if let Some(header) = &pch {
            // A precompiled header the compiler refuses (its headers touched, the
            // compiler upgraded in place, a broken file): the kernel compiles without
            // it, and no later kernel tries it again.
            drop_precompiled(header);
            (cmd, out) = run(kernel_cmd(None))?;
        }
    }
    if !out.status.success() {
        let _ = std::fs::remove_file(&tmp);
        let log_path = dir.join("compile.log");
        let mut log = format!("$ {cmd:?}\n").into_bytes();
        log.extend_from_slice(&out.stdout);
        log.extend_from_slice(&out.stderr);
        let _ = write_atomic(&log_path, &log);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let lines: Vec<&str> = stderr.lines().filter(|l| !l.trim().is_empty()).take(QUOTED_LINES).collect();
        let quoted = if lines.is_empty() { "(no output)".to_string() } else { lines.join("\n") };
        return Err(format!(
            "kernel {kernel} does not compile for the emulated device ({} {}):\n{quoted}\n(full log: {})",
            compiler.display(),
            out.status,
            log_path.display()
        ));
    }
    std::fs::rename(&tmp, dir.join("kernel.so")).map_err(|e| io("move the compiled kernel to", &dir.join("kernel.so"), e))
}

/// The shim headers kernels include, in the order a kernel would include them: the
/// contents of the precompiled header of kernels compiled with the vendor headers
/// (wide ports; the others, baseline kernels, only include those that do not need
/// them, [`PCH_HEADERS_PLAIN`]).
const PCH_HEADERS: &[&str] =
    &["tessera_hls.h", "tessera_wide.h", "tessera_ship.h", "tessera_dataflow.h", "tessera_math.h"];
const PCH_HEADERS_PLAIN: &[&str] = &["tessera_hls.h", "tessera_math.h"];

/// A header including every shim header (and through them the vendor's `ap_int.h`
/// & co.), precompiled for kernels compiled with `flags` against the headers
/// in `inc` and `vendor`: `<root>/pch-<hash>/tessera_emu.h` with its precompiled form
/// beside it (`.gch` for GCC, `.pch` for clang, which both compilers use for
/// `-include tessera_emu.h`), built once per cache (atomically: concurrent builders
/// each rename a whole file into place). Parsing those headers is about half of a
/// kernel's compile time (measured here: 3.2 s of user time per kernel with GCC 12,
/// 1.7 s with the precompiled header). A precompiled header only saves parsing: the
/// kernel's code, and so its results, are the same. The headers are guarded, so a
/// kernel's own `#include`s of them add nothing. Returns the header to `-include`;
/// `None` when it cannot be built (the kernel then compiles without it).
fn precompiled_headers(root: &Path, compiler: &Path, flags: &[&str], inc: &Path, vendor: Option<&Path>) -> Option<PathBuf> {
    let version = compiler_version(compiler).ok()?;
    let mut h = Sha256::new();
    let joined = flags.join(" ");
    for field in [
        b"tessera-emu-pch-1".as_slice(),
        compiler.as_os_str().as_encoded_bytes(),
        version.as_bytes(),
        joined.as_bytes(),
        cpu_identity().as_bytes(),
        inc.as_os_str().as_encoded_bytes(),
        vendor.map_or(&[][..], |v| v.as_os_str().as_encoded_bytes()),
    ] {
        h.update((field.len() as u64).to_le_bytes());
        h.update(field);
    }
    let dir = root.join(format!("pch-{}", hex(&h.finalize()[..8])));
    let header_path = dir.join("tessera_emu.h");
    let pch = dir.join(if version.contains("clang") { "tessera_emu.h.pch" } else { "tessera_emu.h.gch" });
    if PCH_FAILED.lock().unwrap_or_else(|e| e.into_inner()).contains(&dir) {
        return None;
    }
    if pch.is_file() && header_path.is_file() {
        return Some(header_path);
    }
    let headers = if vendor.is_some() { PCH_HEADERS } else { PCH_HEADERS_PLAIN };
    let header: String = headers.iter().map(|h| format!("#include \"{h}\"\n")).collect();
    if std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        eprintln!("tessera: precompiling the emulated device's headers (first run; cached in {})", dir.display());
    }
    let built = (|| {
        std::fs::create_dir_all(&dir).ok()?;
        write_atomic(&header_path, header.as_bytes()).ok()?;
        let tmp = dir.join(format!(".tessera_emu.h.pch.tmp.{}", std::process::id()));
        // The kernel's language and code generation flags (a precompiled header is
        // only accepted under the same ones) and header directories, without the
        // link flags: for building the header and for checking it.
        let headers_cmd = || {
            let mut cmd = Command::new(compiler);
            cmd.args(flags.iter().filter(|f| **f != "-shared" && !f.starts_with("-Wl,")));
            cmd.arg("-I").arg(inc);
            if let Some(v) = vendor {
                cmd.arg("-isystem").arg(v);
            }
            cmd.stdin(Stdio::null());
            cmd
        };
        let mut cmd = headers_cmd();
        cmd.arg("-x").arg("c++-header").arg(&header_path).arg("-o").arg(&tmp);
        let ok = cmd.output().is_ok_and(|o| o.status.success());
        if !ok || std::fs::rename(&tmp, &pch).is_err() {
            let _ = std::fs::remove_file(&tmp);
            return None;
        }
        // A precompiled header is a snapshot of the compiler's memory; one that GCC 12
        // cannot load back (seen here: a file written by one process made every
        // compile that loaded it allocate without end) is caught on an empty unit,
        // with bounded memory, before any kernel uses it.
        let mut check = headers_cmd();
        check.arg("-fsyntax-only").arg("-include").arg(&header_path).arg("-x").arg("c++").arg("/dev/null");
        if !limit_memory(check, PCH_COMPILE_MEMORY).output().is_ok_and(|o| o.status.success()) {
            let _ = std::fs::remove_file(&pch);
            return None;
        }
        Some(header_path.clone())
    })();
    if built.is_none() {
        PCH_FAILED.lock().unwrap_or_else(|e| e.into_inner()).push(dir);
    }
    built
}

/// Address-space limit of a compile that loads a precompiled header (over ten times
/// what a kernel compile needs: 50–500 MB measured here).
const PCH_COMPILE_MEMORY: u64 = 6 << 30;

/// `cmd` with its address space limited to `bytes` (`RLIMIT_AS` in the child).
fn limit_memory(mut cmd: Command, bytes: u64) -> Command {
    use std::os::unix::process::CommandExt;
    // SAFETY: setrlimit is async-signal-safe; the closure allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit { rlim_cur: bytes as libc::rlim_t, rlim_max: bytes as libc::rlim_t };
            if libc::setrlimit(libc::RLIMIT_AS, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    cmd
}

/// Removes the precompiled forms of `header` (a file of [`precompiled_headers`]) and
/// keeps this process from building them again.
fn drop_precompiled(header: &Path) {
    for ext in ["gch", "pch"] {
        let mut p = header.as_os_str().to_owned();
        p.push(format!(".{ext}"));
        let _ = std::fs::remove_file(PathBuf::from(p));
    }
    if let Some(dir) = header.parent() {
        PCH_FAILED.lock().unwrap_or_else(|e| e.into_inner()).push(dir.to_path_buf());
    }
}

/// Precompiled-header directories this process gave up on.
static PCH_FAILED: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Writes `headers` into `<root>/include-<hash>/` (once; returns `None` when there are
/// none) and returns that directory.
pub fn materialise_headers(root: &Path, headers: &[(&str, &str)]) -> Result<Option<PathBuf>, String> {
    if headers.is_empty() {
        return Ok(None);
    }
    let files: Vec<(&str, &[u8])> = headers.iter().map(|(n, t)| (*n, t.as_bytes())).collect();
    materialise(root, "include", &files).map(Some)
}

/// Writes `files` into `<root>/<prefix>-<hash of names and contents>/` (files already
/// there with the right contents are left alone) and returns that directory.
fn materialise(root: &Path, prefix: &str, files: &[(&str, &[u8])]) -> Result<PathBuf, String> {
    let mut h = Sha256::new();
    for (name, bytes) in files {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    }
    let dir = root.join(format!("{prefix}-{}", hex(&h.finalize()[..8])));
    for (name, bytes) in files {
        let p = dir.join(name);
        if std::fs::read(&p).is_ok_and(|old| old == *bytes) {
            continue;
        }
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        write_atomic(&p, bytes)?;
    }
    Ok(dir)
}

/// Writes a file through a temporary name and a rename, so readers see either the
/// old file or the whole new one.
fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), String> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = path.with_file_name(format!(
        ".{name}.tmp.{}.{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            format!("cannot write {}: {e}", path.display())
        })
}

/// Loads a kernel library and finds its entry point.
fn load(so: &Path, name: &str) -> Result<EmuKernel, String> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: the library is a Tessera emulation kernel; its initialisers are those
    // of plain C++ kernel code. RTLD_NOW reports missing symbols here, not mid-run.
    let lib = unsafe { Library::open(Some(so), RTLD_NOW | RTLD_LOCAL) }
        .map_err(|e| format!("cannot load the emulation kernel {}: {e}", so.display()))?;
    // SAFETY: the entry point has this signature by the manifest contract.
    let entry: abi::EntryFn = unsafe { lib.get::<abi::EntryFn>(ENTRY_SYMBOL.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("the emulation kernel {} has no {ENTRY_SYMBOL}: {e}", so.display()))?;
    // SAFETY: the symbol, where a kernel defines it, has this signature (tessera_emu_abi.h).
    let streams_take = unsafe { lib.get::<abi::StreamsTakeFn>(abi::STREAMS_TAKE_SYMBOL.as_bytes()) }.ok().map(|s| *s);
    Ok(EmuKernel { _lib: lib, entry, streams_take, name: name.to_string(), so_path: so.to_path_buf(), interleave: None })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_materialised_once_per_content() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(materialise_headers(tmp.path(), &[]).unwrap(), None);
        let hs = [("a.h", "#define A 1\n"), ("sub/b.h", "#define B 2\n")];
        let d = materialise_headers(tmp.path(), &hs).unwrap().unwrap();
        assert_eq!(std::fs::read_to_string(d.join("sub/b.h")).unwrap(), "#define B 2\n");
        assert_eq!(materialise_headers(tmp.path(), &hs).unwrap().unwrap(), d);
        let other = materialise_headers(tmp.path(), &[("a.h", "#define A 2\n")]).unwrap().unwrap();
        assert_ne!(other, d);
    }

    #[test]
    fn hash_depends_on_every_input() {
        let m = Manifest {
            members: Vec::new(),
            member_checks: Vec::new(),
            version: tessera_ir::manifest::MANIFEST_VERSION,
            region: "t.c:1".into(),
            kernel: Some("k".into()),
            rejected: None,
            mode: tessera_ir::Mode::Baseline,
            args: vec![],
            kernel_source: "void k(){}".into(),
            emu_entry_source: "#include \"kernel.cpp\"".into(),
            xclbin: String::new(),
            hash: String::new(), if_clause: false, device_clause: false, always_maps: false, guard: None, write_ports: vec![], interleave: None, size_params: vec![],
        };
        let c = Path::new("/usr/bin/c++");
        let base = kernel_hash(&m, c, "gcc 12", CXX_FLAGS, &[], None);
        assert_eq!(base.len(), 32);
        assert_eq!(base, kernel_hash(&m, c, "gcc 12", CXX_FLAGS, &[], None));
        assert_ne!(base, kernel_hash(&m, c, "gcc 13", CXX_FLAGS, &[], None));
        assert_ne!(base, kernel_hash(&m, Path::new("/usr/bin/g++"), "gcc 12", CXX_FLAGS, &[], None));
        assert_ne!(base, kernel_hash(&m, c, "gcc 12", CXX_FLAGS, &[("a.h", "")], None));
        // The optimisation level is part of the key; the default level is CXX_FLAGS.
        assert_eq!(base, kernel_hash(&m, c, "gcc 12", &cxx_flags(3), &[], None));
        assert_ne!(base, kernel_hash(&m, c, "gcc 12", &cxx_flags(1), &[], None));
        assert!(cxx_flags(1).contains(&"-O1") && !cxx_flags(1).contains(&"-O3"));
        assert_eq!(cxx_flags(9), CXX_FLAGS);
        assert_ne!(base, kernel_hash(&m, c, "gcc 12", CXX_FLAGS, &[], Some("0123")));
        assert_ne!(kernel_hash(&m, c, "gcc 12", CXX_FLAGS, &[], Some("0124")), kernel_hash(&m, c, "gcc 12", CXX_FLAGS, &[], Some("0123")));
        let mut m2 = m.clone();
        m2.kernel_source.push(' ');
        assert_ne!(base, kernel_hash(&m2, c, "gcc 12", CXX_FLAGS, &[], None));
        // The region's name and mode do not change the binary.
        let mut m3 = m.clone();
        m3.region = "u.c:9".into();
        assert_eq!(base, kernel_hash(&m3, c, "gcc 12", CXX_FLAGS, &[], None));
        assert!(!needs_vendor_headers(&m));
        m3.kernel_source = "#include \"tessera_wide.h\"\n".into();
        assert!(needs_vendor_headers(&m3));
    }

    #[test]
    fn shim_headers_are_embedded() {
        let names: Vec<&str> = SHIM_HEADERS.iter().map(|(n, _)| *n).collect();
        assert_eq!(names, ["tessera_emu_abi.h", "tessera_hls.h", "tessera_wide.h", "tessera_ship.h", "tessera_dataflow.h", "tessera_math.h"]);
        assert!(SHIM_HEADERS[1].1.contains("class burst_maxi"));
        assert!(SHIM_HEADERS[3].1.contains("tessera_ship_out_posted"));
        assert!(SHIM_HEADERS[4].1.contains("class stream"));
        assert!(SHIM_HEADERS[5].1.contains("TESSERA_MATH_1(sqrt)"));
    }

    #[test]
    fn vendor_header_search() {
        let tmp = tempfile::tempdir().unwrap();
        assert_eq!(hls_header_dirs(Some(tmp.path())), vec![tmp.path().to_path_buf()]);
        let dirs = hls_header_dirs(None);
        assert!(dirs.iter().all(|d| d.ends_with("hls-headers")), "{dirs:?}");
        assert!(dirs.last().unwrap().ends_with("target/hls-headers"));
        // Missing: the reason lists where it looked.
        let e = vendor_headers(Some(tmp.path())).err().unwrap();
        assert!(e.contains("no ap_int.h in") && e.contains(&tmp.path().display().to_string()), "{e}");
        // Present: read once, hashed over names and contents.
        std::fs::write(tmp.path().join("ap_int.h"), "// a\n").unwrap();
        std::fs::create_dir(tmp.path().join("etc")).unwrap();
        std::fs::write(tmp.path().join("etc/ap_private.h"), "// b\n").unwrap();
        let v = vendor_headers(Some(tmp.path())).unwrap();
        assert_eq!(v.hash.len(), 16);
        let names: Vec<&str> = v.files.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["ap_int.h", "etc/ap_private.h"]);
    }
}
