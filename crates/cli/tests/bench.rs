//! `tessera bench --size small` end to end: the ten stencils built with the plugin, run
//! on the emulated device, bit-exact, with exact counts and modelled times in the JSON
//! and the SVG written. Needs `make build` (the plugin next to the executable).

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tessera() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_tessera"))
}

fn bench(args: &[&str], dir: &Path) -> (Output, Option<Value>) {
    let json = dir.join("bench.json");
    let out = Command::new(tessera())
        .arg("bench")
        .arg("--size")
        .arg("small")
        .args(args)
        .arg("--json")
        .arg(&json)
        .arg("--svg")
        .arg(dir.join("bench.svg"))
        .arg("--stencils")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../bench/stencils"))
        .output()
        .expect("run tessera bench");
    let v = std::fs::read_to_string(&json).ok().map(|t| serde_json::from_str(&t).expect("bench.json parses"));
    (out, v)
}

fn text(o: &Output) -> String {
    format!("--- stdout\n{}\n--- stderr\n{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

#[test]
fn the_ten_stencils_at_small_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let (out, v) = bench(&["--mode", "baseline"], dir.path());
    assert!(out.status.success(), "{}", text(&out));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("[1/10] 1D-jacobi …") && stderr.contains("[10/10] 3D-heat …"), "{stderr}");
    let v = v.unwrap();
    let s = v["stencils"].as_array().unwrap();
    assert_eq!(s.len(), 10);
    for r in s {
        assert_eq!((&r["status"], &r["bit_exact"]), (&Value::from("ok"), &Value::from(true)), "{r}");
        assert_eq!(r["config"]["mode"], "baseline");
        assert_eq!(r["exact"]["buffer_elements"], 0);
    }
    // 2D-jacobi, 67 x 71: 65 * 69 = 4485 iterations, 5 float reads and 1 write each.
    let j = s.iter().find(|r| r["name"] == "2D-jacobi").unwrap();
    assert_eq!(j["exact"]["ddr_read_bytes"], 4485 * 5 * 4);
    assert_eq!(j["exact"]["ddr_write_bytes"], 4485 * 4);
    assert_eq!(j["exact"]["bursts"], 4485 * 6);
    // A: 67 * 71 - 4 corners; B: the interior.
    assert_eq!(j["exact"]["compulsory_bytes"], (67 * 71 - 4 + 4485) * 4);
    // 6 accesses of 5 cycles (90 ns at 50 MHz) per iteration, + 4 cycles of datapath.
    assert_eq!(j["modelled"]["kernel_cycles"], 4485 * 6 * 5 + 4);
    assert_eq!(j["modelled"]["clock_mhz"], 50.0);
    let t = j["modelled"]["kernel_s"].as_f64().unwrap();
    assert!((t - 134_554.0 / 50e6).abs() < 1e-12, "{t}");
    assert!(j["measured"]["compile_s"].as_f64().unwrap() > 0.0);
    assert!(j["measured"]["optimizer_s"].as_f64().is_some());
    // Resources (modelled) of the baseline kernel: one lane of 4 float additions
    // (2 DSPs each) and a double multiply (11 DSPs); two 32-bit ports.
    assert_eq!((&j["resources"]["kernel"], &j["resources"]["lanes"], &j["resources"]["dsp"]), (&Value::from("baseline"), &Value::from(1), &Value::from(19)));
    assert_eq!(j["resources"]["usage"]["fits"], true);
    assert_eq!(j["baseline"]["resources"], j["resources"]);
    // The second roofline figure, at the target clock.
    assert_eq!(j["modelled"]["target_clock_mhz"], 250.0);
    assert!(j["modelled"]["target_roofline_fraction"].as_f64().unwrap() >= j["modelled"]["roofline_fraction"].as_f64().unwrap());
    // The port-bound floor: A's port reads 5 single-element beats per iteration.
    assert_eq!(j["modelled"]["port_floor_cycles"], 4485 * 5);
    let over = j["modelled"]["target_cycles_over_floor"].as_f64().unwrap();
    assert!(over > 6.0, "{over}");
    // Round trips bind the baseline: a second bank does not make it faster.
    assert_eq!(j["modelled"]["two_banks_target_kernel_s"], j["modelled"]["target_kernel_s"]);
    let svg = std::fs::read_to_string(dir.path().join("bench.svg")).unwrap();
    assert!(svg.contains("modelled") && svg.contains("3D-heat"));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("2D-fdtd2   bit-exact |"), "{table}");
    assert!(table.contains("cycles <= 1.15 x the port-bound floor             0/10"), "{table}");
    assert!(table.contains("%roof@250") && table.contains("not timing-closed") && table.contains("BRAM36"), "{table}");
}

