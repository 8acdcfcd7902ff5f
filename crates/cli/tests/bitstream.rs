//! `tessera bitstream` on real `<program>.tessera` directories written by `tessera cc`.
//!
//! There is no Vitis here: the dry run is checked command by command, the missing-Vitis
//! and missing-platform errors are checked verbatim, and the real run goes through stub
//! `v++` / `emconfigutil` scripts that log their arguments and create their outputs.
//! Needs `make build` (clang-19 and `tessera_plugin.so` next to the `tessera` binary).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");
const PLATFORM: &str = "xilinx_u250_gen3x16_xdma_4_1_202210_1";

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `tessera cc -O2 tests/programs/<name>.c -o <dir>/<exe>`; returns `<dir>/<exe>.tessera`.
fn compile(name: &str, dir: &Path, exe: &str) -> PathBuf {
    let out = Command::new(TESSERA)
        .args(["cc", "-O2"])
        .arg(repo().join(format!("tests/programs/{name}.c")))
        .arg("-o")
        .arg(dir.join(exe))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "tessera cc failed (run `make build` first):\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let kdir = dir.join(format!("{exe}.tessera"));
    assert!(kdir.is_dir(), "tessera cc wrote no {}", kdir.display());
    kdir
}

/// `tessera bitstream <args>` in `cwd`, with `PATH` and `XILINX_VITIS` as given
/// (`None`: unset).
fn bitstream(cwd: &Path, args: &[&str], path: &str, xilinx_vitis: Option<&Path>) -> Output {
    let mut cmd = Command::new(TESSERA);
    cmd.arg("bitstream").args(args).current_dir(cwd).env("PATH", path).env_remove("PLATFORM_REPO_PATHS");
    match xilinx_vitis {
        Some(v) => cmd.env("XILINX_VITIS", v),
        None => cmd.env_remove("XILINX_VITIS"),
    };
    cmd.output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The one kernel of a `tessera cc` output directory (names carry hashes of the source
/// path and the region, so they are read, not spelled).
fn kernel(kdir: &Path) -> String {
    let mut names: Vec<String> = std::fs::read_dir(kdir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().into_string().unwrap().strip_suffix(".manifest.json").map(String::from))
        .collect();
    assert_eq!(names.len(), 1, "{}: {names:?}", kdir.display());
    names.pop().unwrap()
}

#[test]
fn dry_run_prints_the_commands_and_writes_the_config() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let k = kernel(&compile("stencil2d", t, "s"));
    assert!(k.starts_with("tessera_stencil2d_") && k.contains("_l14_r0_"), "{k}");
    // No Vitis anywhere on PATH: a dry run does not need it.
    let out =
        bitstream(t, &["s.tessera", "--platform", PLATFORM, "--dry-run", "--clock-mhz", "300"], "/nonexistent", None);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));

    let b = format!("bitstreams/hw/{k}.build");
    let compile = format!(
        "v++ -c -t hw --platform {PLATFORM} --save-temps --temp_dir {b}/tmp --log_dir {b}/logs \
         --report_dir {b}/reports --report_level 1 -k {k} -I bitstreams/include -D TESSERA_VITIS=1 \
         --hls.clock 300000000:{k} -o bitstreams/hw/{k}.xo s.tessera/{k}.cpp"
    );
    // One link for the program `s` (its kernel directory s.tessera), named after it.
    let l = "bitstreams/hw/s.link";
    let link = format!(
        "v++ -l -t hw --platform {PLATFORM} --save-temps --temp_dir {l}/tmp --log_dir {l}/logs \
         --report_dir {l}/reports --report_level 1 --config bitstreams/hw/s.cfg --kernel_frequency 300 \
         -o bitstreams/hw/s.xclbin bitstreams/hw/{k}.xo"
    );
    let lines: Vec<&str> = stdout.lines().collect();
    let commands: Vec<&str> = lines.iter().copied().filter(|l| !l.starts_with('#')).collect();
    // The build record is removed before the build and written after it.
    let record = "bitstreams/hw/s.xclbin.json";
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.join(format!("s.tessera/{k}.manifest.json"))).unwrap()).unwrap();
    let hash = manifest["hash"].as_str().unwrap();
    assert_eq!(hash.len(), 64);
    assert_eq!(commands.len(), 4, "{stdout}");
    assert_eq!(commands[..3], [format!("rm -f {record}").as_str(), compile.as_str(), link.as_str()], "{stdout}");
    let printf = commands[3];
    assert!(printf.starts_with("printf '%s\\n' '{") && printf.ends_with(&format!("}}' > {record}")), "{printf}");
    let json = &printf["printf '%s\\n' '".len()..printf.len() - format!("' > {record}").len()];
    let r: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!((r["version"].as_u64(), r["target"].as_str()), (Some(2), Some("hw")));
    assert_eq!(r["kernels"].as_array().unwrap().len(), 1);
    let e = &r["kernels"][0];
    assert_eq!((e["kernel"].as_str(), e["hash"].as_str()), (Some(k.as_str()), Some(hash)));
    assert_eq!(r["platform"], PLATFORM);
    assert_eq!(e["manifest"], format!("s.tessera/{k}.manifest.json"));
    assert!(stdout.contains("#   memory ports: A -> DDR[0], X -> DDR[0]\n"), "{stdout}");
    assert!(stdout.contains("# wrote bitstreams/hw/s.cfg (the connectivity of the link)\n"), "{stdout}");
    let bitdir = t.join("bitstreams/hw").canonicalize().unwrap();
    assert!(stdout.contains(&format!("#   export TESSERA_BITSTREAM_DIR={}\n", bitdir.display())), "{stdout}");

    let cfg = std::fs::read_to_string(t.join("bitstreams/hw/s.cfg")).unwrap();
    let directives: Vec<&str> = cfg.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(
        directives,
        ["[connectivity]", &format!("nk={k}:1:{k}_1"), &format!("sp={k}_1.A:DDR[0]"), &format!("sp={k}_1.X:DDR[0]")]
    );
    // m, n and fac are scalars: no sp=.
    assert!(!cfg.contains(".m:") && !cfg.contains(".n:") && !cfg.contains(".fac:"), "{cfg}");
    assert!(!t.join(format!("bitstreams/hw/{k}.cfg")).exists(), "no per-kernel link");
    for h in ["tessera_hls.h", "tessera_wide.h", "tessera_emu_abi.h"] {
        let written = std::fs::read_to_string(t.join("bitstreams/include").join(h)).unwrap();
        assert_eq!(written, std::fs::read_to_string(repo().join("host/include").join(h)).unwrap(), "{h}");
    }
    assert!(!t.join("bitstreams/hw/s.xclbin").exists());
}

