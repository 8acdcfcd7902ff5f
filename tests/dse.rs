//! `tessera dse`, locally and on a real Slurm.
//!
//! - `local_sweep_and_slurm_sweep`: a 4-configuration sweep (2 modes × 2 port widths
//!   over 1D-jacobi and 2D-jacobi at the small size) run locally: every configuration
//!   bit-exact and modelled, its exact counts equal to `tessera bench`'s for the same
//!   configuration, the Pareto flags those of the front recomputed from the JSON, the
//!   table, JSON and SVG written. Then the same sweep with `--slurm` on a single-node
//!   Slurm cluster this test starts in a temporary directory (Debian's `munged`,
//!   `slurmctld`, `slurmd`; `scripts/setup.sh` installs them, `make test` runs it):
//!   the gathered results (configurations, verdicts, exact counts, modelled times and
//!   resources, Pareto flags) must equal the local ones. A result file removed
//!   afterwards makes `--gather` report that configuration missing, by index, and fail.
//!   The daemons are stopped when the test ends, also when it fails ([`Cluster`]'s
//!   `Drop`). Where the cluster cannot run (not root, packages missing, a daemon
//!   that does not come up) the Slurm part prints `skipped: <why>` and passes, unless
//!   `TESSERA_REQUIRE_SLURM=1`.
//!   Then `tessera bitstream --slurm` on the same cluster, with a stub `v++`: each
//!   kernel's compile job, then the program's link job (`afterok` on both), the bitstream and build
//!   records written by the jobs.
//! - `program_sweep`: `tessera dse <program.c> -- <cc args>`: a user program with the
//!   bench's 1D-jacobi and 2D-jacobi loops (sizes as `-D` defines) and a region that
//!   stays on the host, swept over two modes: each configuration bit-exact against the
//!   program's host-only run, its exact traffic the sum of the two bench stencils' for
//!   the same configuration, its resources the sum of their kernels' (one xclbin holds
//!   both), the host region named in the notes; and a program whose region has run-time
//!   sizes, modelled at its launch's sizes (the report's scalars): the figures of the
//!   constant-size stencil.
//! - `slurm_dry_run`: `--slurm --dry-run` writes the array job's script (options,
//!   the `--run-config` command) and prints the sbatch command, without Slurm.

use serde_json::Value;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use tessera_tests::{repo_root, run};

fn tessera() -> PathBuf {
    repo_root().join("target/release/tessera")
}

