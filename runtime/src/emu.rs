//! The emulated device (the Vitis `sw_emu` analogue): the kernel's HLS C++ compiled
//! for the host into a shared library, cached on disk, loaded once per process, and
//! called on host-memory buffers.
//!
//! Compile cache. A kernel is identified by the SHA-256 of everything that determines
//! the binary: both sources, the compiler's path and `--version` output, the flags,
//! the runtime version and the embedded shim headers. Its directory
//! `<cache root>/<hash>/` holds `kernel.cpp`, `entry.cpp`, `kernel.so` and, after a
//! failure, `compile.log`. Every file is written to a temporary name and renamed into
//! place, so concurrent processes compiling the same kernel never see a partial file;
//! within one process a kernel is compiled and loaded once (a per-directory
//! `OnceLock`), and the library stays loaded for the process lifetime.

use crate::config::Config;
use crate::data::HostBuffer;
use crate::device::{Device, DeviceBuffer, DeviceKind, KernelArg, LaunchStats};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use tessera_ir::manifest::Manifest;

/// Flags of every emulation compile (before `-I` and `-o`). `-ffp-contract=off` and
/// `-fno-fast-math` keep floating point identical to the unfused host computation;
/// `-Wl,-Bsymbolic` binds the kernel's calls to its own functions even when the host
/// program defines a function of the same name.
pub const CXX_FLAGS: &[&str] = &[
    "-std=c++17",
    "-O2",
    "-fPIC",
    "-shared",
    "-ffp-contract=off",
    "-fno-fast-math",
    "-Wno-unknown-pragmas",
    "-Wl,-Bsymbolic",
];

/// Headers the runtime materialises into an include directory of every emulation
/// compile: `(file name, contents)`. Embed them at build time, e.g.
/// `("tessera_hls.h", include_str!("../../host/include/tessera_hls.h"))`; their
/// contents are part of the kernel hash. None exist yet.
pub const SHIM_HEADERS: &[(&str, &str)] = &[];

/// Name of the entry point every emulation library defines.
pub const ENTRY_SYMBOL: &str = "tessera_emu_entry";

/// Lines of compiler output quoted in a fallback reason.
const QUOTED_LINES: usize = 8;

/// `extern "C" void tessera_emu_entry(void **args)`.
type EntryFn = unsafe extern "C" fn(*mut *mut c_void);

/// A compiled, loaded emulation kernel.
pub struct EmuKernel {
    /// Keeps the library mapped (never dropped: the process cache owns it).
    _lib: libloading::os::unix::Library,
    entry: EntryFn,
    /// The shared library.
    pub so_path: PathBuf,
}

/// A kernel's slot in the process cache: filled once, by the first thread that needs
/// it, with the loaded kernel or the reason it cannot be used.
type KernelCell = OnceLock<Result<Arc<EmuKernel>, String>>;

/// The emulated device for one configuration.
pub struct EmuDevice {
    root: PathBuf,
    compiler: PathBuf,
}

impl EmuDevice {
    /// Resolves the cache directory and compiler of `config`.
    pub fn new(config: &Config) -> Result<EmuDevice, String> {
        let root = config.cache_dir.clone().ok_or_else(|| {
            "no cache directory for emulation kernels (set TESSERA_CACHE_DIR, XDG_CACHE_HOME or HOME)".to_string()
        })?;
        Ok(EmuDevice { root, compiler: config.compiler()? })
    }

    /// The cache directory a manifest's kernel compiles into (computes the hash; runs
    /// the compiler's `--version` once per process).
    pub fn kernel_dir(&self, manifest: &Manifest) -> Result<PathBuf, String> {
        let version = compiler_version(&self.compiler)?;
        Ok(self.root.join(kernel_hash(manifest, &self.compiler, &version, SHIM_HEADERS)))
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
        let dir = self.kernel_dir(manifest)?;
        let cell = {
            let mut map = KERNELS.lock().unwrap_or_else(|e| e.into_inner());
            map.entry(dir.clone()).or_default().clone()
        };
        // Other kernels compile in parallel; threads wanting this one wait here.
        cell.get_or_init(|| build_and_load(&self.root, &dir, &self.compiler, manifest).map(Arc::new)).clone()
    }

    fn alloc(&self, bytes: usize) -> Result<HostBuffer, String> {
        HostBuffer::new(bytes)
    }

