//! The TaPaSCo flow as data: from a program's kernel manifests to the `tapasco`
//! commands that build one FPGA bitstream (`.bit`) holding one processing element
//! (PE) per kernel, for a board TaPaSCo supports (the VCU118: platform `vcu118`).
//!
//! TaPaSCo (esa-tu-darmstadt/tapasco) is the Task Parallel System Composer: `tapasco
//! hls` runs Vitis HLS on a kernel described by a `kernel.json` and packages the
//! result as an IP core; `tapasco compose [<kernel> x <count>, …] @ <MHz> MHz -p
//! <platform>` builds a design (architecture `axi4mm`: every PE's AXI4 masters on the
//! board's memory through an interconnect, its AXI4-Lite slave on the host's PCIe
//! bridge) and the bitstream. Its runtime, libtapasco, finds a PE by its kernel ID.
//!
//! For the program's kernels (all manifests of its `<program>.tessera/` directory)
//! the plan is, under `<out>/tapasco/`:
//!
//! 1. per kernel, `kernel/<kernel>/kernel.json` and a copy of `<kernel>.cpp` beside it
//!    (TaPaSCo resolves `Files` relative to the `kernel.json`): `Name` and
//!    `TopFunction` the kernel, `Id` from the manifest hash
//!    ([`tessera_ir::tapasco::kernel_id`]), `Version` [`tessera_ir::tapasco::VERSION`],
//!    `Arguments` the kernel's parameters in order, `CompilerFlags` the Tessera
//!    headers (`-I<out>/include`) and `-DTESSERA_VITIS=1` (the macro that makes
//!    `tessera_hls.h` use Vitis' port types, as in the Vitis flow);
//! 2. `tapasco --kernelDir … --coreDir … hls <k1>,<k2>,… -p <platform>`;
//! 3. `tapasco --kernelDir … --coreDir … --compositionDir … compose [<k1> x 1, …] @
//!    <MHz> MHz -a axi4mm -p <platform> --deleteProjects false`;
//! 4. `cp` of the `.bit` TaPaSCo writes (`compose/axi4mm/<platform>/<k1>__<k2>/
//!    001_001/<MHz, %05.1f>/axi4mm-<platform>--<k1>_1_<k2>_1--<MHz, %03.0f>.bit`, the
//!    naming of its `Configuration.outputDir` and `Composer.mkProjectName`) to
//!    `<out>/<platform>/<program>.bit`, beside which `tessera bitstream` writes the
//!    build record `<program>.bit.json` ([`tessera_ir::tapasco::TapascoRecord`]).
//!
//! Ports. Every kernel argument is declared `"Passing": "by value"`: TaPaSCo's
//! `axi4mm` directives then only place the argument's AXI4-Lite register at
//! `0x20 + 0x10·i` (64 bits, `config_interface -m_axi_addr64`), which is where
//! libtapasco writes job argument `i`. Arrays keep the kernel's own `m_axi` pragmas
//! (`offset=slave`, one bundle `gmem<i>` per array): the register holds the array's
//! device address. (`"by reference"` would add TaPaSCo's `set_directive_data_pack`
//! and its own `maxi_<arg>` bundles, which Vitis HLS does not need.) A PE with several
//! `m_axi` bundles has several AXI4 masters; `axi4mm` counts every master of every PE
//! and connects them all to the board's memory (its `arch_create_mem_interconnects`),
//! so no source change or bundling macro is needed. The VCU118 has one DDR4 memory
//! all masters share; the manifests' `banks=2` split is not applied on TaPaSCo. The
//! extra parameters of a kernel — write ports (`tdf_w_<a>`) and the second-bank
//! halves of interleaved arrays (`tdf_b1_<a>`, `tdf_w_b1_<a>`) — are arguments like
//! the others, after the manifest's, in `Manifest::kernel_params` order; the runtime
//! passes each the device address of its half (both halves then in the one DDR4).
//!
//! This module does no I/O; `tessera bitstream --flow tapasco` (crates/cli) writes
//! the files and runs or prints the steps.

