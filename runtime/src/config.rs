//! The runtime's configuration: everything it takes from the environment, read in one
//! place.
//!
//! [`Config::from_env`] is the only function of the runtime that reads environment
//! variables (besides `PATH` in the test helper [`Config::emu`]). Everything downstream receives a [`Config`] value, so the decision logic
//! is a pure function of an environment snapshot and tests build a [`Config`] directly
//! (or from a hand-written variable list with [`Config::from_lookup`]) instead of
//! mutating the process environment, which would race between test threads.
//!
//! The C entry point takes one snapshot per process, at the first offload (see
//! `crate::process_config`), as libomptarget does for `OMP_TARGET_OFFLOAD`.

use crate::device::DeviceKind;
use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// `OMP_TARGET_OFFLOAD`, the OpenMP policy for target regions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OffloadPolicy {
    /// Unset, `DEFAULT`, or a value OpenMP does not define: offload when a device is
    /// usable, otherwise run on the host.
    Default,
    /// `DISABLED`: every region runs on the host.
    Disabled,
    /// `MANDATORY`: a region that cannot be offloaded is a fatal error.
    Mandatory,
}

/// What `TESSERA_DEVICE` asks for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceRequest {
    /// Unset or empty: the runtime picks (XRT when usable, else the host).
    Auto,
    /// A known device.
    Device(DeviceKind),
    /// A value that names no device (kept verbatim for the fallback reason).
    Unknown(String),
}

/// The C++ compiler the emulated device builds kernels with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CompilerChoice {
    /// `TESSERA_CXX`: a program name (looked up on `PATH`) or a path.
    Explicit(OsString),
    /// Unset: the first of [`DEFAULT_COMPILERS`] found on `PATH`.
    Default,
}

/// Compilers tried, in order, when `TESSERA_CXX` is unset.
pub const DEFAULT_COMPILERS: &[&str] = &["c++", "g++", "clang++-19", "clang++"];

/// How long the XRT backend waits for a kernel when `TESSERA_XRT_TIMEOUT_MS` is unset
/// (or not a number): 10 minutes.
pub const DEFAULT_XRT_TIMEOUT_MS: u32 = 600_000;

/// The optimisation level of emulation kernels when `TESSERA_EMU_OPT` is unset: `-O3`,
/// which vectorises the kernels' lanes (`emu::CXX_FLAGS`).
pub const DEFAULT_EMU_OPT: u8 = 3;

/// The runtime configuration (one snapshot of the environment).
#[derive(Clone, Debug)]
pub struct Config {
    /// `OMP_TARGET_OFFLOAD`.
    pub offload: OffloadPolicy,
    /// `TESSERA_DEVICE`.
    pub device: DeviceRequest,
    /// `TESSERA_REPORT`: file to append one JSON line per region execution to.
    pub report: Option<PathBuf>,
    /// `TESSERA_VERBOSE`: one stderr line per region execution.
    pub verbose: bool,
    /// Root of the emulation kernel cache: `$TESSERA_CACHE_DIR`, else
    /// `$XDG_CACHE_HOME/tessera/emu`, else `$HOME/.cache/tessera/emu`; `None` when none
    /// of these variables is set.
    pub cache_dir: Option<PathBuf>,
    /// `TESSERA_CXX`.
    pub cxx: CompilerChoice,
    /// `PATH`, for finding the compiler.
    pub path: Option<OsString>,
    /// `TESSERA_HLS_HEADERS`: directory holding Xilinx's `ap_int.h` (hls4ml's
    /// `ap_types`), for emulation kernels that include `tessera_wide.h`. Unset: the
    /// runtime looks next to itself and in the build tree (`emu::hls_header_dirs`).
    pub hls_headers: Option<PathBuf>,
    /// `TESSERA_EMU_TRACE`: file to append every memory transaction of emulated
    /// kernels to (one text line each).
    pub emu_trace: Option<PathBuf>,
    /// `TESSERA_EMU_DATAFLOW=sequential`: the emulated dataflow kernels run C
    /// simulation's schedule (processes one after the other, unbounded streams; the
    /// kernel reads the variable itself, `tessera_dataflow.h`); otherwise concurrent.
    pub emu_dataflow_sequential: bool,
    /// `TESSERA_EMU_OPT=0|1|2|3`: the optimisation level emulation kernels are compiled
    /// at (default [`DEFAULT_EMU_OPT`]; other values keep the default). Lower levels
    /// halve a kernel's compile time and slow its run; results are the same bits.
    pub emu_opt: u8,
    /// `TESSERA_BITSTREAM_DIR`: where the XRT backend takes bitstreams from (when
    /// set, the only place; see `xrt::bitstream_candidates`).
    pub bitstream_dir: Option<PathBuf>,
    /// `TESSERA_XRT_TIMEOUT_MS`: how long the XRT backend waits for a kernel; 0 waits
    /// forever. Default [`DEFAULT_XRT_TIMEOUT_MS`].
    pub xrt_timeout_ms: u32,
    /// `TESSERA_TAPASCO_TIMEOUT_MS`: how long the TaPaSCo backend waits for a PE's job;
    /// 0 waits forever. Default [`DEFAULT_XRT_TIMEOUT_MS`].
    pub tapasco_timeout_ms: u32,
}

