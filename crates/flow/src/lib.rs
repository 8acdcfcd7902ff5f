//! The Vitis flow as data: from kernel manifests to the `v++` command lines that turn
//! a program's kernels into one FPGA binary (`.xclbin`).
//!
//! Per kernel (one manifest `<kernel>.manifest.json` and its source `<kernel>.cpp`,
//! both written by the plugin into `<output>.tessera/`) [`plan_kernel`] plans
//!
//! 1. `v++ -c` (compile): Vitis HLS turns `<kernel>.cpp` into `<kernel>.xo` (kernels
//!    compile independently, in parallel with `tessera bitstream -j`);
//!
//! and per program [`plan_link`] plans
//!
//! 2. one `v++ -l` (link): every kernel's `.xo` plus the platform become
//!    `<program>.xclbin`, with one connectivity config `<program>.cfg`: one compute
//!    unit per kernel (`nk=`), every `m_axi` port on a memory bank (`sp=`), fixed
//!    clocks per compute unit (`[clock]`). The runtime loads it once and runs every
//!    kernel of the program from it;
//! 3. for the emulation targets, once per platform and target, `emconfigutil` writes
//!    the `emconfig.json` XRT needs when `XCL_EMULATION_MODE` is set ([`emconfig`]).
//!
//! A [`KernelPlan`] also holds a link of that kernel alone into the `.xclbin` its
//! manifest names (`<kernel>.xclbin`, with `<kernel>.cfg`): `tessera bitstream
//! --per-kernel` uses it for kernels that do not fit on the device together.
//!
//! Everything lands in `<out>/<target>/`. This crate does no I/O: the functions return
//! plans (paths, the config text, program + argument vectors); `tessera bitstream`
//! (crates/cli) writes and runs them. References for the flags are the AMD Vitis user
//! guide UG1393 (2023.x; UG1700/UG1702 from 2024.1), cited next to each non-obvious flag.

#![warn(missing_docs)]

pub mod tapasco;

use serde::Serialize;
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use tessera_ir::manifest::{KernelParam, Manifest};

/// The memory bank every port goes to unless told otherwise. Every DDR-based Alveo
/// platform (U200/U250) and most custom DDR platforms name their first bank `DDR[0]`;
/// HBM cards (U50/U55C/U280) want `HBM[0]`, VCU118-style custom platforms often
/// `DDR[0]` or `MIG[0]` (see `platforminfo <xpfm>`, "Memory Information").
pub const DEFAULT_MEMORY: &str = "DDR[0]";

/// The report level passed to `v++` for `hw_emu` and `hw` unless told otherwise.
pub const DEFAULT_REPORT_LEVEL: &str = "1";

/// The `v++` build target (`-t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Target {
    /// Software emulation: the kernel is compiled natively (minutes).
    SwEmu,
    /// Hardware emulation: HLS, then RTL simulation of the kernel.
    HwEmu,
    /// The real FPGA: HLS, Vivado synthesis, place and route (hours).
    Hw,
}

impl Target {
    /// All targets.
    pub const ALL: [Target; 3] = [Target::SwEmu, Target::HwEmu, Target::Hw];

    /// The `-t` value: `sw_emu`, `hw_emu` or `hw`.
    pub fn name(self) -> &'static str {
        match self {
            Target::SwEmu => "sw_emu",
            Target::HwEmu => "hw_emu",
            Target::Hw => "hw",
        }
    }

    /// Parses a `-t` value.
    pub fn parse(s: &str) -> Option<Target> {
        Target::ALL.into_iter().find(|t| t.name() == s)
    }

    /// Whether this is an emulation target (needs `emconfig.json` and
    /// `XCL_EMULATION_MODE=<target>` at run time).
    pub fn is_emulation(self) -> bool {
        self != Target::Hw
    }

    /// Whether Vitis HLS (and, for `hw`, Vivado) runs: everything except `sw_emu`.
    pub fn runs_hls(self) -> bool {
        self != Target::SwEmu
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// How the link step sets the kernel clock when a frequency is requested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LinkClock {
    /// Platforms with scalable kernel clocks (the Alveo XDMA shells):
    /// `--kernel_frequency <MHz>` (UG1393 2023.1, "Managing Clock Frequencies": "For
    /// platforms with scalable clocks use the v++ --kernel_frequency option").
    Scalable,
    /// Platforms with fixed clocks (typical for custom platforms): `--clock.freqHz
    /// <Hz>:<cu>` (UG1393 2023.1, "--clock Options"); v++ derives the frequency from
    /// a fixed platform clock with an MMCM.
    Fixed,
}

/// What the flow is asked to do; everything except the manifest.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FlowOptions {
    /// Build target.
    pub target: Target,
    /// `--platform`: a `.xpfm` path or a platform name v++ finds through
    /// `$PLATFORM_REPO_PATHS` (e.g. `xilinx_u250_gen3x16_xdma_4_1_202210_1`).
    pub platform: String,
    /// Memory bank of every port without an entry in `port_memory`.
    pub default_memory: String,
    /// Memory bank per port: key `<port>` (any kernel) or `<kernel>.<port>`; the port is
    /// the manifest argument's name (or the kernel parameter's, when they differ).
    pub port_memory: BTreeMap<String, String>,
    /// Kernel clock in MHz; `None`: the platform's default clock.
    pub clock_mhz: Option<u32>,
    /// How the link step applies `clock_mhz`.
    pub link_clock: LinkClock,
    /// `--report_level` for `hw_emu` and `hw` (`0`, `1`, `2` or `estimate`; UG1393
    /// "Controlling Report Generation"); `None`: v++'s default.
    pub report_level: Option<String>,
    /// Directory holding `<kernel>.cpp` (the `<output>.tessera/` directory).
    pub kernel_dir: PathBuf,
    /// Output root: files go to `<out_dir>/<target>/`.
    pub out_dir: PathBuf,
    /// Include directories for `v++ -c` (the directory holding `tessera_hls.h` first).
    pub includes: Vec<PathBuf>,
    /// Extra arguments for every `v++ -c`, inserted before `-o`.
    pub compile_args: Vec<String>,
    /// Extra arguments for every `v++ -l`, inserted before `-o`.
    pub link_args: Vec<String>,
}

impl FlowOptions {
    /// Options with the defaults: every port on [`DEFAULT_MEMORY`], the platform's
    /// clock, report level [`DEFAULT_REPORT_LEVEL`], no includes, no extra arguments.
    pub fn new(
        target: Target,
        platform: impl Into<String>,
        kernel_dir: impl Into<PathBuf>,
        out_dir: impl Into<PathBuf>,
    ) -> FlowOptions {
        FlowOptions {
            target,
            platform: platform.into(),
            default_memory: DEFAULT_MEMORY.to_string(),
            port_memory: BTreeMap::new(),
            clock_mhz: None,
            link_clock: LinkClock::Scalable,
            report_level: Some(DEFAULT_REPORT_LEVEL.to_string()),
            kernel_dir: kernel_dir.into(),
            out_dir: out_dir.into(),
            includes: Vec::new(),
            compile_args: Vec::new(),
            link_args: Vec::new(),
        }
    }

    /// `<out_dir>/<target>`: where `.xo`, `.cfg`, `.xclbin` (and `emconfig.json`) go.
    /// This is the directory to point `TESSERA_BITSTREAM_DIR` at.
    pub fn target_dir(&self) -> PathBuf {
        self.out_dir.join(self.target.name())
    }
}

/// One command: a program and its arguments (no shell involved).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Step {
    /// Program, looked up on `PATH` (`v++`, `emconfigutil`).
    pub program: String,
    /// Arguments.
    pub args: Vec<String>,
}

impl Step {
    fn new(program: &str) -> Step {
        Step { program: program.to_string(), args: Vec::new() }
    }

