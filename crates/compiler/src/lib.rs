//! Tessera's compile pipeline for one target region.
//!
//! ```text
//! Region (IR JSON from the plugin)
//!   └─ check::check_region ── Rejection? ──> manifest with `rejected`, remark; region stays on the host
//!   └─ tessera_hls::baseline ──> kernel C++ + emulation entry
//!   └─ tessera_poly::optimize ──> the tiling plan (`<kernel>.plan.txt`)
//!   └─ Manifest (args, shapes, maps, content hash) + files for `<output>.tessera/`
//!
//! DataDirective (IR of target data / enter data / exit data / update)
//!   └─ data::compile_data ──> DataDesc (embedded in the runtime call) or a remark
//! ```
//!
//! Kernels are named by [`region_name`]: `tessera_<file stem>_<path hash>_l<line>_r<index>_<IR
//! hash>`, unique within a program (two `k.c` in different directories differ in the
//! path hash) and deterministic. The manifest's `hash`
//! (`tessera_ir::manifest::Manifest::content_hash`) identifies what the kernel computes;
//! bitstreams record it and the XRT backend checks it. [`is_kernel_file_of`] tells the
//! plugin which files of the kernel directory belong to a source file (stale ones are
//! removed).
//!
//! Everything here is a pure function of the region and the options; the plugin (or
//! the CLI) does the I/O with what [`compile_region`] returns.

#![warn(missing_docs)]

pub mod affine;
pub mod branches;
pub mod check;
pub mod data;
pub mod delinearize;
pub mod fold;
#[cfg(test)]
mod interp;
pub mod footprint;
pub mod locals;
pub mod options;
pub mod reject;
pub mod shape;
pub mod tiles;

/// What the unit tests of several modules share.
#[cfg(test)]
mod test_support {
    use tessera_ir::Region;

    /// A region IR file of `tests/ir/`, e.g. `bench/2D-jacobi.ir.json`.
    pub fn fixture(rel: &str) -> Region {
        let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir").join(rel);
        Region::from_json(&std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))).unwrap()
    }
}

pub use options::{MathMode, Mode, Options};
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
    /// Compile-time warnings: accesses that leave their array's mapped section
    /// whatever the scalars' values ([`footprint::constant_violations`]).
    pub warnings: Vec<String>,
    /// A reason of [`reject::Kind::Bug`] behind the rejection or the fallback: Tessera
    /// contradicted itself. The region is still safe (host or baseline kernel); the
    /// plugin reports it as an internal error, and tests fail on it.
    pub internal: Option<String>,
}

/// The name of a region's kernel:
/// `tessera_<file stem>_<path hash>_l<line>_r<index>_<IR hash>`, e.g.
/// `tessera_k_3f2a91c0_l2_r0_7b1e44d2` — a valid C identifier, unique within a
/// program and deterministic (the same source compiled the same way gets the same
/// name).
///
/// - `<file stem>`: the directive's file name up to its first `.`, characters other
///   than ASCII letters and digits as `_` (for people reading the name);
/// - `<path hash>`: 8 hex digits of SHA-256 of the directive's file as an absolute,
///   normalised path (`Region::source`, which the plugin fills in; `location.file`
///   when absent), so `a/k.c` and `b/k.c` never share a kernel name
///   ([`kernel_prefix`]: everything up to here names the file's kernels);
/// - `l<line>_r<index>`: the directive's line and its index among the regions of
///   the translation unit (template instances of one pragma);
/// - `<IR hash>`: 8 hex digits of SHA-256 of the region IR (its JSON), so an edited
///   region gets a new name and a bitstream of the old one is not found under it.
///
/// The options (mode, tile sizes, port width) are not in the name: they change the
/// kernel, not its identity; the manifest's `hash` covers them (and whatever else
/// makes the kernel), and the XRT backend compares it with the bitstream's record.
pub fn region_name(region: &Region) -> String {
    let path = region.source.as_deref().filter(|s| !s.is_empty()).unwrap_or(&region.location.file);
    let ir = &sha256_hex(region.to_json().as_bytes())[..8];
    format!("{}l{}_r{}_{ir}", kernel_prefix(path), region.location.line, region.index)
}

/// The start of the name of every kernel of the regions in source file `path` (an
/// absolute, normalised path, as `Region::source`): `tessera_<file stem>_<path hash>_`.
/// The plugin identifies the files of a translation unit by it ([`is_kernel_file_of`]).
pub fn kernel_prefix(path: &str) -> String {
    let base = path.rsplit(['/', '\\']).next().unwrap_or(path);
    let stem = base.split('.').next().unwrap_or(base);
    let stem: String = stem.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("tessera_{stem}_{}_", &sha256_hex(path.as_bytes())[..8])
}

/// What follows the kernel name in the name of every file [`compile_region`] writes
/// into the kernel directory. The plugin removes only files with these suffixes.
pub const KERNEL_FILE_SUFFIXES: [&str; 4] = [".ir.json", ".cpp", ".manifest.json", ".plan.txt"];

/// What the name of a delinearised region's fallback kernel adds to the kernel name
/// (`<kernel>_linear`: the baseline kernel of the region as written).
pub const LINEAR_SUFFIX: &str = "_linear";

