//! `tessera explain <file.c | region.json>`: what the polyhedral optimizer decides for
//! each target region (paper steps 1–4, `crates/poly`), without generating a kernel.
//!
//! Per region it prints the chosen permutation of the intra-tile loops, δ, the padded
//! trip counts, every buffer (array, fused accesses, kind, shape with the alignment
//! halo, elements), the total, and every candidate permutation with its cost or the
//! dependence that made it illegal; or why the region is rejected. Then the modelled
//! resources of the kernel the compiler would generate — the tiled kernel of the plan,
//! or the baseline kernel of a region the optimizer leaves untiled — and the share of
//! the XCVU9P they use (`tessera_model::resources`, inputs from
//! `tessera_compiler::shape`). `--dump=<stage>`
//! prints a stage's stable text dump (`scop`, `deps`, `plan`, `buffers`, `all`),
//! `--json` a machine-readable summary, `--timings` the optimizer's time per region.
//! The text output ends each region with its exact Load and Store sets
//! (`tessera_poly::dataflow`: what the `dataflow` mode's kernel reads and writes).
//!
//! A C/C++ file is compiled with clang-19 and the Tessera plugin only to dump the
//! region IR (`-fplugin-arg-tessera-dump-ir`); extra clang arguments go after `--`
//! (e.g. `tessera explain x.c -- -DN=256`). The plugin is found like `tessera cc` finds
//! it: `$TESSERA_PLUGIN`, else next to this executable.

use clap::Args;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::Instant;
use tessera_ir::Region;
use tessera_compiler::shape;
use tessera_model::{estimate_resources, usage, KernelShape, ResourceParams};
use tessera_poly::{dump, optimize, parse_tile_list, BufferKind, IntraTrip, Plan, PolyOptions, Stage};

/// Arguments of `tessera explain`.
#[derive(Args, Debug)]
pub struct ExplainArgs {
    /// A C/C++ source file with target regions, or a `*.ir.json` region dumped by the plugin.
    pub input: PathBuf,
    /// Tile sizes: one for every loop of every region (`--tile 16`), or one per loop,
    /// e.g. `--tile 32,32,32` (default: 1024 / 128,128 / 32,32,32).
    #[arg(long)]
    pub tile: Option<String>,
    /// Port width in elements per beat (4/8/16 floats = 128/256/512 bit; 1: no alignment
    /// halo). The default is `tessera cc`'s, so the plan shown is the one compiled.
    #[arg(long, default_value_t = 16)]
    pub port_width: u32,
    /// Lanes per cycle of the dataflow kernel, as `-fplugin-arg-tessera-lanes` (a power
    /// of two up to the port width); default: chosen from the resource model.
    #[arg(long)]
    pub lanes: Option<u32>,
    /// DDR banks, as `-fplugin-arg-tessera-banks` (1 or 2): with 2, the dataflow
    /// kernel's placement of its arrays (whole arrays, or interleaved over both banks
    /// where whole arrays cannot balance them).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=2))]
    pub banks: u32,
    /// Allow floating sums and products to be reassociated, as
    /// `-fplugin-arg-tessera-reassociate` does (reductions may then be tiled in any order).
    #[arg(long)]
    pub reassociate: bool,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Print a stage's text dump: scop, deps, plan, buffers or all.
    #[arg(long)]
    pub dump: Option<String>,
    /// Print the optimizer's own time per region.
    #[arg(long)]
    pub timings: bool,
    /// Extra clang arguments for a C/C++ input (after `--`).
    #[arg(last = true)]
    pub clang_args: Vec<String>,
}