/// A line on the real stderr (not captured by the test harness): skips stay visible.
fn visible(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{}: {e}", p.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

const SET: &str = "1D-jacobi,2D-jacobi";
const SPACE: [&str; 6] = ["--size", "small", "--modes", "dataflow,tessera", "--port-width", "8,16"];

fn dse(out: &Path) -> Command {
    let mut c = Command::new(tessera());
    c.arg("dse").arg(SET).args(SPACE).arg("-o").arg(out);
    c
}

/// The fields a Slurm sweep must reproduce (measured times and per-stencil records,
/// which hold measured times, aside).
fn results(json: &Value) -> Vec<Value> {
    json["configs"]
        .as_array()
        .expect("configs")
        .iter()
        .map(|c| {
            serde_json::json!({
                "index": c["index"], "config": c["config"], "ok": c["ok"], "failed": c["failed"],
                "exact": c["exact"], "modelled": c["modelled"], "resources": c["resources"], "pareto": c["pareto"],
            })
        })
        .collect()
}

#[test]
fn local_sweep_and_slurm_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let local = tmp.path().join("local");
    let out = run(dse(&local).arg("-j").arg("2"), "tessera dse (local)");
    let json = read_json(&local.join("dse.json"));
    let configs = json["configs"].as_array().expect("configs");
    assert_eq!(configs.len(), 4, "2 modes x 2 port widths");
    // Space order: port width outside mode.
    let order: Vec<(u64, &str)> =
        configs.iter().map(|c| (c["config"]["port_width"].as_u64().unwrap(), c["config"]["mode"].as_str().unwrap())).collect();
    assert_eq!(order, [(8, "dataflow"), (8, "tessera"), (16, "dataflow"), (16, "tessera")]);
    for c in configs {
        assert_eq!(c["ok"], true, "{c:#}");
        assert!(c["exact"]["ddr_read_bytes"].as_u64().unwrap() > 0);
        assert!(c["modelled"]["kernel_s"].as_f64().unwrap() > 0.0);
        assert!(c["resources"]["max_fraction"].as_f64().unwrap() > 0.0);
        assert_eq!(c["stencil_results"].as_array().unwrap().len(), 2);
    }
    // The exact counts are the bench's for the same configuration.
    let bench_json = tmp.path().join("bench.json");
    run(
        Command::new(tessera())
            .args(["bench", "--size", "small", "--only", SET, "--mode", "tessera", "--port-width", "8", "--json"])
            .arg(&bench_json),
        "tessera bench",
    );
    let bench = read_json(&bench_json);
    let sum = |key: &str| bench["stencils"].as_array().unwrap().iter().map(|s| s["exact"][key].as_u64().unwrap()).sum::<u64>();
    assert_eq!(configs[1]["exact"]["ddr_read_bytes"].as_u64().unwrap(), sum("ddr_read_bytes"));
    assert_eq!(configs[1]["exact"]["ddr_write_bytes"].as_u64().unwrap(), sum("ddr_write_bytes"));
    assert_eq!(configs[1]["exact"]["bursts"].as_u64().unwrap(), sum("bursts"));
    // The Pareto flags: no flagged point is dominated, every other fitting one is.
    let pts: Vec<(f64, f64, bool, bool)> = configs
        .iter()
        .map(|c| {
            (
                c["resources"]["max_fraction"].as_f64().unwrap(),
                c["modelled"]["kernel_s"].as_f64().unwrap(),
                c["resources"]["fits"].as_bool().unwrap(),
                c["pareto"].as_bool().unwrap(),
            )
        })
        .collect();
    for &(x, y, fits, front) in &pts {
        let dominated = pts.iter().any(|&(a, b, f, _)| f && a <= x && b <= y && (a < x || b < y));
        assert_eq!(front, fits && !dominated, "point ({x}, {y}) fits={fits}: {pts:?}");
    }
    assert!(pts.iter().any(|p| p.3), "an empty front");
    // Table on stdout and in dse.txt; the SVG has a marker per plotted configuration.
    let table = String::from_utf8_lossy(&out.stdout);
    assert_eq!(table, std::fs::read_to_string(local.join("dse.txt")).unwrap());
    assert!(table.contains("Pareto front"), "{table}");
    let svg = std::fs::read_to_string(local.join("dse.svg")).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("Pareto front"));
    let fitting = pts.iter().filter(|p| p.2).count();
    assert_eq!(svg.matches("<circle").count(), fitting + 2, "one circle per fitting configuration, two in the legend");
    for i in 0..4 {
        assert!(local.join(format!("results/{i}.json")).is_file());
    }

    // The same sweep as a Slurm job array.
    let cluster = match Cluster::start() {
        Ok(c) => c,
        Err(why) => {
            if std::env::var_os("TESSERA_REQUIRE_SLURM").is_some_and(|v| v == "1") {
                panic!("TESSERA_REQUIRE_SLURM=1 but Slurm cannot run here: {why}");
            }
            visible(&format!("skipped: the Slurm part of local_sweep_and_slurm_sweep: {why}"));
            return;
        }
    };
    let slurm_out = tmp.path().join("slurm");
    let t = Instant::now();
    let out = dse(&slurm_out)
        .args(["--slurm", "--poll", "1", "--cpus-per-task", "1", "--time", "10:00"])
        .env("SLURM_CONF", &cluster.conf)
        .output()
        .unwrap();
    let log = cluster.logs();
    assert!(
        out.status.success(),
        "tessera dse --slurm failed ({}):\n--- stdout\n{}\n--- stderr\n{}\n--- daemon logs\n{log}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    visible(&format!("slurm: the sweep ran as a job array in {:.1} s", t.elapsed().as_secs_f64()));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("submitted dse as job"), "{stderr}");
    let gathered = read_json(&slurm_out.join("dse.json"));
    assert!(gathered["ran"].as_str().unwrap().starts_with("slurm job array"), "{}", gathered["ran"]);
    assert_eq!(results(&gathered), results(&json), "the Slurm sweep's results differ from the local sweep's");
    // Every array task wrote its log where the script said.
    let script = std::fs::read_to_string(slurm_out.join("slurm/dse.sbatch")).unwrap();
    assert!(script.contains("--run-config \"$SLURM_ARRAY_TASK_ID\""), "{script}");
    let logs = std::fs::read_dir(slurm_out.join("slurm")).unwrap().filter(|e| {
        e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".out")
    });
    assert_eq!(logs.count(), 4, "one log per array task");

    // A configuration without a result is reported by index and fails the gather.
    std::fs::remove_file(slurm_out.join("results/2.json")).unwrap();
    let out = Command::new(tessera()).args(["dse", "--gather", "-o"]).arg(&slurm_out).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("missing: #2 (tiles default, W 16, dataflow, 1 bank): no result file"), "{table}");

    bitstream_on_slurm(&cluster, tmp.path());
    drop(cluster);
}

