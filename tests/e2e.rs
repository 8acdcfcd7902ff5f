//! One differential end-to-end test per program in `tests/programs/` (see
//! `harness.rs` for what each checks).

macro_rules! programs {
    ($($test:ident => $file:literal,)*) => {
        $(#[test] fn $test() { tessera_tests::differential($file); })*

        /// Every program in the directory has a test above.
        #[test]
        fn every_program_is_tested() {
            let listed = [$($file),*];
            let dir = tessera_tests::repo_root().join("tests/programs");
            for e in std::fs::read_dir(&dir).unwrap() {
                let name = e.unwrap().file_name().into_string().unwrap();
                if name.ends_with(".c") || name.ends_with(".cpp") {
                    assert!(listed.contains(&name.as_str()), "{name} has no test in tests/e2e.rs");
                }
            }
        }
    };
}

programs! {
    stencil_1d => "stencil1d.c",
    stencil_2d_collapse => "stencil2d.c",
    stencil_3d_fixed_arrays => "stencil3d.c",
    vla_parameters => "vla_params.c",
    in_place_updates => "inplace.c",
    int_float_double => "types.c",
    host_fallback_with_remarks => "indirect.c",
    cxx_template_and_lambda => "templates.cpp",
}
