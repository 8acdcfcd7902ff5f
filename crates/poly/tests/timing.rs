//! The optimizer's own time per region (issue #3: "well under a second"; the real
//! number is what `tessera explain --timings` prints). The bound asserted here is
//! generous so a loaded CI machine does not fail it; the times are printed
//! (`cargo test --release -p tessera-poly --test timing -- --nocapture`).

mod common;

use common::*;
use std::time::{Duration, Instant};

#[test]
fn every_benchmark_well_under_a_second() {
    let names = [
        "1D-jacobi", "2D-5p", "2D-9p", "2D-jacobi", "2D-fdtd0", "2D-fdtd1", "2D-fdtd2", "3D-19p", "3D-27p", "3D-heat",
    ];
    for name in names {
        let r = region(&format!("bench/{name}.ir.json"));
        for w in [1u32, 16] {
            let t = Instant::now();
            let p = tessera_poly::optimize(&r, &tessera_poly::PolyOptions { tile: None, port_width: w, ..Default::default() });
            let el = t.elapsed();
            assert!(p.is_ok(), "{name}");
            println!("{name:<10} w={w:<2} {:>8.1} ms", el.as_secs_f64() * 1e3);
            assert!(el < Duration::from_secs(5), "{name} w={w}: {el:?}");
        }
    }
}
