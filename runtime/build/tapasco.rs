//! Cargo feature `tapasco` of `build.rs`: the bindings of TaPaSCo's C API
//! (`$OUT_DIR/tapasco_sys.rs`, read by `src/tapasco/ffi.rs`), generated with bindgen
//! from the installed `tapasco.h`, and the link of libtapasco.
//!
//! Where TaPaSCo is: `TAPASCO_PREFIX` when set, else the first of
//! `$TAPASCO_WORK_DIR/build/install/usr/local` (where `tapasco-build-libs` installs in
//! a TaPaSCo workspace), `/usr/local` and `/usr` (TaPaSCo's runtime packages) that has
//! `include/tapasco/tapasco.h` (TaPaSCo's CMake installs the header cbindgen
//! generates there) and `lib/libtapasco.a` or `lib64/libtapasco.a`.
//!
//! libtapasco is a Rust static library (crate type `staticlib`): it carries its own
//! copy of Rust's standard library, which must not meet this crate's in one link. So
//! the archive is first linked into one relocatable object (`ld -r --whole-archive`),
//! every global symbol except the `tapasco_*` functions of the C API (and the
//! `DW.ref.*` COMDAT signatures) is made local (`objcopy --wildcard
//! --keep-global-symbol='tapasco_*'`), and that object is linked
//! into libtessera_rt.so: the program then needs nothing of TaPaSCo at run time but
//! the tlkm driver. A `libtapasco.so` (no archive) is linked as a shared library.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The C functions the backend calls; nothing else is bound.
const FUNCTIONS: &[&str] = &[
    "tapasco_last_error_length",
    "tapasco_last_error_message",
    "tapasco_tlkm_new",
    "tapasco_tlkm_device_len",
    "tapasco_tlkm_device_alloc",
    "tapasco_device_access",
    "tapasco_device_num_pes",
    "tapasco_device_get_pe_id",
    "tapasco_device_acquire_pe",
    "tapasco_job_param_new",
    "tapasco_job_param_destroy",
    "tapasco_job_param_single32",
    "tapasco_job_param_single64",
    "tapasco_job_param_deviceaddress",
    "tapasco_job_start",
    "tapasco_job_release",
    "tapasco_get_default_memory",
    "tapasco_memory_allocate",
    "tapasco_memory_free",
    "tapasco_memory_copy_to",
    "tapasco_memory_copy_from",
];

/// The header, relative to the prefix.
const HEADER: &str = "include/tapasco/tapasco.h";

/// libclang used by bindgen when `LIBCLANG_PATH` is unset (Debian's clang-19).
const DEFAULT_LIBCLANG: &str = "/usr/lib/llvm-19/lib";

fn fail(msg: &str) -> ! {
    eprintln!("error: tessera-rt feature `tapasco`: {msg}");
    std::process::exit(1);
}

/// The TaPaSCo installation: `TAPASCO_PREFIX`, or the first default that has the header.
fn prefix() -> PathBuf {
    if let Some(p) = env::var_os("TAPASCO_PREFIX").filter(|v| !v.is_empty()) {
        let p = PathBuf::from(p);
        if !p.join(HEADER).is_file() {
            fail(&format!(
                "TAPASCO_PREFIX={} has no {HEADER} (expected the prefix TaPaSCo's runtime was installed to)",
                p.display()
            ));
        }
        return p;
    }
    let mut candidates = Vec::new();
    if let Some(w) = env::var_os("TAPASCO_WORK_DIR").filter(|v| !v.is_empty()) {
        candidates.push(PathBuf::from(w).join("build/install/usr/local"));
    }
    candidates.push("/usr/local".into());
    candidates.push("/usr".into());
    match candidates.iter().find(|c| c.join(HEADER).is_file()) {
        Some(c) => c.clone(),
        None => fail(&format!(
            "no TaPaSCo runtime found (looked for {HEADER} in {}). Build it in a TaPaSCo workspace (`source \
             tapasco-setup.sh && tapasco-build-libs`) or install TaPaSCo's runtime package, set TAPASCO_PREFIX to the \
             prefix holding include/tapasco/tapasco.h, or build without `--features tapasco`.",
            candidates.iter().map(|c| c.display().to_string()).collect::<Vec<_>>().join(", ")
        )),
    }
}