/// Runs `tessera explain`.
pub fn run(a: &ExplainArgs) -> ExitCode {
    let fail = |msg: String| {
        eprintln!("tessera explain: error: {msg}");
        ExitCode::FAILURE
    };
    let tile = match a.tile.as_deref().map(parse_tile_list).transpose() {
        Ok(t) => t,
        Err(e) => return fail(e),
    };
    let stage = match a.dump.as_deref().map(|s| Stage::parse(s).ok_or(s)).transpose() {
        Ok(s) => s,
        Err(s) => return fail(format!("--dump={s}: unknown stage (known: scop, deps, plan, buffers, all)")),
    };
    let regions = match load_regions(&a.input, &a.clang_args) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let opts = PolyOptions { tile, port_width: a.port_width.max(1), reassociate: a.reassociate };
    let mut json_regions = Vec::new();
    for region in &regions {
        // The compiler's input-class check first (its closed set of reasons), then the optimizer.
        let checked = tessera_compiler::check::check_region(region);
        let t = Instant::now();
        let result = match &checked {
            Ok(()) => Some(optimize(region, &opts)),
            Err(_) => None,
        };
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let rejected = match (&checked, &result) {
            (Err(r), _) => Some((r.reason.code().to_string(), r.message(), r.loc.to_string())),
            (_, Some(Err(r))) => Some((r.reason.code().to_string(), r.message(), r.loc.to_string())),
            _ => None,
        };
        let plan = match &result {
            Some(Ok(p)) => Some(p),
            _ => None,
        };
        if a.json {
            let mut v = region_json(region, plan, rejected.as_ref().map(|r| (r.0.as_str(), r.1.as_str())));
            if checked.is_ok() {
                v["resources"] = resources_json(region, plan);
            }
            if a.timings {
                v["time_ms"] = json!(ms);
            }
            json_regions.push(v);
            continue;
        }
        println!("{}: target region in {}", region.location, region.function);
        if let Some((code, msg, loc)) = &rejected {
            println!("  rejected [{code}]: {msg} ({loc})");
        } else if let Some(p) = plan {
            match stage {
                Some(s) => print!("{}", dump(p, s)),
                None => print!("{}", summary(p)),
            }
        }
        // The kernel the compiler generates: tiled from the plan, else (a region the
        // optimizer rejects) the baseline; none for a region that stays on the host.
        if checked.is_ok() && stage.is_none() {
            print!("{}", resources_text(region, plan));
        }
        // The exact Load and Store sets (what a dataflow kernel reads and writes).
        if checked.is_ok() && stage.is_none() {
            if let Ok(sets) = tessera_poly::scop::extract(region).and_then(|scop| {
                tessera_poly::dataflow::sets(&scop).map_err(|message| {
                    tessera_poly::PolyReject::new(tessera_poly::PolyRejectReason::Internal { message }, &region.location)
                })
            }) {
                println!("  Load and Store sets:");
                print!("{}", tessera_poly::dataflow::describe(&sets));
            }
            // The dataflow kernel's processes and channels (mode `dataflow`).
            match tessera_compiler::tiles::dataflow_analysis(region, a.port_width.max(1), a.lanes) {
                Ok((mut an, lanes)) => {
                    print!("  dataflow kernel (port width {}) ", a.port_width.max(1));
                    print!("{}", tessera_hls::dataflow::describe_channels(&an.channels()));
                    println!("  {}", an.strip_note);
                    println!("  {lanes}");
                    if a.banks == 2 {
                        println!("  {}", an.set_interleave(region));
                    }
                    let p = ResourceParams::XCVU9P;
                    let k = shape::dataflow(region, &an);
                    println!("  dataflow kernel: {} lanes, line buffers, rings and streams as declared", k.lanes);
                    print!("{}", estimate_resources(&k, &p).dump(&p));
                }
                Err(e) => println!("  dataflow kernel: not generated: {}", e.remark()),
            }
        }
        if a.timings {
            println!("  optimizer time: {ms:.1} ms");
        }
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&json!({ "regions": json_regions })).expect("json"));
    }
    ExitCode::SUCCESS
}