fn write_script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// `tessera bitstream --slurm` with a stub `v++` (not Vitis: it logs its calls, takes 2 s
/// to compile, writes its `-o` file, and refuses to link a missing `.xo`): two kernels,
/// each compiled by one job, linked into one xclbin by a job that Slurm starts only
/// after both; the bitstream and its build record (both kernels' hashes) appear.
fn bitstream_on_slurm(cluster: &Cluster, tmp: &Path) {
    let t = tmp.join("bitstream");
    let bin = t.join("vitis/bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = t.join("calls.log");
    write_script(
        &bin.join("v++"),
        &format!(
            "out=; last=\nfor a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; prev=$a; last=$a; done\n\
             if [ \"$1\" = -c ]; then sleep 2; else for a in \"$@\"; do case $a in *.xo) [ -f \"$a\" ] || {{ echo \"stub v++: no $a\" >&2; exit 1; }};; esac; done; fi\n\
             echo \"v++ $1 $out\" >> '{}'\necho stub > \"$out\"\n",
            log.display()
        ),
    );
    std::fs::write(t.join("u250.xpfm"), "").unwrap();
    let mut kernels = Vec::new();
    for (prog, exe) in [("stencil1d", "s1"), ("stencil2d", "s2")] {
        run(
            Command::new(tessera())
                .args(["cc", "-O2"])
                .arg(repo_root().join(format!("tests/programs/{prog}.c")))
                .arg("-o")
                .arg(t.join(exe)),
            "tessera cc",
        );
        let dir = t.join(format!("{exe}.tessera"));
        let k: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .filter_map(|e| e.unwrap().file_name().into_string().unwrap().strip_suffix(".manifest.json").map(String::from))
            .collect();
        assert_eq!(k.len(), 1, "{k:?}");
        kernels.push((k[0].clone(), exe));
    }
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    let out = run(
        Command::new(tessera())
            .args(["bitstream", "s1.tessera", "s2.tessera", "--name", "both", "--platform", "u250.xpfm", "-t", "hw", "-o", "b"])
            .args(["--slurm", "--time", "5:00"])
            .current_dir(&t)
            .env("PATH", &path)
            .env("XILINX_VITIS", t.join("vitis"))
            .env("SLURM_CONF", &cluster.conf),
        "tessera bitstream --slurm",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ids: Vec<String> = stdout
        .lines()
        .filter_map(|l| l.split(" as job ").nth(1).and_then(|r| r.split(':').next()).map(str::to_string))
        .collect();
    assert_eq!(ids.len(), 3, "two compile jobs and one link job:\n{stdout}");
    // Wait for the three jobs.
    let t0 = Instant::now();
    let states = loop {
        let q = Command::new("squeue")
            .args(["-h", "-t", "all", "-o", "%i|%T", "-j", &ids.join(",")])
            .env("SLURM_CONF", &cluster.conf)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&q.stdout).into_owned();
        let states: Vec<(String, String)> =
            text.lines().filter_map(|l| l.split_once('|')).map(|(a, b)| (a.to_string(), b.to_string())).collect();
        if states.len() == 3 && states.iter().all(|(_, s)| !["PENDING", "RUNNING", "CONFIGURING", "COMPLETING"].contains(&s.as_str())) {
            break states;
        }
        assert!(t0.elapsed() < Duration::from_secs(120), "the bitstream jobs did not finish: {text}\n{}", cluster.logs());
        std::thread::sleep(Duration::from_millis(500));
    };
    visible(&format!("slurm: the 3 bitstream jobs (compiles, then the link) finished in {:.1} s", t0.elapsed().as_secs_f64()));
    let calls = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        states.iter().all(|(_, s)| s == "COMPLETED"),
        "{states:?}\ncalls:\n{calls}\nlogs: {}",
        std::fs::read_dir(t.join("b/hw/slurm"))
            .unwrap()
            .map(|e| {
                let p = e.unwrap().path();
                format!("--- {}\n{}", p.display(), std::fs::read_to_string(&p).unwrap_or_default())
            })
            .collect::<String>()
    );
    let lines: Vec<&str> = calls.lines().collect();
    let l = lines.iter().position(|l| *l == "v++ -l b/hw/both.xclbin").unwrap_or_else(|| panic!("no link:\n{calls}"));
    assert_eq!(lines.iter().filter(|l| l.starts_with("v++ -l")).count(), 1, "{calls}");
    assert!(t.join("b/hw/both.xclbin").is_file());
    let record = read_json(&t.join("b/hw/both.xclbin.json"));
    for (k, exe) in &kernels {
        let c = lines.iter().position(|l| *l == format!("v++ -c b/hw/{k}.xo")).unwrap_or_else(|| panic!("no compile of {k}:\n{calls}"));
        assert!(c < l, "linked before {k} was compiled:\n{calls}");
        let manifest = read_json(&t.join(format!("{exe}.tessera/{k}.manifest.json")));
        let entry = record["kernels"].as_array().unwrap().iter().find(|e| e["kernel"] == k.as_str()).unwrap_or_else(|| panic!("{k} not in {record}"));
        assert_eq!(entry["hash"], manifest["hash"]);
    }
}