use crate::{m_axi_ports, FlowError, Step};
use serde::Serialize;
use std::path::{Path, PathBuf};
use tessera_ir::manifest::Manifest;
use tessera_ir::tapasco::{kernel_id, vlnv, TapascoKernel, TapascoRecord, TAPASCO_RECORD_VERSION, VERSION};

/// The board of the method's measurements, as TaPaSCo names its platform.
pub const VCU118: &str = "vcu118";

/// What the TaPaSCo flow is asked to do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TapascoOptions {
    /// TaPaSCo platform (`-p`), e.g. `vcu118`.
    pub platform: String,
    /// Design clock in MHz (`@ <MHz> MHz`).
    pub clock_mhz: u32,
    /// Output root: TaPaSCo's directories under `<out_dir>/tapasco/`, the bitstream in
    /// `<out_dir>/<platform>/`.
    pub out_dir: PathBuf,
    /// Name of the bitstream (`<name>.bit`): the program's name.
    pub name: String,
    /// Include directories for HLS (absolute: HLS runs in TaPaSCo's core directory);
    /// the one holding `tessera_hls.h` first.
    pub includes: Vec<PathBuf>,
    /// Extra HLS compiler flags for every kernel (`CompilerFlags`).
    pub compile_flags: Vec<String>,
}

impl TapascoOptions {
    /// `<out>/tapasco`: TaPaSCo's kernel, core and composition directories.
    pub fn work_dir(&self) -> PathBuf {
        self.out_dir.join("tapasco")
    }

    /// `<out>/<platform>`: the bitstream and its record; `TESSERA_BITSTREAM_DIR`.
    pub fn target_dir(&self) -> PathBuf {
        self.out_dir.join(&self.platform)
    }
}

/// One kernel as a TaPaSCo HLS kernel.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TapascoKernelPlan {
    /// Kernel (top function, TaPaSCo `Name`).
    pub kernel: String,
    /// `file:line` of the region.
    pub region: String,
    /// TaPaSCo kernel ID.
    pub id: u32,
    /// The PE's VLNV.
    pub vlnv: String,
    /// `<out>/tapasco/kernel/<kernel>`.
    pub dir: PathBuf,
    /// `<dir>/kernel.json`.
    pub json_path: PathBuf,
    /// Its text.
    pub json: String,
    /// `<dir>/<kernel>.cpp`: the kernel source (the manifest's `kernel_source`).
    pub source: PathBuf,
    /// The kernel parameters, in order, with whether each is an `m_axi` array.
    pub arguments: Vec<(String, bool)>,
    /// The manifest's hash.
    pub hash: String,
    /// `<out>/tapasco/core/<kernel>`: TaPaSCo's HLS output for the kernel. `tapasco
    /// hls` skips a kernel whose core exists, so the build removes it when it was made
    /// from another manifest ([`stamp`](Self::stamp)).
    pub core: PathBuf,
    /// `<core>/axi4mm/<platform>/ipcore/<kernel>_axi4mm.zip`, the packaged core
    /// (TaPaSCo's `HighLevelSynthesizer.outputZipFile`).
    pub core_zip: PathBuf,
    /// `<core>/axi4mm/<platform>/hls/axi4mm.log`, the HLS log.
    pub hls_log: PathBuf,
    /// `<core>/tessera.hash`: the hash of the manifest the core was made from, written
    /// by `tessera bitstream` after `tapasco hls`.
    pub stamp: PathBuf,
}

/// The whole TaPaSCo build of a program's kernels.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TapascoPlan {
    /// The kernels, in input order.
    pub kernels: Vec<TapascoKernelPlan>,
    /// The composition, `[<k1> x 1, <k2> x 1]`.
    pub composition: String,
    /// `tapasco … hls …`.
    pub hls: Step,
    /// `tapasco … compose …`.
    pub compose: Step,
    /// The bitstream TaPaSCo writes.
    pub tapasco_bit: PathBuf,
    /// `<out>/<platform>/<name>.bit`.
    pub bit: PathBuf,
    /// `cp <tapasco_bit> <bit>`.
    pub copy: Step,
}

