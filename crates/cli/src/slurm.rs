//! Slurm submission for `tessera dse --slurm` (one job array) and `tessera bitstream
//! --slurm` (compile jobs, then link jobs that depend on them): Slurm is the scheduler,
//! Tessera only writes batch scripts and calls its commands.
//!
//! - Every [`Job`] becomes a batch script `<dir>/<name>.sbatch` (`#SBATCH` lines for
//!   the job name, log, working directory, partition, time, CPUs and the extra
//!   `--sbatch-arg`s; the commands under `set -e`), so it can be submitted again by hand.
//! - [`submit`] runs `sbatch --parsable [--array=…] [--dependency=afterok:<id>:…]
//!   <script>` for each job in order, a job's dependencies being earlier jobs; when one
//!   submission fails the jobs already submitted are cancelled (`scancel`).
//! - [`dry_run`] gives the same submissions as shell lines that capture the job ids.
//! - [`wait`] polls `squeue -j <id> -t all` until every task of a job is in a final
//!   state (or Slurm has forgotten the job), and returns the last state of each task.
//!
//! The commands found on `PATH` are `sbatch`, `squeue` and `scancel`; `SLURM_CONF` and
//! the rest of the environment pass through (sbatch exports the submitting
//! environment to the jobs, Slurm's default).

use clap::Args;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;
use tessera_flow::shell_quote;

/// The `--slurm` options shared by `tessera dse` and `tessera bitstream`.
#[derive(Args, Debug, Clone, Default)]
pub struct SlurmArgs {
    /// Submit the work to Slurm with sbatch instead of running it here.
    #[arg(long)]
    pub slurm: bool,
    /// Slurm partition (`sbatch --partition`).
    #[arg(long, requires = "slurm")]
    pub partition: Option<String>,
    /// Time limit of each job (`sbatch --time`, e.g. 30:00 or 8:00:00).
    #[arg(long = "time", value_name = "LIMIT", requires = "slurm")]
    pub time_limit: Option<String>,
    /// CPUs of each job or array task (`sbatch --cpus-per-task`).
    #[arg(long, requires = "slurm")]
    pub cpus_per_task: Option<u32>,
    /// Another sbatch option for every job, e.g. `--sbatch-arg=--account=fpga`
    /// (repeatable; written into the scripts as `#SBATCH` lines).
    #[arg(long = "sbatch-arg", value_name = "OPTION", allow_hyphen_values = true, requires = "slurm")]
    pub sbatch_args: Vec<String>,
}

/// One batch job.
#[derive(Clone, Debug, PartialEq)]
pub struct Job {
    /// Job name, also the script's file stem (`<name>.sbatch`).
    pub name: String,
    /// The shell commands, run in order under `set -e`.
    pub commands: Vec<String>,
    /// Indices of earlier jobs that must have succeeded first (`afterok`).
    pub after: Vec<usize>,
    /// Array indices (`0-3`), for a job array.
    pub array: Option<String>,
    /// Where its output goes (`sbatch --output`; `%A`, `%a`, `%j` expand).
    pub log: PathBuf,
}

impl Job {
    /// A single job (no array) named `name`, its log `<log_dir>/<name>-<job id>.out`.
    pub fn single(log_dir: &Path, name: String, commands: Vec<String>, after: Vec<usize>) -> Job {
        Job { log: log_dir.join(format!("{name}-%j.out")), name, commands, after, array: None }
    }
}

/// The batch script of `job`, run in `workdir`; `after` names the jobs it waits for.
pub fn script(job: &Job, args: &SlurmArgs, workdir: &Path, after: &[&str]) -> String {
    let mut s = String::from("#!/bin/sh\n");
    s.push_str(&format!(
        "# Written by tessera; submitted as: sbatch{}{} {}.sbatch\n",
        job.array.as_ref().map(|a| format!(" --array={a}")).unwrap_or_default(),
        if after.is_empty() {
            String::new()
        } else {
            format!(" --dependency=afterok:{}", after.iter().map(|n| format!("<job id of {n}>")).collect::<Vec<_>>().join(":"))
        },
        job.name
    ));
    let mut opt = |line: String| s.push_str(&format!("#SBATCH {line}\n"));
    opt(format!("--job-name={}", job.name));
    opt(format!("--output={}", job.log.display()));
    opt(format!("--chdir={}", workdir.display()));
    if let Some(p) = &args.partition {
        opt(format!("--partition={p}"));
    }
    if let Some(t) = &args.time_limit {
        opt(format!("--time={t}"));
    }
    if let Some(c) = args.cpus_per_task {
        opt(format!("--cpus-per-task={c}"));
    }
    for a in &args.sbatch_args {
        opt(a.clone());
    }
    s.push_str("set -e\n");
    for c in &job.commands {
        s.push_str(c);
        s.push('\n');
    }
    s
}