#[test]
fn slurm_dry_run() {
    let tmp = tempfile::tempdir().unwrap();
    let o = tmp.path().join("d");
    let out = run(
        dse(&o).args(["--slurm", "--dry-run", "--partition", "fpga", "--cpus-per-task", "2", "--sbatch-arg=--account=p1"]),
        "tessera dse --slurm --dry-run",
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let script_path = o.canonicalize().unwrap().join("slurm/dse.sbatch");
    assert!(
        stdout.contains(&format!("job0=$(sbatch --parsable --array=0-3 {})", script_path.display())),
        "{stdout}"
    );
    let script = std::fs::read_to_string(&script_path).unwrap();
    for line in ["#SBATCH --partition=fpga", "#SBATCH --cpus-per-task=2", "#SBATCH --account=p1", "#SBATCH --job-name=dse"] {
        assert!(script.lines().any(|l| l == line), "{line} missing:\n{script}");
    }
    assert!(script.contains(" dse --run-config \"$SLURM_ARRAY_TASK_ID\" "), "{script}");
    let spec = read_json(&o.join("spec.json"));
    assert_eq!(spec["configs"].as_array().unwrap().len(), 4);
    assert!(!o.join("dse.json").exists(), "a dry run evaluates nothing");
}

/// A single-node Slurm cluster in a temporary directory: munged, slurmctld and slurmd
/// in the foreground as children of the test, stopped on drop.
struct Cluster {
    dir: tempfile::TempDir,
    conf: PathBuf,
    daemons: Vec<(&'static str, Child)>,
}

fn found(program: &str) -> bool {
    std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(program).is_file()))
        .unwrap_or(false)
        || ["/usr/sbin", "/sbin"].iter().any(|d| Path::new(d).join(program).is_file())
}

fn program(name: &str) -> PathBuf {
    ["/usr/sbin", "/sbin"].iter().map(|d| Path::new(d).join(name)).find(|p| p.is_file()).unwrap_or_else(|| PathBuf::from(name))
}

fn free_port() -> Result<u16, String> {
    let l = std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| format!("no free port: {e}"))?;
    Ok(l.local_addr().map_err(|e| e.to_string())?.port())
}

fn set_mode(p: &Path, mode: u32) -> Result<(), String> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).map_err(|e| format!("{}: {e}", p.display()))
}

