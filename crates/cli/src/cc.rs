//! `tessera cc`: clang-19 with the Tessera plugin and runtime.
//!
//! The plugin and the runtime library are found through `TESSERA_PLUGIN` and
//! `TESSERA_RUNTIME_DIR`, else in `<exe dir>/../lib` (an installed tree:
//! `<prefix>/bin/tessera`, `<prefix>/lib/tessera_plugin.so`, `<prefix>/lib/libtessera_rt.so`,
//! see `make install`), else next to the `tessera` executable (`make build` puts all
//! three in `target/release/`); see [`search_dirs`]. The compiler is `$TESSERA_CLANG` (`$TESSERA_CLANGXX` for
//! `tessera c++`), else `clang-19` (`clang++-19`) on `PATH`:
//! the plugin is built against clang 19's C++ ABI, so no other clang can load it.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// Clang flags that stop before linking: no runtime library is added then.
const NO_LINK: [&str; 6] = ["-c", "-S", "-E", "-fsyntax-only", "-M", "-MM"];

fn exe_dir() -> Option<PathBuf> {
    std::env::current_exe().ok()?.canonicalize().ok()?.parent().map(Path::to_path_buf)
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join(name)).collect::<Vec<_>>())?
        .into_iter()
        .find(|p| p.is_file())
}

/// Where `tessera cc` looks for the plugin and the runtime library, in order, given the
/// directory of the (canonical) `tessera` executable: the installed layout's
/// `<prefix>/lib` first, then the executable's own directory (the build tree).
pub fn search_dirs(exe_dir: &Path) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(prefix) = exe_dir.parent() {
        dirs.push(prefix.join("lib"));
    }
    dirs.push(exe_dir.to_path_buf());
    dirs
}

/// The first of `dirs` holding a file `name`.
fn find_in(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().find(|d| d.join(name).is_file()).cloned()
}

/// The clang command line `tessera cc args` runs (without the compiler itself).
pub fn clang_args(args: &[String], plugin: &Path, runtime_dir: &Path) -> Vec<OsString> {
    let mut out: Vec<OsString> = Vec::new();
    if !args.iter().any(|a| a == "-fopenmp" || a.starts_with("-fopenmp=")) {
        out.push("-fopenmp".into());
    }
    out.push(format!("-fplugin={}", plugin.display()).into());
    let links = !args.iter().any(|a| NO_LINK.contains(&a.as_str()));
    if links && !args.iter().any(|a| a.starts_with("-fplugin-arg-tessera-out-dir=")) {
        // The compile step writes to a temporary object; kernels belong next to the
        // final output instead.
        let output = args
            .iter()
            .position(|a| a == "-o")
            .and_then(|i| args.get(i + 1).cloned())
            .or_else(|| args.iter().find_map(|a| a.strip_prefix("-o").filter(|s| !s.is_empty()).map(String::from)))
            .unwrap_or_else(|| "a.out".to_string());
        out.push(format!("-fplugin-arg-tessera-out-dir={output}.tessera").into());
    }
    out.extend(args.iter().map(OsString::from));
    if links {
        out.push(format!("-L{}", runtime_dir.display()).into());
        out.push("-ltessera_rt".into());
        out.push(format!("-Wl,-rpath,{}", runtime_dir.display()).into());
    }
    out
}

/// Which compiler driver to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Language {
    /// `clang-19` (`$TESSERA_CLANG`).
    C,
    /// `clang++-19` (`$TESSERA_CLANGXX`).
    Cxx,
}