/// The regions of the input: one IR file, or every region of a C/C++ file.
fn load_regions(input: &Path, clang_args: &[String]) -> Result<Vec<Region>, String> {
    let name = input.to_string_lossy();
    if name.ends_with(".json") {
        let text = std::fs::read_to_string(input).map_err(|e| format!("{name}: {e}"))?;
        return Ok(vec![Region::from_json(&text).map_err(|e| format!("{name}: {e}"))?]);
    }
    let plugin = std::env::var_os("TESSERA_PLUGIN")
        .map(PathBuf::from)
        .or_else(|| {
            let exe = std::env::current_exe().ok()?.canonicalize().ok()?;
            Some(exe.parent()?.join("tessera_plugin.so"))
        })
        .filter(|p| p.is_file())
        .ok_or("the Tessera clang plugin (tessera_plugin.so) is not next to this executable; run `make build` or set TESSERA_PLUGIN")?;
    let cxx = [".cpp", ".cc", ".cxx", ".C"].iter().any(|e| name.ends_with(e));
    let clang = if cxx {
        std::env::var("TESSERA_CLANGXX").unwrap_or_else(|_| "clang++-19".into())
    } else {
        std::env::var("TESSERA_CLANG").unwrap_or_else(|_| "clang-19".into())
    };
    let stamp = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let dir = std::env::temp_dir().join(format!("tessera-explain-{}-{stamp}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let status = Command::new(&clang)
        .arg("-fopenmp")
        .arg(format!("-fplugin={}", plugin.display()))
        .arg(format!("-fplugin-arg-tessera-dump-ir={}", dir.display()))
        .arg(format!("-fplugin-arg-tessera-out-dir={}", dir.join("kernels").display()))
        .args(clang_args)
        .arg("-fsyntax-only")
        .arg(input)
        .status()
        .map_err(|e| format!("{clang}: {e}"));
    let regions = status.and_then(|s| {
        if !s.success() {
            return Err(format!("{clang} failed on {name}"));
        }
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .map_err(|e| format!("{}: {e}", dir.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.to_string_lossy().ends_with(".ir.json"))
            .collect();
        files.sort();
        let mut regions = Vec::new();
        for f in files {
            let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
            regions.push(Region::from_json(&text).map_err(|e| format!("{}: {e}", f.display()))?);
        }
        regions.sort_by_key(|r| r.index);
        Ok(regions)
    });
    let _ = std::fs::remove_dir_all(&dir);
    let regions = regions?;
    if regions.is_empty() {
        return Err(format!("{name}: no target regions"));
    }
    Ok(regions)
}

fn tuple<T: ToString>(v: &[T]) -> String {
    format!("({})", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(", "))
}

/// The default text: decisions of steps 1–4 in one screen.
fn summary(p: &Plan) -> String {
    let n = &p.scop.names;
    let t = &p.tiling;
    let mut o = String::new();
    let line = |o: &mut String, s: String| {
        o.push_str(&s);
        o.push('\n');
    };
    line(&mut o, format!("  permutation: {}   tiles SZ = {}   port width {}", tuple(&t.permutation_names), tuple(&t.tile_sizes), p.options.port_width));
    let delta: Vec<String> = t.loops.iter().flat_map(|l| [l.delta_outer.display(n), l.delta_inner.display(n)]).collect();
    line(&mut o, format!("  δ = {}", tuple(&delta)));
    let trips: Vec<String> = t
        .permutation
        .iter()
        .map(|&x| {
            let l = &t.loops[x];
            match &l.trip {
                IntraTrip::Padded { count } => format!("{} {count} (padded)", l.var),
                IntraTrip::Full { count } => format!("{} {count}", l.var),
                IntraTrip::Partial { count, remaining } => format!("{} min({count}, {})", l.var, remaining.display(n)),
            }
        })
        .collect();
    line(&mut o, format!("  intra-tile trip counts: {}", trips.join(", ")));
    line(&mut o, "  buffers:".into());
    for b in &p.buffers.buffers {
        let accs: Vec<String> = b.accesses.iter().map(|&a| format!("{} {}", p.scop.accesses[a].name, p.scop.accesses[a].text)).collect();
        if b.kind == BufferKind::Nc {
            line(&mut o, format!("    {:<6} nc     {:<4} {}  ({})", b.array, "", accs.join(", "), b.reason.as_deref().unwrap_or("")));
        } else {
            line(
                &mut o,
                format!(
                    "    {:<6} {:<6} {:<4} shape {} = {} elements, halo {}/{}   {}",
                    b.name,
                    b.kind.name(),
                    b.array,
                    tuple(&b.shape),
                    b.elements,
                    b.halo_left,
                    b.halo_right,
                    accs.join(", ")
                ),
            );
        }
    }
    line(
        &mut o,
        format!(
            "  total: {} elements{}",
            p.buffers.total_elements,
            if p.buffers.uncached_accesses > 0 { format!(", {} uncached access(es)", p.buffers.uncached_accesses) } else { String::new() }
        ),
    );
    line(&mut o, "  candidates:".into());
    for c in &p.candidates {
        let what = match (&c.violated, c.total_buffer_elements) {
            (Some(v), _) => format!("illegal: {v}"),
            (None, Some(t)) => match c.uncached_accesses {
                Some(k) if k > 0 => format!("{t} + {k} nc"),
                _ => t.to_string(),
            },
            _ => String::new(),
        };
        line(&mut o, format!("    {:<12} {what}{}", tuple(&c.permutation), if c.chosen { "   <- chosen" } else { "" }));
    }
    o
}

/// The kernel the compiler generates for a region that passed the input check: its
/// name and structure (the tiled kernel of the plan, else the baseline kernel).
fn kernel_shape(region: &Region, plan: Option<&Plan>) -> (&'static str, KernelShape) {
    match plan {
        Some(p) => ("tiled", shape::tiled(region, p)),
        None => ("baseline", shape::baseline(region)),
    }
}

/// The modelled resources of the region's kernel, as text.
fn resources_text(region: &Region, plan: Option<&Plan>) -> String {
    let p = ResourceParams::XCVU9P;
    let (kind, k) = kernel_shape(region, plan);
    let ports: Vec<String> = k.ports.iter().map(|x| format!("{} {} bit", x.name, x.data_bits)).collect();
    let what = match kind {
        "tiled" => format!("tiled (tessera/paper): {} lanes (the innermost intra-tile loop, unrolled)", k.lanes),
        _ => "baseline (the optimizer leaves the region untiled): 1 lane".to_string(),
    };
    format!("  kernel: {what}; m_axi ports: {}\n{}", ports.join(", "), estimate_resources(&k, &p).dump(&p))
}

/// The modelled resources of the region's kernel, as JSON.
fn resources_json(region: &Region, plan: Option<&Plan>) -> Value {
    let p = ResourceParams::XCVU9P;
    let (kind, k) = kernel_shape(region, plan);
    let e = estimate_resources(&k, &p);
    json!({
        "kind": "modelled",
        "kernel": kind,
        "lanes": k.lanes,
        "total": e.total,
        "buffers": e.buffers,
        "datapath": e.datapath,
        "index": e.index,
        "axi": e.axi,
        "control": e.control,
        "unmodelled_ops": e.unmodelled_ops,
        "usage": usage(&e.total, &p),
    })
}

/// The `--json` record of one region (field names are an interface: keep them).
fn region_json(r: &Region, plan: Option<&Plan>, rejected: Option<(&str, &str)>) -> Value {
    let mut v = json!({
        "location": r.location.to_string(),
        "function": r.function,
        "permutation": Value::Null,
        "buffers": [],
        "total_buffer_elements": Value::Null,
        "candidates": [],
        "rejected": rejected.map(|(_, m)| m),
        "rejected_code": rejected.map(|(c, _)| c),
    });
    if let Some(p) = plan {
        let n = &p.scop.names;
        v["permutation"] = json!(p.tiling.permutation_names);
        v["tile_sizes"] = json!(p.tiling.tile_sizes);
        v["port_width"] = json!(p.options.port_width);
        v["delta"] = json!(p
            .tiling
            .loops
            .iter()
            .map(|l| json!({ "loop": l.var, "outer": l.delta_outer.display(n), "inner": l.delta_inner.display(n) }))
            .collect::<Vec<_>>());
        v["trip_counts"] = json!(p
            .tiling
            .permutation
            .iter()
            .map(|&x| {
                let l = &p.tiling.loops[x];
                json!({ "loop": l.var, "count": l.trip.count(), "padded": matches!(l.trip, IntraTrip::Padded { .. }) })
            })
            .collect::<Vec<_>>());
        v["buffers"] = json!(p.buffers.buffers.iter().map(|b| json!({
            "array": b.array,
            "name": b.name,
            "kind": b.kind.name(),
            "shape": b.shape,
            "elements": b.elements,
            "halo_left": b.halo_left,
            "halo_right": b.halo_right,
            "accesses": b.accesses.iter().map(|&a| p.scop.accesses[a].text.clone()).collect::<Vec<_>>(),
        })).collect::<Vec<_>>());
        v["total_buffer_elements"] = json!(p.buffers.total_elements);
        v["candidates"] = json!(p.candidates.iter().map(|c| json!({
            "permutation": c.permutation,
            "total_buffer_elements": c.total_buffer_elements,
            "legal": c.legal,
            "violated": c.violated,
            "chosen": c.chosen,
        })).collect::<Vec<_>>());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(rel: &str) -> Region {
        let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/ir").join(rel);
        Region::from_json(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    /// The `--json` field names are an interface (issue #3).
    #[test]
    fn json_fields_of_the_running_example() {
        let r = fixture("paper_fig2.ir.json");
        let p = optimize(&r, &PolyOptions::default()).unwrap();
        let v = region_json(&r, Some(&p), None);
        assert_eq!(v["location"], "paper_fig2.c:3:1");
        assert_eq!(v["permutation"], json!(["i", "j", "k"]));
        assert_eq!(v["total_buffer_elements"], 34_946);
        assert_eq!(v["rejected"], Value::Null);
        let b = &v["buffers"][1];
        assert_eq!((&b["array"], &b["kind"], &b["shape"], &b["elements"]), (&json!("A"), &json!("chunk"), &json!([2, 33, 33]), &json!(2178)));
        let c = &v["candidates"][1];
        assert_eq!((&c["permutation"], &c["total_buffer_elements"], &c["legal"]), (&json!(["i", "k", "j"]), &json!(36_961), &json!(true)));
        let s = summary(&p);
        assert!(s.contains("permutation: (i, j, k)") && s.contains("total: 34946 elements"), "{s}");
        let res = resources_json(&r, Some(&p));
        assert_eq!((&res["kind"], &res["kernel"]), (&json!("modelled"), &json!("tiled")));
        // The buffers hold 34 946 elements, completely partitioned: one FF per bit.
        let bits = 34_946 * 8 * r.vars.iter().find(|v| v.name == "A").unwrap().elem.size() as u64;
        assert_eq!(res["buffers"]["ff"], bits);
        let t = resources_text(&r, Some(&p));
        assert!(t.contains("resources (modelled, XCVU9P)") && t.contains("budget    BRAM36"), "{t}");

        let r = fixture("seidel9.ir.json");
        let e = optimize(&r, &PolyOptions::default()).unwrap_err();
        let v = region_json(&r, None, Some((e.reason.code(), &e.message())));
        assert_eq!(v["rejected_code"], "tiling-illegal");
        assert_eq!(v["permutation"], Value::Null);
        // Untiled: the baseline kernel, one lane, no buffers.
        let res = resources_json(&r, None);
        assert_eq!((&res["kernel"], &res["lanes"], &res["buffers"]["ff"]), (&json!("baseline"), &json!(1), &json!(0)));
        assert!(resources_text(&r, None).contains("kernel: baseline"));
    }
}