impl TapascoPlan {
    /// Directories to create before the steps run.
    pub fn dirs(&self, opts: &TapascoOptions) -> Vec<PathBuf> {
        let w = opts.work_dir();
        let mut d = vec![w.join("kernel"), w.join("core"), w.join("compose"), opts.target_dir()];
        d.extend(self.kernels.iter().map(|k| k.dir.clone()));
        d
    }

    /// The steps, in order.
    pub fn steps(&self) -> [&Step; 3] {
        [&self.hls, &self.compose, &self.copy]
    }

    /// The build record of the bitstream, given each kernel's manifest file.
    pub fn record(&self, opts: &TapascoOptions, manifests: &[(String, String)]) -> TapascoRecord {
        TapascoRecord {
            version: TAPASCO_RECORD_VERSION,
            platform: opts.platform.clone(),
            clock_mhz: opts.clock_mhz,
            composition: self.composition.clone(),
            kernels: self
                .kernels
                .iter()
                .zip(manifests)
                .map(|(k, (hash, file))| TapascoKernel {
                    kernel: k.kernel.clone(),
                    id: k.id,
                    vlnv: k.vlnv.clone(),
                    hash: hash.clone(),
                    region: k.region.clone(),
                    manifest: file.clone(),
                })
                .collect(),
        }
    }
}

fn invalid(m: String) -> FlowError {
    FlowError::Invalid(m)
}

/// TaPaSCo joins its command line with blanks and parses it again (`;`, `,` and `:`
/// separate list items): a path given to it must have none of these.
fn tapasco_safe(p: &Path) -> Result<String, FlowError> {
    let s = p.display().to_string();
    if s.is_empty() || s.chars().any(|c| c.is_whitespace() || ";,:\"'".contains(c)) {
        return Err(invalid(format!(
            "path `{s}` cannot be passed to tapasco (it re-parses its command line: no blanks, quotes, `;`, `,` or `:`); \
             choose another --output directory"
        )));
    }
    Ok(s)
}