/// A time loop with two target regions (tests/programs/data_time_loop.c, A -> B and
/// B -> A): two kernels, one `v++ -c` each, ONE `v++ -l` into the program's xclbin
/// with an `nk=` per kernel and an `sp=` per memory port of each, and one record with
/// both kernels' hashes.
#[test]
fn dry_run_links_the_kernels_of_a_time_loop_into_one_xclbin() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let kdir = compile("data_time_loop", t, "jacobi");
    let out = bitstream(
        t,
        &["jacobi.tessera", "--platform", PLATFORM, "--dry-run", "--memory", "B=DDR[1]"],
        "/nonexistent",
        None,
    );
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let mut kernels: Vec<(String, String)> = std::fs::read_dir(&kdir)
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            let k = name.strip_suffix(".manifest.json")?.to_string();
            let m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(kdir.join(&name)).unwrap()).unwrap();
            Some((k, m["hash"].as_str().unwrap().to_string()))
        })
        .collect();
    kernels.sort();
    assert_eq!(kernels.len(), 2, "{kernels:?}");
    let commands: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('#')).collect();
    let compiles: Vec<&str> = commands.iter().copied().filter(|c| c.starts_with("v++ -c ")).collect();
    let links: Vec<&str> = commands.iter().copied().filter(|c| c.starts_with("v++ -l ")).collect();
    assert_eq!((compiles.len(), links.len()), (2, 1), "{stdout}");
    let xos: String = kernels.iter().map(|(k, _)| format!(" bitstreams/hw/{k}.xo")).collect();
    assert!(links[0].ends_with(&format!(" --config bitstreams/hw/jacobi.cfg -o bitstreams/hw/jacobi.xclbin{xos}")), "{}", links[0]);
    let cfg = std::fs::read_to_string(t.join("bitstreams/hw/jacobi.cfg")).unwrap();
    let directives: Vec<&str> = cfg.lines().filter(|l| !l.starts_with('#')).collect();
    let (a, b) = (&kernels[0].0, &kernels[1].0);
    assert_eq!(
        directives,
        [
            "[connectivity]".to_string(),
            format!("nk={a}:1:{a}_1"),
            format!("nk={b}:1:{b}_1"),
            format!("sp={a}_1.B:DDR[1]"),
            format!("sp={a}_1.A:DDR[0]"),
            format!("sp={b}_1.B:DDR[1]"),
            format!("sp={b}_1.A:DDR[0]"),
        ]
    );
    let printf = commands.iter().find(|c| c.starts_with("printf ")).unwrap();
    assert!(printf.ends_with("> bitstreams/hw/jacobi.xclbin.json"), "{printf}");
    for (k, hash) in &kernels {
        assert!(compiles.iter().any(|c| c.contains(&format!(" -k {k} "))), "{stdout}");
        assert!(printf.contains(&format!("{{\"kernel\":\"{k}\",\"hash\":\"{hash}\"")), "{printf}");
    }
    assert_eq!(commands.first(), Some(&"rm -f bitstreams/hw/jacobi.xclbin.json"));
}