/// Whether `file` (a file name) is one that [`compile_region`] writes for a region of
/// source file `path`: [`kernel_prefix`]`(path)`, then `l<line>_r<index>_<8 hex
/// digits>`, then one of [`KERNEL_FILE_SUFFIXES`]. The plugin removes such files of
/// its translation unit that it did not write again (stale kernels), and never
/// touches anything else in the directory (other translation units' kernels,
/// bitstreams, the user's files).
pub fn is_kernel_file_of(path: &str, file: &str) -> bool {
    let Some(rest) = file.strip_prefix(&kernel_prefix(path)) else { return false };
    let Some(suffix) = KERNEL_FILE_SUFFIXES.iter().find(|s| rest.ends_with(*s)) else { return false };
    let id = &rest[..rest.len() - suffix.len()];
    // The fallback kernel of a delinearised region: `<kernel>_linear.cpp`.
    let id = id.strip_suffix(LINEAR_SUFFIX).filter(|_| *suffix == ".cpp").unwrap_or(id);
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let hex = |s: &str| s.len() == 8 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    match id.strip_prefix('l').map(|r| r.splitn(3, '_').collect::<Vec<_>>()).as_deref() {
        Some([line, index, ir]) => digits(line) && index.strip_prefix('r').is_some_and(digits) && hex(ir),
        _ => false,
    }
}

fn sha256_hex(data: &[u8]) -> String {
    tessera_ir::manifest::sha256_hex(data)
}

/// Whether `region` is offloaded as far as its statements and subscripts go: the
/// check's verdict, the delinearised view the kernels compute (flat arrays indexed
/// `a[i*n + j]`, under launch conditions), and a view whose region stays on the host
/// for another reason — that reason is the one to fix (the view answers the
/// subscripts), and the view's footprints bound what a host run copies
/// (`footprint::linearized`).
fn decide(region: &Region, opts: &Options) -> (Result<(), Rejection>, Option<delinearize::Delinearized>, Option<delinearize::Delinearized>) {
    let mut checked = check::check_region_with(region, opts.math);
    let mut delin = None;
    let mut host_view = None;
    match delinearize::delinearize(region) {
        Ok(Some(d)) => match check::check_region_view(region, &d.region, opts.math) {
            Ok(()) => {
                checked = Ok(());
                delin = Some(d);
            }
            Err(r) => {
                if matches!(checked, Err(Rejection { reason: RejectReason::NonAffineSubscript { .. }, .. })) {
                    checked = Err(r);
                }
                // Only for a region that stays on the host (the linear subscripts
                // may be affine, `i*100 + j`, and the region offloaded as written).
                if checked.is_err() {
                    host_view = Some(d);
                }
            }
        },
        Ok(None) => {}
        Err(why) => {
            if let Err(Rejection { reason: RejectReason::NonAffineSubscript { array, subscript }, loc }) = checked {
                checked = Err(Rejection { reason: RejectReason::NotDelinearizable { array, subscript, why }, loc });
            }
        }
    }
    (checked, delin, host_view)
}

