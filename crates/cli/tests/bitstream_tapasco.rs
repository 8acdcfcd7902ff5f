//! `tessera bitstream --flow tapasco` on a real two-kernel `<program>.tessera`
//! directory written by `tessera cc`.
//!
//! There is no TaPaSCo here: the dry run is checked command by command (and run as a
//! shell script), the missing-TaPaSCo error verbatim, and the real run goes through a
//! stub `tapasco` that logs its arguments and, for `compose`, writes the bitstream
//! where it is told to (`STUB_BIT`). Needs `make build` (clang-19 and
//! `tessera_plugin.so` next to the `tessera` binary).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tessera_ir::manifest::Manifest;
use tessera_ir::tapasco::{kernel_id, TapascoRecord};

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").canonicalize().unwrap()
}

/// `tessera cc -O2 tests/programs/data_time_loop.c -o <dir>/prog` (two kernels);
/// returns the manifests, in file name order.
fn compile(dir: &Path) -> Vec<Manifest> {
    let out = Command::new(TESSERA)
        .args(["cc", "-O2"])
        .arg(repo().join("tests/programs/data_time_loop.c"))
        .arg("-o")
        .arg(dir.join("prog"))
        .output()
        .unwrap();
    assert!(out.status.success(), "tessera cc failed (run `make build` first):\n{}", text(&out.stderr));
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("prog.tessera"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_str().unwrap().ends_with(".manifest.json"))
        .collect();
    files.sort();
    files.iter().map(|f| Manifest::from_json(&std::fs::read_to_string(f).unwrap()).unwrap()).collect()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `tessera bitstream --flow tapasco <args>` in `cwd` with `PATH` as given and
/// `TAPASCO_HOME` set or not.
fn bitstream(cwd: &Path, args: &[&str], path: &str, tapasco_home: Option<&Path>, vars: &[(&str, String)]) -> Output {
    let mut cmd = Command::new(TESSERA);
    cmd.args(["bitstream", "--flow", "tapasco"]).args(args).current_dir(cwd).env("PATH", path);
    match tapasco_home {
        Some(h) => cmd.env("TAPASCO_HOME", h),
        None => cmd.env_remove("TAPASCO_HOME"),
    };
    for (k, v) in vars {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Stub `tapasco`, `vivado`, `vitis_hls` in `<t>/stub`: `tapasco` appends its
/// arguments to `<t>/calls.log`, for `hls` writes the files `$STUB_ZIPS`, and for
/// `compose` writes `$STUB_BIT` (unless `STUB_FAIL` is set).
fn stub_tools(t: &Path) -> PathBuf {
    let bin = t.join("stub");
    std::fs::create_dir_all(&bin).unwrap();
    write_script(
        &bin.join("tapasco"),
        &format!(
            "printf '%s|' \"$@\" >> '{log}'; echo >> '{log}'\n\
             for a in \"$@\"; do [ \"$a\" = compose ] && [ -z \"$STUB_FAIL\" ] && mkdir -p \"$(dirname \"$STUB_BIT\")\" \
             && echo bit > \"$STUB_BIT\"; done\n\
             for a in \"$@\"; do [ \"$a\" = hls ] && for z in $STUB_ZIPS; do mkdir -p \"$(dirname \"$z\")\"; \
             echo zip > \"$z\"; done; done\nexit 0\n",
            log = t.join("calls.log").display()
        ),
    );
    write_script(&bin.join("vivado"), "exit 0\n");
    write_script(&bin.join("vitis_hls"), "exit 0\n");
    bin
}

#[test]
fn dry_run_prints_a_runnable_script() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let ms = compile(t);
    assert_eq!(ms.len(), 2);
    let k: Vec<String> = ms.iter().map(|m| m.kernel.clone().unwrap()).collect();
    let out = bitstream(t, &["prog.tessera", "--platform", "vcu118", "--clock-mhz", "125", "--dry-run"], "/nonexistent", None, &[]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let b = t.join("bitstreams");
    let w = b.join("tapasco");
    let (kd, cd, pd) = (w.join("kernel"), w.join("core"), w.join("compose"));
    let commands: Vec<&str> = stdout.lines().filter(|l| !l.starts_with('#')).collect();
    let record = b.join("vcu118/prog.bit.json");
    let tapasco_bit = pd.join(format!(
        "axi4mm/vcu118/{0}__{1}/001_001/125.0/axi4mm-vcu118--{0}_1_{1}_1--125.bit",
        k[0], k[1]
    ));
    let bit = b.join("vcu118/prog.bit");
    let core = |i: usize| cd.join(&k[i]);
    let zip = |i: usize| core(i).join(format!("axi4mm/vcu118/ipcore/{}_axi4mm.zip", k[i]));
    let stamp = |i: usize| core(i).join("tessera.hash");
    let expected = [
        "set -e".to_string(),
        format!("rm -f {}", record.display()),
        format!("[ \"$(cat {} 2>/dev/null)\" = {} ] || rm -rf {}", stamp(0).display(), ms[0].hash, core(0).display()),
        format!("[ \"$(cat {} 2>/dev/null)\" = {} ] || rm -rf {}", stamp(1).display(), ms[1].hash, core(1).display()),
        format!("tapasco --kernelDir {} --coreDir {} hls {},{} -p vcu118", kd.display(), cd.display(), k[0], k[1]),
        format!("test -f {}", zip(0).display()),
        format!("printf '%s\\n' {} > {}", ms[0].hash, stamp(0).display()),
        format!("test -f {}", zip(1).display()),
        format!("printf '%s\\n' {} > {}", ms[1].hash, stamp(1).display()),
        format!("rm -f {}", tapasco_bit.display()),
        format!(
            "tapasco --kernelDir {} --coreDir {} --compositionDir {} compose '[{} x 1, {} x 1]' @ 125 MHz -a axi4mm \
             -p vcu118 --deleteProjects false",
            kd.display(),
            cd.display(),
            pd.display(),
            k[0],
            k[1]
        ),
        format!("test -f {}", tapasco_bit.display()),
        format!("cp {} {}", tapasco_bit.display(), bit.display()),
    ];
    assert_eq!(commands[..expected.len()], expected, "{stdout}");
    assert!(commands[expected.len()].starts_with("printf '%s' '{"), "{stdout}");
    assert!(stdout.contains(&format!("#   tapasco-load-bitstream {} --reload-driver\n", bit.display())), "{stdout}");
    assert!(stdout.contains("#   export TESSERA_DEVICE=tapasco\n"), "{stdout}");

    // Per kernel: kernel.json with the ID of the manifest hash and the top function's
    // parameters in order, and the kernel source beside it.
    for m in &ms {
        let name = m.kernel.as_deref().unwrap();
        let dir = kd.join(name);
        let j: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(dir.join("kernel.json")).unwrap()).unwrap();
        assert_eq!(j["Id"], kernel_id(&m.hash).unwrap());
        assert_eq!((j["Name"].as_str(), j["TopFunction"].as_str()), (Some(name), Some(name)));
        let args: Vec<&str> = j["Arguments"].as_array().unwrap().iter().map(|a| a["Name"].as_str().unwrap()).collect();
        // The arguments, then any size parameters of arrays the kernel does not know
        // the size of (`Manifest::kernel_params`).
        let params = m.kernel_params();
        let want: Vec<&str> = params.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(args, want, "{name}");
        let flags = j["CompilerFlags"].as_array().unwrap();
        assert_eq!(flags[0], format!("-I{}", b.join("include").display()));
        assert_eq!(flags[1], "-DTESSERA_VITIS=1");
        assert_eq!(std::fs::read_to_string(dir.join(format!("{name}.cpp"))).unwrap(), m.kernel_source);
        assert!(stdout.contains(&format!("TaPaSCo kernel ID {}, PE esa.cs.tu-darmstadt.de:hls:{name}:1.0", j["Id"])));
    }
    assert!(b.join("include/tessera_hls.h").is_file());

    // The script runs as printed (with a stub TaPaSCo) and writes the build record.
    let stub = stub_tools(t);
    let script = t.join("build.sh");
    std::fs::write(&script, &stdout).unwrap();
    let out = Command::new("sh")
        .arg(&script)
        .env("PATH", format!("{}:/usr/bin:/bin", stub.display()))
        .env("STUB_BIT", &tapasco_bit)
        .env("STUB_ZIPS", format!("{} {}", zip(0).display(), zip(1).display()))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(std::fs::read_to_string(&bit).unwrap(), "bit\n");
    let r = TapascoRecord::from_json(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!((r.platform.as_str(), r.clock_mhz), ("vcu118", 125));
    for m in &ms {
        let e = r.kernel_of(&m.hash).expect("every manifest in the record");
        assert_eq!((e.kernel.as_str(), e.id), (m.kernel.as_deref().unwrap(), kernel_id(&m.hash).unwrap()));
    }
}

/// `--slurm --dry-run`: the cores as one job, the composition as a second one that
/// Slurm starts only after the first succeeded; the job scripts hold the same commands
/// as the plain dry run, in two parts. No TaPaSCo is needed here (it runs on the nodes).
#[test]
fn slurm_jobs_hls_then_compose() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    compile(t);
    let base = ["prog.tessera", "--platform", "vcu118", "--clock-mhz", "125", "--dry-run"];
    let plain = text(&bitstream(t, &base, "/nonexistent", None, &[]).stdout);
    let mut args = base.to_vec();
    args.extend(["--slurm", "--partition", "fpga"]);
    let out = bitstream(t, &args, "/nonexistent", None, &[]);
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let dir = t.join("bitstreams/vcu118/slurm");
    let sbatch: Vec<&str> = stdout.lines().filter(|l| l.starts_with("job")).collect();
    assert_eq!(sbatch.len(), 2, "{stdout}");
    assert!(sbatch[0].starts_with("job0=$(sbatch ") && sbatch[0].ends_with("# hls-prog"), "{}", sbatch[0]);
    assert!(!sbatch[0].contains("--dependency"), "{}", sbatch[0]);
    assert!(sbatch[1].contains("\"--dependency=afterok:${job0%%;*}\"") && sbatch[1].ends_with("# compose-prog"), "{}", sbatch[1]);
    let hls = std::fs::read_to_string(dir.join("hls-prog.sbatch")).unwrap();
    let compose = std::fs::read_to_string(dir.join("compose-prog.sbatch")).unwrap();
    // Every command of the plain dry run is in exactly one of the two scripts, hls's
    // before compose's.
    let commands: Vec<&str> = plain.lines().filter(|l| !l.starts_with('#') && *l != "set -e").collect();
    let split = commands.iter().position(|c| c.starts_with("rm -f") && c.ends_with(".bit")).expect("the compose part");
    for c in &commands[..split] {
        assert!(hls.contains(c) && !compose.contains(c), "{c}\n{hls}");
    }
    for c in &commands[split..] {
        assert!(compose.contains(c) && !hls.contains(c), "{c}\n{compose}");
    }
    assert!(hls.contains(" hls ") && compose.contains(" compose "));
    assert!(hls.contains("#SBATCH --partition=fpga\n") && compose.contains("#SBATCH --partition=fpga\n"));
}

#[test]
fn without_tapasco_it_stops_and_says_how_to_set_it_up() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    compile(t);
    let out = bitstream(t, &["prog.tessera", "--platform", "vcu118", "--clock-mhz", "100"], "/nonexistent", None, &[]);
    assert!(!out.status.success());
    assert_eq!(
        text(&out.stderr),
        "tessera bitstream: error: TaPaSCo is not set up in this shell:\n  \
         - `tapasco` (TaPaSCo's toolflow) is not on PATH\n  \
         - TAPASCO_HOME is not set\n  \
         - `vivado` is not on PATH\n  \
         - `vitis_hls` is not on PATH\n\
         `tessera bitstream --flow tapasco` runs TaPaSCo's toolflow (tapasco hls, tapasco compose; \
         github.com/esa-tu-darmstadt/tapasco) with AMD Vivado and Vitis HLS, none of which is part of Tessera.\n\
         Install them, then set up the shell and run this command again:\n    \
         source <Vivado install dir>/settings64.sh      # e.g. /tools/Xilinx/Vivado/2023.2/settings64.sh\n    \
         source <Vitis HLS install dir>/settings64.sh   # vitis_hls\n    \
         source <TaPaSCo workspace>/tapasco-setup.sh     # tapasco, TAPASCO_HOME (see bitstreams/README.md)\n\
         With --dry-run the commands are only printed (and the kernel descriptions written).\n"
    );
    assert!(!t.join("bitstreams").exists(), "nothing is written when TaPaSCo is missing");

    // Options of the Vitis flow are refused; the clock is required.
    for (args, want) in [
        (&["-t", "hw_emu", "--clock-mhz", "100"][..], "--flow tapasco builds hardware only; -t hw_emu"),
        (&["--memory", "DDR[1]", "--clock-mhz", "100"][..], "--memory is a Vitis option"),
        (&[][..], "--flow tapasco needs --clock-mhz <MHz>"),
    ] {
        let mut all = vec!["prog.tessera", "--platform", "vcu118", "--dry-run"];
        all.extend_from_slice(args);
        let out = bitstream(t, &all, "/nonexistent", None, &[]);
        assert!(!out.status.success());
        assert!(text(&out.stderr).contains(want), "{args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn runs_tapasco_and_writes_the_record_only_after_a_bitstream_exists() {
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let ms = compile(t);
    let stub = stub_tools(t);
    let path = format!("{}:/usr/bin:/bin", stub.display());
    let home = t.join("tapasco-home");
    let k: Vec<&str> = ms.iter().map(|m| m.kernel.as_deref().unwrap()).collect();
    let w = t.join("bitstreams/tapasco");
    let tapasco_bit = w.join(format!(
        "compose/axi4mm/vcu118/{0}__{1}/001_001/100.0/axi4mm-vcu118--{0}_1_{1}_1--100.bit",
        k[0], k[1]
    ));
    let zip = |i: usize| w.join(format!("core/{0}/axi4mm/vcu118/ipcore/{0}_axi4mm.zip", k[i]));
    let stamp = |i: usize| w.join(format!("core/{}/tessera.hash", k[i]));
    let vars = |zips: &[PathBuf]| {
        vec![
            ("STUB_BIT", tapasco_bit.display().to_string()),
            ("STUB_ZIPS", zips.iter().map(|z| z.display().to_string()).collect::<Vec<_>>().join(" ")),
        ]
    };
    let args = ["prog.tessera", "--platform", "vcu118", "--clock-mhz", "100"];
    let out = bitstream(t, &args, &path, Some(&home), &vars(&[zip(0), zip(1)]));
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    let calls = std::fs::read_to_string(t.join("calls.log")).unwrap();
    let calls: Vec<&str> = calls.lines().collect();
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[0].contains("|hls|"), "{calls:?}");
    assert!(calls[1].contains("|compose|[") && calls[1].contains("|@|100|MHz|-a|axi4mm|-p|vcu118|"), "{calls:?}");
    let record = t.join("bitstreams/vcu118/prog.bit.json");
    let r = TapascoRecord::from_json(&std::fs::read_to_string(&record).unwrap()).unwrap();
    assert_eq!(r.kernels.len(), 2);
    assert!(stdout.contains("# built ") && stdout.contains("prog.bit.json"), "{stdout}");
    // Each core is stamped with the hash of the manifest it was made from.
    assert_eq!(std::fs::read_to_string(stamp(0)).unwrap().trim(), ms[0].hash);

    // A core made from another manifest is removed (so `tapasco hls` makes it again);
    // a current one is kept.
    std::fs::write(stamp(0), "0".repeat(64)).unwrap();
    let kept = zip(1);
    let out = bitstream(t, &args, &path, Some(&home), &vars(&[zip(0)]));
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stdout).contains(&format!("# {}: its core was made from another manifest; removing", k[0])));
    assert_eq!(std::fs::read_to_string(stamp(0)).unwrap().trim(), ms[0].hash);
    assert!(kept.is_file(), "the current core was kept");

    // TaPaSCo makes no core: an error naming the HLS log, and no record is left.
    std::fs::write(stamp(1), "0".repeat(64)).unwrap();
    let out = bitstream(t, &args, &path, Some(&home), &vars(&[]));
    assert!(!out.status.success());
    let e = text(&out.stderr);
    assert!(e.contains(&format!("tapasco hls did not produce the core of kernel {}", k[1])) && e.contains("hls/axi4mm.log"), "{e}");
    assert!(!record.exists(), "the old record was removed before the build");

    // TaPaSCo writes no bitstream: an error; the bitstream of an earlier run does not count.
    let mut v = vars(&[zip(0), zip(1)]);
    v.push(("STUB_FAIL", "1".into()));
    let out = bitstream(t, &args, &path, Some(&home), &v);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("tapasco compose wrote no bitstream"), "{}", text(&out.stderr));
    assert!(!record.exists());
}
