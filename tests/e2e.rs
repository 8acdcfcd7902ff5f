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
    data_region_time_loop => "data_time_loop.c",
    data_enter_exit_update => "data_enter_exit.c",
    data_region_host_fallbacks => "data_fallback.c",
    concurrent_offloads_from_four_threads => "parallel_offload.c",
}

/// `OMP_TARGET_OFFLOAD` in its other two settings (the differential tests above run
/// with it unset, i.e. `DEFAULT`): `DISABLED` gives the CPU results with everything on
/// the host; `MANDATORY` is harmless when everything offloads and fatal otherwise.
#[test]
fn offload_policies_on_data_regions() {
    tessera_tests::offload_policies("data_time_loop.c", None);
    tessera_tests::offload_policies("data_enter_exit.c", None);
    tessera_tests::offload_policies("data_fallback.c", Some("call 'twice(a[i])' is not supported"));
}