/// A delinearised region with launch conditions has two kernels: the tiled kernel of
/// its view and the baseline kernel of the region as written (`<kernel>_linear`),
/// which runs when a condition fails. Both are linked into the program's xclbin, each
/// with a compute unit and its own hash in the build record.
#[test]
fn dry_run_builds_the_fallback_kernel_of_a_guarded_region() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let kdir = compile("flat_guard", t, "g");
    let out = bitstream(t, &["g.tessera", "--platform", PLATFORM, "--dry-run"], "/nonexistent", None);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let links: Vec<&str> = stdout.lines().filter(|l| l.starts_with("v++ -l ")).collect();
    assert_eq!(links.len(), 1, "{stdout}");
    let record = stdout
        .lines()
        .find(|l| l.starts_with("printf") && l.ends_with("> bitstreams/hw/g.xclbin.json"))
        .unwrap_or_else(|| panic!("no build record: {stdout}"));
    let cfg = std::fs::read_to_string(t.join("bitstreams/hw/g.cfg")).unwrap();
    let mut manifests = 0;
    for e in std::fs::read_dir(&kdir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        let Some(k) = name.strip_suffix(".manifest.json") else { continue };
        manifests += 1;
        let m: tessera_ir::manifest::Manifest =
            serde_json::from_str(&std::fs::read_to_string(kdir.join(&name)).unwrap()).unwrap();
        let fb = m.fallback().expect("the region has launch conditions");
        assert_eq!(fb.kernel.as_deref(), Some(format!("{k}_linear").as_str()));
        assert_eq!(fb.hash, fb.content_hash());
        for (kernel, hash) in [(k.to_string(), m.hash.clone()), (format!("{k}_linear"), fb.hash.clone())] {
            assert!(stdout.contains(&format!("-k {kernel} ")), "{kernel}: {stdout}");
            assert!(stdout.contains(&format!("g.tessera/{kernel}.cpp")), "{stdout}");
            assert!(links[0].contains(&format!(" bitstreams/hw/{kernel}.xo")), "{kernel}: {}", links[0]);
            assert!(cfg.contains(&format!("\nnk={kernel}:1:{kernel}_1\n")), "{cfg}");
            assert!(record.contains(&format!("{{\"kernel\":\"{kernel}\",\"hash\":\"{hash}\"")), "{record}");
        }
    }
    assert_eq!(manifests, 2);
    assert!(links[0].contains(" -o bitstreams/hw/g.xclbin "), "{}", links[0]);
}