impl Config {
    /// Reads the process environment. The only place the runtime calls `getenv`.
    pub fn from_env() -> Config {
        Config::from_lookup(&|name| std::env::var_os(name))
    }

    /// Builds a configuration from a variable lookup (tests pass a closure over a
    /// list). Empty values count as unset.
    pub fn from_lookup(get: &dyn Fn(&str) -> Option<OsString>) -> Config {
        let get = |name: &str| get(name).filter(|v| !v.is_empty());
        let text = |name: &str| get(name).map(|v| v.to_string_lossy().into_owned());

        let offload = match text("OMP_TARGET_OFFLOAD").map(|v| v.trim().to_ascii_uppercase()).as_deref() {
            Some("DISABLED") => OffloadPolicy::Disabled,
            Some("MANDATORY") => OffloadPolicy::Mandatory,
            _ => OffloadPolicy::Default,
        };
        let device = match text("TESSERA_DEVICE") {
            None => DeviceRequest::Auto,
            Some(v) => match DeviceKind::parse(&v) {
                Some(d) => DeviceRequest::Device(d),
                None if v.trim().is_empty() => DeviceRequest::Auto,
                None => DeviceRequest::Unknown(v),
            },
        };
        let verbose = text("TESSERA_VERBOSE")
            .is_some_and(|v| !matches!(v.trim().to_ascii_lowercase().as_str(), "0" | "false" | "no" | "off" | ""));
        let cache_dir = get("TESSERA_CACHE_DIR").map(PathBuf::from).or_else(|| {
            get("XDG_CACHE_HOME")
                .map(|x| Path::new(&x).join("tessera").join("emu"))
                .or_else(|| get("HOME").map(|h| Path::new(&h).join(".cache").join("tessera").join("emu")))
        });
        Config {
            offload,
            device,
            report: get("TESSERA_REPORT").map(PathBuf::from),
            verbose,
            cache_dir,
            cxx: get("TESSERA_CXX").map_or(CompilerChoice::Default, CompilerChoice::Explicit),
            path: get("PATH"),
            hls_headers: get("TESSERA_HLS_HEADERS").map(PathBuf::from),
            emu_trace: get("TESSERA_EMU_TRACE").map(PathBuf::from),
            emu_dataflow_sequential: text("TESSERA_EMU_DATAFLOW").is_some_and(|v| v == "sequential"),
            emu_opt: text("TESSERA_EMU_OPT")
                .and_then(|v| v.trim().trim_start_matches("-O").parse().ok())
                .filter(|o| *o <= 3)
                .unwrap_or(DEFAULT_EMU_OPT),
            bitstream_dir: get("TESSERA_BITSTREAM_DIR").map(PathBuf::from),
            xrt_timeout_ms: text("TESSERA_XRT_TIMEOUT_MS")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(DEFAULT_XRT_TIMEOUT_MS),
            tapasco_timeout_ms: text("TESSERA_TAPASCO_TIMEOUT_MS")
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(DEFAULT_XRT_TIMEOUT_MS),
        }
    }