/// The paper mode either runs (bit-exact, modelled faster than the baseline) or, while
/// the compiler does not generate it, is reported per stencil without failing.
#[test]
fn paper_mode_runs_or_is_reported_unavailable() {
    let dir = tempfile::tempdir().unwrap();
    let (out, v) = bench(&["--mode", "paper", "--only", "2D-jacobi,3D-heat", "--clock-mhz", "200"], dir.path());
    assert!(out.status.success(), "{}", text(&out));
    let v = v.unwrap();
    assert_eq!(v["clock"]["mhz"], 200.0);
    assert_eq!(v["target_clock"]["mhz"], 250.0);
    for r in v["stencils"].as_array().unwrap() {
        match r["status"].as_str().unwrap() {
            "mode-unavailable" => assert!(r["error"].as_str().unwrap().contains("unknown mode"), "{r}"),
            "ok" => {
                assert_eq!(r["bit_exact"], true);
                assert!(r["modelled"]["speedup"].as_f64().unwrap() > 1.0, "{r}");
                assert!(r["exact"]["buffer_elements"].as_u64().unwrap() > 0, "{r}");
                assert_eq!(r["modelled"]["clock_mhz"], 200.0);
                assert_eq!(r["modelled"]["target_clock_mhz"], 250.0);
                // The tiled kernel: as many lanes as the unrolled innermost intra-tile loop.
                assert_eq!(r["resources"]["kernel"], "paper");
                assert!(r["resources"]["lanes"].as_u64().unwrap() > 1 && r["resources"]["ff"].as_u64().unwrap() > 0, "{r}");
            }
            s => panic!("status {s}: {r}"),
        }
    }
}

#[test]
fn bad_arguments_exit_2() {
    let out = Command::new(tessera()).args(["bench", "--size", "huge"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--size huge: expected paper or small"));
    let out = Command::new(tessera()).args(["bench", "--only", "4D-x"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// `--compare`: the default dataflow kernels beside the tessera ones — both runs
/// bit-exact, the second in the JSON's `compare`, both modes' bars in the SVG.
#[test]
fn compare_shows_a_second_mode_beside_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let (out, v) = bench(&["--only", "2D-5p", "--compare", "tessera"], dir.path());
    assert!(out.status.success(), "{}", text(&out));
    let v = v.expect("bench.json");
    assert_eq!((&v["config"]["mode"], &v["compare"]["config"]["mode"]), (&serde_json::json!("dataflow"), &serde_json::json!("tessera")), "{v}");
    for run in [&v, &v["compare"]] {
        assert_eq!(run["stencils"][0]["name"], "2D-5p");
        assert_eq!(run["stencils"][0]["bit_exact"], true, "{run}");
    }
    let svg = std::fs::read_to_string(dir.path().join("bench.svg")).unwrap();
    assert!(svg.contains("Modelled speedup of dataflow and tessera over the baseline kernel"), "{svg}");
    assert!(svg.contains("2D-5p dataflow: modelled speedup") && svg.contains("2D-5p tessera: modelled speedup"), "{svg}");
}