fn run(cmd: &mut Command) {
    let shown = format!("{cmd:?}");
    match cmd.output() {
        Ok(o) if o.status.success() => {}
        Ok(o) => fail(&format!("`{shown}` failed:\n{}", String::from_utf8_lossy(&o.stderr))),
        Err(e) => fail(&format!("cannot run `{shown}`: {e}")),
    }
}

/// Links libtapasco's archive through a relocatable object with only `tapasco_*` global.
fn link_archive(archive: &Path, out: &Path) {
    let all = out.join("tapasco_all.o");
    let local = out.join("tapasco_local.o");
    let lib = out.join("libtapasco_localized.a");
    let _ = std::fs::remove_file(&lib);
    run(Command::new("ld").arg("-r").arg("--whole-archive").arg(archive).arg("-o").arg(&all));
    // `DW.ref.*` stay global: they name COMDAT groups (the personality routine's
    // pointer) that the final link merges with this crate's; made local, the discarded
    // copy's relocations would dangle. The bitcode Rust embeds for LTO (`.llvmbc`,
    // `.llvmcmd`) is dropped: the link does not need it, and `ar`'s LLVM plugin may not
    // read another LLVM's bitcode.
    run(Command::new("objcopy")
        .args(["--wildcard", "--keep-global-symbol=tapasco_*", "--keep-global-symbol=DW.ref.*"])
        .args(["--remove-section=.llvmbc", "--remove-section=.llvmcmd"])
        .arg(&all)
        .arg(&local));
    run(Command::new("ar").arg("crs").arg(&lib).arg(&local));
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=tapasco_localized");
    // What libtapasco's own CMake links it with (the CMakeLists.txt of libtapasco, in TaPaSCo's repository).
    for l in ["util", "dl", "rt", "pthread", "m"] {
        println!("cargo:rustc-link-lib=dylib={l}");
    }
}

pub fn main() {
    println!("cargo:rerun-if-env-changed=TAPASCO_PREFIX");
    println!("cargo:rerun-if-env-changed=TAPASCO_WORK_DIR");
    println!("cargo:rerun-if-env-changed=LIBCLANG_PATH");
    let root = prefix();
    let header = root.join(HEADER);
    println!("cargo:rerun-if-changed={}", header.display());
    if env::var_os("LIBCLANG_PATH").is_none() && Path::new(DEFAULT_LIBCLANG).is_dir() {
        env::set_var("LIBCLANG_PATH", DEFAULT_LIBCLANG);
    }
    let bindings = bindgen::Builder::default()
        .header(header.display().to_string())
        .clang_args(["-x", "c", "-std=gnu11"])
        .allowlist_function(FUNCTIONS.join("|"))
        .allowlist_type("tlkm_access")
        .prepend_enum_name(false)
        .layout_tests(false)
        .generate_comments(false)
        .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
        .generate()
        .unwrap_or_else(|e| fail(&format!("bindgen failed on {}: {e}", header.display())));
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    let rs = out.join("tapasco_sys.rs");
    bindings.write_to_file(&rs).unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", rs.display())));

    let libdirs = [root.join("lib"), root.join("lib64")];
    if let Some(a) = libdirs.iter().map(|d| d.join("libtapasco.a")).find(|a| a.is_file()) {
        println!("cargo:rerun-if-changed={}", a.display());
        link_archive(&a, &out);
    } else if let Some(d) = libdirs.iter().find(|d| d.join("libtapasco.so").is_file()) {
        println!("cargo:rustc-link-search=native={}", d.display());
        println!("cargo:rustc-link-lib=dylib=tapasco");
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", d.display());
    } else {
        fail(&format!("{} has no lib/libtapasco.a (nor lib64/, nor libtapasco.so)", root.display()));
    }
}