    /// A configuration for running on the emulated device with kernels cached under
    /// `cache_dir`, no report and the default compiler found on the process's `PATH`:
    /// the usual starting point of tests.
    pub fn emu(cache_dir: &Path) -> Config {
        Config {
            offload: OffloadPolicy::Default,
            device: DeviceRequest::Device(DeviceKind::Emu),
            report: None,
            verbose: false,
            cache_dir: Some(cache_dir.to_path_buf()),
            cxx: CompilerChoice::Default,
            path: std::env::var_os("PATH"),
            hls_headers: None,
            emu_trace: None,
            emu_dataflow_sequential: false,
            emu_opt: DEFAULT_EMU_OPT,
            bitstream_dir: None,
            xrt_timeout_ms: DEFAULT_XRT_TIMEOUT_MS,
            tapasco_timeout_ms: DEFAULT_XRT_TIMEOUT_MS,
        }
    }

    /// Resolves the C++ compiler to an executable path: `TESSERA_CXX` (a path, or a
    /// name searched on `PATH`), else the first of [`DEFAULT_COMPILERS`] on `PATH`.
    pub fn compiler(&self) -> Result<PathBuf, String> {
        match &self.cxx {
            CompilerChoice::Explicit(name) => find_program(name, self.path.as_deref())
                .ok_or_else(|| format!("TESSERA_CXX={} is not an executable program", name.to_string_lossy())),
            CompilerChoice::Default => DEFAULT_COMPILERS
                .iter()
                .find_map(|n| find_program(OsStr::new(n), self.path.as_deref()))
                .ok_or_else(|| {
                    format!("no C++ compiler found on PATH (tried {}; set TESSERA_CXX)", DEFAULT_COMPILERS.join(", "))
                }),
        }
    }
}