    fn launch(&self, kernel: &Arc<EmuKernel>, args: &mut [KernelArg<'_, HostBuffer>]) -> Result<LaunchStats, String> {
        let mut ptrs: Vec<*mut c_void> = args
            .iter_mut()
            .map(|a| match a {
                KernelArg::Buffer(b) => b.host_view().as_mut_ptr() as *mut c_void,
                KernelArg::Scalar(s) => s.as_mut_ptr(),
            })
            .collect();
        let start = Instant::now();
        // SAFETY: the entry unpacks exactly the manifest's arguments, which `ptrs`
        // holds in order; buffers cover each array's whole index space.
        unsafe { (kernel.entry)(ptrs.as_mut_ptr()) };
        Ok(LaunchStats { kernel_wall_s: start.elapsed().as_secs_f64() })
    }
}

/// The cache key of a kernel: hex SHA-256 (128 bits) over every input of the compile,
/// each length-prefixed.
pub fn kernel_hash(manifest: &Manifest, compiler: &Path, version: &str, headers: &[(&str, &str)]) -> String {
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
    field(CXX_FLAGS.join(" ").as_bytes());
    field(env!("CARGO_PKG_VERSION").as_bytes());
    for (name, text) in headers {
        field(name.as_bytes());
        field(text.as_bytes());
    }
    hex(&h.finalize()[..16])
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
fn build_and_load(root: &Path, dir: &Path, compiler: &Path, manifest: &Manifest) -> Result<EmuKernel, String> {
    let so = dir.join("kernel.so");
    if so.is_file() {
        match load(&so) {
            Ok(k) => return Ok(k),
            // A cached library that no longer loads (e.g. a system library it needs
            // changed) is rebuilt once.
            Err(_) => {
                let _ = std::fs::remove_file(&so);
            }
        }
    }
    compile(root, dir, compiler, manifest)?;
    load(&so)
}

/// Writes the sources into `dir` and compiles `kernel.so` there.
fn compile(root: &Path, dir: &Path, compiler: &Path, manifest: &Manifest) -> Result<(), String> {
    let kernel = manifest.kernel.as_deref().unwrap_or("?");
    let io = |what: &str, p: &Path, e: std::io::Error| format!("cannot {what} {}: {e}", p.display());
    std::fs::create_dir_all(dir).map_err(|e| io("create the kernel cache directory", dir, e))?;
    write_atomic(&dir.join("kernel.cpp"), manifest.kernel_source.as_bytes())?;
    write_atomic(&dir.join("entry.cpp"), manifest.emu_entry_source.as_bytes())?;

    let mut cmd = Command::new(compiler);
    cmd.args(CXX_FLAGS).arg("-I").arg(dir);
    if let Some(inc) = materialise_headers(root, SHIM_HEADERS)? {
        cmd.arg("-I").arg(inc);
    }
    let tmp = dir.join(format!("kernel.so.tmp.{}", std::process::id()));
    cmd.arg("-o").arg(&tmp).arg(dir.join("entry.cpp")).stdin(Stdio::null());
    let out = cmd.output().map_err(|e| format!("cannot run the C++ compiler {}: {e}", compiler.display()))?;
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

/// Writes `headers` into `<root>/include-<hash>/` (once; returns `None` when there are
/// none) and returns that directory.
pub fn materialise_headers(root: &Path, headers: &[(&str, &str)]) -> Result<Option<PathBuf>, String> {
    if headers.is_empty() {
        return Ok(None);
    }
    let mut h = Sha256::new();
    for (name, text) in headers {
        h.update((name.len() as u64).to_le_bytes());
        h.update(name.as_bytes());
        h.update((text.len() as u64).to_le_bytes());
        h.update(text.as_bytes());
    }
    let dir = root.join(format!("include-{}", hex(&h.finalize()[..8])));
    for (name, text) in headers {
        let p = dir.join(name);
        if std::fs::read(&p).is_ok_and(|old| old == text.as_bytes()) {
            continue;
        }
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        write_atomic(&p, text.as_bytes())?;
    }
    Ok(Some(dir))
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
fn load(so: &Path) -> Result<EmuKernel, String> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: the library is a Tessera emulation kernel; its initialisers are those
    // of plain C++ kernel code. RTLD_NOW reports missing symbols here, not mid-run.
    let lib = unsafe { Library::open(Some(so), RTLD_NOW | RTLD_LOCAL) }
        .map_err(|e| format!("cannot load the emulation kernel {}: {e}", so.display()))?;
    // SAFETY: the entry point has this signature by the manifest contract.
    let entry: EntryFn = unsafe { lib.get::<EntryFn>(ENTRY_SYMBOL.as_bytes()) }
        .map(|s| *s)
        .map_err(|e| format!("the emulation kernel {} has no {ENTRY_SYMBOL}: {e}", so.display()))?;
    Ok(EmuKernel { _lib: lib, entry, so_path: so.to_path_buf() })
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
            version: tessera_ir::manifest::MANIFEST_VERSION,
            region: "t.c:1".into(),
            kernel: Some("k".into()),
            rejected: None,
            mode: "baseline".into(),
            args: vec![],
            kernel_source: "void k(){}".into(),
            emu_entry_source: "#include \"kernel.cpp\"".into(),
            xclbin: String::new(),
        };
        let c = Path::new("/usr/bin/c++");
        let base = kernel_hash(&m, c, "gcc 12", &[]);
        assert_eq!(base.len(), 32);
        assert_eq!(base, kernel_hash(&m, c, "gcc 12", &[]));
        assert_ne!(base, kernel_hash(&m, c, "gcc 13", &[]));
        assert_ne!(base, kernel_hash(&m, Path::new("/usr/bin/g++"), "gcc 12", &[]));
        assert_ne!(base, kernel_hash(&m, c, "gcc 12", &[("a.h", "")]));
        let mut m2 = m.clone();
        m2.kernel_source.push(' ');
        assert_ne!(base, kernel_hash(&m2, c, "gcc 12", &[]));
        // The region's name and mode do not change the binary.
        let mut m3 = m.clone();
        m3.region = "u.c:9".into();
        assert_eq!(base, kernel_hash(&m3, c, "gcc 12", &[]));
    }
}