impl Cluster {
    fn start() -> Result<Cluster, String> {
        let uid = Command::new("id").arg("-u").output().map_err(|e| format!("cannot run id: {e}"))?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            return Err("not root (slurmd runs jobs as their users and must be root)".into());
        }
        let missing: Vec<&str> =
            ["munged", "slurmctld", "slurmd", "sbatch", "squeue", "scontrol"].into_iter().filter(|p| !found(p)).collect();
        if !missing.is_empty() {
            return Err(format!(
                "{} not installed (Debian: apt-get install munge slurmctld slurmd slurm-client; `make setup` does it)",
                missing.join(", ")
            ));
        }
        let dir = tempfile::Builder::new().prefix("tessera-slurm-").tempdir().map_err(|e| e.to_string())?;
        let d = dir.path().to_path_buf();
        // munged wants its socket's directories executable by all, its key private.
        set_mode(&d, 0o755)?;
        for sub in ["run", "key", "state", "spool", "log"] {
            std::fs::create_dir(d.join(sub)).map_err(|e| e.to_string())?;
        }
        set_mode(&d.join("run"), 0o755)?;
        set_mode(&d.join("key"), 0o700)?;
        let mut key = vec![0u8; 1024];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut key))
            .map_err(|e| format!("/dev/urandom: {e}"))?;
        let key_path = d.join("key/munge.key");
        std::fs::write(&key_path, &key).map_err(|e| e.to_string())?;
        set_mode(&key_path, 0o400)?;
        let socket = d.join("run/munge.socket");

        // The node as slurmd sees it (name, CPUs, memory).
        let node = Command::new(program("slurmd")).arg("-C").output().map_err(|e| format!("slurmd -C: {e}"))?;
        let node = String::from_utf8_lossy(&node.stdout).lines().next().unwrap_or("").to_string();
        let name = node
            .split_whitespace()
            .find_map(|w| w.strip_prefix("NodeName="))
            .ok_or_else(|| format!("slurmd -C printed no NodeName: `{node}`"))?
            .to_string();
        let (ctld_port, slurmd_port) = (free_port()?, free_port()?);
        let p = |s: &str| d.join(s).display().to_string();
        let conf_text = format!(
            "ClusterName=tessera-test\n\
             SlurmctldHost={name}(127.0.0.1)\n\
             SlurmctldPort={ctld_port}\n\
             SlurmdPort={slurmd_port}\n\
             SlurmUser=root\n\
             SlurmdUser=root\n\
             AuthType=auth/munge\n\
             CredType=cred/munge\n\
             AuthInfo=socket={}\n\
             StateSaveLocation={}\n\
             SlurmdSpoolDir={}\n\
             SlurmctldPidFile={}\n\
             SlurmdPidFile={}\n\
             SlurmctldLogFile={}\n\
             SlurmdLogFile={}\n\
             ProctrackType=proctrack/linuxproc\n\
             TaskPlugin=task/none\n\
             SelectType=select/cons_tres\n\
             SelectTypeParameters=CR_Core\n\
             SwitchType=switch/none\n\
             MpiDefault=none\n\
             JobCompType=jobcomp/none\n\
             JobAcctGatherType=jobacct_gather/none\n\
             AccountingStorageType=accounting_storage/none\n\
             ReturnToService=2\n\
             SchedulerType=sched/backfill\n\
             {node} NodeAddr=127.0.0.1 State=UNKNOWN\n\
             PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP\n",
            socket.display(),
            p("state"),
            p("spool"),
            p("run/slurmctld.pid"),
            p("run/slurmd.pid"),
            p("log/slurmctld.log"),
            p("log/slurmd.log"),
        );
        let conf = d.join("slurm.conf");
        std::fs::write(&conf, conf_text).map_err(|e| e.to_string())?;
        let mut c = Cluster { dir, conf: conf.clone(), daemons: Vec::new() };

        let spawn = |c: &mut Cluster, what: &'static str, cmd: &mut Command| -> Result<(), String> {
            let log = std::fs::File::create(c.dir.path().join(format!("log/{what}.out"))).map_err(|e| e.to_string())?;
            let child = cmd
                .env("SLURM_CONF", &c.conf)
                .stdin(Stdio::null())
                .stdout(log.try_clone().map_err(|e| e.to_string())?)
                .stderr(log)
                .spawn()
                .map_err(|e| format!("cannot start {what}: {e}"))?;
            c.daemons.push((what, child));
            Ok(())
        };
        spawn(
            &mut c,
            "munged",
            Command::new(program("munged"))
                .arg("-F")
                .arg(format!("--key-file={}", key_path.display()))
                .arg(format!("--socket={}", socket.display()))
                .arg(format!("--pid-file={}", p("run/munged.pid")))
                .arg(format!("--seed-file={}", p("key/munged.seed")))
                .arg(format!("--log-file={}", p("log/munged.log"))),
        )?;
        c.until(Duration::from_secs(15), "munged's socket", |c| {
            c.alive()?;
            Ok(socket.exists())
        })?;
        spawn(&mut c, "slurmctld", Command::new(program("slurmctld")).arg("-D").arg("-f").arg(&conf))?;
        c.until(Duration::from_secs(30), "slurmctld answering", |c| {
            c.alive()?;
            let out = Command::new("scontrol").arg("ping").env("SLURM_CONF", &c.conf).output().map_err(|e| e.to_string())?;
            Ok(String::from_utf8_lossy(&out.stdout).contains("is UP"))
        })?;
        spawn(&mut c, "slurmd", Command::new(program("slurmd")).arg("-D").arg("-f").arg(&conf))?;
        c.until(Duration::from_secs(40), "the node idle", |c| {
            c.alive()?;
            let out = Command::new("sinfo")
                .args(["-h", "-o", "%T"])
                .env("SLURM_CONF", &c.conf)
                .output()
                .map_err(|e| e.to_string())?;
            Ok(String::from_utf8_lossy(&out.stdout).trim() == "idle")
        })?;
        Ok(c)
    }

    /// An error when a daemon has exited.
    fn alive(&mut self) -> Result<(), String> {
        for (what, child) in &mut self.daemons {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("{what} exited ({status}) while starting:\n{}", self_logs(self.dir.path())));
            }
        }
        Ok(())
    }

    fn until(&mut self, limit: Duration, what: &str, mut ready: impl FnMut(&mut Cluster) -> Result<bool, String>) -> Result<(), String> {
        let t = Instant::now();
        while t.elapsed() < limit {
            if ready(self)? {
                return Ok(());
            }
            std::thread::sleep(Duration::from_millis(250));
        }
        Err(format!("no {what} after {} s:\n{}", limit.as_secs(), self.logs()))
    }

    fn logs(&self) -> String {
        self_logs(self.dir.path())
    }
}

