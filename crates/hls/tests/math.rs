//! Kernels that call math functions (regions of `tests/programs/math_*.{c,cpp}` as
//! the plugin dumped them): they include `tessera_math.h` and compile warning-free as
//! the emulated device compiles them and as Vitis sees them (against a declaration
//! stub of Vitis' `hls_math.h`), tiled and baseline.

mod common;

use common::*;

#[test]
fn math_kernels_compile_warning_free() {
    let tmp = tempfile::tempdir().unwrap();
    let mut kernels = Vec::new();
    // fminf/fmaxf/roundf/floorf on uint8 images; fabs/fmax/fma/copysign/trunc/ceil/sqrt
    // in double; std::sqrt/abs/fmin/max through inlined standard library bodies.
    for (i, file) in ["math_image.1", "math_image.2", "math_stencil.1"].iter().enumerate() {
        let r = load(&format!("tests/ir/programs/{file}.ir.json"));
        let k = tiled(&r, None, [4, 8, 16][i], &format!("tessera_m{i}"), Variant::Tessera);
        assert!(k.source.contains("#include \"tessera_math.h\"\n"), "{file}: {}", k.source);
        kernels.push(k);
    }
    let r = load("tests/ir/programs/math_image.0.ir.json");
    kernels.push(tessera_hls::baseline::generate(&r, "tessera_mb"));
    assert!(kernels[3].source.contains("hls::sqrt("), "{}", kernels[3].source);
    assert!(kernels[0].source.contains("tessera::fmin(tessera::fmax("), "{}", kernels[0].source);
    std::thread::scope(|s| {
        for (i, k) in kernels.iter().enumerate() {
            let dir = tmp.path().join(format!("k{i}"));
            s.spawn(move || compile_check(k, &dir));
        }
    });
}