#[test]
fn dry_run_for_emulation_with_banks_and_a_manifest_file() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let k = kernel(&compile("stencil2d", t, "s"));
    let manifest = format!("s.tessera/{k}.manifest.json");
    let args = [
        manifest.as_str(),
        "--platform",
        "/p/vcu118.xpfm",
        "-t",
        "hw_emu",
        "--dry-run",
        "-o",
        "out",
        "--memory",
        "MIG[0]",
        "--memory",
        "X=MIG[1]",
        "--clock-mhz",
        "250",
        "--clock-kind",
        "fixed",
    ];
    let out = bitstream(t, &args, "/nonexistent", None);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let commands: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(commands.len(), 5, "{stdout}");
    assert_eq!(commands[0], "emconfigutil --platform /p/vcu118.xpfm --od out/hw_emu");
    // A manifest file is a kernel of the program whose directory holds it (s.tessera).
    assert_eq!(commands[1], "rm -f out/hw_emu/s.xclbin.json");
    assert!(commands[2].starts_with("v++ -c -t hw_emu --platform /p/vcu118.xpfm "), "{stdout}");
    assert!(commands[2].contains(&format!(" --hls.clock 250000000:{k} ")), "{stdout}");
    assert!(commands[3].starts_with("v++ -l -t hw_emu ") && commands[3].ends_with(&format!(" -o out/hw_emu/s.xclbin out/hw_emu/{k}.xo")), "{stdout}");
    // Fixed clocks are set per compute unit in the link's config, not on its command line.
    assert!(!commands[3].contains("--kernel_frequency") && !commands[3].contains("--clock.freqHz"), "{stdout}");
    assert!(commands[4].contains("\"target\":\"hw_emu\"") && commands[4].contains("\"platform\":\"/p/vcu118.xpfm\""), "{stdout}");
    assert!(stdout.contains("#   export XCL_EMULATION_MODE=hw_emu\n"), "{stdout}");
    let cfg = std::fs::read_to_string(t.join("out/hw_emu/s.cfg")).unwrap();
    assert!(
        cfg.ends_with(&format!("sp={k}_1.A:MIG[0]\nsp={k}_1.X:MIG[1]\n[clock]\nfreqHz=250000000:{k}_1\n")),
        "{cfg}"
    );

    // --per-kernel: the kernel's own xclbin, clock on the link's command line as before.
    let mut per_kernel = args.to_vec();
    per_kernel.push("--per-kernel");
    let out = bitstream(t, &per_kernel, "/nonexistent", None);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let commands: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('#')).collect();
    assert_eq!(commands[1], format!("rm -f out/hw_emu/{k}.xclbin.json"));
    assert!(commands[3].contains(&format!(" --clock.freqHz 250000000:{k}_1 ")), "{stdout}");
    assert!(commands[3].contains(&format!(" --config out/hw_emu/{k}.cfg ")), "{stdout}");
    assert!(commands[3].ends_with(&format!(" -o out/hw_emu/{k}.xclbin out/hw_emu/{k}.xo")), "{stdout}");
    assert!(commands[4].ends_with(&format!("> out/hw_emu/{k}.xclbin.json")), "{stdout}");
    let cfg = std::fs::read_to_string(t.join(format!("out/hw_emu/{k}.cfg"))).unwrap();
    assert!(cfg.ends_with(&format!("sp={k}_1.A:MIG[0]\nsp={k}_1.X:MIG[1]\n")), "{cfg}");
    // --name names the program's xclbin; it makes no sense with --per-kernel.
    let out = bitstream(t, &[manifest.as_str(), "--platform", "p", "--dry-run", "--name", "app", "--per-kernel"], "/nonexistent", None);
    assert!(!out.status.success());

    // A bank for a port no kernel has is an error, not silently ignored.
    let out = bitstream(
        t,
        &[manifest.as_str(), "--platform", "p.xpfm", "--dry-run", "--memory", "Q=DDR[1]"],
        "/nonexistent",
        None,
    );
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains(&format!("no kernel has a memory port `Q` (memory ports: {k}.A, {k}.X)")),
        "{}",
        text(&out.stderr)
    );
    let out = bitstream(
        t,
        &[manifest.as_str(), "--platform", "p.xpfm", "--dry-run", "--memory", "DDR 1"],
        "/nonexistent",
        None,
    );
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("memory bank `DDR 1` is not of the form"), "{}", text(&out.stderr));
}