/// The last lines of every log of the cluster in `dir`.
fn self_logs(dir: &Path) -> String {
    let mut s = String::new();
    if let Ok(entries) = std::fs::read_dir(dir.join("log")) {
        let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        paths.sort();
        for p in paths {
            let text = std::fs::read_to_string(&p).unwrap_or_default();
            let lines: Vec<&str> = text.lines().collect();
            s.push_str(&format!("--- {}\n{}\n", p.display(), lines[lines.len().saturating_sub(15)..].join("\n")));
        }
    }
    s
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Jobs first (their slurmstepd would outlive slurmd), then the daemons in
        // reverse order: SIGTERM, and SIGKILL after 10 s.
        let _ = Command::new("scancel").args(["--user", "root"]).env("SLURM_CONF", &self.conf).output();
        for (_, child) in self.daemons.iter_mut().rev() {
            let _ = Command::new("kill").arg(child.id().to_string()).output();
            let t = Instant::now();
            while t.elapsed() < Duration::from_secs(10) {
                if let Ok(Some(_)) = child.try_wait() {
                    break;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A user program: the bench's 1D-jacobi and 2D-jacobi regions (same loops, pragmas and
/// sizes), and a region the compiler keeps on the host (it calls `rand`).
const PROGRAM: &str = r#"#include <stdio.h>
#include <stdlib.h>

static unsigned rng = 7u;
static float next_float(void) { rng = rng * 1664525u + 1013904223u; return (float)(rng >> 8) / 16777216.0f - 0.5f; }

int main(void) {
  float *A1 = malloc(sizeof(float) * N), *B1 = malloc(sizeof(float) * N);
  float (*A)[NJ] = malloc(sizeof(float) * NI * NJ), (*B)[NJ] = malloc(sizeof(float) * NI * NJ);
  int *r = malloc(sizeof(int) * 8);
  for (int i = 0; i < N; i++) { A1[i] = next_float(); B1[i] = next_float(); }
  for (int i = 0; i < NI; i++) for (int j = 0; j < NJ; j++) { A[i][j] = next_float(); B[i][j] = next_float(); }
#pragma omp target teams distribute parallel for collapse(1) map(to: A1[0:N]) map(tofrom: B1[0:N])
  for (int i = 1; i < N - 1; i++)
    B1[i] = 0.33333 * (A1[i - 1] + A1[i] + A1[i + 1]);
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:NI][0:NJ]) map(tofrom: B[0:NI][0:NJ])
  for (int i = 1; i < NI - 1; i++)
    for (int j = 1; j < NJ - 1; j++)
      B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
#pragma omp target map(from: r[0:8])
  for (int i = 0; i < 8; i++) r[i] = 0 * rand() + i;
  double s = 0;
  for (int i = 0; i < N; i++) s += B1[i] * (i + 1);
  for (int i = 0; i < NI; i++) for (int j = 0; j < NJ; j++) s += B[i][j] * (i - j);
  printf("checksum %.17g %d\n", s, r[7]);
  return 0;
}
"#;

/// 2D-jacobi with run-time sizes: a function of (n, m) on VLA-typed arrays.
const PROGRAM_RUNTIME_SIZES: &str = r#"#include <stdio.h>
#include <stdlib.h>

static void jacobi(int n, int m, float A[n][m], float B[n][m]) {
#pragma omp target teams distribute parallel for collapse(2) map(to: A[0:n][0:m]) map(tofrom: B[0:n][0:m])
  for (int i = 1; i < n - 1; i++)
    for (int j = 1; j < m - 1; j++)
      B[i][j] = 0.2 * (A[i][j] + A[i][j - 1] + A[i][j + 1] + A[i + 1][j] + A[i - 1][j]);
}

int main(int argc, char **argv) {
  int n = argc > 2 ? atoi(argv[1]) : 67, m = argc > 2 ? atoi(argv[2]) : 71;
  float (*A)[m] = malloc(sizeof(float) * n * m), (*B)[m] = malloc(sizeof(float) * n * m);
  unsigned rng = 5u;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < m; j++) {
      rng = rng * 1664525u + 1013904223u; A[i][j] = (float)(rng >> 8) / 16777216.0f;
      rng = rng * 1664525u + 1013904223u; B[i][j] = (float)(rng >> 8) / 16777216.0f;
    }
  jacobi(n, m, A, B);
  double s = 0;
  for (int i = 0; i < n; i++) for (int j = 0; j < m; j++) s += B[i][j] * (i + 2 * j);
  printf("checksum %.17g\n", s);
  return 0;
}
"#;

#[test]
fn program_sweep() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("two_stencils.c");
    std::fs::write(&src, PROGRAM).unwrap();
    let out_dir = tmp.path().join("sweep");
    run(
        Command::new(tessera())
            .arg("dse")
            .arg(&src)
            .args(["--modes", "dataflow,tessera", "-j", "2", "-o"])
            .arg(&out_dir)
            .args(["--", "-DN=1031", "-DNI=67", "-DNJ=71"]),
        "tessera dse <program>",
    );
    let json = read_json(&out_dir.join("dse.json"));
    let configs = json["configs"].as_array().expect("configs");
    assert_eq!(configs.len(), 2);
    // The bench's stencils at the same sizes (its small defaults) and configurations.
    for (c, mode) in configs.iter().zip(["dataflow", "tessera"]) {
        assert_eq!(c["ok"], true, "{c:#}");
        assert_eq!(c["config"]["mode"], mode);
        let notes = c["notes"].as_array().unwrap();
        assert!(notes.iter().any(|n| n.as_str().unwrap().contains("1 launch(es) ran on the host")), "{notes:?}");
        let bench_json = tmp.path().join(format!("bench-{mode}.json"));
        run(
            Command::new(tessera())
                .args(["bench", "--size", "small", "--only", "1D-jacobi,2D-jacobi", "--mode", mode, "--json"])
                .arg(&bench_json),
            "tessera bench",
        );
        let bench = read_json(&bench_json);
        let stencils = bench["stencils"].as_array().unwrap();
        let sum = |f: &dyn Fn(&Value) -> u64| stencils.iter().map(f).sum::<u64>();
        for key in ["ddr_read_bytes", "ddr_write_bytes", "bursts"] {
            assert_eq!(c["exact"][key].as_u64().unwrap(), sum(&|s| s["exact"][key].as_u64().unwrap()), "{mode}: {key}");
        }
        // Both kernels in one xclbin: their resources add up.
        for key in ["dsp", "lut", "ff", "bram36"] {
            assert_eq!(c["resources"][key].as_u64().unwrap(), sum(&|s| s["resources"][key].as_u64().unwrap()), "{mode}: {key}");
        }
        let kernel_s: f64 = stencils.iter().map(|s| s["modelled"]["kernel_s"].as_f64().unwrap()).sum();
        assert!((c["modelled"]["kernel_s"].as_f64().unwrap() - kernel_s).abs() <= 1e-12 * kernel_s, "{mode}");
    }
    // Run-time sizes: the same 2D-jacobi in a function of (n, m), called with the
    // bench's small sizes. Each launch is modelled at its sizes (the report's scalars
    // substituted), so the figures are the constant-size stencil's.
    let rt = tmp.path().join("runtime_sizes.c");
    std::fs::write(&rt, PROGRAM_RUNTIME_SIZES).unwrap();
    let rt_out = tmp.path().join("sweep-rt");
    run(Command::new(tessera()).arg("dse").arg(&rt).args(["--modes", "dataflow", "-o"]).arg(&rt_out), "tessera dse <program, run-time sizes>");
    let c = &read_json(&rt_out.join("dse.json"))["configs"][0];
    assert_eq!(c["ok"], true, "{c:#}");
    let bench = read_json(&tmp.path().join("bench-dataflow.json"));
    let jacobi = bench["stencils"].as_array().unwrap().iter().find(|s| s["name"] == "2D-jacobi").unwrap();
    for key in ["ddr_read_bytes", "ddr_write_bytes", "bursts"] {
        assert_eq!(c["exact"][key], jacobi["exact"][key], "run-time sizes: {key}");
    }
    assert_eq!(c["modelled"]["kernel_s"], jacobi["modelled"]["kernel_s"], "run-time sizes: modelled at the launch's sizes");
    assert_eq!(c["modelled"]["baseline_s"], jacobi["modelled"]["baseline_s"]);

    // As a Slurm job array: the spec names the program and its arguments, and an array
    // task (`--run-config I spec.json`, run here directly) evaluates the program.
    let slurm_out = tmp.path().join("sweep-slurm");
    run(
        Command::new(tessera())
            .arg("dse")
            .arg(&rt)
            .args(["--modes", "dataflow", "--slurm", "--dry-run", "-o"])
            .arg(&slurm_out)
            .args(["--", "-DUNUSED=1"]),
        "tessera dse <program> --slurm --dry-run",
    );
    let spec = read_json(&slurm_out.join("spec.json"));
    assert_eq!(spec["program"]["cflags"], serde_json::json!(["-DUNUSED=1"]));
    assert!(spec["program"]["source"].as_str().unwrap().ends_with("runtime_sizes.c"));
    run(
        Command::new(tessera()).arg("dse").args(["--run-config", "0"]).arg(slurm_out.join("spec.json")),
        "tessera dse --run-config 0 (an array task)",
    );
    let task = read_json(&slurm_out.join("results/0.json"));
    assert_eq!(task["failed"], serde_json::json!([]), "{task:#}");
    assert_eq!(task["exact"]["ddr_read_bytes"], c["exact"]["ddr_read_bytes"]);

    // A stencil set takes no compiler arguments.
    let o = Command::new(tessera()).args(["dse", "2D-jacobi", "-o"]).arg(tmp.path().join("x")).args(["--", "-DN=4"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("arguments after `--` are for a program"));
}