/// The kernel's parameters in order, from the signature of its top function
/// (`extern "C" void <kernel>(<type> <name>, …)`), with whether each is an array
/// (named by an `m_axi` pragma).
pub fn kernel_parameters(kernel: &str, source: &str) -> Result<Vec<(String, bool)>, FlowError> {
    let sig = format!("void {kernel}(");
    let start = source
        .find(&sig)
        .ok_or_else(|| invalid(format!("kernel {kernel}: the source has no top function `void {kernel}(…)`")))?
        + sig.len();
    let mut depth = 0usize;
    let mut end = None;
    for (i, c) in source[start..].char_indices() {
        match c {
            '(' | '<' => depth += 1,
            ')' if depth == 0 => {
                end = Some(start + i);
                break;
            }
            ')' | '>' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    let end = end.ok_or_else(|| invalid(format!("kernel {kernel}: unterminated parameter list")))?;
    let params = &source[start..end];
    let arrays: Vec<String> = m_axi_ports(source).into_iter().map(|(p, _)| p).collect();
    let mut out = Vec::new();
    // Split at top-level commas (template arguments may hold commas).
    let mut depth = 0usize;
    let mut cur = String::new();
    let mut pieces = Vec::new();
    for c in params.chars() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                pieces.push(std::mem::take(&mut cur));
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    pieces.push(cur);
    for p in pieces.iter().map(|p| p.trim()).filter(|p| !p.is_empty() && *p != "void") {
        let name: String = p
            .chars()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
            return Err(invalid(format!("kernel {kernel}: cannot read the parameter name of `{p}`")));
        }
        let is_array = arrays.contains(&name);
        out.push((name, is_array));
    }
    Ok(out)
}

/// `kernel.json` of one kernel (TaPaSCo's `documentation/tapasco-json.md`).
fn kernel_json(kernel: &str, id: u32, region: &str, args: &[(String, bool)], flags: &[String]) -> String {
    let v = serde_json::json!({
        "Name": kernel,
        "TopFunction": kernel,
        "Id": id,
        "Version": VERSION,
        "Description": format!("Tessera kernel of region {region}"),
        "Files": [format!("{kernel}.cpp")],
        "CompilerFlags": flags,
        "Arguments": args.iter().map(|(n, _)| serde_json::json!({"Name": n, "Passing": "by value"})).collect::<Vec<_>>(),
    });
    serde_json::to_string_pretty(&v).expect("JSON value") + "\n"
}

/// Plans the TaPaSCo build of the kernels of `manifests` (one PE each). Regions that
/// were not offloaded are skipped by the caller (as [`FlowError::NotOffloaded`]).
pub fn plan(manifests: &[&Manifest], opts: &TapascoOptions) -> Result<TapascoPlan, FlowError> {
    if opts.platform.trim().is_empty() || !opts.platform.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(invalid(format!("`{}` is not a TaPaSCo platform name (e.g. vcu118)", opts.platform)));
    }
    if opts.clock_mhz == 0 {
        return Err(invalid("the design clock must be above 0 MHz".to_string()));
    }
    if opts.name.is_empty() || !opts.name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)) {
        return Err(invalid(format!("`{}` cannot name a bitstream file", opts.name)));
    }
    if manifests.is_empty() {
        return Err(invalid("no kernel to build".to_string()));
    }
    let work = opts.work_dir();
    let (kdir, cdir, pdir) = (work.join("kernel"), work.join("core"), work.join("compose"));
    let mut flags: Vec<String> = Vec::new();
    for inc in &opts.includes {
        if !inc.is_absolute() {
            return Err(invalid(format!("include directory {} must be absolute (HLS runs elsewhere)", inc.display())));
        }
        flags.push(format!("-I{}", tapasco_safe(inc)?));
    }
    flags.push("-DTESSERA_VITIS=1".to_string());
    flags.extend(opts.compile_flags.iter().cloned());

    let mut kernels: Vec<TapascoKernelPlan> = Vec::new();
    for m in manifests {
        let Some(kernel) = m.kernel.clone() else {
            return Err(FlowError::NotOffloaded { region: m.region.clone(), reason: m.rejected.clone() });
        };
        if !kernel.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') || kernel.is_empty() {
            return Err(invalid(format!("kernel name `{kernel}` is not a C identifier")));
        }
        let id = kernel_id(&m.hash).ok_or_else(|| {
            invalid(format!(
                "kernel {kernel} ({}): the manifest has no hash to derive its TaPaSCo kernel ID from; recompile the \
                 program with `tessera cc`",
                m.region
            ))
        })?;
        if let Some(other) = kernels.iter().find(|k| k.kernel == kernel) {
            return Err(invalid(format!("kernel {kernel} is given twice ({} and {})", other.region, m.region)));
        }
        if let Some(other) = kernels.iter().find(|k| k.id == id) {
            return Err(invalid(format!(
                "kernels {} and {kernel} get the same TaPaSCo kernel ID {id} (from their manifest hashes); build them \
                 into different bitstreams",
                other.kernel
            )));
        }
        let arguments = kernel_parameters(&kernel, &m.kernel_source)?;
        let params = m.kernel_params();
        if arguments.len() != params.len() {
            let extra = params.iter().filter(|q| q.half != 0).count();
            return Err(invalid(format!(
                "kernel {kernel}: its top function has {} parameters, the manifest {} ({} arguments, {} write ports{}{})",
                arguments.len(),
                params.len(),
                m.args.len(),
                m.write_ports.len(),
                if extra > 0 { format!(", {extra} second-bank ports of interleaved arrays") } else { String::new() },
                if m.size_params.is_empty() { String::new() } else { format!(", {} size parameters", m.size_params.len()) }
            )));
        }
        for ((p, is_array), q) in arguments.iter().zip(&params) {
            let a = &m.args[q.arg];
            // A size parameter is a scalar of an array argument.
            if q.size {
                if *is_array || *p != q.name {
                    return Err(invalid(format!(
                        "kernel {kernel}: parameter `{p}` of the top function is where the manifest has the scalar `{}` \
                         (the size of array `{}`)",
                        q.name, a.name
                    )));
                }
                continue;
            }
            if *is_array != a.array.is_some() {
                return Err(invalid(format!(
                    "kernel {kernel}: parameter `{p}` is {} but argument `{}` is {}",
                    if *is_array { "an m_axi array" } else { "a scalar" },
                    a.name,
                    if a.array.is_some() { "an array" } else { "a scalar" }
                )));
            }
            // A write port or second-bank port is the manifest's parameter of that name.
            if (q.write_port || q.half != 0) && *p != q.name {
                return Err(invalid(format!(
                    "kernel {kernel}: parameter `{p}` of the top function is where the manifest has `{}` (of array \
                     `{}`)",
                    q.name, a.name
                )));
            }
        }
        let dir = kdir.join(&kernel);
        let core = cdir.join(&kernel);
        let arch = core.join("axi4mm").join(&opts.platform);
        kernels.push(TapascoKernelPlan {
            hash: m.hash.clone(),
            core_zip: arch.join("ipcore").join(format!("{kernel}_axi4mm.zip")),
            hls_log: arch.join("hls").join("axi4mm.log"),
            stamp: core.join("tessera.hash"),
            core,
            json: kernel_json(&kernel, id, &m.region, &arguments, &flags),
            json_path: dir.join("kernel.json"),
            source: dir.join(format!("{kernel}.cpp")),
            dir,
            vlnv: vlnv(&kernel),
            region: m.region.clone(),
            id,
            kernel,
            arguments,
        });
    }

    let names: Vec<&str> = kernels.iter().map(|k| k.kernel.as_str()).collect();
    let composition = format!("[{}]", names.iter().map(|n| format!("{n} x 1")).collect::<Vec<_>>().join(", "));
    let global = |s: &mut Step, compose: bool| -> Result<(), FlowError> {
        s.arg("--kernelDir").arg(tapasco_safe(&kdir)?);
        s.arg("--coreDir").arg(tapasco_safe(&cdir)?);
        if compose {
            s.arg("--compositionDir").arg(tapasco_safe(&pdir)?);
        }
        Ok(())
    };
    let mut hls = Step::new("tapasco");
    global(&mut hls, false)?;
    hls.arg("hls").arg(names.join(",")).arg("-p").arg(opts.platform.clone());

    let mut compose = Step::new("tapasco");
    global(&mut compose, true)?;
    compose.arg("compose").arg(composition.clone()).arg("@").arg(opts.clock_mhz.to_string()).arg("MHz");
    compose.arg("-a").arg("axi4mm").arg("-p").arg(opts.platform.clone());
    // Keep the Vivado project (timing and utilisation reports) next to the bitstream.
    compose.arg("--deleteProjects").arg("false");

    let f = f64::from(opts.clock_mhz);
    let counts = vec!["001"; names.len()].join("_");
    let project = format!(
        "axi4mm-{}--{}--{:03.0}",
        opts.platform,
        names.iter().map(|n| format!("{n}_1")).collect::<Vec<_>>().join("_"),
        f
    );
    let tapasco_bit = pdir
        .join("axi4mm")
        .join(&opts.platform)
        .join(names.join("__"))
        .join(counts)
        .join(format!("{:05.1}", f))
        .join(format!("{project}.bit"));
    let bit = opts.target_dir().join(format!("{}.bit", opts.name));
    let mut copy = Step::new("cp");
    copy.path(&tapasco_bit).path(&bit);
    Ok(TapascoPlan { kernels, composition, hls, compose, tapasco_bit, bit, copy })
}