/// Writes every job's script into `dir`; their paths, in order.
pub fn write_scripts(jobs: &[Job], args: &SlurmArgs, dir: &Path) -> Result<Vec<PathBuf>, String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let workdir = std::env::current_dir().map_err(|e| format!("the current directory: {e}"))?;
    let mut paths = Vec::new();
    for (k, job) in jobs.iter().enumerate() {
        if let Some(bad) = job.after.iter().find(|&&d| d >= k) {
            return Err(format!("job {} depends on job {bad}, which is not an earlier job", job.name));
        }
        if let Some(log_dir) = job.log.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(log_dir).map_err(|e| format!("cannot create {}: {e}", log_dir.display()))?;
        }
        let path = dir.join(format!("{}.sbatch", job.name));
        let after: Vec<&str> = job.after.iter().map(|&d| jobs[d].name.as_str()).collect();
        std::fs::write(&path, script(job, args, &workdir, &after)).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let _ = std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755));
        }
        paths.push(path);
    }
    Ok(paths)
}

/// The arguments of `sbatch` for `job` (after `sbatch`), its dependencies' ids given.
fn sbatch_args(job: &Job, script: &Path, deps: &[String]) -> Vec<String> {
    let mut a = vec!["--parsable".to_string()];
    if let Some(r) = &job.array {
        a.push(format!("--array={r}"));
    }
    if !deps.is_empty() {
        a.push(format!("--dependency=afterok:{}", deps.join(":")));
    }
    a.push(script.display().to_string());
    a
}

/// Writes the jobs' scripts into `dir` and submits them in order (`submit`), or with
/// `dry_run` prints the submissions as a shell script (`dry_run`); `waits` says in
/// the summary which job starts after which. Lines go to `say`.
pub fn write_and_submit(
    jobs: &[Job],
    args: &SlurmArgs,
    dir: &Path,
    dry_run: bool,
    waits: &str,
    say: &mut dyn FnMut(&str),
) -> Result<(), String> {
    let scripts = write_scripts(jobs, args, dir)?;
    say(&format!("# wrote {} job script(s) to {}", scripts.len(), dir.display()));
    if dry_run {
        for line in self::dry_run(jobs, &scripts) {
            say(&line);
        }
        return Ok(());
    }
    let ids = submit(jobs, &scripts, &mut |l| say(&format!("# {l}")))?;
    say(&format!("# {} job(s) submitted (squeue -j {}); {waits}; logs in {}", ids.len(), ids.join(","), dir.display()));
    Ok(())
}

/// The submissions as shell lines: `job<k>=$(sbatch --parsable … <script>)`, the
/// dependencies as `afterok:$job<i>:…`.
pub fn dry_run(jobs: &[Job], scripts: &[PathBuf]) -> Vec<String> {
    let mut lines = Vec::new();
    for (k, (job, script)) in jobs.iter().zip(scripts).enumerate() {
        let deps: Vec<String> = job.after.iter().map(|d| format!("${{job{d}%%;*}}")).collect();
        let args: Vec<String> = sbatch_args(job, script, &deps)
            .into_iter()
            .map(|a| if a.starts_with("--dependency=") { format!("\"{a}\"") } else { shell_quote(&a) })
            .collect();
        lines.push(format!("job{k}=$(sbatch {})   # {}", args.join(" "), job.name));
    }
    lines
}

/// Runs a Slurm command; its stdout, or a message with its stderr.
fn slurm_command(program: &str, args: &[String]) -> Result<String, String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run `{program}` ({e}): is Slurm's client (slurm-client) installed and on PATH?"))?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(format!(
            "`{program} {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Submits every job in order; the job ids. A failed submission cancels the jobs
/// already submitted.
pub fn submit(jobs: &[Job], scripts: &[PathBuf], say: &mut dyn FnMut(&str)) -> Result<Vec<String>, String> {
    let mut ids: Vec<String> = Vec::new();
    for (job, script) in jobs.iter().zip(scripts) {
        let deps: Vec<String> = job.after.iter().map(|&d| ids[d].clone()).collect();
        let args = sbatch_args(job, script, &deps);
        let out = slurm_command("sbatch", &args);
        let id = out.and_then(|o| {
            let id = o.trim().split(';').next().unwrap_or("").to_string();
            if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) {
                Err(format!("sbatch printed `{}`, not a job id", o.trim()))
            } else {
                Ok(id)
            }
        });
        match id {
            Ok(id) => {
                say(&format!("submitted {} as job {id}: sbatch {}", job.name, args.join(" ")));
                ids.push(id);
            }
            Err(e) => {
                if !ids.is_empty() {
                    let cancelled = slurm_command("scancel", &ids);
                    return Err(format!(
                        "{e}\nthe jobs submitted before ({}) {}",
                        ids.join(", "),
                        match cancelled {
                            Ok(_) => "were cancelled".to_string(),
                            Err(c) => format!("could not be cancelled: {c}"),
                        }
                    ));
                }
                return Err(e);
            }
        }
    }
    Ok(ids)
}