/// Finds an executable: `name` itself when it contains a `/`, else the first match in
/// the `PATH` directories.
fn find_program(name: &OsStr, path: Option<&OsStr>) -> Option<PathBuf> {
    let p = Path::new(name);
    if name.as_encoded_bytes().contains(&b'/') {
        return is_executable(p).then(|| p.to_path_buf());
    }
    std::env::split_paths(path?)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|c| is_executable(c))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(vars: &[(&str, &str)]) -> Config {
        let vars: Vec<(String, String)> = vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Config::from_lookup(&move |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| OsString::from(v)))
    }

    #[test]
    fn reads_policy_device_and_flags() {
        let c = config(&[]);
        assert_eq!(c.offload, OffloadPolicy::Default);
        assert_eq!(c.device, DeviceRequest::Auto);
        assert!(!c.verbose && c.report.is_none() && c.cache_dir.is_none());
        assert!(c.hls_headers.is_none() && c.emu_trace.is_none() && c.bitstream_dir.is_none());
        assert_eq!(c.xrt_timeout_ms, DEFAULT_XRT_TIMEOUT_MS);
        assert_eq!(c.cxx, CompilerChoice::Default);

        let c = config(&[
            ("OMP_TARGET_OFFLOAD", "disabled"),
            ("TESSERA_DEVICE", "EMU"),
            ("TESSERA_VERBOSE", "1"),
            ("TESSERA_REPORT", "/tmp/r.jsonl"),
            ("TESSERA_CXX", "g++"),
            ("TESSERA_HLS_HEADERS", "/opt/ap_types"),
            ("TESSERA_EMU_TRACE", "/tmp/t.txt"),
        ]);
        assert_eq!(c.hls_headers.as_deref(), Some(Path::new("/opt/ap_types")));
        assert_eq!(c.emu_trace.as_deref(), Some(Path::new("/tmp/t.txt")));
        assert!(!c.emu_dataflow_sequential);
        assert!(config(&[("TESSERA_EMU_DATAFLOW", "sequential")]).emu_dataflow_sequential);
        assert!(!config(&[("TESSERA_EMU_DATAFLOW", "concurrent")]).emu_dataflow_sequential);
        assert_eq!(c.emu_opt, DEFAULT_EMU_OPT);
        assert_eq!(config(&[("TESSERA_EMU_OPT", "1")]).emu_opt, 1);
        assert_eq!(config(&[("TESSERA_EMU_OPT", "-O0")]).emu_opt, 0);
        assert_eq!(config(&[("TESSERA_EMU_OPT", "7")]).emu_opt, DEFAULT_EMU_OPT);
        assert_eq!(config(&[("TESSERA_EMU_OPT", "fast")]).emu_opt, DEFAULT_EMU_OPT);
        assert_eq!(c.offload, OffloadPolicy::Disabled);
        assert_eq!(c.device, DeviceRequest::Device(DeviceKind::Emu));
        assert!(c.verbose);
        assert_eq!(c.report.as_deref(), Some(Path::new("/tmp/r.jsonl")));
        assert_eq!(c.cxx, CompilerChoice::Explicit("g++".into()));

        assert_eq!(config(&[("OMP_TARGET_OFFLOAD", "Mandatory")]).offload, OffloadPolicy::Mandatory);
        assert_eq!(config(&[("OMP_TARGET_OFFLOAD", "whatever")]).offload, OffloadPolicy::Default);
        assert_eq!(config(&[("TESSERA_DEVICE", "gpu")]).device, DeviceRequest::Unknown("gpu".into()));
        assert_eq!(config(&[("TESSERA_DEVICE", "")]).device, DeviceRequest::Auto);
        assert!(!config(&[("TESSERA_VERBOSE", "0")]).verbose);
        let c = config(&[("TESSERA_BITSTREAM_DIR", "/bits"), ("TESSERA_XRT_TIMEOUT_MS", " 1500 ")]);
        assert_eq!(c.bitstream_dir.as_deref(), Some(Path::new("/bits")));
        assert_eq!(c.xrt_timeout_ms, 1500);
        assert_eq!(config(&[("TESSERA_XRT_TIMEOUT_MS", "0")]).xrt_timeout_ms, 0);
        assert_eq!(config(&[("TESSERA_XRT_TIMEOUT_MS", "soon")]).xrt_timeout_ms, DEFAULT_XRT_TIMEOUT_MS);
        assert_eq!(config(&[]).tapasco_timeout_ms, DEFAULT_XRT_TIMEOUT_MS);
        assert_eq!(config(&[("TESSERA_TAPASCO_TIMEOUT_MS", "250")]).tapasco_timeout_ms, 250);
    }

    #[test]
    fn cache_dir_precedence() {
        let c = config(&[("HOME", "/h")]);
        assert_eq!(c.cache_dir.as_deref(), Some(Path::new("/h/.cache/tessera/emu")));
        let c = config(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x")]);
        assert_eq!(c.cache_dir.as_deref(), Some(Path::new("/x/tessera/emu")));
        let c = config(&[("HOME", "/h"), ("XDG_CACHE_HOME", "/x"), ("TESSERA_CACHE_DIR", "/t")]);
        assert_eq!(c.cache_dir.as_deref(), Some(Path::new("/t")));
    }

    #[test]
    fn finds_compilers() {
        let c = config(&[("PATH", "/nonexistent:/bin:/usr/bin"), ("TESSERA_CXX", "false")]);
        let p = c.compiler().unwrap();
        assert!(p.ends_with("false"), "{p:?}");
        let c = config(&[("PATH", "/nonexistent"), ("TESSERA_CXX", "c++")]);
        assert!(c.compiler().unwrap_err().contains("TESSERA_CXX=c++"));
        let c = config(&[("PATH", "/nonexistent")]);
        assert!(c.compiler().unwrap_err().contains("no C++ compiler"));
        let c = config(&[("TESSERA_CXX", "/bin/false")]);
        assert_eq!(c.compiler().unwrap(), Path::new("/bin/false"));
    }
}