#[test]
fn without_vitis_it_stops_and_says_how_to_set_it_up() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    compile("stencil2d", t, "s");
    let empty = t.join("empty-bin");
    std::fs::create_dir(&empty).unwrap();
    let out = bitstream(t, &["s.tessera", "--platform", PLATFORM], empty.to_str().unwrap(), None);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert_eq!(
        stderr,
        "tessera bitstream: error: AMD Vitis is not set up in this shell:\n  \
         - `v++` (the Vitis compiler) is not on PATH\n  \
         - XILINX_VITIS is not set\n\
         `tessera bitstream` runs AMD Vitis 2023.x/2024.x (v++, emconfigutil), which is not part of Tessera.\n\
         Install Vitis (and XRT to run the bitstreams), then set up the shell and run this command again:\n    \
         source <Vitis install dir>/settings64.sh    # e.g. /tools/Xilinx/Vitis/2023.2/settings64.sh\n    \
         source /opt/xilinx/xrt/setup.sh\n\
         With --dry-run the commands are only printed (and the connectivity configs written).\n"
    );
    assert!(!t.join("bitstreams").exists(), "nothing is written when Vitis is missing");

    // Emulation targets also need emconfigutil; v++ alone without XILINX_VITIS is named too.
    let stub = t.join("stub");
    std::fs::create_dir(&stub).unwrap();
    write_script(&stub.join("v++"), "exit 0\n");
    let out = bitstream(t, &["s.tessera", "--platform", PLATFORM, "-t", "sw_emu"], stub.to_str().unwrap(), None);
    let stderr = text(&out.stderr);
    assert!(!out.status.success());
    assert!(!stderr.contains("`v++`"), "{stderr}");
    assert!(
        stderr.contains("  - XILINX_VITIS is not set\n  - `emconfigutil` (needed for sw_emu) is not on PATH\n"),
        "{stderr}"
    );
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Stub Vitis tools in `<t>/vitis/bin`: each call is appended to `<t>/calls.log`; v++
/// writes its `-o` file, emconfigutil `<--od>/emconfig.json`. `fail_link`: v++ -l fails.
fn stub_vitis(t: &Path, fail_link: bool) -> PathBuf {
    let bin = t.join("vitis/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = t.join("calls.log");
    let fail = if fail_link {
        "[ \"$1\" = -l ] && { echo 'ERROR: [VPL 60-773] stub link failure' >&2; exit 1; }\n"
    } else {
        ""
    };
    write_script(
        &bin.join("v++"),
        &format!(
            "echo \"v++ $*\" >> '{log}'\n{fail}out=\nwhile [ $# -gt 0 ]; do [ \"$1\" = -o ] && out=$2; shift; done\n\
             [ -n \"$out\" ] && echo stub > \"$out\"\nexit 0\n",
            log = log.display()
        ),
    );
    write_script(
        &bin.join("emconfigutil"),
        &format!(
            "echo \"emconfigutil $*\" >> '{log}'\nwhile [ $# -gt 0 ]; do [ \"$1\" = --od ] && od=$2; shift; done\n\
             echo '{{}}' > \"$od/emconfig.json\"\n",
            log = log.display()
        ),
    );
    bin
}

/// Two kernel directories linked into one xclbin (`--name`): a compile per kernel (in
/// parallel), then ONE link over both `.xo`, then the record listing both kernels.
#[test]
fn runs_vitis_for_every_kernel() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let k2 = kernel(&compile("stencil2d", t, "s2"));
    let k1 = kernel(&compile("stencil1d", t, "s1"));
    let bin = stub_vitis(t, false);
    std::fs::write(t.join("u250.xpfm"), "").unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let args = ["s2.tessera", "s1.tessera", "--platform", "u250.xpfm", "-t", "hw_emu", "-j", "2", "-o", "b"];

    // Kernels of two directories: which program is this? The name must be given.
    let out = bitstream(t, &args, &path, Some(&t.join("vitis")));
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("the kernels come from directories of different programs (s2.tessera, s1.tessera)"), "{stderr}");
    assert!(stderr.contains("--name <program>"), "{stderr}");
    assert!(!t.join("calls.log").exists(), "nothing ran");

    let mut named = args.to_vec();
    named.extend(["--name", "both"]);
    let out = bitstream(t, &named, &path, Some(&t.join("vitis")));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let log = std::fs::read_to_string(t.join("calls.log")).unwrap();
    let calls: Vec<&str> = log.lines().collect();
    assert_eq!(calls.len(), 4, "{log}");
    assert_eq!(calls[0], "emconfigutil --platform u250.xpfm --od b/hw_emu");
    let links: Vec<usize> = (0..calls.len()).filter(|&i| calls[i].starts_with("v++ -l")).collect();
    assert_eq!(links, [3], "one link, after both compiles\n{log}");
    assert!(calls[3].contains(" --config b/hw_emu/both.cfg ") && calls[3].contains(" -o b/hw_emu/both.xclbin "), "{log}");
    let cfg = std::fs::read_to_string(t.join("b/hw_emu/both.cfg")).unwrap();
    let record: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.join("b/hw_emu/both.xclbin.json")).unwrap()).unwrap();
    assert_eq!((record["target"].as_str(), record["platform"].as_str()), (Some("hw_emu"), Some("u250.xpfm")));
    assert_eq!(record["kernels"].as_array().unwrap().len(), 2);
    for (i, (k, exe)) in [(&k2, "s2"), (&k1, "s1")].into_iter().enumerate() {
        assert!(calls[1..3].iter().any(|c| c.starts_with("v++ -c") && c.contains(&format!("-k {k} "))), "{k}\n{log}");
        assert!(calls[3].contains(&format!(" b/hw_emu/{k}.xo")), "{k}\n{log}");
        assert!(cfg.contains(&format!("\nnk={k}:1:{k}_1\n")) && cfg.contains(&format!("\nsp={k}_1.")), "{cfg}");
        // Parallel builds keep each kernel's v++ output in its build directory.
        assert!(t.join(format!("b/hw_emu/{k}.build/compile.out")).is_file());
        // Its entry in the build record: the manifest's hash, for the runtime's check.
        let manifest: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(t.join(format!("{exe}.tessera/{k}.manifest.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(record["kernels"][i]["kernel"], k.as_str());
        assert_eq!(record["kernels"][i]["hash"], manifest["hash"]);
        assert!(!t.join(format!("b/hw_emu/{k}.xclbin")).exists());
    }
    assert!(t.join("b/hw_emu/both.xclbin").is_file());
    assert!(stdout.contains("# built b/hw_emu/both.xclbin (2 kernel(s))\n"), "{stdout}");
    // Every command was printed before it ran.
    for c in &calls {
        assert!(stdout.lines().any(|l| l == *c), "{c} not printed:\n{stdout}");
    }
    assert!(t.join("b/hw_emu/emconfig.json").is_file());

    // --per-kernel: a compile and a link per kernel, a record per xclbin.
    std::fs::remove_file(t.join("calls.log")).unwrap();
    let mut per_kernel = args.to_vec();
    per_kernel.push("--per-kernel");
    let out = bitstream(t, &per_kernel, &path, Some(&t.join("vitis")));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let log = std::fs::read_to_string(t.join("calls.log")).unwrap();
    let calls: Vec<&str> = log.lines().collect();
    assert_eq!(calls.len(), 5, "{log}");
    for k in [&k2, &k1] {
        let c = calls.iter().position(|c| c.starts_with("v++ -c") && c.contains(&format!("-k {k} "))).expect(k);
        let l = calls
            .iter()
            .position(|c| c.starts_with("v++ -l") && c.contains(&format!("--config b/hw_emu/{k}.cfg")))
            .expect(k);
        assert!(c < l, "{k}: compile before link\n{log}");
        assert!(t.join(format!("b/hw_emu/{k}.xclbin")).is_file());
        let record: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(t.join(format!("b/hw_emu/{k}.xclbin.json"))).unwrap()).unwrap();
        assert_eq!(record["kernels"].as_array().map(Vec::len), Some(1));
        assert_eq!(record["kernels"][0]["kernel"], k.as_str());
    }
}

#[test]
fn reports_failures_and_missing_platforms() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let k = kernel(&compile("stencil2d", t, "s"));
    let bin = stub_vitis(t, true);
    let path = format!("{}:/usr/bin:/bin", bin.display());
    let vitis = t.join("vitis");

    // A stale build record from an earlier build goes before the build starts.
    std::fs::create_dir_all(t.join("bitstreams/hw")).unwrap();
    std::fs::write(t.join("bitstreams/hw/s.xclbin.json"), "{}").unwrap();
    let out = bitstream(t, &["s.tessera", "--platform", "missing/u250.xpfm"], &path, Some(&vitis));
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.starts_with("tessera bitstream: error: platform file `missing/u250.xpfm` does not exist.\n"),
        "{stderr}"
    );
    let out = bitstream(t, &["s.tessera", "--platform", "no_such_platform"], &path, Some(&vitis));
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(
        stderr.contains("platform `no_such_platform` not found: no no_such_platform/no_such_platform.xpfm in"),
        "{stderr}"
    );
    assert!(!t.join("calls.log").exists(), "nothing ran");

    // A platform name resolves through PLATFORM_REPO_PATHS to its .xpfm.
    let repo_dir = t.join("platforms/my_vcu118");
    std::fs::create_dir_all(&repo_dir).unwrap();
    std::fs::write(repo_dir.join("my_vcu118.xpfm"), "").unwrap();
    let out = Command::new(TESSERA)
        .args(["bitstream", "s.tessera", "--platform", "my_vcu118"])
        .current_dir(t)
        .env("PATH", &path)
        .env("XILINX_VITIS", &vitis)
        .env("PLATFORM_REPO_PATHS", t.join("platforms"))
        .output()
        .unwrap();
    assert!(!out.status.success(), "the stub link fails");
    let stderr = text(&out.stderr);
    assert!(text(&out.stdout).contains(&format!("--platform {} ", repo_dir.join("my_vcu118.xpfm").display())));
    assert!(stderr.contains("stub link failure"), "{stderr}");
    assert!(
        stderr.contains(
            "tessera bitstream: error: linking 1 kernel(s) into bitstreams/hw/s.xclbin failed: `v++ -l` failed"
        ) && stderr.contains("(v++ logs: bitstreams/hw/s.link/logs)"),
        "{stderr}"
    );
    assert!(t.join(format!("bitstreams/hw/{k}.xo")).is_file(), "the compile ran");
    assert!(!t.join("bitstreams/hw/s.xclbin").exists());
    assert!(!t.join("bitstreams/hw/s.xclbin.json").exists(), "the failed build left no record");
}