/// Final job states (`squeue`'s `%T`).
const FINAL: [&str; 11] = [
    "COMPLETED",
    "FAILED",
    "CANCELLED",
    "TIMEOUT",
    "NODE_FAIL",
    "OUT_OF_MEMORY",
    "PREEMPTED",
    "BOOT_FAIL",
    "DEADLINE",
    "REVOKED",
    "SPECIAL_EXIT",
];

/// Whether `state` is final.
pub fn is_final(state: &str) -> bool {
    FINAL.contains(&state)
}

/// The tasks of job `id` and their states, from `squeue -h -j <id> -t all -o %K|%T`
/// (`%K` the array index, or a range of pending ones); `None` when Slurm no longer
/// knows the job.
pub fn states(id: &str) -> Result<Option<BTreeMap<String, String>>, String> {
    let args: Vec<String> = ["-h", "-j", id, "-t", "all", "-o", "%K|%T"].iter().map(|s| s.to_string()).collect();
    match slurm_command("squeue", &args) {
        Ok(out) => Ok(Some(
            out.lines()
                .filter_map(|l| l.trim().split_once('|'))
                .map(|(k, s)| (k.to_string(), s.to_string()))
                .collect(),
        )),
        Err(e) if e.contains("Invalid job id") => Ok(None),
        Err(e) => Err(e),
    }
}

/// Waits until every task of job `id` is in a final state, polling every `poll`;
/// `tick` sees the states after each poll. The last states seen (empty when Slurm
/// forgot the job before the first poll). Five failed polls in a row are an error.
pub fn wait(id: &str, poll: Duration, tick: &mut dyn FnMut(&BTreeMap<String, String>)) -> Result<BTreeMap<String, String>, String> {
    let mut last = BTreeMap::new();
    let mut errors = 0;
    loop {
        match states(id) {
            Ok(None) => return Ok(last),
            Ok(Some(s)) => {
                errors = 0;
                tick(&s);
                let done = !s.is_empty() && s.values().all(|v| is_final(v));
                let forgotten = s.is_empty() && !last.is_empty();
                if !s.is_empty() {
                    last = s;
                }
                if done || forgotten {
                    return Ok(last);
                }
            }
            Err(e) => {
                errors += 1;
                if errors >= 5 {
                    return Err(format!("cannot follow job {id}: {e}"));
                }
            }
        }
        std::thread::sleep(poll);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(name: &str, after: Vec<usize>, array: Option<&str>) -> Job {
        Job {
            name: name.into(),
            commands: vec![format!("echo {name}")],
            after,
            array: array.map(str::to_string),
            log: PathBuf::from(format!("logs/{name}.out")),
        }
    }

    #[test]
    fn scripts_carry_the_options() {
        let args = SlurmArgs {
            slurm: true,
            partition: Some("fpga".into()),
            time_limit: Some("8:00:00".into()),
            cpus_per_task: Some(4),
            sbatch_args: vec!["--account=p1".into()],
        };
        let s = script(&job("k", vec![], Some("0-3")), &args, Path::new("/w"), &[]);
        assert!(s.starts_with("#!/bin/sh\n"));
        for line in [
            "#SBATCH --job-name=k",
            "#SBATCH --output=logs/k.out",
            "#SBATCH --chdir=/w",
            "#SBATCH --partition=fpga",
            "#SBATCH --time=8:00:00",
            "#SBATCH --cpus-per-task=4",
            "#SBATCH --account=p1",
            "set -e",
            "echo k",
        ] {
            assert!(s.lines().any(|l| l == line), "{line} missing from\n{s}");
        }
        assert!(s.contains("sbatch --array=0-3 k.sbatch"));
        let l = script(&job("l", vec![0], None), &args, Path::new("/w"), &["c"]);
        assert!(l.contains("sbatch --dependency=afterok:<job id of c> l.sbatch"), "{l}");
    }

    #[test]
    fn dry_run_chains_dependencies() {
        let jobs = [job("c1", vec![], None), job("c2", vec![], None), job("link", vec![0, 1], None)];
        let scripts: Vec<PathBuf> = jobs.iter().map(|j| PathBuf::from(format!("s/{}.sbatch", j.name))).collect();
        let lines = dry_run(&jobs, &scripts);
        assert_eq!(lines[0], "job0=$(sbatch --parsable s/c1.sbatch)   # c1");
        assert_eq!(lines[2], "job2=$(sbatch --parsable \"--dependency=afterok:${job0%%;*}:${job1%%;*}\" s/link.sbatch)   # link");
        let arr = dry_run(&[job("a", vec![], Some("0-9"))], &[PathBuf::from("a.sbatch")]);
        assert_eq!(arr[0], "job0=$(sbatch --parsable --array=0-9 a.sbatch)   # a");
    }

    #[test]
    fn dependencies_must_be_earlier() {
        let dir = tempfile::tempdir().unwrap();
        let e = write_scripts(&[job("a", vec![0], None)], &SlurmArgs::default(), dir.path()).unwrap_err();
        assert!(e.contains("not an earlier job"), "{e}");
    }
}