    fn arg(&mut self, a: impl Into<String>) -> &mut Step {
        self.args.push(a.into());
        self
    }

    fn path(&mut self, p: &Path) -> &mut Step {
        self.arg(p.display().to_string())
    }

    /// The command as one line a POSIX shell runs unchanged (arguments quoted where
    /// needed).
    pub fn shell(&self) -> String {
        std::iter::once(&self.program).chain(&self.args).map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
    }
}

/// `s` quoted for a POSIX shell: unchanged when it only has harmless characters.
pub fn shell_quote(s: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "_-+./:=@%,".contains(c);
    if !s.is_empty() && s.chars().all(safe) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// An `m_axi` port of the kernel and the memory bank it is linked to.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Port {
    /// The manifest argument (the OpenMP variable).
    pub arg: String,
    /// The kernel parameter (the `port=` of its `#pragma HLS INTERFACE mode=m_axi`);
    /// the argument's name unless that is a C++ keyword.
    pub port: String,
    /// Its `bundle=` (`gmem<i>`), if the kernel source names one.
    pub bundle: Option<String>,
    /// The memory bank (`sptag`), e.g. `DDR[0]`, `HBM[3]`, `MIG[0]`.
    pub memory: String,
}

/// Everything needed to build one kernel's `.xclbin`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct KernelPlan {
    /// Kernel (top function) name.
    pub kernel: String,
    /// `file:line` of the region.
    pub region: String,
    /// Build target.
    pub target: Target,
    /// The kernel source, `<kernel_dir>/<kernel>.cpp`.
    pub source: PathBuf,
    /// `<out>/<target>`.
    pub target_dir: PathBuf,
    /// `<out>/<target>/<kernel>.build`: v++'s temporary, log and report directories.
    pub build_dir: PathBuf,
    /// `<out>/<target>/<kernel>.xo`, written by the compile step.
    pub xo: PathBuf,
    /// `<out>/<target>/<kernel>.cfg`, the connectivity config of the link step.
    pub cfg_path: PathBuf,
    /// The text of `cfg_path`.
    pub cfg: String,
    /// `<out>/<target>/<manifest.xclbin>`, written by the link step.
    pub xclbin: PathBuf,
    /// The memory ports, in kernel parameter order.
    pub ports: Vec<Port>,
    /// `v++ -c …`.
    pub compile: Step,
    /// `v++ -l …`.
    pub link: Step,
}

impl KernelPlan {
    /// Directories to create before the steps run.
    pub fn dirs(&self) -> Vec<PathBuf> {
        vec![self.target_dir.clone(), self.build_dir.clone()]
    }

    /// The compile and link steps, in order.
    pub fn steps(&self) -> [&Step; 2] {
        [&self.compile, &self.link]
    }

    /// The plan as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a plan is always serialisable")
    }
}

/// Why a manifest cannot be planned.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FlowError {
    /// The region was not offloaded: there is no kernel to build.
    NotOffloaded {
        /// `file:line` of the region.
        region: String,
        /// The compile-time remark, if any.
        reason: Option<String>,
    },
    /// The manifest, the kernel source or the options are inconsistent.
    Invalid(String),
}

impl fmt::Display for FlowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowError::NotOffloaded { region, reason: Some(r) } => {
                write!(f, "{region}: region not offloaded ({r}); no kernel to build")
            }
            FlowError::NotOffloaded { region, reason: None } => {
                write!(f, "{region}: region not offloaded; no kernel to build")
            }
            FlowError::Invalid(m) => f.write_str(m),
        }
    }
}

impl std::error::Error for FlowError {}

fn invalid(m: String) -> FlowError {
    FlowError::Invalid(m)
}

/// Whether `s` is a memory bank name v++ accepts in `sp=`: `NAME`, `NAME[i]` or
/// `NAME[i:j]` (a range of banks, UG1393 "Mapping Kernel Ports to Memory").
pub fn is_memory_bank(s: &str) -> bool {
    let (name, rest) = match s.find('[') {
        Some(i) => (&s[..i], Some(&s[i..])),
        None => (s, None),
    };
    let ident = !name.is_empty()
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    let digits = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_digit());
    ident
        && match rest {
            None => true,
            Some(r) => match r.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
                Some(inner) => match inner.split_once(':') {
                    Some((a, b)) => digits(a) && digits(b),
                    None => digits(inner),
                },
                None => false,
            },
        }
}