/// Runs the pipeline on one region.
pub fn compile_region(region: &Region, opts: &Options) -> Outcome {
    let name = region_name(region);
    let mut files = vec![(format!("{name}.ir.json"), region.to_json())];
    let normalized = attach_zero_length_sections(region);
    let (mut region, mut decision) = (&normalized, decide(&normalized, opts));
    // A subscript through a local (`int idx = i*m + j; b[idx] = …`) is the local's
    // value: when the region as written is refused for its subscripts, the region with
    // its locals substituted into their uses (`locals::inline`, which computes the same
    // bits) is the one compiled — kernels, baseline included, and footprints.
    let subscripts = |c: &Result<(), Rejection>| {
        matches!(
            c,
            Err(Rejection { reason: RejectReason::NonAffineSubscript { .. } | RejectReason::NotDelinearizable { .. }, .. })
        )
    };
    let inlined;
    if subscripts(&decision.0) {
        inlined = locals::inline(&normalized);
        if matches!(inlined, std::borrow::Cow::Owned(_)) {
            let other = decide(&inlined, opts);
            if !subscripts(&other.0) {
                (region, decision) = (&inlined, other);
            }
        }
    }
    let (checked, delin, host_view) = decision;
    let (rejection, args) = match checked.and_then(|()| manifest_args(region)) {
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
        rejected: rejection.as_ref().map(|r| r.remark()),
        mode: opts.mode,
        args,
        kernel_source: String::new(),
        emu_entry_source: String::new(),
        xclbin: String::new(),
        hash: String::new(),
        if_clause: region.if_clause,
        device_clause: region.device_clause,
        always_maps: false,
        guard: None,
        write_ports: Vec::new(),
        interleave: None,
        size_params: Vec::new(),
        members: region.vars.iter().enumerate().filter(|(_, v)| region.members.contains(&v.name)).map(|(i, _)| i).collect(),
        member_checks: region
            .vars
            .iter()
            .enumerate()
            .filter(|(_, v)| region.checked_members.contains(&v.name))
            .map(|(i, _)| i)
            .collect(),
    };
    // Footprints also for regions kept on the host: a host run inside a data region
    // copies only what they cover (not the whole mapping) around the host code. Of a
    // delinearised array, the view's box linearised (what the flat section must hold).
    // The region the kernels compute: the delinearised view, if any; the tiled
    // kernels and the footprints see its local scalars substituted (`locals`).
    // A host view only ever feeds the footprints: its region is rejected, so no
    // kernel is generated from it.
    let viewed = delin.as_ref().or(host_view.as_ref());
    let kernel_region = viewed.map_or(region, |d| &d.region);
    // `if`/`else` assigning the same places: selects (`branches`), before the locals
    // are substituted (a local assigned in both branches then has one value).
    let converted = branches::convert(kernel_region);
    let view = locals::inline(&converted);
    // An imperfect nest taken as a perfect one (a statement beside the inner loop
    // folded into its first iteration, under launch conditions, `fold`): the
    // optimizer plans the folded region, and its footprints stand in for the
    // nest's, which has none of its own (`region_footprints`).
    let folded = fold_of(&view);
    // Footprints over the arrays as the call passes them: a delinearised view's
    // linearised.
    let as_passed = |fps: Vec<(String, tessera_ir::manifest::Footprint)>| match viewed {
        Some(d) => fps
            .into_iter()
            .map(|(array, fp)| match d.views.iter().find(|v| v.array == array) {
                Some(v) => (array, footprint::linearized(fp, &v.extents)),
                None => (array, fp),
            })
            .collect::<Vec<_>>(),
        None => fps,
    };
    let fps = all_region_footprints(&view, folded.as_ref()).map(as_passed);
    // The tiled kernels' region may also make guarded writes (`if (c) a[s] = e;` as
    // `a[s] = c ? e : a[s]`, `branches::convert_guarded`): writes the source may not
    // make, launch conditions of the kernel (their footprints checked against the
    // device's data at launch). Without footprints for them, no guarded writes.
    let guarded_view = (opts.mode != Mode::Baseline && rejection.is_none())
        .then(|| branches::convert_guarded(kernel_region))
        .filter(|(_, g)| !g.is_empty())
        .and_then(|(r, guarded)| {
            let v = locals::inline(&r).into_owned();
            let f = fold_of(&v);
            let writes: Vec<tessera_ir::manifest::GuardWrite> = as_passed(all_region_footprints(&v, f.as_ref())?)
                .into_iter()
                .filter(|(array, fp)| fp.write && !fp.may && guarded.iter().any(|g| &g.array == array))
                .map(|(arg, footprint)| tessera_ir::manifest::GuardWrite { arg, footprint })
                .collect();
            Some((v, f, guarded, writes))
        });
    let known = fps.is_some();
    for (array, fp) in fps.into_iter().flatten() {
        if let Some(a) = manifest.args.iter_mut().find(|a| a.name == array).and_then(|a| a.array.as_mut()) {
            a.footprint.push(fp);
        }
    }
    // With every access's footprint known, an array without one is only named by a
    // clause (or by reads the kernels' forms dropped, whose values nothing uses). A
    // scalar passed as a one-element array (mapped and written) is read and written
    // as a scalar, which no footprint describes: never untouched.
    if known {
        for a in manifest.args.iter_mut() {
            let array_var = region.var(&a.name).is_some_and(|v| v.kind != VarKind::Scalar);
            if let Some(arr) = a.array.as_mut().filter(|_| array_var) {
                arr.untouched = arr.footprint.is_empty();
            }
        }
    }
    if opts.banks == 2 {
        assign_banks(region, &mut manifest.args);
    }
    let mut warnings = Vec::new();
    if rejection.is_none() {
        let arrays: Vec<(String, &ArrayArg)> =
            manifest.args.iter().filter_map(|a| Some((a.name.clone(), a.array.as_ref()?))).collect();
        warnings = footprint::constant_violations(&arrays);
    }
    let mut fallback = None;
    let mut internal = None;
    if rejection.is_none() {
        let (kview, kfolded) = match &guarded_view {
            Some((v, f, ..)) => (v, f.as_ref()),
            None => (&*view, folded.as_ref()),
        };
        let folded = kfolded.filter(|_| opts.mode != Mode::Baseline);
        let planned = folded.map_or(kview, |f| &f.region);
        let (mut kernel, mode, mut plan, why) = generate_kernel(kernel_region, planned, &name, opts);
        // The guarded writes, when the kernel is a tiled one.
        let mut guard_writes = Vec::new();
        if let Some((_, _, guarded, writes)) = guarded_view.as_ref().filter(|_| mode != Mode::Baseline) {
            for g in guarded {
                plan.push_str(&format!("guarded write: {} (always written, its old value under !c)\n", g.text));
            }
            for w in writes {
                plan.push_str(&format!(
                    "launch condition: the guarded write '{}' stays in the device's data of '{}'\n",
                    w.footprint.access, w.arg
                ));
            }
            guard_writes = writes.clone();
        }
        if let Some((text, reason)) = why {
            if reason.kind() == reject::Kind::Bug {
                internal = Some(text.clone());
            }
            fallback = Some(text);
        }
        // The launch conditions of the tiled kernel: the view's and the fold's.
        let mut conditions: Vec<tessera_ir::manifest::GuardCondition> = Vec::new();
        if let Some(d) = &delin {
            plan.push_str(&delinearize::describe(d));
            conditions.extend(d.conditions.iter().map(|c| tessera_ir::manifest::GuardCondition { expr: c.expr.clone(), text: c.text.clone() }));
        }
        if let Some(f) = folded.filter(|_| mode != Mode::Baseline) {
            plan.push_str(&fold::describe(f));
            conditions.extend(f.conditions.iter().map(|c| tessera_ir::manifest::GuardCondition { expr: c.expr.clone(), text: c.text.clone() }));
        }
        if delin.is_some() || !conditions.is_empty() || !guard_writes.is_empty() {
            if mode == Mode::Baseline {
                // The baseline kernel keeps the subscripts as written: no view, no conditions.
                if delin.is_some() {
                    kernel = tessera_hls::baseline::generate_with(region, &name, opts.reassociate);
                    plan.push_str("kernel: baseline of the region as written (linear subscripts)\n");
                }
            } else if !conditions.is_empty() || !guard_writes.is_empty() {
                let base_name = format!("{name}{LINEAR_SUFFIX}");
                let base = tessera_hls::baseline::generate_with(region, &base_name, opts.reassociate);
                let fb = Manifest {
                    kernel: Some(base_name.clone()),
                    mode: Mode::Baseline,
                    kernel_source: base.source.clone(),
                    emu_entry_source: base.emu_entry.clone(),
                    xclbin: format!("{base_name}.xclbin"),
                    ..manifest.clone()
                };
                manifest.guard = Some(tessera_ir::manifest::Guard {
                    conditions,
                    writes: guard_writes,
                    fallback: tessera_ir::manifest::FallbackKernel {
                        kernel: base_name.clone(),
                        mode: fb.mode,
                        hash: fb.content_hash(),
                        kernel_source: base.source,
                        emu_entry_source: base.emu_entry,
                        xclbin: fb.xclbin,
                        write_ports: Vec::new(),
                        interleave: None,
                        size_params: base.size_params,
                    },
                });
                plan.push_str(&format!("fallback kernel when a launch condition fails: {base_name} (baseline of the region as written)\n"));
                files.push((format!("{base_name}.cpp"), manifest.guard.as_ref().expect("just set").fallback.kernel_source.clone()));
            }
        }
        manifest.mode = mode;
        manifest.kernel = Some(name.clone());
        manifest.xclbin = format!("{name}.xclbin");
        manifest.kernel_source = kernel.source.clone();
        manifest.emu_entry_source = kernel.emu_entry;
        manifest.write_ports = kernel.write_ports;
        manifest.interleave = kernel.interleave;
        manifest.size_params = kernel.size_params;
        // An interleaved array's own parameters reach its first half, in bank 0.
        for &i in manifest.interleave.iter().flat_map(|il| &il.args) {
            if let Some(a) = manifest.args.get_mut(i).and_then(|a| a.array.as_mut()) {
                a.bank = 0;
            }
        }
        manifest.hash = manifest.content_hash();
        files.push((format!("{name}.cpp"), kernel.source));
        files.push((
            format!("{name}.manifest.json"),
            serde_json::to_string_pretty(&manifest).expect("manifest is serialisable"),
        ));
        files.push((format!("{name}.plan.txt"), plan));
    }
    if let Some(r) = rejection.as_ref().filter(|r| r.reason.kind() == reject::Kind::Bug) {
        internal = Some(r.remark());
    }
    Outcome { manifest, rejection, files, fallback, warnings, internal }
}

