//! Tessera's compile pipeline for one target region.
//!
//! ```text
//! Region (IR JSON from the plugin)
//!   └─ check::check_region ── Rejection? ──> manifest with `rejected`, remark; region stays on the host
//!   └─ tessera_hls::baseline ──> kernel C++ + emulation entry
//!   └─ tessera_poly::optimize ──> the tiling plan (`<kernel>.plan.txt`)
//!   └─ Manifest (args, shapes, maps) + files for `<output>.tessera/`
//!
//! DataDirective (IR of target data / enter data / exit data / update)
//!   └─ data::compile_data ──> DataDesc (embedded in the runtime call) or a remark
//! ```
//!
//! Everything here is a pure function of the region and the options; the plugin (or
//! the CLI) does the I/O with what [`compile_region`] returns.

#![warn(missing_docs)]

pub mod affine;
pub mod check;
pub mod data;
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
    /// An offloaded region that got the baseline kernel although the mode asked for a
    /// tiled one: why (the optimizer's or the generator's reason). The plugin remarks it.
    pub fallback: Option<String>,
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
        // A region kept on the host still lists its arguments when it can: if it runs
        // inside a data region, the runtime copies the device data it uses back to
        // the host before it runs and to the device again after (runtime/README.md).
        Err(r) => (Some(r), host_args(region)),
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
    let mut fallback = None;
    if rejection.is_none() {
        let (kernel, mode, plan, why) = generate_kernel(region, &name, opts);
        fallback = why;
        manifest.mode = mode.name().to_string();
        manifest.kernel = Some(name.clone());
        manifest.xclbin = format!("{name}.xclbin");
        manifest.kernel_source = kernel.source.clone();
        manifest.emu_entry_source = kernel.emu_entry;
        files.push((format!("{name}.cpp"), kernel.source));
        files.push((
            format!("{name}.manifest.json"),
            serde_json::to_string_pretty(&manifest).expect("manifest is serialisable"),
        ));
        files.push((format!("{name}.plan.txt"), plan));
    }
    Outcome { manifest, rejection, files, fallback }
}

/// The kernel for an offloadable region, the mode it was generated in, and the
/// optimizer's plan (paper steps 1–4) as its stable text dump — written next to the
/// kernel as `<kernel>.plan.txt` so the decisions behind a kernel can be inspected.
/// In `paper` and `tessera` modes a region the optimizer or the tiled generator cannot
/// handle gets the baseline kernel; the plan file says why.
/// The last element says why a tiled mode fell back to the baseline kernel.
fn generate_kernel(region: &Region, name: &str, opts: &Options) -> (tessera_hls::Kernel, Mode, String, Option<String>) {
    let poly = tessera_poly::PolyOptions { tile: opts.tile.clone(), port_width: opts.port_width };
    let plan = tessera_poly::optimize(region, &poly);
    let mut text = match &plan {
        Ok(plan) => tessera_poly::dump(plan, tessera_poly::Stage::All),
        Err(r) => format!("{}: not tiled: {} [{}]\n", r.loc, r.message(), r.reason.code()),
    };
    let variant = match opts.mode {
        Mode::Baseline => None,
        Mode::Paper => Some(tessera_hls::paper::Variant::Paper),
        Mode::Tessera => Some(tessera_hls::paper::Variant::Tessera),
    };
    let mut why = None;
    if let Some(variant) = variant {
        match &plan {
            Ok(plan) => match tessera_hls::paper::generate(region, plan, name, opts.port_width, variant) {
                Ok(kernel) => return (kernel, opts.mode, text, None),
                Err(e) => {
                    text.push_str(&format!("{} kernel not generated: {e}\n", variant.name()));
                    why = Some(format!("the {} kernel cannot be generated: {e}", variant.name()));
                }
            },
            Err(r) => why = Some(format!("not tiled: {} [{}]", r.message(), r.reason.code())),
        }
        text.push_str(&format!("kernel: baseline (fallback from {} mode)\n", variant.name()));
    }
    (tessera_hls::baseline::generate(region, name), Mode::Baseline, text, why)
}

/// The runtime's view of the region variables: shapes resolved from types and map
/// clauses. Fails when an array's extent is unknown. A pointer without a map clause
/// becomes a [`MapKind::Present`] argument (see there).
fn manifest_args(region: &Region) -> Result<Vec<Arg>, Rejection> {
    region.vars.iter().map(manifest_arg).collect()
}

/// One variable as a manifest argument.
fn manifest_arg(v: &tessera_ir::Var) -> Result<Arg, Rejection> {
    let zero = || Expr::Int { value: 0, ty: ScalarType::I64 };
    let array = match v.kind {
        VarKind::Scalar => None,
        VarKind::Pointer | VarKind::Array if check::is_attached(v) => {
            let mut dims = vec![zero()];
            dims.extend(check::resolved_dims_from(v, &[], 1)?);
            Some(ArrayArg { map: MapKind::Present, dims, section: Vec::new() })
        }
        VarKind::Pointer | VarKind::Array => {
            let dims = check::resolved_dims(v)?;
            let section = complete_section(&v.section, &dims);
            // OpenMP: an array referenced without a map clause is mapped tofrom.
            Some(ArrayArg { map: v.map.unwrap_or(MapKind::Tofrom), dims, section })
        }
    };
    Ok(Arg { name: v.name.clone(), kind: v.kind, elem: v.elem, array })
}