fn is_c_identifier(s: &str) -> bool {
    s.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// The `m_axi` ports a kernel source declares, in order: `(port, bundle)` from every
/// `#pragma HLS INTERFACE mode=m_axi port=<p> … bundle=<b>` (also the older
/// `#pragma HLS INTERFACE m_axi port=<p>` spelling).
pub fn m_axi_ports(kernel_source: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    for line in kernel_source.lines() {
        let mut words = line.split_whitespace();
        if !(words.next() == Some("#pragma")
            && words.next().is_some_and(|w| w.eq_ignore_ascii_case("HLS"))
            && words.next().is_some_and(|w| w.eq_ignore_ascii_case("INTERFACE")))
        {
            continue;
        }
        let (mut m_axi, mut port, mut bundle) = (false, None, None);
        for w in words {
            let lower = w.to_ascii_lowercase();
            if lower == "m_axi" || lower == "mode=m_axi" {
                m_axi = true;
            } else if let Some(p) = w.strip_prefix("port=") {
                port = Some(p.to_string());
            } else if let Some(b) = w.strip_prefix("bundle=") {
                bundle = Some(b.to_string());
            }
        }
        if let (true, Some(p)) = (m_axi, port) {
            out.push((p, bundle));
        }
    }
    out
}

/// The memory ports of a manifest's kernel: every parameter of an array argument
/// (`Manifest::kernel_params`: the arguments', then the write ports, then the
/// second-bank halves of interleaved arrays and their write ports), in order, matched
/// to the `m_axi` pragmas of the kernel source (an argument's own parameter may be its
/// name plus `_` when the name is a C++ keyword); each with its parameter (argument,
/// write port, half). A source without any `m_axi` pragma (e.g. a hand-written
/// manifest) uses the parameter names.
fn memory_ports(manifest: &Manifest, kernel: &str) -> Result<Vec<(KernelParam, String, Option<String>)>, FlowError> {
    let pragmas = m_axi_ports(&manifest.kernel_source);
    let mut used = vec![false; pragmas.len()];
    let mut out = Vec::new();
    for param in manifest.kernel_params().into_iter().filter(|p| !p.size) {
        let arg = &manifest.args[param.arg];
        if arg.array.is_none() {
            if param.write_port || param.half != 0 {
                let what = if param.write_port { "a write port" } else { "a second-bank port" };
                return Err(invalid(format!("kernel {kernel}: the manifest gives scalar `{}` {what}", arg.name)));
            }
            continue;
        }
        if pragmas.is_empty() {
            let name = param.name.clone();
            out.push((param, name, None));
            continue;
        }
        let keyword = format!("{}_", param.name);
        let own = !param.write_port && param.half == 0;
        let found = pragmas
            .iter()
            .position(|(p, _)| *p == param.name)
            .or_else(|| pragmas.iter().position(|(p, _)| own && *p == keyword));
        match found {
            Some(i) if !used[i] => {
                used[i] = true;
                out.push((param, pragmas[i].0.clone(), pragmas[i].1.clone()));
            }
            _ => {
                let what = match (param.write_port, param.half) {
                    (false, 0) => "array argument",
                    (true, 0) => "the write port of array argument",
                    (false, _) => "the second-bank port of interleaved array argument",
                    (true, _) => "the second-bank write port of interleaved array argument",
                };
                return Err(invalid(format!(
                    "kernel {kernel}: {what} `{}` has no `#pragma HLS INTERFACE mode=m_axi port={}` in the kernel source",
                    arg.name, param.name
                )));
            }
        }
    }
    if let Some(i) = used.iter().position(|u| !u) {
        return Err(invalid(format!(
            "kernel {kernel}: m_axi port `{}` of the kernel source is not an array argument of the manifest",
            pragmas[i].0
        )));
    }
    Ok(out)
}

/// The memory bank of `port` (argument `arg`, in the manifest's DDR bank `bank`:
/// `Manifest::param_bank`, so 0 and 1 for the two halves of an interleaved array) of
/// `kernel`: the most specific entry of `port_memory` (`<kernel>.<port>`, then
/// `<port>`; port or argument name), else the default for bank 0 and the bank that
/// many after it for the others (`DDR[0]` → `DDR[1]`; see [`nth_bank`]). An entry for
/// the argument's name covers all its ports (its write port, and both halves of an
/// interleaved array, which then share that memory); one for a port's name only it.
fn memory_of(opts: &FlowOptions, kernel: &str, arg: &str, port: &str, bank: u32) -> Result<String, FlowError> {
    let keys = [format!("{kernel}.{port}"), format!("{kernel}.{arg}"), port.to_string(), arg.to_string()];
    if let Some(m) = keys.iter().find_map(|k| opts.port_memory.get(k)) {
        return Ok(m.clone());
    }
    nth_bank(&opts.default_memory, bank).ok_or_else(|| {
        invalid(format!(
            "kernel {kernel}: port `{port}` is in DDR bank {bank} (compiled with banks=2), but the default memory              `{}` names no numbered bank to count from; give its bank with --memory {port}=<bank>",
            opts.default_memory
        ))
    })
}

/// The bank `n` after `memory` when it is `NAME[i]` (`NAME[i+n]`); `memory` itself for
/// `n = 0`; `None` for other forms.
pub fn nth_bank(memory: &str, n: u32) -> Option<String> {
    if n == 0 {
        return Some(memory.to_string());
    }
    let (name, rest) = memory.split_once('[')?;
    let i: u32 = rest.strip_suffix(']')?.parse().ok()?;
    Some(format!("{name}[{}]", i + n))
}

/// The compute unit name of a kernel's only instance: `<kernel>_1`, v++'s default
/// (UG1393 "--connectivity Options", `nk`).
pub fn compute_unit(kernel: &str) -> String {
    format!("{kernel}_1")
}

/// The connectivity config (`v++ -l --config`) of one kernel: one compute unit and
/// every memory port on its bank. Scalars are `s_axilite` registers and get no entry.
///
/// Syntax (UG1393 2023.1, "Vitis Compiler Configuration File" and "--connectivity
/// Options"): `nk=<kernel>:<count>:<cu>` and `sp=<cu>.<argument>:<sptag>` in the
/// `[connectivity]` section.
pub fn connectivity_config(kernel: &str, region: &str, ports: &[Port]) -> String {
    let cu = compute_unit(kernel);
    let mut s = String::new();
    s.push_str(&format!("# Connectivity of kernel {kernel} (region {region}).\n"));
    s.push_str("# Written by `tessera bitstream` for `v++ -l --config`: one compute unit, every\n");
    s.push_str("# m_axi port on a memory bank of the platform; scalars are s_axilite registers.\n");
    s.push_str("[connectivity]\n");
    s.push_str(&format!("nk={kernel}:1:{cu}\n"));
    for p in ports {
        s.push_str(&format!("sp={cu}.{}:{}\n", p.port, p.memory));
    }
    s
}

/// Options common to every `v++` of a build: target, platform, intermediate files kept,
/// v++'s temporary, log and report directories under `build_dir`, the report level.
fn common_args(s: &mut Step, opts: &FlowOptions, build_dir: &Path) {
    let t = opts.target;
    s.arg("-t").arg(t.name()).arg("--platform").arg(opts.platform.clone());
    s.arg("--save-temps");
    s.arg("--temp_dir").path(&build_dir.join("tmp"));
    s.arg("--log_dir").path(&build_dir.join("logs"));
    s.arg("--report_dir").path(&build_dir.join("reports"));
    // -R/--report_level applies to hw_emu and hw (UG1393 "Controlling Report
    // Generation").
    if let (true, Some(r)) = (t.runs_hls(), &opts.report_level) {
        s.arg("--report_level").arg(r.clone());
    }
}

/// Plans the build of one manifest's kernel.
pub fn plan_kernel(manifest: &Manifest, opts: &FlowOptions) -> Result<KernelPlan, FlowError> {
    let Some(kernel) = manifest.kernel.clone() else {
        return Err(FlowError::NotOffloaded { region: manifest.region.clone(), reason: manifest.rejected.clone() });
    };
    if !is_c_identifier(&kernel) {
        return Err(invalid(format!("kernel name `{kernel}` is not a C identifier")));
    }
    if opts.platform.trim().is_empty() {
        return Err(invalid("no platform given".to_string()));
    }
    if !is_memory_bank(&opts.default_memory) {
        return Err(invalid(format!(
            "memory bank `{}` is not of the form NAME, NAME[i] or NAME[i:j] (e.g. DDR[0], HBM[0], MIG[0])",
            opts.default_memory
        )));
    }
    if let Some((k, m)) = opts.port_memory.iter().find(|(_, m)| !is_memory_bank(m)) {
        return Err(invalid(format!(
            "memory bank `{m}` of port `{k}` is not of the form NAME, NAME[i] or NAME[i:j] (e.g. DDR[0], HBM[0], MIG[0])"
        )));
    }
    if opts.clock_mhz == Some(0) {
        return Err(invalid("the kernel clock must be above 0 MHz".to_string()));
    }
    let xclbin_name = if manifest.xclbin.is_empty() { format!("{kernel}.xclbin") } else { manifest.xclbin.clone() };
    if xclbin_name.contains(['/', '\\']) || !xclbin_name.ends_with(".xclbin") {
        return Err(invalid(format!("manifest names the bitstream `{xclbin_name}`, not a `*.xclbin` file name")));
    }

    let params = memory_ports(manifest, &kernel)?;
    let ports: Vec<Port> = params
        .iter()
        .map(|(param, port, bundle)| {
            let arg = manifest.args[param.arg].name.clone();
            // An interleaved array's halves: bank 0 and 1; other arrays: their bank.
            let memory = memory_of(opts, &kernel, &arg, port, manifest.param_bank(param))?;
            Ok(Port { arg, port: port.clone(), bundle: bundle.clone(), memory })
        })
        .collect::<Result<_, FlowError>>()?;
    // A write port passes the buffer of its array's half again: same memory as the
    // half's own port (the argument's for half 0, its second-bank port for half 1).
    for (i, (w, _, _)) in params.iter().enumerate().filter(|(_, (p, _, _))| p.write_port) {
        let own = params.iter().position(|(p, _, _)| p.arg == w.arg && !p.write_port && p.half == w.half);
        if let Some(own) = own.map(|j| &ports[j]).filter(|own| own.memory != ports[i].memory) {
            let (buffer, only) = if w.half == 0 {
                ("the array's one buffer", ports[i].arg.as_str())
            } else {
                ("the one buffer of the array's second half", own.port.as_str())
            };
            let w = &ports[i];
            return Err(invalid(format!(
                "kernel {kernel}: the write port `{}` of array `{}` is on {} and its port `{}` on {}; both pass \
                 {buffer}, so they must be on the same memory (give both the same --memory, or only `{only}`)",
                w.port, w.arg, w.memory, own.port, own.memory
            )));
        }
    }

    let t = opts.target;
    let target_dir = opts.target_dir();
    let build_dir = target_dir.join(format!("{kernel}.build"));
    let source = opts.kernel_dir.join(format!("{kernel}.cpp"));
    let xo = target_dir.join(format!("{kernel}.xo"));
    let cfg_path = target_dir.join(format!("{kernel}.cfg"));
    let xclbin = target_dir.join(&xclbin_name);
    let cfg = connectivity_config(&kernel, &manifest.region, &ports);

    // Options common to compile and link. --save-temps keeps the intermediate files,
    // among them the HLS reports (UG1393 "Generating and Opening the HLS Report": "You
    // must specify the --save-temps option … to preserve the intermediate files
    // produced by Vitis HLS"). --temp_dir/--log_dir/--report_dir default to ./_x and
    // would collide between kernels built in parallel (UG1393 "Output Directories of
    // the v++ Command").
    let common = |s: &mut Step| common_args(s, opts, &build_dir);

    let mut compile = Step::new("v++");
    compile.arg("-c");
    common(&mut compile);
    compile.arg("-k").arg(kernel.clone());
    for inc in &opts.includes {
        compile.arg("-I").path(inc);
    }
    // tessera_hls.h picks Vitis' port types (`T *`, hls::burst_maxi) under
    // __SYNTHESIS__ or TESSERA_VITIS; sw_emu compiles the kernel natively, without
    // __SYNTHESIS__, so the flow always defines TESSERA_VITIS (v++ -D <name>=<value>).
    compile.arg("-D").arg("TESSERA_VITIS=1");
    if let (true, Some(mhz)) = (t.runs_hls(), opts.clock_mhz) {
        // --hls.clock <frequency_in_Hz>:<kernel> (UG1393 2023.1 "--hls Options"): the
        // clock Vitis HLS schedules for. sw_emu runs no HLS.
        compile.arg("--hls.clock").arg(format!("{}:{kernel}", u64::from(mhz) * 1_000_000));
    }
    compile.args.extend(opts.compile_args.iter().cloned());
    compile.arg("-o").path(&xo).path(&source);

    let mut link = Step::new("v++");
    link.arg("-l");
    common(&mut link);
    link.arg("--config").path(&cfg_path);
    if let (true, Some(mhz)) = (t.runs_hls(), opts.clock_mhz) {
        match opts.link_clock {
            LinkClock::Scalable => link.arg("--kernel_frequency").arg(mhz.to_string()),
            LinkClock::Fixed => {
                link.arg("--clock.freqHz").arg(format!("{}:{}", u64::from(mhz) * 1_000_000, compute_unit(&kernel)))
            }
        };
    }
    link.args.extend(opts.link_args.iter().cloned());
    link.arg("-o").path(&xclbin).path(&xo);

    Ok(KernelPlan {
        kernel,
        region: manifest.region.clone(),
        target: t,
        source,
        target_dir,
        build_dir,
        xo,
        cfg_path,
        cfg,
        xclbin,
        ports,
        compile,
        link,
    })
}

/// Everything needed to link the kernels of one program into one `.xclbin`: the
/// compile steps stay those of the kernels' [`KernelPlan`]s (one `.xo` each), and one
/// `v++ -l` links every `.xo` with one connectivity config, so the runtime loads the
/// board once for the whole program.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct LinkPlan {
    /// The program's name: the `.xclbin` is `<name>.xclbin`.
    pub name: String,
    /// Build target.
    pub target: Target,
    /// `<out>/<target>/<name>.link`: the link's temporary, log and report directories.
    pub build_dir: PathBuf,
    /// `<out>/<target>/<name>.cfg`, the connectivity config of the link.
    pub cfg_path: PathBuf,
    /// The text of `cfg_path`.
    pub cfg: String,
    /// `<out>/<target>/<name>.xclbin`, written by the link.
    pub xclbin: PathBuf,
    /// The kernels linked, in order (one compute unit each).
    pub kernels: Vec<String>,
    /// `v++ -l …` over every kernel's `.xo`.
    pub link: Step,
}