/// [`all_region_footprints`], empty when they are not known.
#[cfg(test)]
fn region_footprints(view: &Region, folded: Option<&fold::Folded>) -> Vec<(String, tessera_ir::manifest::Footprint)> {
    all_region_footprints(view, folded).unwrap_or_default()
}

/// The footprints of `view`'s accesses ([`footprint::all_footprints`]), `None` when
/// they are not known; `folded`, the
/// view folded when it is an imperfect nest. Such a nest has no SCoP of its own; the
/// folded nest touches the elements it touches, and its footprints stand in (the
/// initialisation's reads become reads that may not happen, which only a host run
/// copies). When the fold rests on inner loops running (launch conditions), an empty
/// inner loop leaves the folded nest's domain empty while the source still runs its
/// initialisations, whose accesses name none of the inner loops: such accesses keep
/// their footprints whether those loops run or not
/// ([`footprint::all_footprints`]).
/// A region that is no perfect nest and does not fold gets the footprints of its
/// accesses in the loops around each ([`footprint::nest_footprints`]).
fn all_region_footprints(view: &Region, folded: Option<&fold::Folded>) -> Option<Vec<(String, tessera_ir::manifest::Footprint)>> {
    let fps = match folded {
        Some(f) => {
            let inner: Vec<String> = f.conditions.iter().map(|c| c.var.clone()).collect();
            footprint::all_footprints(&f.region, &inner)
        }
        None => footprint::all_footprints(view, &[]),
    };
    fps.or_else(|| footprint::nest_footprints(view))
}

/// `view` folded into a perfect nest when it is an imperfect one that folds (`fold`).
fn fold_of(view: &Region) -> Option<fold::Folded> {
    match tessera_poly::scop::extract(view) {
        Err(e) if matches!(e.reason, RejectReason::NotALoopNest { .. }) => fold::fold(view),
        _ => None,
    }
}

/// `map(p[:0])` on a pointer is OpenMP's zero-length array section: no data moves,
/// and the pointer finds data already present on the device — exactly a pointer
/// without a map clause ([`check::is_attached`]). The region as every later stage
/// should see it: such a variable without its map clause.
fn attach_zero_length_sections(region: &Region) -> Region {
    let mut r = region.clone();
    for v in &mut r.vars {
        if v.map.is_some() && check::is_attached(v) {
            v.map = None;
            v.section.clear();
        }
    }
    r
}