/// A kernel directory edited after `tessera cc` wrote it is refused: the build record
/// would vouch for a bitstream that is not the program's kernel.
#[test]
fn refuses_edited_kernels() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let k = kernel(&compile("stencil2d", t, "s"));
    let cpp = t.join(format!("s.tessera/{k}.cpp"));
    let original = std::fs::read_to_string(&cpp).unwrap();
    std::fs::write(&cpp, format!("{original}// tuned by hand\n")).unwrap();
    let out = bitstream(t, &["s.tessera", "--platform", PLATFORM, "--dry-run"], "/nonexistent", None);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains(&format!("the kernel source s.tessera/{k}.cpp differs from the kernel in the manifest")), "{stderr}");
    std::fs::write(&cpp, original).unwrap();

    let mpath = t.join(format!("s.tessera/{k}.manifest.json"));
    let mut manifest: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&mpath).unwrap()).unwrap();
    manifest["emu_entry_source"] = "// edited".into();
    std::fs::write(&mpath, serde_json::to_string_pretty(&manifest).unwrap()).unwrap();
    let out = bitstream(t, &["s.tessera", "--platform", PLATFORM, "--dry-run"], "/nonexistent", None);
    assert!(!out.status.success());
    let stderr = text(&out.stderr);
    assert!(stderr.contains("the manifest's hash does not match its contents"), "{stderr}");
}