impl LinkPlan {
    /// Directories to create before the link runs.
    pub fn dirs(&self) -> Vec<PathBuf> {
        vec![self.build_dir.clone()]
    }
}

/// Whether `name` can name a program's bitstream `<name>.xclbin`: not empty, letters,
/// digits and `_ . + -`, not starting with `.` or `-`.
pub fn is_program_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(['.', '-'])
        && name.chars().all(|c| c.is_ascii_alphanumeric() || "_.+-".contains(c))
}

/// The connectivity config (`v++ -l --config`) of a program: one compute unit per
/// kernel (`nk=`), every memory port of every kernel on its bank (`sp=`), and, for
/// platforms with fixed clocks, every compute unit's clock (`[clock]` `freqHz=`).
/// Scalars are `s_axilite` registers and get no entry.
///
/// Syntax (UG1393 2023.1, "Vitis Compiler Configuration File", "--connectivity
/// Options", "--clock Options"): `nk=<kernel>:<count>:<cu>` and
/// `sp=<cu>.<argument>:<sptag>` in the `[connectivity]` section, `freqHz=<Hz>:<cu>` in
/// the `[clock]` section (the config-file spelling of `--clock.freqHz`).
pub fn program_connectivity_config(name: &str, kernels: &[KernelPlan], opts: &FlowOptions) -> String {
    let mut s = String::new();
    s.push_str(&format!("# Connectivity of program {name}: {} kernel(s), linked into {name}.xclbin.\n", kernels.len()));
    s.push_str("# Written by `tessera bitstream` for `v++ -l --config`: one compute unit per kernel,\n");
    s.push_str("# every m_axi port on a memory bank of the platform; scalars are s_axilite registers.\n");
    s.push_str("[connectivity]\n");
    for k in kernels {
        s.push_str(&format!("nk={}:1:{}\n", k.kernel, compute_unit(&k.kernel)));
    }
    for k in kernels {
        s.push_str(&format!("# {} (region {})\n", k.kernel, k.region));
        let cu = compute_unit(&k.kernel);
        for p in &k.ports {
            s.push_str(&format!("sp={cu}.{}:{}\n", p.port, p.memory));
        }
    }
    if let (true, Some(mhz), LinkClock::Fixed) = (opts.target.runs_hls(), opts.clock_mhz, opts.link_clock) {
        s.push_str("[clock]\n");
        for k in kernels {
            s.push_str(&format!("freqHz={}:{}\n", u64::from(mhz) * 1_000_000, compute_unit(&k.kernel)));
        }
    }
    s
}

/// Plans the link of a program's kernels (planned by [`plan_kernel`] with the same
/// target and output directory) into `<out>/<target>/<name>.xclbin`.
pub fn plan_link(name: &str, kernels: &[KernelPlan], opts: &FlowOptions) -> Result<LinkPlan, FlowError> {
    if !is_program_name(name) {
        return Err(invalid(format!(
            "`{name}` cannot name the program's bitstream <name>.xclbin: use letters, digits and _ . + - \
             (the program's executable name)"
        )));
    }
    if kernels.is_empty() {
        return Err(invalid(format!("program {name}: no kernel to link")));
    }
    let target_dir = opts.target_dir();
    for (i, k) in kernels.iter().enumerate() {
        if let Some(first) = kernels[..i].iter().find(|o| o.kernel == k.kernel) {
            return Err(invalid(format!(
                "kernel {} is given twice (regions {} and {}); a program's kernels have distinct names",
                k.kernel, first.region, k.region
            )));
        }
        if k.target != opts.target || k.target_dir != target_dir {
            return Err(invalid(format!("kernel {} was planned for another target or output directory", k.kernel)));
        }
    }
    let build_dir = target_dir.join(format!("{name}.link"));
    let cfg_path = target_dir.join(format!("{name}.cfg"));
    let xclbin = target_dir.join(format!("{name}.xclbin"));
    let cfg = program_connectivity_config(name, kernels, opts);

    let mut link = Step::new("v++");
    link.arg("-l");
    common_args(&mut link, opts, &build_dir);
    link.arg("--config").path(&cfg_path);
    if let (true, Some(mhz), LinkClock::Scalable) = (opts.target.runs_hls(), opts.clock_mhz, opts.link_clock) {
        // One option for the platform's scalable kernel clock, shared by every kernel;
        // fixed clocks are per compute unit, in the config's [clock] section.
        link.arg("--kernel_frequency").arg(mhz.to_string());
    }
    link.args.extend(opts.link_args.iter().cloned());
    link.arg("-o").path(&xclbin);
    for k in kernels {
        link.path(&k.xo);
    }
    Ok(LinkPlan {
        name: name.to_string(),
        target: opts.target,
        build_dir,
        cfg_path,
        cfg,
        xclbin,
        kernels: kernels.iter().map(|k| k.kernel.clone()).collect(),
        link,
    })
}

