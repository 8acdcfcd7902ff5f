//! `make install` and the CMake package: installs the built tree (`make install-only
//! PREFIX=<tmp>`, which needs `make build` first, as every test here), checks the
//! installed files, moves the tree elsewhere (it must be relocatable), then configures
//! and builds a small consumer project with `find_package(Tessera CONFIG REQUIRED)` and
//! `tessera_add_fpga_executable()`, runs the program on the emulated device and compares
//! its output with plain `clang-19 -fopenmp`'s. Also `<prefix>/bin/tessera cc` used
//! directly (the `CC="tessera cc"` way) and the `<target>_bitstream` target in dry-run
//! mode.
//!
//! Run: `cargo test --release -p tessera-tests --test install`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tessera_tests::repo_root;

/// A 1D stencil with a target region the emulated device runs, printed exactly.
const APP: &str = r#"#include <stdio.h>
#include <stdlib.h>

int main(void) {
  int n = 257;
  float *A = malloc(n * sizeof *A), *B = malloc(n * sizeof *B);
  unsigned s = 12345u;
  for (int i = 0; i < n; i++) {
    s ^= s << 13; s ^= s >> 17; s ^= s << 5;
    A[i] = (float)(int)s / 2147483648.0f;
    B[i] = -1.0f;
  }
#pragma omp target teams distribute parallel for map(to: A[0:n]) map(from: B[0:n])
  for (int i = 1; i < n - 1; i++)
    B[i] = SCALE * A[i - 1] + 0.5f * A[i] + SCALE * A[i + 1];
  printf("B:");
  for (int i = 1; i < n - 1; i++) printf(" %a", (double)B[i]);
  printf("\n");
  free(A);
  free(B);
  return 0;
}
"#;

const CMAKELISTS: &str = r#"cmake_minimum_required(VERSION 3.20)
project(tessera_consumer C)
find_package(Tessera 0.1 CONFIG REQUIRED)
tessera_add_fpga_executable(app SOURCES app.c MODE dataflow
                            PLATFORM xilinx_u250_gen3x16_xdma_4_1_202210_1 BITSTREAM_TARGET sw_emu)
target_compile_definitions(app PRIVATE SCALE=0.25f)
target_link_libraries(app PRIVATE m)
if(NOT TARGET Tessera::runtime)
  message(FATAL_ERROR "no Tessera::runtime")
endif()
get_target_property(_inc Tessera::runtime INTERFACE_INCLUDE_DIRECTORIES)
get_target_property(_kdir app TESSERA_KERNEL_DIR)
file(WRITE "${CMAKE_BINARY_DIR}/tessera-vars.txt"
     "prefix=${TESSERA_PREFIX}\nversion=${Tessera_VERSION}\ninclude=${_inc}\nkernels=${app_KERNEL_DIR}\nprop=${_kdir}\n")
file(GENERATE OUTPUT "${CMAKE_BINARY_DIR}/tessera-exe.txt" CONTENT "$<TARGET_FILE:app>")
"#;

fn run(cmd: &mut Command, what: &str) -> Output {
    // cargo test puts target/release on LD_LIBRARY_PATH, which would win over the
    // programs' RUNPATH (<prefix>/lib): the installed tree must stand on its own.
    tessera_tests::run(
        cmd.env_remove("LD_LIBRARY_PATH")
            .env_remove("TESSERA_PLUGIN")
            .env_remove("TESSERA_RUNTIME_DIR")
            .env_remove("OMP_TARGET_OFFLOAD")
            .env_remove("MAKEFLAGS")
            .env_remove("MFLAGS")
            .env_remove("MAKELEVEL"),
        what,
    )
}

/// `[workspace.package] version` of the workspace Cargo.toml.
fn workspace_version() -> String {
    let toml = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let section = toml.split("[workspace.package]").nth(1).expect("[workspace.package]");
    let line = section.lines().find(|l| l.trim_start().starts_with("version")).expect("version");
    line.split('"').nth(1).expect("quoted version").to_string()
}

