//! Tessera's compile pipeline for one target region.
//!
//! ```text
//! Region (IR JSON from the plugin)
//!   └─ check::check_region ── Rejection? ──> manifest with `rejected`, remark; region stays on the host
//!   └─ tessera_hls::baseline ──> kernel C++ + emulation entry
//!   └─ tessera_poly::optimize ──> the tiling plan (`<kernel>.plan.txt`)
//!   └─ Manifest (args, shapes, maps) + files for `<output>.tessera/`
//! ```
//!
//! Everything here is a pure function of the region and the options; the plugin (or
//! the CLI) does the I/O with what [`compile_region`] returns.

#![warn(missing_docs)]

pub mod affine;
pub mod check;
pub mod options;
pub mod reject;

pub use options::{Mode, Options};
pub use reject::{Rejection, RejectReason};

use tessera_ir::manifest::{ArrayArg, Arg, Manifest, MANIFEST_VERSION};
use tessera_ir::{Expr, MapKind, Region, ScalarType, Section, VarKind};

/// What the pipeline produced for one region.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// The manifest embedded in the rewritten call (also for rejected regions).
    pub manifest: Manifest,
    /// Why the region stays on the host, if it does.
    pub rejection: Option<Rejection>,
    /// Files for the kernel directory: `(file name, contents)`.
    pub files: Vec<(String, String)>,
}

/// The name of a region's kernel: `tessera_<file stem>_l<line>_r<index>`, a valid C
/// identifier that is unique within a translation unit.
pub fn region_name(region: &Region) -> String {
    let file = &region.location.file;
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    let stem = base.split('.').next().unwrap_or(base);
    let stem: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("tessera_{stem}_l{}_r{}", region.location.line, region.index)
}

/// Runs the pipeline on one region.
pub fn compile_region(region: &Region, opts: &Options) -> Outcome {
    let name = region_name(region);
    let mut files = vec![(format!("{name}.ir.json"), region.to_json())];
    let (rejection, args) = match check::check_region(region).and_then(|()| manifest_args(region)) {
        Ok(args) => (None, args),
        Err(r) => (Some(r), Vec::new()),
    };
    let mut manifest = Manifest {
        version: MANIFEST_VERSION,
        region: region.location.file_line(),
        kernel: None,
        rejected: rejection.as_ref().map(|r| r.message()),
        mode: opts.mode.name().to_string(),
        args,
        kernel_source: String::new(),
        emu_entry_source: String::new(),
        xclbin: String::new(),
    };
    if rejection.is_none() {
        let kernel = tessera_hls::baseline::generate(region, &name);
        manifest.kernel = Some(name.clone());
        manifest.xclbin = format!("{name}.xclbin");
        manifest.kernel_source = kernel.source.clone();
        manifest.emu_entry_source = kernel.emu_entry;
        files.push((format!("{name}.cpp"), kernel.source));
        files.push((
            format!("{name}.manifest.json"),
            serde_json::to_string_pretty(&manifest).expect("manifest is serialisable"),
        ));
        files.push((format!("{name}.plan.txt"), plan_text(region, opts)));
    }
    Outcome { manifest, rejection, files }
}

/// The polyhedral optimizer's plan for the region (paper steps 1–4) as its stable
/// text dump, or why the region cannot be tiled: written next to the kernel as
/// `<kernel>.plan.txt` so the decisions behind a kernel can be inspected.
fn plan_text(region: &Region, opts: &Options) -> String {
    let poly = tessera_poly::PolyOptions { tile: opts.tile.clone(), port_width: opts.port_width };
    match tessera_poly::optimize(region, &poly) {
        Ok(plan) => tessera_poly::dump(&plan, tessera_poly::Stage::All),
        Err(r) => format!("{}: not tiled: {} [{}]\n", r.loc, r.message(), r.reason.code()),
    }
}

/// The runtime's view of the region variables: shapes resolved from types and map
/// clauses. Fails when an array's extent is unknown.
fn manifest_args(region: &Region) -> Result<Vec<Arg>, Rejection> {
    region
        .vars
        .iter()
        .map(|v| {
            let array = match v.kind {
                VarKind::Scalar => None,
                VarKind::Pointer | VarKind::Array => {
                    let dims = check::resolved_dims(v)?;
                    let section = (0..dims.len())
                        .map(|d| match v.section.get(d) {
                            Some(s) => s.clone(),
                            None => Section { lower: Expr::Int { value: 0, ty: ScalarType::I64 }, length: dims[d].clone() },
                        })
                        .collect();
                    // OpenMP: an array referenced without a map clause is mapped tofrom.
                    Some(ArrayArg { map: v.map.unwrap_or(MapKind::Tofrom), dims, section })
                }
            };
            Ok(Arg { name: v.name.clone(), kind: v.kind, elem: v.elem, array })
        })
        .collect()
}