/// For the emulation targets: `emconfigutil --platform <platform> --od <out>/<target>`,
/// which writes `<out>/<target>/emconfig.json` (UG1393 "emconfigutil Utility"). XRT
/// reads it from the host executable's directory or from `$EMCONFIG_PATH`. One per
/// platform and target, shared by all kernels. `None` for `hw`.
pub fn emconfig(opts: &FlowOptions) -> Option<Step> {
    if !opts.target.is_emulation() {
        return None;
    }
    let mut s = Step::new("emconfigutil");
    s.arg("--platform").arg(opts.platform.clone()).arg("--od").path(&opts.target_dir());
    Some(s)
}

/// The environment a host program needs to use the bitstreams of `opts`: the XRT
/// backend's lookup directory and, for emulation, XRT's mode and `emconfig.json`.
pub fn run_environment(opts: &FlowOptions) -> Vec<(String, String)> {
    let dir = opts.target_dir().display().to_string();
    let mut env = vec![("TESSERA_BITSTREAM_DIR".to_string(), dir.clone())];
    if opts.target.is_emulation() {
        env.push(("XCL_EMULATION_MODE".to_string(), opts.target.name().to_string()));
        env.push(("EMCONFIG_PATH".to_string(), dir));
    }
    env
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::manifest::{Arg, ArrayArg, MANIFEST_VERSION};
    use tessera_ir::{Expr, MapKind, ScalarType, Section, VarKind};

    pub(crate) fn array(name: &str, map: MapKind) -> Arg {
        let n = Expr::Var { name: "n".into(), ty: ScalarType::I32 };
        Arg {
            name: name.into(),
            kind: VarKind::Pointer,
            elem: ScalarType::F32,
            array: Some(ArrayArg {
                map,
                dims: vec![n.clone()],
                section: vec![Section { lower: Expr::Int { value: 0, ty: ScalarType::I32 }, length: n }], footprint: vec![], bank: 0, reduction: None, untouched: false
            }),
        }
    }

    fn scalar(name: &str) -> Arg {
        Arg { name: name.into(), kind: VarKind::Scalar, elem: ScalarType::I32, array: None }
    }

    pub(crate) fn manifest(kernel: &str, args: Vec<Arg>, source: &str) -> Manifest {
        Manifest {
            members: Vec::new(),
            member_checks: Vec::new(),
            version: MANIFEST_VERSION,
            region: "k.c:7".into(),
            kernel: Some(kernel.into()),
            rejected: None,
            mode: tessera_ir::Mode::Baseline,
            args,
            kernel_source: source.into(),
            emu_entry_source: String::new(),
            xclbin: format!("{kernel}.xclbin"),
            hash: String::new(), if_clause: false, device_clause: false, always_maps: false, guard: None, write_ports: vec![], interleave: None, size_params: vec![],
        }
    }

    /// A one-array kernel as the baseline generator writes it.
    fn scale() -> Manifest {
        let src = "extern \"C\" void tessera_k_l7_r0(tessera::maxi<float> x, int n) {\n\
                   #pragma HLS INTERFACE mode=m_axi port=x offset=slave bundle=gmem0\n\
                   #pragma HLS INTERFACE mode=s_axilite port=n\n\
                   #pragma HLS INTERFACE mode=s_axilite port=return\n}\n";
        manifest("tessera_k_l7_r0", vec![array("x", MapKind::Tofrom), scalar("n")], src)
    }

    /// A three-array kernel with scalars in between.
    fn three() -> Manifest {
        let src = "extern \"C\" void tessera_s_l9_r1(tessera::maxi<const float> A, int n, \
                   tessera::maxi<const float> B, float a, tessera::maxi<float> C) {\n\
                   #pragma HLS INTERFACE mode=m_axi port=A offset=slave bundle=gmem0\n\
                   #pragma HLS INTERFACE mode=m_axi port=B offset=slave bundle=gmem1\n\
                   #pragma HLS INTERFACE mode=m_axi port=C offset=slave bundle=gmem2\n\
                   #pragma HLS INTERFACE mode=s_axilite port=n\n\
                   #pragma HLS INTERFACE mode=s_axilite port=a\n\
                   #pragma HLS INTERFACE mode=s_axilite port=return\n}\n";
        manifest(
            "tessera_s_l9_r1",
            vec![array("A", MapKind::To), scalar("n"), array("B", MapKind::To), scalar("a"), array("C", MapKind::From)],
            src,
        )
    }

    fn strs(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn one_array_hw_commands_and_config() {
        let mut o = FlowOptions::new(Target::Hw, "/opt/xilinx/platforms/u250/u250.xpfm", "a.out.tessera", "bits");
        o.includes.push("bits/include".into());
        let p = plan_kernel(&scale(), &o).unwrap();
        assert_eq!(p.xclbin, Path::new("bits/hw/tessera_k_l7_r0.xclbin"));
        assert_eq!(p.cfg_path, Path::new("bits/hw/tessera_k_l7_r0.cfg"));
        assert_eq!(
            p.cfg,
            "# Connectivity of kernel tessera_k_l7_r0 (region k.c:7).\n\
             # Written by `tessera bitstream` for `v++ -l --config`: one compute unit, every\n\
             # m_axi port on a memory bank of the platform; scalars are s_axilite registers.\n\
             [connectivity]\n\
             nk=tessera_k_l7_r0:1:tessera_k_l7_r0_1\n\
             sp=tessera_k_l7_r0_1.x:DDR[0]\n"
        );
        assert_eq!(p.compile.program, "v++");
        // Every argument is one vector element (no shell involved); none has a space.
        assert_eq!(
            p.compile.args.join(" "),
            "-c -t hw --platform /opt/xilinx/platforms/u250/u250.xpfm --save-temps \
             --temp_dir bits/hw/tessera_k_l7_r0.build/tmp --log_dir bits/hw/tessera_k_l7_r0.build/logs \
             --report_dir bits/hw/tessera_k_l7_r0.build/reports --report_level 1 -k tessera_k_l7_r0 \
             -I bits/include -D TESSERA_VITIS=1 -o bits/hw/tessera_k_l7_r0.xo a.out.tessera/tessera_k_l7_r0.cpp"
        );
        assert_eq!(p.compile.args.len(), 23);
        assert_eq!(p.link.program, "v++");
        assert_eq!(
            p.link.args.join(" "),
            "-l -t hw --platform /opt/xilinx/platforms/u250/u250.xpfm --save-temps \
             --temp_dir bits/hw/tessera_k_l7_r0.build/tmp --log_dir bits/hw/tessera_k_l7_r0.build/logs \
             --report_dir bits/hw/tessera_k_l7_r0.build/reports --report_level 1 \
             --config bits/hw/tessera_k_l7_r0.cfg -o bits/hw/tessera_k_l7_r0.xclbin bits/hw/tessera_k_l7_r0.xo"
        );
        assert_eq!(p.link.shell(), format!("v++ {}", p.link.args.join(" ")));
        assert_eq!(
            p.ports,
            vec![Port { arg: "x".into(), port: "x".into(), bundle: Some("gmem0".into()), memory: "DDR[0]".into() }]
        );
        assert_eq!(emconfig(&o), None);
    }

    /// `banks=2` manifests: ports of bank 1 go to the bank after the default one
    /// (inputs DDR[0], outputs DDR[1]); an explicit `--memory` entry still wins; a
    /// default that names no numbered bank is an error for bank 1 ports.
    #[test]
    fn two_banks_split_inputs_and_outputs() {
        let mut m = three();
        for a in m.args.iter_mut().filter(|a| a.name == "C") {
            a.array.as_mut().unwrap().bank = 1;
        }
        let o = FlowOptions::new(Target::Hw, "p", "/w/p.tessera", "/w/bits");
        let p = plan_kernel(&m, &o).unwrap();
        assert!(p.cfg.contains("sp=tessera_s_l9_r1_1.A:DDR[0]\n") && p.cfg.contains("sp=tessera_s_l9_r1_1.C:DDR[1]\n"), "{}", p.cfg);
        let mut o2 = o.clone();
        o2.port_memory.insert("C".into(), "DDR[3]".into());
        assert!(plan_kernel(&m, &o2).unwrap().cfg.contains(".C:DDR[3]\n"));
        let mut o3 = o.clone();
        o3.default_memory = "MIG".into();
        let e = plan_kernel(&m, &o3).unwrap_err().to_string();
        assert!(e.contains("port `C` is in DDR bank 1") && e.contains("--memory C=<bank>"), "{e}");
        assert_eq!((nth_bank("HBM[2]", 3).as_deref(), nth_bank("MIG", 1)), (Some("HBM[5]"), None));
    }

    /// A write port (`Manifest::write_ports`) is one more memory port, on its array's
    /// bank; a `--memory` that would split the two is refused.
    #[test]
    fn write_ports_share_their_array_bank() {
        let mut m = three();
        m.kernel_source = m.kernel_source.replace(
            "tessera::maxi<float> C) {\n",
            "tessera::maxi<float> C, tessera::maxi<float> tdf_w_C) {\n#pragma HLS INTERFACE mode=m_axi port=tdf_w_C offset=slave bundle=gmem3\n",
        );
        m.write_ports = vec![4];
        for a in m.args.iter_mut().filter(|a| a.name == "C") {
            a.array.as_mut().unwrap().bank = 1;
        }
        let o = FlowOptions::new(Target::Hw, "p", "/w/p.tessera", "/w/bits");
        let p = plan_kernel(&m, &o).unwrap();
        assert!(p.cfg.ends_with("sp=tessera_s_l9_r1_1.C:DDR[1]\nsp=tessera_s_l9_r1_1.tdf_w_C:DDR[1]\n"), "{}", p.cfg);
        let mut o2 = o.clone();
        o2.port_memory.insert("C".into(), "DDR[3]".into());
        assert!(plan_kernel(&m, &o2).unwrap().cfg.contains(".tdf_w_C:DDR[3]\n"), "a memory for the array covers its write port");
        o2.port_memory.insert("tdf_w_C".into(), "DDR[2]".into());
        let e = plan_kernel(&m, &o2).unwrap_err().to_string();
        assert!(e.contains("the write port `tdf_w_C` of array `C` is on DDR[2] and its port `C` on DDR[3]"), "{e}");
        // The kernel source must declare the write port.
        m.kernel_source = three().kernel_source;
        let e = plan_kernel(&m, &o).unwrap_err().to_string();
        assert!(e.contains("the write port of array argument `C` has no `#pragma HLS INTERFACE mode=m_axi port=tdf_w_C`"), "{e}");
    }

    /// An interleaved array (`Manifest::interleave`): its own port and write port on
    /// bank 0, its second-bank port `tdf_b1_<a>` and write port `tdf_w_b1_<a>` on bank
    /// 1, whatever the array's `bank`; a `--memory` for a port's name still wins, one
    /// for the array's name covers every port, and a split write port is refused.
    #[test]
    fn interleaved_halves_go_to_two_banks() {
        let mut m = three();
        m.kernel_source = m.kernel_source.replace(
            "tessera::maxi<float> C) {\n",
            "tessera::maxi<float> C, tessera::maxi<float> tdf_w_C, tessera::maxi<const float> tdf_b1_A, \
             tessera::maxi<float> tdf_b1_C, tessera::maxi<float> tdf_w_b1_C) {\n\
             #pragma HLS INTERFACE mode=m_axi port=tdf_w_C offset=slave bundle=gmem3\n\
             #pragma HLS INTERFACE mode=m_axi port=tdf_b1_A offset=slave bundle=gmem4\n\
             #pragma HLS INTERFACE mode=m_axi port=tdf_b1_C offset=slave bundle=gmem5\n\
             #pragma HLS INTERFACE mode=m_axi port=tdf_w_b1_C offset=slave bundle=gmem6\n",
        );
        m.write_ports = vec![4];
        m.interleave = Some(tessera_ir::manifest::Interleave { args: vec![0, 4], segment_bytes: 4096 });
        for a in m.args.iter_mut().filter(|a| a.name == "C") {
            // An interleaved array's own bank does not matter: its halves are 0 and 1.
            a.array.as_mut().unwrap().bank = 1;
        }
        let o = FlowOptions::new(Target::Hw, "p", "/w/p.tessera", "/w/bits");
        let p = plan_kernel(&m, &o).unwrap();
        let cu = "sp=tessera_s_l9_r1_1";
        assert!(
            p.cfg.ends_with(&format!(
                "{cu}.A:DDR[0]\n{cu}.B:DDR[0]\n{cu}.C:DDR[0]\n{cu}.tdf_w_C:DDR[0]\n{cu}.tdf_b1_A:DDR[1]\n\
                 {cu}.tdf_b1_C:DDR[1]\n{cu}.tdf_w_b1_C:DDR[1]\n"
            )),
            "{}",
            p.cfg
        );
        let ports: Vec<(&str, &str)> = p.ports.iter().map(|q| (q.arg.as_str(), q.port.as_str())).collect();
        assert_eq!(
            ports,
            [("A", "A"), ("B", "B"), ("C", "C"), ("C", "tdf_w_C"), ("A", "tdf_b1_A"), ("C", "tdf_b1_C"), ("C", "tdf_w_b1_C")]
        );
        // A port's own --memory wins; the array's covers every port of it.
        let mut o2 = o.clone();
        o2.port_memory.insert("tdf_b1_A".into(), "DDR[3]".into());
        let cfg = plan_kernel(&m, &o2).unwrap().cfg;
        assert!(cfg.contains(".A:DDR[0]\n") && cfg.contains(".tdf_b1_A:DDR[3]\n"), "{cfg}");
        let mut o3 = o.clone();
        o3.port_memory.insert("A".into(), "DDR[2]".into());
        let cfg = plan_kernel(&m, &o3).unwrap().cfg;
        assert!(cfg.contains(".A:DDR[2]\n") && cfg.contains(".tdf_b1_A:DDR[2]\n"), "{cfg}");
        // The second half's write port must share its half's memory.
        o2.port_memory.insert("tdf_w_b1_C".into(), "DDR[0]".into());
        let e = plan_kernel(&m, &o2).unwrap_err().to_string();
        assert!(
            e.contains("the write port `tdf_w_b1_C` of array `C` is on DDR[0] and its port `tdf_b1_C` on DDR[1]")
                && e.contains("the one buffer of the array's second half"),
            "{e}"
        );
        // Bank 1 needs a numbered default bank (or a --memory for the port).
        let mut o4 = o.clone();
        o4.default_memory = "MIG".into();
        let e = plan_kernel(&m, &o4).unwrap_err().to_string();
        assert!(e.contains("port `tdf_b1_A` is in DDR bank 1"), "{e}");
        // The kernel source must declare the second-bank ports.
        m.kernel_source = m.kernel_source.replace("#pragma HLS INTERFACE mode=m_axi port=tdf_b1_C offset=slave bundle=gmem5\n", "");
        let e = plan_kernel(&m, &o).unwrap_err().to_string();
        assert!(e.contains("the second-bank port of interleaved array argument `C` has no `#pragma HLS INTERFACE mode=m_axi port=tdf_b1_C`"), "{e}");
    }

    #[test]
    fn three_arrays_with_banks_and_clock() {
        let mut o = FlowOptions::new(Target::HwEmu, "xilinx_u280_gen3x16_xdma_1_202211_1", "/w/p.tessera", "/w/bits");
        o.default_memory = "HBM[0]".into();
        o.port_memory.insert("B".into(), "HBM[1]".into());
        o.port_memory.insert("tessera_s_l9_r1.C".into(), "HBM[2:3]".into());
        o.port_memory.insert("C".into(), "HBM[9]".into()); // less specific than kernel.C
        o.clock_mhz = Some(250);
        let p = plan_kernel(&three(), &o).unwrap();
        let sp: Vec<&str> = p.cfg.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(
            sp,
            [
                "[connectivity]",
                "nk=tessera_s_l9_r1:1:tessera_s_l9_r1_1",
                "sp=tessera_s_l9_r1_1.A:HBM[0]",
                "sp=tessera_s_l9_r1_1.B:HBM[1]",
                "sp=tessera_s_l9_r1_1.C:HBM[2:3]",
            ]
        );
        assert!(!p.cfg.contains(".n:") && !p.cfg.contains(".a:"), "scalars get no sp=: {}", p.cfg);
        assert_eq!(
            p.compile.shell(),
            "v++ -c -t hw_emu --platform xilinx_u280_gen3x16_xdma_1_202211_1 --save-temps \
             --temp_dir /w/bits/hw_emu/tessera_s_l9_r1.build/tmp --log_dir /w/bits/hw_emu/tessera_s_l9_r1.build/logs \
             --report_dir /w/bits/hw_emu/tessera_s_l9_r1.build/reports --report_level 1 -k tessera_s_l9_r1 \
             -D TESSERA_VITIS=1 --hls.clock 250000000:tessera_s_l9_r1 \
             -o /w/bits/hw_emu/tessera_s_l9_r1.xo /w/p.tessera/tessera_s_l9_r1.cpp"
        );
        assert_eq!(
            p.link.shell(),
            "v++ -l -t hw_emu --platform xilinx_u280_gen3x16_xdma_1_202211_1 --save-temps \
             --temp_dir /w/bits/hw_emu/tessera_s_l9_r1.build/tmp --log_dir /w/bits/hw_emu/tessera_s_l9_r1.build/logs \
             --report_dir /w/bits/hw_emu/tessera_s_l9_r1.build/reports --report_level 1 \
             --config /w/bits/hw_emu/tessera_s_l9_r1.cfg --kernel_frequency 250 \
             -o /w/bits/hw_emu/tessera_s_l9_r1.xclbin /w/bits/hw_emu/tessera_s_l9_r1.xo"
        );
        assert_eq!(
            emconfig(&o).unwrap().shell(),
            "emconfigutil --platform xilinx_u280_gen3x16_xdma_1_202211_1 --od /w/bits/hw_emu"
        );
        assert_eq!(
            run_environment(&o),
            [
                ("TESSERA_BITSTREAM_DIR".to_string(), "/w/bits/hw_emu".to_string()),
                ("XCL_EMULATION_MODE".to_string(), "hw_emu".to_string()),
                ("EMCONFIG_PATH".to_string(), "/w/bits/hw_emu".to_string()),
            ]
        );
    }

    #[test]
    fn fixed_clock_links_with_clock_freq_hz() {
        let mut o = FlowOptions::new(Target::Hw, "vcu118.xpfm", "k", "o");
        o.clock_mhz = Some(200);
        o.link_clock = LinkClock::Fixed;
        let p = plan_kernel(&scale(), &o).unwrap();
        let i = p.link.args.iter().position(|a| a == "--clock.freqHz").unwrap();
        assert_eq!(p.link.args[i + 1], "200000000:tessera_k_l7_r0_1");
        assert!(!p.link.args.iter().any(|a| a == "--kernel_frequency"));
    }

    #[test]
    fn sw_emu_runs_no_hls_options() {
        let mut o = FlowOptions::new(Target::SwEmu, "u250.xpfm", "k", "o");
        o.clock_mhz = Some(300);
        let p = plan_kernel(&scale(), &o).unwrap();
        for s in p.steps() {
            assert!(s.args.windows(2).any(|w| w == ["-t", "sw_emu"]));
            for flag in ["--report_level", "--hls.clock", "--kernel_frequency", "--clock.freqHz"] {
                assert!(!s.args.iter().any(|a| a == flag), "{flag} in {}", s.shell());
            }
        }
        assert!(p.compile.args.windows(2).any(|w| w == ["-D", "TESSERA_VITIS=1"]));
        assert_eq!(emconfig(&o).unwrap().args, strs(&["--platform", "u250.xpfm", "--od", "o/sw_emu"]));
    }

    #[test]
    fn keyword_parameters_and_mismatches() {
        // An array named like a C++ keyword is a parameter with a trailing `_`.
        let src = "#pragma HLS INTERFACE mode=m_axi port=new_ offset=slave bundle=gmem0\n";
        let m = manifest("tessera_kw_l1_r0", vec![array("new", MapKind::Tofrom), scalar("n")], src);
        let p = plan_kernel(&m, &FlowOptions::new(Target::Hw, "p.xpfm", "k", "o")).unwrap();
        assert_eq!(p.ports[0].arg, "new");
        assert_eq!(p.ports[0].port, "new_");
        assert!(p.cfg.contains("sp=tessera_kw_l1_r0_1.new_:DDR[0]\n"));

        let m = manifest("tessera_kw_l1_r0", vec![array("y", MapKind::Tofrom)], src);
        let e = plan_kernel(&m, &FlowOptions::new(Target::Hw, "p.xpfm", "k", "o")).unwrap_err();
        assert!(e.to_string().contains("array argument `y` has no"), "{e}");

        let src2 = format!("{src}#pragma HLS INTERFACE m_axi port=z offset=slave bundle=gmem1\n");
        assert_eq!(m_axi_ports(&src2), vec![("new_".into(), Some("gmem0".into())), ("z".into(), Some("gmem1".into()))]);
        let m = manifest("tessera_kw_l1_r0", vec![array("new", MapKind::Tofrom)], &src2);
        let e = plan_kernel(&m, &FlowOptions::new(Target::Hw, "p.xpfm", "k", "o")).unwrap_err();
        assert!(e.to_string().contains("m_axi port `z`"), "{e}");

        // No pragmas at all: argument names.
        let m = manifest("tessera_np_l1_r0", vec![array("a", MapKind::To), scalar("n"), array("b", MapKind::From)], "");
        let p = plan_kernel(&m, &FlowOptions::new(Target::Hw, "p.xpfm", "k", "o")).unwrap();
        assert_eq!(p.ports.iter().map(|p| p.port.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    }

    #[test]
    fn rejects_bad_input() {
        let mut m = scale();
        m.kernel = None;
        m.rejected = Some("indirect access".into());
        let e = plan_kernel(&m, &FlowOptions::new(Target::Hw, "p", "k", "o")).unwrap_err();
        assert_eq!(e, FlowError::NotOffloaded { region: "k.c:7".into(), reason: Some("indirect access".into()) });

        let mut o = FlowOptions::new(Target::Hw, "p", "k", "o");
        o.default_memory = "DDR 0".into();
        assert!(plan_kernel(&scale(), &o).unwrap_err().to_string().contains("DDR 0"));
        let mut o = FlowOptions::new(Target::Hw, "p", "k", "o");
        o.port_memory.insert("x".into(), "HBM[1".into());
        assert!(plan_kernel(&scale(), &o).unwrap_err().to_string().contains("HBM[1"));
        let mut o = FlowOptions::new(Target::Hw, "p", "k", "o");
        o.clock_mhz = Some(0);
        assert!(plan_kernel(&scale(), &o).is_err());
        assert!(plan_kernel(&scale(), &FlowOptions::new(Target::Hw, " ", "k", "o")).is_err());

        let mut m = scale();
        m.xclbin = "../evil.xclbin".into();
        assert!(plan_kernel(&m, &FlowOptions::new(Target::Hw, "p", "k", "o")).is_err());
        let mut m = scale();
        m.xclbin = String::new();
        let p = plan_kernel(&m, &FlowOptions::new(Target::Hw, "p", "k", "o")).unwrap();
        assert_eq!(p.xclbin, Path::new("o/hw/tessera_k_l7_r0.xclbin"));
    }

    /// Two kernels of one program: one `v++ -c` each, ONE `v++ -l` over both `.xo`
    /// with one config holding an `nk=` per kernel and an `sp=` per memory port.
    #[test]
    fn one_link_for_the_kernels_of_a_program() {
        let mut o = FlowOptions::new(Target::Hw, "u250.xpfm", "p.tessera", "bits");
        o.includes.push("bits/include".into());
        o.port_memory.insert("tessera_s_l9_r1.C".into(), "DDR[1]".into());
        o.clock_mhz = Some(300);
        let kernels = vec![plan_kernel(&scale(), &o).unwrap(), plan_kernel(&three(), &o).unwrap()];
        let l = plan_link("prog", &kernels, &o).unwrap();
        assert_eq!(l.xclbin, Path::new("bits/hw/prog.xclbin"));
        assert_eq!(l.cfg_path, Path::new("bits/hw/prog.cfg"));
        assert_eq!(l.kernels, ["tessera_k_l7_r0", "tessera_s_l9_r1"]);
        assert_eq!(
            l.cfg,
            "# Connectivity of program prog: 2 kernel(s), linked into prog.xclbin.\n\
             # Written by `tessera bitstream` for `v++ -l --config`: one compute unit per kernel,\n\
             # every m_axi port on a memory bank of the platform; scalars are s_axilite registers.\n\
             [connectivity]\n\
             nk=tessera_k_l7_r0:1:tessera_k_l7_r0_1\n\
             nk=tessera_s_l9_r1:1:tessera_s_l9_r1_1\n\
             # tessera_k_l7_r0 (region k.c:7)\n\
             sp=tessera_k_l7_r0_1.x:DDR[0]\n\
             # tessera_s_l9_r1 (region k.c:7)\n\
             sp=tessera_s_l9_r1_1.A:DDR[0]\n\
             sp=tessera_s_l9_r1_1.B:DDR[0]\n\
             sp=tessera_s_l9_r1_1.C:DDR[1]\n"
        );
        assert_eq!(
            l.link.shell(),
            "v++ -l -t hw --platform u250.xpfm --save-temps --temp_dir bits/hw/prog.link/tmp \
             --log_dir bits/hw/prog.link/logs --report_dir bits/hw/prog.link/reports --report_level 1 \
             --config bits/hw/prog.cfg --kernel_frequency 300 \
             -o bits/hw/prog.xclbin bits/hw/tessera_k_l7_r0.xo bits/hw/tessera_s_l9_r1.xo"
        );
        // The compiles are the kernels' own, one .xo each.
        assert!(kernels[1].compile.shell().ends_with("-o bits/hw/tessera_s_l9_r1.xo p.tessera/tessera_s_l9_r1.cpp"));
        assert_eq!(l.dirs(), [PathBuf::from("bits/hw/prog.link")]);

        // Fixed clocks: one freqHz per compute unit in the config, none on the command line.
        o.link_clock = LinkClock::Fixed;
        let l = plan_link("prog", &kernels, &o).unwrap();
        assert!(
            l.cfg.ends_with("[clock]\nfreqHz=300000000:tessera_k_l7_r0_1\nfreqHz=300000000:tessera_s_l9_r1_1\n"),
            "{}",
            l.cfg
        );
        assert!(!l.link.args.iter().any(|a| a == "--kernel_frequency" || a == "--clock.freqHz"), "{}", l.link.shell());
        // sw_emu has no clocks at all.
        let mut e = o.clone();
        e.target = Target::SwEmu;
        let ek: Vec<KernelPlan> = [scale(), three()].iter().map(|m| plan_kernel(m, &e).unwrap()).collect();
        let l = plan_link("prog", &ek, &e).unwrap();
        assert!(!l.cfg.contains("[clock]") && !l.link.args.iter().any(|a| a.contains("freq")), "{}", l.cfg);
        assert!(l.link.shell().ends_with("-o bits/sw_emu/prog.xclbin bits/sw_emu/tessera_k_l7_r0.xo bits/sw_emu/tessera_s_l9_r1.xo"));
    }

    #[test]
    fn link_refuses_bad_programs() {
        let o = FlowOptions::new(Target::Hw, "p", "k", "o");
        let k = plan_kernel(&scale(), &o).unwrap();
        for bad in ["", "a/b", ".x", "-x", "my prog"] {
            assert!(plan_link(bad, std::slice::from_ref(&k), &o).unwrap_err().to_string().contains("cannot name"), "{bad}");
        }
        assert!(plan_link("p", &[], &o).unwrap_err().to_string().contains("no kernel to link"));
        let e = plan_link("p", &[k.clone(), k.clone()], &o).unwrap_err().to_string();
        assert!(e.contains("kernel tessera_k_l7_r0 is given twice"), "{e}");
        let other = plan_kernel(&three(), &FlowOptions::new(Target::HwEmu, "p", "k", "o")).unwrap();
        assert!(plan_link("p", &[k, other], &o).unwrap_err().to_string().contains("another target"));
        assert!(is_program_name("stencil2d") && is_program_name("a.out") && is_program_name("x_1+2-3"));
    }

    #[test]
    fn memory_bank_syntax() {
        for ok in ["DDR[0]", "HBM[31]", "HBM[0:3]", "MIG[0]", "PLRAM[1]", "HOST[0]", "bank0"] {
            assert!(is_memory_bank(ok), "{ok}");
        }
        for bad in ["", "DDR[", "DDR[]", "DDR[a]", "DDR[0]x", "0DDR", "DDR 0", "DDR[0:]", "A=DDR[0]"] {
            assert!(!is_memory_bank(bad), "{bad}");
        }
    }

    #[test]
    fn shell_quoting_and_targets() {
        assert_eq!(shell_quote("a/b.xo"), "a/b.xo");
        assert_eq!(shell_quote("my dir/x"), "'my dir/x'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
        for t in Target::ALL {
            assert_eq!(Target::parse(t.name()), Some(t));
        }
        assert_eq!(Target::parse("hw-emu"), None);
        let json = plan_kernel(&scale(), &FlowOptions::new(Target::SwEmu, "p", "k", "o")).unwrap().to_json();
        assert!(json.contains("\"target\": \"sw_emu\""), "{json}");
    }
}