/// Runs clang; returns its exit status.
pub fn run(args: &[String], language: Language) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("tessera cc: error: {msg}");
        ExitCode::FAILURE
    };
    let dirs = exe_dir().map(|d| search_dirs(&d)).unwrap_or_default();
    let plugin = match std::env::var_os("TESSERA_PLUGIN").map(PathBuf::from) {
        Some(p) => p,
        None => match find_in(&dirs, "tessera_plugin.so") {
            Some(d) => d.join("tessera_plugin.so"),
            None => return fail("the Tessera clang plugin (tessera_plugin.so) is neither in <prefix>/lib nor next to this executable; run `make build` or set TESSERA_PLUGIN".into()),
        },
    };
    let runtime_dir = match std::env::var_os("TESSERA_RUNTIME_DIR").map(PathBuf::from) {
        Some(d) if d.join("libtessera_rt.so").is_file() => d,
        Some(_) => return fail("TESSERA_RUNTIME_DIR does not hold libtessera_rt.so".into()),
        None => match find_in(&dirs, "libtessera_rt.so") {
            Some(d) => d,
            None => return fail("the Tessera runtime (libtessera_rt.so) is neither in <prefix>/lib nor next to this executable; run `make build` or set TESSERA_RUNTIME_DIR".into()),
        },
    };
    let (var, name) = match language {
        Language::C => ("TESSERA_CLANG", "clang-19"),
        Language::Cxx => ("TESSERA_CLANGXX", "clang++-19"),
    };
    let clang = match std::env::var_os(var).map(PathBuf::from).or_else(|| find_on_path(name)) {
        Some(c) => c,
        None => return fail(format!("{name} is not on PATH (install clang-19, or set {var})")),
    };
    match Command::new(&clang).args(clang_args(args, &plugin, &runtime_dir)).status() {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => ExitCode::from(s.code().unwrap_or(1).clamp(1, 255) as u8),
        Err(e) => fail(format!("cannot run {}: {e}", clang.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strs(v: Vec<OsString>) -> Vec<String> {
        v.into_iter().map(|s| s.into_string().unwrap()).collect()
    }

    #[test]
    fn link_adds_runtime_and_out_dir() {
        let args: Vec<String> = ["x.c", "-O2", "-o", "bin/x"].map(String::from).to_vec();
        let a = strs(clang_args(&args, Path::new("/t/p.so"), Path::new("/t")));
        assert_eq!(
            a,
            [
                "-fopenmp",
                "-fplugin=/t/p.so",
                "-fplugin-arg-tessera-out-dir=bin/x.tessera",
                "x.c",
                "-O2",
                "-o",
                "bin/x",
                "-L/t",
                "-ltessera_rt",
                "-Wl,-rpath,/t"
            ]
        );
    }

    #[test]
    fn installed_lib_dir_comes_before_the_executables_own() {
        assert_eq!(
            search_dirs(Path::new("/opt/tessera/bin")),
            [PathBuf::from("/opt/tessera/lib"), PathBuf::from("/opt/tessera/bin")]
        );
        assert_eq!(search_dirs(Path::new("/")), [PathBuf::from("/")]);
        let tmp = tempfile::tempdir().unwrap();
        let (bin, lib) = (tmp.path().join("bin"), tmp.path().join("lib"));
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(&lib).unwrap();
        std::fs::write(bin.join("libtessera_rt.so"), "").unwrap();
        assert_eq!(find_in(&search_dirs(&bin), "libtessera_rt.so"), Some(bin.clone()));
        std::fs::write(lib.join("libtessera_rt.so"), "").unwrap();
        assert_eq!(find_in(&search_dirs(&bin), "libtessera_rt.so"), Some(lib));
        assert_eq!(find_in(&search_dirs(&bin), "tessera_plugin.so"), None);
    }

    #[test]
    fn compile_only_leaves_linking_and_out_dir_to_clang() {
        let args: Vec<String> = ["-fopenmp", "-c", "x.c", "-o", "x.o"].map(String::from).to_vec();
        let a = strs(clang_args(&args, Path::new("/t/p.so"), Path::new("/t")));
        assert_eq!(a, ["-fplugin=/t/p.so", "-fopenmp", "-c", "x.c", "-o", "x.o"]);
    }
}