/// The arguments of a region kept on the host: as [`manifest_args`], with an array
/// whose extents are unknown given as a [`MapKind::Present`] argument (the runtime
/// then finds its device data, if any, by the address of its element 0).
fn host_args(region: &Region) -> Vec<Arg> {
    region
        .vars
        .iter()
        .map(|v| {
            manifest_arg(v).unwrap_or_else(|_| {
                let zeros = v.dims.iter().map(|_| Expr::Int { value: 0, ty: ScalarType::I64 }).collect();
                let array = Some(ArrayArg { map: MapKind::Present, dims: zeros, section: Vec::new() });
                Arg { name: v.name.clone(), kind: v.kind, elem: v.elem, array }
            })
        })
        .collect()
}

/// A section with one entry per dimension: the dimensions a map clause leaves out
/// are whole (`[0 : extent]`).
pub(crate) fn complete_section(section: &[Section], dims: &[Expr]) -> Vec<Section> {
    (0..dims.len())
        .map(|d| match section.get(d) {
            Some(s) => s.clone(),
            None => Section { lower: Expr::Int { value: 0, ty: ScalarType::I64 }, length: dims[d].clone() },
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_ir::{Loc, Stmt, Var, IR_VERSION};

    fn var(name: &str, kind: VarKind, dims: Vec<Option<Expr>>, map: Option<MapKind>, written: bool) -> Var {
        let elem = if kind == VarKind::Scalar { ScalarType::I32 } else { ScalarType::F32 };
        Var { name: name.into(), kind, elem, dims, map, section: vec![], written, loc: Loc::default() }
    }

    /// `for (i = 0; i < n; i++) b[i][j]… = a[i][0]` over `float (*a)[m]`, `float (*b)[m]`.
    fn region(map_a: Option<MapKind>, map_b: Option<MapKind>) -> Region {
        let (i, n, m) = (Expr::var("i", ScalarType::I32), Expr::var("n", ScalarType::I32), Expr::var("m", ScalarType::I32));
        let read = Expr::Read { array: "a".into(), index: vec![i.clone(), Expr::int(0)], ty: ScalarType::F32, loc: Loc::default() };
        let body = vec![Stmt::For {
            var: "i".into(),
            ty: ScalarType::I32,
            lower: Expr::int(0),
            upper: n,
            step: 1,
            body: vec![Stmt::Assign {
                target: tessera_ir::LValue::Element {
                    array: "b".into(),
                    index: vec![i, Expr::int(0)],
                    ty: ScalarType::F32,
                    loc: Loc::default(),
                },
                value: read,
                loc: Loc::default(),
            }],
            loc: Loc::default(),
        }];
        Region {
            version: IR_VERSION,
            location: Loc { file: "p.c".into(), line: 3, col: 1 },
            function: "f".into(),
            index: 0,
            directive: "target teams distribute parallel for".into(),
            collapse: 1,
            unsupported_clauses: vec![],
            tile: None,
            vars: vec![
                var("a", VarKind::Pointer, vec![None, Some(m.clone())], map_a, false),
                var("b", VarKind::Pointer, vec![None, Some(m)], map_b, true),
                var("n", VarKind::Scalar, vec![], None, false),
                var("m", VarKind::Scalar, vec![], None, false),
            ],
            body,
        }
    }

    #[test]
    fn pointers_without_map_clauses_are_found_present_at_run_time() {
        let out = compile_region(&region(None, None), &Options::default());
        assert!(out.rejection.is_none(), "{:?}", out.rejection);
        let a = out.manifest.args[0].array.as_ref().unwrap();
        assert_eq!(a.map, MapKind::Present);
        // The outer extent is unknown (0), the inner one comes from the type.
        assert_eq!(a.dims, vec![Expr::Int { value: 0, ty: ScalarType::I64 }, Expr::var("m", ScalarType::I32)]);
        assert!(a.section.is_empty());
    }

    /// A tiled mode that ends with the baseline kernel says why (the plugin remarks it);
    /// asking for the baseline is no fallback.
    #[test]
    fn fallbacks_to_the_baseline_kernel_say_why() {
        let r = region(None, None);
        let opts = Options::from_plugin_args(&["tile=4,4"]).unwrap();
        let out = compile_region(&r, &opts);
        assert!(out.rejection.is_none(), "{:?}", out.rejection);
        assert_eq!(out.manifest.mode, "baseline");
        let why = out.fallback.expect("a fallback reason");
        assert!(why.starts_with("not tiled: ") && why.ends_with("[tile-size-count]"), "{why}");
        let out = compile_region(&r, &Options::from_plugin_args(&["mode=baseline", "tile=4,4"]).unwrap());
        assert_eq!((out.manifest.mode.as_str(), out.fallback), ("baseline", None));
    }

    #[test]
    fn rejected_regions_keep_their_arguments() {
        let mut r = region(None, Some(MapKind::Tofrom));
        r.unsupported_clauses.push(tessera_ir::Named { name: "nowait".into(), loc: Loc::default() });
        let out = compile_region(&r, &Options::default());
        assert_eq!(out.rejection.unwrap().reason.code(), "unsupported-clause");
        assert_eq!(out.manifest.args.len(), 4);
        // `always, to` written: still the write-to-input rule.
        let mut r = region(None, Some(MapKind::AlwaysTo));
        r.vars[1].section = vec![Section { lower: Expr::int(0), length: Expr::var("n", ScalarType::I32) }];
        let out = compile_region(&r, &Options::default());
        assert_eq!(out.rejection.unwrap().reason.code(), "write-to-input");
    }
}
