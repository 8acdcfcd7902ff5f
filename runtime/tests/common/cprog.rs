//! C programs that call the runtime like rewritten code does: compiled against
//! `include/tessera_rt.h`, linked with a `libtessera_rt.so`, and run as subprocesses
//! with a cleared, explicit environment (the runtime snapshots its environment once
//! per process, so only a fresh process exercises it as real programs do).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The cdylib cargo built next to the running test binary.
pub fn cdylib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    assert!(deps.join("libtessera_rt.so").is_file(), "no libtessera_rt.so in {}", deps.display());
    deps
}

/// A C string literal holding `s`.
pub fn c_literal(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '?' => out.push_str("\\?"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A compiled program in a temporary directory of its own, with a kernel cache
/// there (`TESSERA_CACHE_DIR`, shared by its runs).
pub struct CProgram {
    /// Holds the source, the executable, the cache and the reports.
    pub dir: tempfile::TempDir,
    /// The executable.
    pub exe: PathBuf,
    /// `TESSERA_CACHE_DIR` of every run.
    pub cache: PathBuf,
    runs: AtomicUsize,
}

/// What one run did.
pub struct Ran {
    /// Exit status (`None`: killed by a signal).
    pub code: Option<i32>,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
    /// The lines the run appended to its own `TESSERA_REPORT` file.
    pub report: Vec<serde_json::Value>,
}

impl Ran {
    /// Standard output without surrounding blanks.
    pub fn out(&self) -> &str {
        self.stdout.trim()
    }

    /// `kernel@device` of every report line that names a kernel, in order.
    #[allow(dead_code)]
    pub fn kernels(&self) -> Vec<String> {
        self.report
            .iter()
            .filter(|l| l["kernel"].is_string())
            .map(|l| format!("{}@{}", l["kernel"].as_str().unwrap_or("?"), l["device"].as_str().unwrap_or("?")))
            .collect()
    }
}

impl CProgram {
    /// Compiles `source` as `name` against the runtime this test binary was built with.
    pub fn build(name: &str, source: &str) -> CProgram {
        CProgram::build_against(&cdylib_dir(), name, source)
    }

    /// Compiles `source` as `name` (C11, `-Wall -Werror`) against the
    /// `libtessera_rt.so` in `lib` (linked with a run path to it).
    pub fn build_against(lib: &Path, name: &str, source: &str) -> CProgram {
        let dir = tempfile::tempdir().unwrap();
        let src = dir.path().join(format!("{name}.c"));
        std::fs::write(&src, source).unwrap();
        let exe = dir.path().join(name);
        let include = Path::new(env!("CARGO_MANIFEST_DIR")).join("include");
        let out = Command::new("cc")
            .args(["-std=c11", "-Wall", "-Werror", "-I"])
            .arg(&include)
            .arg(&src)
            .arg("-L")
            .arg(lib)
            .arg("-ltessera_rt")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-o")
            .arg(&exe)
            .output()
            .unwrap();
        assert!(out.status.success(), "cc failed on {name}.c:\n{}", String::from_utf8_lossy(&out.stderr));
        let cache = dir.path().join("cache");
        CProgram { dir, exe, cache, runs: AtomicUsize::new(0) }
    }

    /// Runs the program with only `PATH`, `TESSERA_CACHE_DIR`, a fresh `TESSERA_REPORT`
    /// and `vars` in its environment.
    pub fn run(&self, vars: &[(&str, &str)]) -> Ran {
        let n = self.runs.fetch_add(1, Ordering::Relaxed);
        let report = self.dir.path().join(format!("report-{n}.jsonl"));
        let mut cmd = Command::new(&self.exe);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("TESSERA_CACHE_DIR", &self.cache)
            .env("TESSERA_REPORT", &report);
        for (k, v) in vars {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        let report = match std::fs::read_to_string(&report) {
            Ok(text) => text.lines().map(|l| serde_json::from_str(l).unwrap()).collect(),
            Err(_) => Vec::new(),
        };
        Ran {
            code: out.status.code(),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            report,
        }
    }
}
