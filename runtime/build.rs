//! Compiles `src/entry.c`, the variadic half of the `__tessera_offload` entry point.
//!
//! With cargo feature `xrt` it also generates the bindings of XRT's native C API
//! (`$OUT_DIR/xrt_sys.rs`, read by `src/xrt/ffi.rs`) from the headers of the XRT
//! installation named by `XILINX_XRT`, and links `libxrt_coreutil` from it. With
//! feature `tapasco` it does the same for TaPaSCo's C API (`build/tapasco.rs`).

fn main() {
    println!("cargo:rerun-if-changed=src/entry.c");
    cc::Build::new().file("src/entry.c").warnings(true).extra_warnings(true).compile("tessera_entry");
    #[cfg(feature = "xrt")]
    xrt::main();
    #[cfg(feature = "tapasco")]
    tapasco::main();
}

// Feature `tapasco`: bindings of TaPaSCo's C API and the link of libtapasco.
#[cfg(feature = "tapasco")]
#[path = "build/tapasco.rs"]
mod tapasco;

#[cfg(feature = "xrt")]
mod xrt {
    use std::env;
    use std::path::{Path, PathBuf};

    /// The C functions the backend calls; nothing else is bound.
    const FUNCTIONS: &[&str] = &[
        "xrtDeviceOpen",
        "xrtDeviceClose",
        "xrtDeviceLoadXclbinFile",
        "xrtDeviceGetXclbinUUID",
        "xrtPLKernelOpen",
        "xrtKernelClose",
        "xrtKernelArgGroupId",
        "xrtRunOpen",
        "xrtRunSetArg",
        "xrtRunStart",
        "xrtRunWait",
        "xrtRunWaitFor",
        "xrtRunClose",
        "xrtBOAllocUserPtr",
        "xrtBOAlloc",
        "xrtBOSubAlloc",
        "xrtBOFree",
        "xrtBOSync",
        "xrtBOWrite",
        "xrtBORead",
    ];

    /// Headers bound, relative to `$XILINX_XRT/include` (C mode).
    const HEADERS: &[&str] = &["xrt/xrt_device.h", "xrt/xrt_kernel.h", "xrt/xrt_bo.h"];

    /// libclang used by bindgen when `LIBCLANG_PATH` is unset (Debian's clang-19).
    const DEFAULT_LIBCLANG: &str = "/usr/lib/llvm-19/lib";

    fn fail(msg: &str) -> ! {
        eprintln!("error: tessera-rt feature `xrt`: {msg}");
        std::process::exit(1);
    }

    pub fn main() {
        println!("cargo:rerun-if-env-changed=XILINX_XRT");
        println!("cargo:rerun-if-env-changed=LIBCLANG_PATH");
        let root = match env::var_os("XILINX_XRT").filter(|v| !v.is_empty()) {
            Some(r) => PathBuf::from(r),
            None => fail(
                "XILINX_XRT is not set. Install XRT 2.x and run `source /opt/xilinx/xrt/setup.sh` \
                 (it sets XILINX_XRT=/opt/xilinx/xrt), or build without `--features xrt`.",
            ),
        };
        let include = root.join("include");
        let lib = root.join("lib");
        for h in HEADERS {
            if !include.join(h).is_file() {
                fail(&format!(
                    "XILINX_XRT={} has no {} (expected an XRT 2.x installation; run `source /opt/xilinx/xrt/setup.sh`)",
                    root.display(),
                    include.join(h).display()
                ));
            }
        }
        if env::var_os("LIBCLANG_PATH").is_none() && Path::new(DEFAULT_LIBCLANG).is_dir() {
            // Deterministic choice of libclang (bindgen would otherwise pick any).
            env::set_var("LIBCLANG_PATH", DEFAULT_LIBCLANG);
        }
        let wrapper: String = HEADERS.iter().map(|h| format!("#include <{h}>\n")).collect();
        let bindings = bindgen::Builder::default()
            .header_contents("tessera_xrt.h", &wrapper)
            .clang_args(["-x", "c", "-std=gnu11"])
            .clang_arg(format!("-I{}", include.display()))
            .allowlist_function(FUNCTIONS.join("|"))
            .allowlist_var("XCL_BO_FLAGS_NONE")
            .allowlist_type("ert_cmd_state|xclBOSyncDirection")
            .prepend_enum_name(false)
            .layout_tests(false)
            .generate_comments(false)
            .parse_callbacks(Box::new(bindgen::CargoCallbacks::new()))
            .generate()
            .unwrap_or_else(|e| fail(&format!("bindgen failed on {}: {e}", include.display())));
        let out = PathBuf::from(env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("xrt_sys.rs");
        bindings.write_to_file(&out).unwrap_or_else(|e| fail(&format!("cannot write {}: {e}", out.display())));
        println!("cargo:rustc-link-search=native={}", lib.display());
        println!("cargo:rustc-link-lib=dylib=xrt_coreutil");
        // Programs find libxrt_coreutil without LD_LIBRARY_PATH.
        println!("cargo:rustc-link-arg=-Wl,-rpath,{}", lib.display());
    }
}