/// The manifest of a region whose variables the plugin cannot pass to the runtime
/// (`reason`): rejected, without arguments (the call `__tessera_opaque` passes none)
/// and without a kernel. The runtime lets it run on the host only while nothing is
/// mapped on the device.
pub fn opaque_region(region: &Region, reason: &str) -> Manifest {
    let mut manifest = compile_region(region, &Options { mode: Mode::Baseline, ..Options::default() }).manifest;
    manifest.kernel = None;
    manifest.rejected = Some(RejectReason::Unpassable { detail: reason.to_string() }.remark());
    manifest.always_maps = region.vars.iter().any(|v| v.map.is_some_and(MapKind::is_always));
    manifest.args.clear();
    manifest.kernel_source.clear();
    manifest.emu_entry_source.clear();
    manifest.xclbin.clear();
    manifest.members.clear();
    manifest
}

/// The kernel for an offloadable region, the mode it was generated in, and the
/// optimizer's plan (paper steps 1–4) as its stable text dump — written next to the
/// kernel as `<kernel>.plan.txt` so the decisions behind a kernel can be inspected.
/// In `paper` and `tessera` modes a region the optimizer or the tiled generator cannot
/// handle gets the baseline kernel; the plan file says why.
/// The last element says why a tiled mode fell back to the baseline kernel (the text
/// the plugin remarks, and the reason).
/// `written` is the region as written, which the baseline kernel computes; `region`
/// the same with its local scalars substituted into their uses ([`locals::inline`]),
/// which the optimizer and the tiled kernels see.
fn generate_kernel(
    written: &Region,
    region: &Region,
    name: &str,
    opts: &Options,
) -> (tessera_hls::Kernel, Mode, String, Option<(String, RejectReason)>) {
    // A preset's sizes for this region's depth (a region the optimizer cannot read
    // has no depth: its planning below reports why).
    let tile = opts.tile.clone().or_else(|| {
        let depth = tessera_poly::scop::extract(region).ok()?.depth();
        tessera_poly::preset_tile_sizes(opts.tile_preset?, depth)
    });
    let poly = tessera_poly::PolyOptions { tile: tile.clone(), port_width: opts.port_width, reassociate: opts.reassociate };
    // Without sizes from the options or a pragma, the resource model picks them (and
    // has planned the region at them).
    let chosen = match (opts.mode, &tile, &region.tile) {
        (Mode::Paper | Mode::Tessera | Mode::Dataflow, None, None) => tiles::choose(region, &poly),
        _ => None,
    };
    let (plan, chosen) = match chosen {
        Some(c) => (c.plan, Some((c.note, c.fits))),
        None => (tessera_poly::optimize(region, &poly), None),
    };
    let mut text = match &plan {
        Ok(plan) => tessera_poly::dump(plan, tessera_poly::Stage::All),
        Err(r) => format!("{}: not tiled: {}\n", r.loc, r.remark()),
    };
    let mut why = None;
    // Mode dataflow: the streaming kernel, else the tessera mode's (`dataflow-unsupported`
    // in the plan; a bug is reported like any other).
    if opts.mode == Mode::Dataflow {
        let generated = tiles::dataflow_analysis(region, opts.port_width, opts.lanes).and_then(|(mut an, lanes)| {
            let banks = if opts.banks == 2 { format!("{}\n", an.set_interleave(region)) } else { String::new() };
            let (kernel, df) = tessera_hls::dataflow::generate_from(region, name, &an)?;
            Ok((kernel, format!("{df}{lanes}\n{banks}")))
        });
        match generated {
            Ok((kernel, df)) => {
                text.push_str(&df);
                text.push_str("kernel: dataflow\n");
                return (kernel, Mode::Dataflow, text, None);
            }
            Err(e) => {
                text.push_str(&format!("dataflow kernel not generated: {}\nkernel: tessera (fallback from dataflow mode)\n", e.remark()));
                if e.kind() == reject::Kind::Bug {
                    why = Some((format!("the dataflow kernel cannot be generated: {}", e.remark()), e));
                }
            }
        }
    }
    if let Some((note, fits)) = &chosen {
        text.push_str(&format!("{note}\n"));
        if !fits {
            let reason = RejectReason::KernelTooLarge {
                detail: format!("even at the smallest tiles tried the tiled kernel does not fit the device: {note}"),
            };
            let w = format!("not tiled: {}", reason.remark());
            text.push_str(&format!("{w}\nkernel: baseline (fallback from {} mode)\n", opts.mode.name()));
            return (tessera_hls::baseline::generate_with(written, name, opts.reassociate), Mode::Baseline, text, Some((w, reason)));
        }
    }
    let variant = match opts.mode {
        Mode::Baseline => None,
        Mode::Paper => Some(tessera_hls::paper::Variant::Paper),
        Mode::Tessera | Mode::Dataflow => Some(tessera_hls::paper::Variant::Tessera),
    };
    if let Some(variant) = variant {
        match &plan {
            Ok(plan) => match tessera_hls::paper::generate(region, plan, name, opts.port_width, variant) {
                Ok(kernel) => {
                    let mode = if opts.mode == Mode::Dataflow { Mode::Tessera } else { opts.mode };
                    return (kernel, mode, text, why);
                }
                Err(e) => {
                    text.push_str(&format!("{} kernel not generated: {}\n", variant.name(), e.remark()));
                    why = Some((format!("the {} kernel cannot be generated: {}", variant.name(), e.remark()), e));
                }
            },
            Err(r) => why = Some((format!("not tiled: {}", r.remark()), r.reason.clone())),
        }
        text.push_str(&format!("kernel: baseline (fallback from {} mode)\n", variant.name()));
    }
    (tessera_hls::baseline::generate_with(written, name, opts.reassociate), Mode::Baseline, text, why)
}