/// `tessera_add_bitstream` (cmake/TesseraBitstream.cmake) through the example project:
/// configure fails clearly without v++, and the dry run builds the config.
#[test]
fn cmake_function_dry_run_and_missing_vitis() {
    let Ok(cmake) = which("cmake") else {
        eprintln!("cmake not on PATH: skipped");
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    std::fs::copy(repo().join("bitstreams/CMakeLists.txt.example"), t.join("CMakeLists.txt")).unwrap();
    let configure = |build: &str, extra: &[&str]| {
        Command::new(&cmake)
            .arg("-S")
            .arg(t)
            .arg("-B")
            .arg(t.join(build))
            .arg(format!("-DTESSERA_ROOT={}", repo().display()))
            .arg(format!("-DTESSERA_EXECUTABLE={TESSERA}"))
            .args(extra)
            .env_remove("XILINX_VITIS")
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap()
    };
    let out = configure("novitis", &[]);
    assert!(!out.status.success());
    // CMake rewraps messages: compare with collapsed white space.
    let stderr = text(&out.stderr).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(stderr.contains("AMD Vitis not found: no `v++` on PATH or in $XILINX_VITIS/bin"), "{stderr}");
    assert!(stderr.contains("settings64.sh"), "{stderr}");

    let out = configure("dry", &["-DTESSERA_BITSTREAM_DRY_RUN=ON", "-DTARGET=sw_emu"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let out = Command::new(&cmake)
        .args(["--build"])
        .arg(t.join("dry"))
        .args(["--target", "stencil2d_xclbin"])
        .env("PATH", format!("{}:/usr/bin:/bin", Path::new(TESSERA).parent().unwrap().display()))
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("v++ -c -t sw_emu --platform xilinx_u250_gen3x16_xdma_4_1_202210_1 "), "{stdout}");
    // KERNELS: every kernel of the directory, whatever its name, linked into the
    // program's xclbin, named after the directory (the executable).
    let k = kernel(&t.join("dry/stencil2d.tessera"));
    let cfg = std::fs::read_to_string(t.join("dry/bitstreams/sw_emu/stencil2d.cfg")).unwrap();
    assert!(cfg.contains(&format!("nk={k}:1:{k}_1\n")) && cfg.contains(&format!("sp={k}_1.X:DDR[0]\n")), "{cfg}");
    let out = t.join("dry/bitstreams/sw_emu");
    assert!(stdout.contains(&format!(" -o {}/stencil2d.xclbin {}/{k}.xo", out.display(), out.display())), "{stdout}");
    assert!(!t.join("dry/bitstreams/sw_emu/stencil2d_xclbin.stamp").exists());

    // NAME names the program's xclbin; PER_KERNEL builds one per kernel (a stamp stands
    // for them); NAME with PER_KERNEL is refused at configure time.
    let p2 = t.join("p2");
    std::fs::create_dir(&p2).unwrap();
    let kdir = t.join("dry/stencil2d.tessera");
    let project = |extra: &str| {
        format!(
            "cmake_minimum_required(VERSION 3.19)\nproject(p2 NONE)\nlist(APPEND CMAKE_MODULE_PATH \"{}/cmake\")\n\
             include(TesseraBitstream)\n\
             tessera_add_bitstream(named KERNELS \"{k}\" NAME app PLATFORM p TARGET sw_emu OUTPUT_DIR named)\n\
             tessera_add_bitstream(each KERNELS \"{k}\" PER_KERNEL PLATFORM p TARGET sw_emu OUTPUT_DIR each)\n\
             file(WRITE \"${{CMAKE_BINARY_DIR}}/vars.txt\" \"named=${{named_XCLBIN}}\\neach=${{each_XCLBIN}}\\n\")\n{extra}",
            repo().display(),
            k = kdir.display()
        )
    };
    std::fs::write(p2.join("CMakeLists.txt"), project("")).unwrap();
    let b2 = p2.join("build");
    let cmake_run = |args: &[&str]| {
        Command::new(&cmake)
            .args(args)
            .arg(format!("-DTESSERA_EXECUTABLE={TESSERA}"))
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap()
    };
    let out = cmake_run(&["-S", p2.to_str().unwrap(), "-B", b2.to_str().unwrap(), "-DTESSERA_BITSTREAM_DRY_RUN=ON"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let vars = std::fs::read_to_string(b2.join("vars.txt")).unwrap();
    assert_eq!(vars, format!("named={}\neach=\n", b2.join("named/sw_emu/app.xclbin").display()));
    for target in ["named", "each"] {
        let out = Command::new(&cmake).arg("--build").arg(&b2).args(["--target", target]).output().unwrap();
        assert!(out.status.success(), "{target}: {}\n{}", text(&out.stdout), text(&out.stderr));
    }
    assert!(b2.join("named/sw_emu/app.cfg").is_file());
    assert!(b2.join(format!("each/sw_emu/{k}.cfg")).is_file() && b2.join("each/sw_emu/each.stamp").is_file());
    assert!(!b2.join("each/sw_emu/stencil2d.cfg").exists());
    std::fs::write(
        p2.join("CMakeLists.txt"),
        project("tessera_add_bitstream(both KERNELS x NAME app PER_KERNEL PLATFORM p)\n"),
    )
    .unwrap();
    let out = cmake_run(&["-S", p2.to_str().unwrap(), "-B", p2.join("bad").to_str().unwrap(), "-DTESSERA_BITSTREAM_DRY_RUN=ON"]);
    assert!(!out.status.success());
    let stderr = text(&out.stderr).split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(stderr.contains("tessera_add_bitstream(both): NAME names the program's xclbin of KERNELS"), "{stderr}");
}

fn which(name: &str) -> Result<PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path).map(|d| d.join(name)).find(|p| p.is_file()).ok_or(())
}