/// Runs `bin` on the emulated device; returns stdout and the report.
fn run_on_emu(bin: &Path, work: &Path, tag: &str) -> (String, String) {
    let report = work.join(format!("{tag}.report.jsonl"));
    let out = run(
        Command::new(bin)
            .env("TESSERA_DEVICE", "emu")
            .env("TESSERA_REPORT", &report)
            .env("TESSERA_CACHE_DIR", work.join("emu-cache")),
        &format!("{tag} on the emulated device"),
    );
    let report = std::fs::read_to_string(&report).unwrap_or_else(|e| panic!("{tag}: no report: {e}"));
    (String::from_utf8_lossy(&out.stdout).into_owned(), report)
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(files_under(&p));
        } else {
            out.push(p);
        }
    }
    out
}

#[test]
fn installed_tree_builds_a_cmake_consumer_after_moving() {
    let root = repo_root();
    let tmp = tempfile::tempdir().expect("temp dir");
    let work = tmp.path();
    let staged = work.join("stage/prefix");

    // Install what `make build` built, without rebuilding.
    run(
        Command::new("make").arg("-C").arg(&root).arg("install-only").arg(format!("PREFIX={}", staged.display())),
        "make install-only",
    );
    let version = workspace_version();
    for f in [
        "bin/tessera",
        "lib/libtessera_rt.so",
        "lib/tessera_plugin.so",
        "include/tessera/tessera_rt.h",
        "include/tessera/tessera_hls.h",
        "include/tessera/tessera_wide.h",
        "lib/cmake/Tessera/TesseraConfig.cmake",
        "lib/cmake/Tessera/TesseraConfigVersion.cmake",
        "lib/cmake/Tessera/TesseraBitstream.cmake",
    ] {
        assert!(staged.join(f).is_file(), "{f} was not installed");
    }
    let version_file = std::fs::read_to_string(staged.join("lib/cmake/Tessera/TesseraConfigVersion.cmake")).unwrap();
    assert!(version_file.contains(&format!("set(PACKAGE_VERSION \"{version}\")")), "{version_file}");

    // Relocatable: no installed CMake file names the prefix, and the tree moves.
    let staged_str = staged.display().to_string();
    for f in files_under(&staged.join("lib/cmake")) {
        let text = std::fs::read_to_string(&f).unwrap();
        assert!(!text.contains(&staged_str), "{} names the install prefix", f.display());
    }
    // Xilinx's headers (make hls-headers, run by make build) go to share/tessera; a
    // marker file added there must reach the emulated device's compile (the runtime
    // copies the vendor headers it found into its cache), which shows that the installed
    // runtime looked beside itself rather than in the build tree.
    let vendor = staged.join("share/tessera/hls-headers");
    assert!(vendor.join("ap_int.h").is_file(), "the vendor headers were not installed");
    std::fs::write(vendor.join("tessera_install_marker.h"), "/* installed tree */\n").unwrap();

    let prefix = work.join("moved/tessera");
    std::fs::create_dir_all(prefix.parent().unwrap()).unwrap();
    std::fs::rename(&staged, &prefix).unwrap();
    std::fs::remove_dir_all(work.join("stage")).unwrap();

    // The reference: plain clang-19 -fopenmp (the CPU).
    let src_dir = work.join("consumer");
    std::fs::create_dir_all(&src_dir).unwrap();
    std::fs::write(src_dir.join("app.c"), APP).unwrap();
    std::fs::write(src_dir.join("CMakeLists.txt"), CMAKELISTS).unwrap();
    let reference = work.join("reference");
    run(
        Command::new("clang-19").args(["-fopenmp", "-O2", "-DSCALE=0.25f", "-o"]).arg(&reference).arg(src_dir.join("app.c")),
        "clang-19 reference build",
    );
    let expected = String::from_utf8_lossy(&run(&mut Command::new(&reference), "reference run").stdout).into_owned();
    assert!(expected.starts_with("B: ") && expected.lines().count() == 1, "{expected}");

    // The consumer project against the moved tree (the bitstream target in dry-run mode).
    let build = work.join("consumer-build");
    run(
        Command::new("cmake")
            .arg("-S")
            .arg(&src_dir)
            .arg("-B")
            .arg(&build)
            .args(["-G", "Unix Makefiles", "-DTESSERA_BITSTREAM_DRY_RUN=ON"])
            .arg(format!("-DCMAKE_PREFIX_PATH={}", prefix.display())),
        "cmake configure",
    );
    let vars = std::fs::read_to_string(build.join("tessera-vars.txt")).unwrap();
    let kernel_dir = build.join("app.tessera");
    for want in [
        format!("prefix={}", prefix.display()),
        format!("version={version}"),
        format!("include={}", prefix.join("include/tessera").display()),
        format!("kernels={}", kernel_dir.display()),
        format!("prop={}", kernel_dir.display()),
    ] {
        assert!(vars.lines().any(|l| l == want), "want `{want}` in\n{vars}");
    }
    let cache = std::fs::read_to_string(build.join("CMakeCache.txt")).unwrap();
    assert!(cache.contains(&format!("TESSERA_EXECUTABLE:FILEPATH={}", prefix.join("bin/tessera").display())), "{cache}");

    let made = run(Command::new("cmake").arg("--build").arg(&build), "cmake --build");
    let log = String::from_utf8_lossy(&made.stdout);
    assert!(log.contains("tessera cc: app.c"), "{log}");
    let app = build.join("app");
    assert_eq!(std::fs::read_to_string(build.join("tessera-exe.txt")).unwrap(), app.display().to_string());
    assert!(app.is_file(), "no executable; build log:\n{log}");
    // One kernel per offloaded region in the kernel directory.
    let kernels: Vec<PathBuf> =
        files_under(&kernel_dir).into_iter().filter(|p| p.to_string_lossy().ends_with(".manifest.json")).collect();
    assert_eq!(kernels.len(), 1, "{kernels:?}");

    let (stdout, report) = run_on_emu(&app, work, "app");
    assert_eq!(stdout, expected, "the CMake-built program differs from the CPU");
    assert!(report.contains("\"device\":\"emu\""), "the region did not run on the emulated device:\n{report}");

    let cached: Vec<PathBuf> = files_under(&work.join("emu-cache"))
        .into_iter()
        .filter(|p| p.file_name().is_some_and(|n| n == "tessera_install_marker.h"))
        .collect();
    assert!(
        !cached.is_empty(),
        "the emulated device did not use <prefix>/share/tessera/hls-headers; its cache:\n{:?}",
        files_under(&work.join("emu-cache"))
    );

    // A rebuild with nothing changed does nothing.
    let again = run(Command::new("cmake").arg("--build").arg(&build), "cmake --build (again)");
    let again = String::from_utf8_lossy(&again.stdout);
    assert!(!again.contains("tessera cc: app.c") && !again.contains("Linking"), "{again}");

    // <target>_bitstream, not built by default, runs tessera bitstream on the kernel
    // directory (dry run: the v++ commands and the config of the link of app.xclbin, the
    // program's xclbin, named after the executable; no Vitis needed).
    let cfg = build.join("bitstreams/sw_emu/app.cfg");
    assert!(!cfg.exists(), "app_bitstream is built by default");
    let out = run(Command::new("cmake").arg("--build").arg(&build).args(["--target", "app_bitstream"]), "app_bitstream");
    assert!(cfg.is_file(), "tessera bitstream --dry-run wrote no connectivity config for the program");
    let configs = files_under(&build.join("bitstreams/sw_emu"))
        .into_iter()
        .filter(|p| p.to_string_lossy().ends_with(".cfg"))
        .count();
    assert_eq!(configs, 1, "one link for the program");
    assert_eq!(std::fs::read_to_string(&cfg).unwrap().matches("\nnk=").count(), 1);
    let out = String::from_utf8_lossy(&out.stdout);
    assert!(out.contains(&format!(" -o {}/app.xclbin ", build.join("bitstreams/sw_emu").display())), "{out}");

    // The installed driver used directly, as CC="tessera cc" does: the plugin and runtime
    // come from <prefix>/lib (the fallback, bin/ itself, holds neither).
    let direct = work.join("direct");
    run(
        Command::new(prefix.join("bin/tessera"))
            .args(["cc", "-O2", "-DSCALE=0.25f", "-o"])
            .arg(&direct)
            .arg(src_dir.join("app.c")),
        "<prefix>/bin/tessera cc",
    );
    let (stdout, report) = run_on_emu(&direct, work, "direct");
    assert_eq!(stdout, expected, "the tessera cc-built program differs from the CPU");
    assert!(report.contains("\"device\":\"emu\""), "{report}");
}