/// Two DDR banks: every array the region writes goes to bank 1, every other array
/// stays in bank 0 (inputs and outputs on separate buses).
fn assign_banks(region: &Region, args: &mut [Arg]) {
    for a in args {
        if let Some(arr) = a.array.as_mut() {
            arr.bank = bank_of(region, &a.name, 2);
        }
    }
}

/// The DDR bank of variable `name` of `region` with `banks` banks: 1 for an array the
/// region writes when there are two, else 0.
pub fn bank_of(region: &Region, name: &str, banks: u32) -> u32 {
    let written = region.vars.iter().any(|v| v.name == name && (v.written || v.writes_back()));
    u32::from(banks == 2 && written)
}

/// The DDR bank of the kernel port the runtime reports as `name` (an array's own port,
/// or a second port of it: `tdf_w_<a>`, `tdf_b1_<a>`, `tdf_w_b1_<a>`) with `banks`
/// banks: of a kernel whose arrays are interleaved over two banks (`interleaved`,
/// `tessera_ir::manifest::Interleave`), 1 for a second half's ports and 0 for the
/// first half's; else its array's [`bank_of`].
pub fn port_bank(region: &Region, name: &str, interleaved: bool, banks: u32) -> u32 {
    let (array, second_half) = tessera_model::port_of(name);
    if banks == 2 && interleaved {
        return u32::from(second_half);
    }
    bank_of(region, array, banks)
}

/// The runtime's view of the region variables: shapes resolved from types and map
/// clauses. Fails when an array's extent is unknown. A pointer without a map clause
/// becomes a [`MapKind::Present`] argument (see there).
fn manifest_args(region: &Region) -> Result<Vec<Arg>, Rejection> {
    region
        .vars
        .iter()
        .map(|v| {
            let mut arg = manifest_arg(v)?;
            if let (Some(r), Some(array)) = (region.array_reduction(&v.name), arg.array.as_mut()) {
                let dims = check::resolved_dims(v)?;
                let section = complete_section(&r.section, &dims);
                array.reduction = Some(tessera_ir::manifest::ArrayReductionArg { op: r.op, section });
            }
            Ok(arg)
        })
        .collect()
}