/// The environment a host program needs to run on the bitstream of `opts`.
pub fn run_environment() -> Vec<(String, String)> {
    vec![("TESSERA_DEVICE".to_string(), "tapasco".to_string())]
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::manifest::Arg;
    use tessera_ir::{MapKind, ScalarType, VarKind};

    // The Vitis flow's test manifests, with the hash the TaPaSCo kernel IDs come from.
    use crate::tests::array;

    fn scalar(name: &str, ty: ScalarType) -> Arg {
        Arg { name: name.into(), kind: VarKind::Scalar, elem: ty, array: None }
    }

    fn manifest(kernel: &str, args: Vec<Arg>, source: &str) -> Manifest {
        crate::tests::manifest(kernel, args, source).with_hash()
    }

    /// A three-array kernel with scalars in between, as the generators write them.
    fn three() -> Manifest {
        let src = "#include \"tessera_hls.h\"\n\
                   extern \"C\" void tessera_s_l9_r1(tessera::maxi<const float> A, int n, \
                   tessera::maxi<const float> B, float a, tessera::maxi<float> C) {\n\
                   #pragma HLS INTERFACE mode=m_axi port=A offset=slave bundle=gmem0\n\
                   #pragma HLS INTERFACE mode=m_axi port=B offset=slave bundle=gmem1\n\
                   #pragma HLS INTERFACE mode=m_axi port=C offset=slave bundle=gmem2\n\
                   #pragma HLS INTERFACE mode=s_axilite port=n\n\
                   #pragma HLS INTERFACE mode=s_axilite port=a\n\
                   #pragma HLS INTERFACE mode=s_axilite port=return\n}\n";
        manifest(
            "tessera_s_l9_r1",
            vec![
                array("A", MapKind::To),
                scalar("n", ScalarType::I32),
                array("B", MapKind::To),
                scalar("a", ScalarType::F32),
                array("C", MapKind::From),
            ],
            src,
        )
    }

    fn one() -> Manifest {
        let src = "extern \"C\" void tessera_k_l7_r0(tessera::maxi<float> new_, int n) {\n\
                   #pragma HLS INTERFACE mode=m_axi port=new_ offset=slave bundle=gmem0\n}\n";
        manifest("tessera_k_l7_r0", vec![array("new", MapKind::Tofrom), scalar("n", ScalarType::I32)], src)
    }

    fn opts() -> TapascoOptions {
        TapascoOptions {
            platform: VCU118.into(),
            clock_mhz: 100,
            out_dir: "/w/bits".into(),
            name: "prog".into(),
            includes: vec!["/w/bits/include".into()],
            compile_flags: vec![],
        }
    }

    #[test]
    fn commands_of_a_two_kernel_program() {
        let (a, b) = (three(), one());
        let p = plan(&[&a, &b], &opts()).unwrap();
        assert_eq!(p.composition, "[tessera_s_l9_r1 x 1, tessera_k_l7_r0 x 1]");
        assert_eq!(
            p.hls.shell(),
            "tapasco --kernelDir /w/bits/tapasco/kernel --coreDir /w/bits/tapasco/core \
             hls tessera_s_l9_r1,tessera_k_l7_r0 -p vcu118"
        );
        assert_eq!(
            p.compose.shell(),
            "tapasco --kernelDir /w/bits/tapasco/kernel --coreDir /w/bits/tapasco/core \
             --compositionDir /w/bits/tapasco/compose compose '[tessera_s_l9_r1 x 1, tessera_k_l7_r0 x 1]' @ 100 MHz \
             -a axi4mm -p vcu118 --deleteProjects false"
        );
        assert_eq!(
            p.tapasco_bit,
            Path::new(
                "/w/bits/tapasco/compose/axi4mm/vcu118/tessera_s_l9_r1__tessera_k_l7_r0/001_001/100.0/\
                 axi4mm-vcu118--tessera_s_l9_r1_1_tessera_k_l7_r0_1--100.bit"
            )
        );
        assert_eq!(p.bit, Path::new("/w/bits/vcu118/prog.bit"));
        assert_eq!(p.copy.shell(), format!("cp {} /w/bits/vcu118/prog.bit", p.tapasco_bit.display()));
        assert_eq!(p.steps().len(), 3);

        // IDs from the hashes, unique; VLNVs of TaPaSCo's HLS cores.
        let k = &p.kernels[0];
        assert_eq!(Some(k.id), kernel_id(&a.hash));
        assert_ne!(p.kernels[0].id, p.kernels[1].id);
        assert_eq!(k.vlnv, "esa.cs.tu-darmstadt.de:hls:tessera_s_l9_r1:1.0");
        assert_eq!(k.json_path, Path::new("/w/bits/tapasco/kernel/tessera_s_l9_r1/kernel.json"));
        assert_eq!(k.source, Path::new("/w/bits/tapasco/kernel/tessera_s_l9_r1/tessera_s_l9_r1.cpp"));
        assert_eq!(
            k.core_zip,
            Path::new("/w/bits/tapasco/core/tessera_s_l9_r1/axi4mm/vcu118/ipcore/tessera_s_l9_r1_axi4mm.zip")
        );
        assert_eq!(k.stamp, Path::new("/w/bits/tapasco/core/tessera_s_l9_r1/tessera.hash"));
        assert_eq!(k.hash, a.hash);
        let j: serde_json::Value = serde_json::from_str(&k.json).unwrap();
        assert_eq!(j["Name"], "tessera_s_l9_r1");
        assert_eq!(j["TopFunction"], "tessera_s_l9_r1");
        assert_eq!(j["Id"], k.id);
        assert_eq!(j["Version"], "1.0");
        assert_eq!(j["Files"], serde_json::json!(["tessera_s_l9_r1.cpp"]));
        assert_eq!(j["CompilerFlags"], serde_json::json!(["-I/w/bits/include", "-DTESSERA_VITIS=1"]));
        let args: Vec<&str> = j["Arguments"].as_array().unwrap().iter().map(|a| a["Name"].as_str().unwrap()).collect();
        assert_eq!(args, ["A", "n", "B", "a", "C"]);
        assert!(j["Arguments"].as_array().unwrap().iter().all(|a| a["Passing"] == "by value"));
        assert_eq!(
            k.arguments,
            [("A".into(), true), ("n".into(), false), ("B".into(), true), ("a".into(), false), ("C".into(), true)]
        );
        // A keyword-named array keeps its parameter name.
        assert_eq!(p.kernels[1].arguments, [("new_".to_string(), true), ("n".to_string(), false)]);

        // The record lists every kernel with its hash.
        let r = p.record(&opts(), &[(a.hash.clone(), "p.tessera/a.json".into()), (b.hash.clone(), "p.tessera/b.json".into())]);
        assert_eq!(r.kernel_of(&b.hash).unwrap().kernel, "tessera_k_l7_r0");
        assert_eq!(r.clock_mhz, 100);
        assert_eq!(r.composition, p.composition);
    }

    #[test]
    fn clock_formats_follow_tapasco() {
        let mut o = opts();
        o.clock_mhz = 50;
        let m = one();
        let p = plan(&[&m], &o).unwrap();
        let s = p.tapasco_bit.display().to_string();
        assert!(s.ends_with("/tessera_k_l7_r0/001/050.0/axi4mm-vcu118--tessera_k_l7_r0_1--050.bit"), "{s}");
        assert!(p.compose.shell().contains("'[tessera_k_l7_r0 x 1]' @ 50 MHz"), "{}", p.compose.shell());
    }

    #[test]
    fn rejects_bad_input() {
        let m = one();
        let with = |f: &dyn Fn(&mut TapascoOptions)| {
            let mut o = opts();
            f(&mut o);
            plan(&[&m], &o).unwrap_err().to_string()
        };
        assert!(with(&|o| o.clock_mhz = 0).contains("above 0 MHz"));
        assert!(with(&|o| o.platform = "vcu 118".into()).contains("not a TaPaSCo platform"));
        assert!(with(&|o| o.out_dir = "/my bits".into()).contains("cannot be passed to tapasco"));
        assert!(with(&|o| o.includes = vec!["rel/include".into()]).contains("must be absolute"));
        // No hash, no ID.
        let mut unhashed = one();
        unhashed.hash.clear();
        assert!(plan(&[&unhashed], &opts()).unwrap_err().to_string().contains("no hash"));
        // The same kernel twice.
        assert!(plan(&[&m, &m], &opts()).unwrap_err().to_string().contains("given twice"));
        // Parameters that do not match the manifest.
        let mut wrong = one();
        wrong.args.pop();
        assert!(plan(&[&wrong], &opts()).unwrap_err().to_string().contains("has 2 parameters, the manifest 1"));
        let mut rejected = one();
        rejected.kernel = None;
        assert!(matches!(plan(&[&rejected], &opts()), Err(FlowError::NotOffloaded { .. })));
    }

    /// Write ports and the second-bank ports of interleaved arrays are kernel
    /// arguments after the manifest's, in `kernel_params` order, checked by name.
    #[test]
    fn extra_ports_are_arguments() {
        let src = "extern \"C\" void k(tessera::maxi<float> x, int n, tessera::maxi<float> tdf_w_x, \
                   tessera::maxi<float> tdf_b1_x, tessera::maxi<float> tdf_w_b1_x) {\n\
                   #pragma HLS INTERFACE mode=m_axi port=x offset=slave bundle=gmem0\n\
                   #pragma HLS INTERFACE mode=m_axi port=tdf_w_x offset=slave bundle=gmem1\n\
                   #pragma HLS INTERFACE mode=m_axi port=tdf_b1_x offset=slave bundle=gmem2\n\
                   #pragma HLS INTERFACE mode=m_axi port=tdf_w_b1_x offset=slave bundle=gmem3\n}\n";
        let mk = |src: &str| {
            let mut m = crate::tests::manifest("k", vec![array("x", MapKind::Tofrom), scalar("n", ScalarType::I32)], src);
            m.write_ports = vec![0];
            m.interleave = Some(tessera_ir::manifest::Interleave { args: vec![0], segment_bytes: 4096 });
            m.with_hash()
        };
        let m = mk(src);
        let p = plan(&[&m], &opts()).unwrap();
        let names: Vec<&str> = p.kernels[0].arguments.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["x", "n", "tdf_w_x", "tdf_b1_x", "tdf_w_b1_x"]);
        let j: serde_json::Value = serde_json::from_str(&p.kernels[0].json).unwrap();
        assert_eq!(j["Arguments"].as_array().unwrap().len(), 5);
        // The halves swapped in the signature: refused by name.
        let swapped = mk(&src.replace("tdf_w_x, tessera::maxi<float> tdf_b1_x", "tdf_b1_x, tessera::maxi<float> tdf_w_x"));
        let e = plan(&[&swapped], &opts()).unwrap_err().to_string();
        assert!(e.contains("parameter `tdf_b1_x` of the top function is where the manifest has `tdf_w_x`"), "{e}");
        // A missing second-bank parameter: counted.
        let short = mk(&src.replace(", tessera::maxi<float> tdf_w_b1_x", ""));
        let e = plan(&[&short], &opts()).unwrap_err().to_string();
        assert!(e.contains("has 4 parameters, the manifest 5 (2 arguments, 1 write ports, 2 second-bank ports of interleaved arrays)"), "{e}");
    }

    #[test]
    fn parameters_with_templates() {
        let src = "extern \"C\" void k(tessera::maxi<ap_uint<512>, 4> x, const unsigned long long m, double d) {\n\
                   #pragma HLS INTERFACE mode=m_axi port=x offset=slave bundle=gmem0\n}";
        assert_eq!(
            kernel_parameters("k", src).unwrap(),
            [("x".to_string(), true), ("m".to_string(), false), ("d".to_string(), false)]
        );
        assert!(kernel_parameters("k2", src).is_err());
    }
}