/// One variable as a manifest argument.
fn manifest_arg(v: &tessera_ir::Var) -> Result<Arg, Rejection> {
    let zero = || Expr::Int { value: 0, ty: ScalarType::I64 };
    // A written scalar with a map clause that does not copy out (`to`, `alloc`) keeps
    // the region on the host (`check`); inside a data region that mapped the scalar,
    // its host run must write the device copy, as a device would: it is a one-element
    // array argument too.
    // (`Var::writes_back` is the case whose map copies out.)
    if v.kind == VarKind::Scalar && v.written && v.map.is_some() {
        // A scalar the region returns (mapped `tofrom`/`from`, written or reduced
        // into) is a one-element array: the address the call passes is the scalar's,
        // which is element 0 of it, so the runtime maps, copies and checks it like any
        // array (also against enclosing data regions that mapped it: the region then
        // writes the device copy), and the kernel reads and writes it through a
        // memory port.
        let one = Expr::Int { value: 1, ty: ScalarType::I64 };
        let section = vec![Section { lower: zero(), length: one.clone() }];
        let map = v.map.expect("a mapped scalar");
        let array = Some(ArrayArg { map, dims: vec![one], section, footprint: vec![], bank: 0, reduction: None, untouched: false });
        return Ok(Arg { name: v.name.clone(), kind: VarKind::Array, elem: v.elem, array });
    }
    let array = match v.kind {
        VarKind::Scalar => None,
        VarKind::Pointer | VarKind::Array if check::is_attached(v) => {
            let mut dims = vec![zero()];
            dims.extend(check::resolved_dims_from(v, &[], 1)?);
            Some(ArrayArg { map: MapKind::Present, dims, section: Vec::new(), footprint: vec![], bank: 0, reduction: None, untouched: false })
        }
        VarKind::Pointer | VarKind::Array => {
            let dims = check::resolved_dims(v)?;
            let section = complete_section(&v.section, &dims);
            // OpenMP: an array referenced without a map clause is mapped tofrom.
            Some(ArrayArg { map: v.map.unwrap_or(MapKind::Tofrom), dims, section, footprint: vec![], bank: 0, reduction: None, untouched: false })
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
                let array = Some(ArrayArg { map: MapKind::Present, dims: zeros, section: Vec::new(), footprint: vec![], bank: 0, reduction: None, untouched: false });
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
            ne: false,
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
            members: Vec::new(),
            checked_members: Vec::new(),
            version: IR_VERSION,
            location: Loc { file: "p.c".into(), line: 3, col: 1 },
            source: None,
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
            body, if_clause: false, device_clause: false, reductions: vec![], array_reductions: vec![],
        }
    }

    /// An imperfect nest that folds has the folded nest's footprints; with a run-time
    /// inner trip count, the initialisation's (which names no inner loop) hold whether
    /// the inner loop runs or not.
    #[test]
    fn folded_nests_without_conditions_have_footprints() {
        use crate::interp::{bin, c, el, for_, rd, set, v};
        use tessera_ir::BinOp;
        let nest = |hi: Expr| {
            let init = set(el("b", vec![v("i")]), rd("a", vec![v("i")]));
            let acc = set(el("b", vec![v("i")]), bin(BinOp::Add, rd("b", vec![v("i")]), rd("a", vec![bin(BinOp::Add, v("i"), v("k"))])));
            crate::interp::region(&["a", "b"], &["n", "m"], vec![for_("i", c(0), v("n"), vec![init, for_("k", c(0), hi, vec![acc])])])
        };
        let fps_of = |r: &Region| region_footprints(r, fold::fold(r).as_ref());
        let fps = fps_of(&nest(c(3)));
        let of = |a: &str| fps.iter().filter(|(x, _)| x == a).map(|(_, f)| f.access.clone()).collect::<Vec<_>>();
        assert_eq!(of("a"), ["a[i]", "a[i + k]"]);
        assert!(fps.iter().any(|(x, f)| x == "b" && f.write && !f.may));
        assert!(fps.iter().any(|(x, f)| x == "a" && f.access == "a[i]" && f.may));
        let fps = fps_of(&nest(v("m")));
        let b_write = fps.iter().find(|(x, f)| x == "b" && f.write).expect("b is written");
        assert_eq!(b_write.1.nonempty.len(), 1, "only 'i' must run: {:?}", b_write.1.nonempty);
        let a_k = fps.iter().find(|(_, f)| f.access == "a[i + k]").expect("the accumulation's read");
        assert_eq!(a_k.1.nonempty.len(), 2, "'i' and 'k' must run");
    }

    /// `a/k.c` and `b/k.c` with a region on the same line: different kernels.
    #[test]
    fn kernel_names_hash_the_source_path_and_the_region() {
        let mut a = region(None, None);
        a.location.file = "a/k.c".into();
        a.source = Some("/w/a/k.c".into());
        let mut b = a.clone();
        b.location.file = "b/k.c".into();
        b.source = Some("/w/b/k.c".into());
        let (na, nb) = (region_name(&a), region_name(&b));
        assert_ne!(na, nb);
        for n in [&na, &nb] {
            assert!(n.starts_with("tessera_k_") && n.contains("_l3_r0_"), "{n}");
            assert_eq!(n.len(), "tessera_k_12345678_l3_r0_12345678".len(), "{n}");
            assert!(n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{n}");
        }
        assert!(na.starts_with(&kernel_prefix("/w/a/k.c")) && nb.starts_with(&kernel_prefix("/w/b/k.c")));
        // Deterministic, and the same file compiled twice gets the same name.
        assert_eq!(region_name(&a.clone()), na);
        // The same path, another computation: another name (the IR hash).
        let mut edited = a.clone();
        edited.vars[2].name = "count".into();
        let ne = region_name(&edited);
        assert_ne!(ne, na);
        assert_eq!(ne[..ne.len() - 8], na[..na.len() - 8]);
        // Without `source` (hand-written IR), the location's file stands in.
        let mut plain = a.clone();
        plain.source = None;
        assert!(region_name(&plain).starts_with(&kernel_prefix("a/k.c")));
        // Any file name makes an identifier.
        assert!(kernel_prefix("/x/my-file.v2.c").starts_with("tessera_my_file_"));
        // The manifest carries the kernel's content hash.
        let out = compile_region(&a, &Options::default());
        assert_eq!(out.manifest.kernel.as_deref(), Some(na.as_str()));
        assert_eq!(out.manifest.hash, out.manifest.content_hash());
        assert_eq!(out.manifest.hash.len(), 64);
        let baseline = compile_region(&a, &Options::from_plugin_args(&["mode=baseline", "port-width=4"]).unwrap());
        assert_eq!(baseline.manifest.kernel.as_deref(), Some(na.as_str()), "options do not rename");
        let mut r = a.clone();
        r.unsupported_clauses.push(tessera_ir::Named { name: "nowait".into(), loc: Loc::default() });
        assert_eq!(compile_region(&r, &Options::default()).manifest.hash, "", "no kernel, no hash");
    }

    /// `tile=<preset>` sizes each region by its depth: 1D-jacobi at 256 with `small`,
    /// 2D-jacobi at 32,32 and 3D-heat at 16,16,16; `default` is 512 / 64,64 / 32,32,32.
    #[test]
    fn tile_presets_size_each_region_by_its_depth() {
        let sz = |fixture_name: &str, preset: &str| {
            let o = Options::from_plugin_args(&["mode=tessera", &format!("tile={preset}")]).unwrap();
            let out = compile_region(&crate::test_support::fixture(fixture_name), &o);
            let plan = out.files.iter().find(|(f, _)| f.ends_with(".plan.txt")).expect("a plan").1.clone();
            plan.lines().find(|l| l.trim_start().starts_with("SZ = ")).expect("tile sizes in the plan").trim().to_string()
        };
        assert_eq!(sz("bench/1D-jacobi.ir.json", "small"), "SZ = (256)");
        assert_eq!(sz("bench/2D-jacobi.ir.json", "small"), "SZ = (32, 32)");
        assert_eq!(sz("bench/3D-heat.ir.json", "small"), "SZ = (16, 16, 16)");
        assert_eq!(sz("bench/2D-jacobi.ir.json", "default"), "SZ = (64, 64)");
    }

    /// `banks=2`: the array the region writes is in bank 1, the one it reads in bank 0;
    /// one bank: everything in bank 0. The bank is part of the kernel's identity.
    #[test]
    fn two_banks_put_written_arrays_in_the_second() {
        let r = region(None, None);
        let banks = |o: &Options| -> Vec<(String, u32)> {
            let m = compile_region(&r, o).manifest;
            m.args.iter().filter_map(|a| Some((a.name.clone(), a.array.as_ref()?.bank))).collect()
        };
        let two = Options::from_plugin_args(&["banks=2"]).unwrap();
        assert_eq!(banks(&two), [("a".to_string(), 0), ("b".to_string(), 1)]);
        assert_eq!(banks(&Options::default()), [("a".to_string(), 0), ("b".to_string(), 0)]);
        assert_ne!(compile_region(&r, &two).manifest.hash, compile_region(&r, &Options::default()).manifest.hash);
    }

    #[test]
    fn kernel_files_of_a_source_file() {
        let r = {
            let mut r = region(None, None);
            r.source = Some("/w/a/k.c".into());
            r
        };
        let out = compile_region(&r, &Options::default());
        let name = out.manifest.kernel.clone().unwrap();
        assert_eq!(out.files.len(), 4);
        for (f, _) in &out.files {
            assert!(f.starts_with(&name), "{f}");
            assert!(KERNEL_FILE_SUFFIXES.contains(&&f[name.len()..]), "{f}: add its suffix to KERNEL_FILE_SUFFIXES");
            assert!(is_kernel_file_of("/w/a/k.c", f), "{f}");
            assert!(!is_kernel_file_of("/w/b/k.c", f), "{f}");
        }
        let p = kernel_prefix("/w/a/k.c");
        for other in [
            format!("{name}.xclbin"),
            format!("{name}.xclbin.json"),
            format!("{p}l3_r0.cpp"),
            format!("{p}l3_r0_1234567.cpp"),
            format!("{p}l3_r0_1234567G.cpp"),
            format!("{p}lx_r0_12345678.cpp"),
            format!("{p}l3_rx_12345678.cpp"),
            format!("{p}l3_r0_12345678_x.cpp"),
            format!("{p}notes.txt"),
            "tessera_k_l3_r0.cpp".to_string(),
        ] {
            assert!(!is_kernel_file_of("/w/a/k.c", &other), "{other}");
        }
        assert!(is_kernel_file_of("/w/a/k.c", &format!("{p}l17_r12_0a1b2c3d.plan.txt")));
    }

    /// A scalar the region writes with a map clause is a one-element array argument,
    /// also when the map does not copy out (`to`: the region stays on the host, whose
    /// run must write the device copy a data region may hold); without a map clause
    /// (firstprivate) it stays a value.
    #[test]
    fn written_mapped_scalars_are_one_element_arrays() {
        for (map, array) in [(Some(MapKind::Tofrom), true), (Some(MapKind::To), true), (Some(MapKind::Alloc), true), (None, false)] {
            let mut r = region(None, None);
            let mut s = r.vars[2].clone();
            (s.name, s.written, s.map) = ("s".into(), true, map);
            r.vars.push(s);
            let out = compile_region(&r, &Options::default());
            let n = &out.manifest.args[4];
            assert_eq!(n.array.is_some(), array, "{map:?}");
            if let Some(a) = &n.array {
                assert_eq!((n.kind, a.map, a.dims.len(), a.section.len()), (VarKind::Array, map.unwrap(), 1, 1));
            }
            assert_eq!(out.rejection.is_some(), matches!(map, Some(MapKind::To | MapKind::Alloc)), "{map:?}");
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
        assert_eq!(out.manifest.mode, crate::options::Mode::Baseline);
        let why = out.fallback.expect("a fallback reason");
        assert!(why.starts_with("not tiled: [tile-size-count] "), "{why}");
        let out = compile_region(&r, &Options::from_plugin_args(&["mode=baseline", "tile=4,4"]).unwrap());
        assert_eq!((out.manifest.mode, out.fallback), (crate::options::Mode::Baseline, None));
    }

    /// Regions with reductions get the tiled kernel when its accumulations are exact:
    /// a 1-D floating sum (tiles in the loop's order), 2-D integer reductions (any
    /// order); a 2-D floating sum only with `reassociate`, else the baseline kernel
    /// with the reason `reduction-order`. The returned scalars are one-element array
    /// arguments in either kernel.
    #[test]
    fn reductions_are_tiled_where_exact() {
        let load = |n: &str| {
            let p = format!("{}/../../tests/ir/{n}.ir.json", env!("CARGO_MANIFEST_DIR"));
            Region::from_json(&std::fs::read_to_string(&p).unwrap()).unwrap()
        };
        let reassociate = Options::from_plugin_args(&["reassociate"]).unwrap();
        for (file, opts, mode) in [
            ("sum1d", &Options::default(), "tessera"),
            ("checksum2d", &Options::default(), "tessera"),
            ("sum2d", &Options::default(), "baseline"),
            ("sum2d", &reassociate, "tessera"),
        ] {
            let out = compile_region(&load(file), opts);
            assert!(out.rejection.is_none() && out.internal.is_none(), "{file}: {:?}", out.rejection);
            assert_eq!(out.manifest.mode.name(), mode, "{file}: {:?}", out.fallback);
            let s = &out.manifest.args[0];
            assert_eq!((s.kind, s.array.as_ref().map(|a| a.map)), (VarKind::Array, Some(MapKind::Tofrom)), "{file}");
            if mode == "baseline" {
                let why = out.fallback.unwrap();
                assert!(why.starts_with("not tiled: [reduction-order] the floating-point sum 'reduction(+: s)'"), "{why}");
            } else {
                assert_eq!(out.fallback, None);
            }
        }
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
