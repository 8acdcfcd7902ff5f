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
    data_environment_invariant => "data_invariant.c",
    canonical_loop_forms => "loop_forms.c",
    target_tasks_and_defaultmap => "task_clauses.c",
    struct_member_parameters => "struct_params.c",
    reduction_sums_and_dot_products => "reduction_sum.c",
    reduction_integer_and_logical_operators => "reduction_int.c",
    reduction_floating_min_max_and_products => "reduction_minmax.c",
    reduction_mapped_scalars_written_by_the_region => "reduction_scalar_out.c",
    reduction_in_data_regions_and_collapsed_nests => "reduction_data.c",
}

/// The compile-variant matrix: every program with a region expected on the emulated
/// device, in every combination of one kernel mode, one port width and one tile choice
/// (`tessera_tests::Tiles`). A combination is one test,
/// `variants::<program>::<mode>::<width>::<tiles>`, e.g.
/// `cargo test --release --test e2e variants::stencil_3d_fixed_arrays::paper::w4::small`.
/// Adding a mode is adding its name to `modes`. A variant known to fail goes into
/// `known_failures` with the reason; its test then checks that it still fails (and
/// fails once it passes, so the entry is removed with the fix).
macro_rules! variants {
    (@program $test:ident $file:literal $modes:tt $widths:tt $tiles:tt ) => {
        #[allow(non_snake_case)]
        pub mod $test {
            variants!(@modes $test $file $modes $widths $tiles );
        }
    };
    (@modes $test:ident $file:literal [$($mode:ident),*] $widths:tt $tiles:tt ) => {
        $(pub mod $mode { variants!(@widths $test $file $mode $widths $tiles ); })*
    };
    (@widths $test:ident $file:literal $mode:ident [$($w:ident = $wv:literal),*] $tiles:tt ) => {
        $(pub mod $w { variants!(@tiles $test $file $mode $wv $tiles ); })*
    };
    (@tiles $test:ident $file:literal $mode:ident $wv:literal [$($t:ident = $tv:ident),*] ) => {
        $(
            #[test]
            fn $t() {
                let v = tessera_tests::Variant { mode: stringify!($mode), port_width: $wv, tiles: tessera_tests::Tiles::$tv };
                match crate::variants::known_failure($file, &v) {
                    None => tessera_tests::variant_differential($file, &v),
                    Some(why) => {
                        let r = std::panic::catch_unwind(|| tessera_tests::variant_differential($file, &v));
                        assert!(r.is_err(), "{} [{}] passes but is listed as a known failure ({why}): remove it", $file, v.name());
                    }
                }
            }
        )*
    };
    (
        modes: $modes:tt,
        port_widths: $widths:tt,
        tiles: $tiles:tt,
        known_failures: [$(($kfile:literal, $kmode:literal, $kw:literal, $ktiles:ident, $why:literal),)*],
        programs: [$($test:ident => $file:literal,)*]
    ) => {
        mod variants {
            /// The reason a variant is a known failure, if it is one.
            fn known_failure(file: &str, v: &tessera_tests::Variant) -> Option<&'static str> {
                let known: &[(&str, &str, u32, tessera_tests::Tiles, &str)] =
                    &[$(($kfile, $kmode, $kw, tessera_tests::Tiles::$ktiles, $why)),*];
                known.iter().find(|k| (k.0, k.1, k.2, k.3) == (file, v.mode, v.port_width, v.tiles)).map(|k| k.4)
            }

            $(variants!(@program $test $file $modes $widths $tiles);)*

            /// Every program with a region expected on the emulated device has variants.
            #[test]
            fn every_device_program_has_variants() {
                let listed = [$($file),*];
                let dir = tessera_tests::repo_root().join("tests/programs");
                for e in std::fs::read_dir(&dir).unwrap() {
                    let name = e.unwrap().file_name().into_string().unwrap();
                    if !(name.ends_with(".c") || name.ends_with(".cpp")) {
                        continue;
                    }
                    let source = std::fs::read_to_string(dir.join(&name)).unwrap();
                    let on_device = tessera_tests::expectations(&source)
                        .iter()
                        .any(|x| matches!(x, tessera_tests::Expect::Device { device, .. } if device == "emu"));
                    assert_eq!(listed.contains(&name.as_str()), on_device, "{name}: the variant list of tests/e2e.rs");
                }
            }
        }
    };
}

variants! {
    modes: [paper, tessera],
    port_widths: [w4 = 4, w8 = 8, w16 = 16],
    tiles: [small = Small, large = Large],
    known_failures: [],
    programs: [
        stencil_1d => "stencil1d.c",
        stencil_2d_collapse => "stencil2d.c",
        stencil_3d_fixed_arrays => "stencil3d.c",
        vla_parameters => "vla_params.c",
        in_place_updates => "inplace.c",
        int_float_double => "types.c",
        cxx_template_and_lambda => "templates.cpp",
        data_region_time_loop => "data_time_loop.c",
        data_enter_exit_update => "data_enter_exit.c",
        data_region_host_fallbacks => "data_fallback.c",
        concurrent_offloads_from_four_threads => "parallel_offload.c",
        data_environment_invariant => "data_invariant.c",
        canonical_loop_forms => "loop_forms.c",
        target_tasks_and_defaultmap => "task_clauses.c",
        struct_member_parameters => "struct_params.c",
        reduction_sums_and_dot_products => "reduction_sum.c",
        reduction_integer_and_logical_operators => "reduction_int.c",
        reduction_floating_min_max_and_products => "reduction_minmax.c",
        reduction_mapped_scalars_written_by_the_region => "reduction_scalar_out.c",
        reduction_in_data_regions_and_collapsed_nests => "reduction_data.c",
    ]
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

/// A region offloaded with the baseline kernel although the (default) tiled mode was
/// asked for gets a remark at its directive saying why: here a tile list of the wrong
/// length for the 3D nest.
#[test]
fn baseline_fallbacks_are_remarked() {
    let root = tessera_tests::repo_root();
    let work = tempfile::tempdir().expect("temp dir");
    let out = std::process::Command::new(root.join("target/release/tessera"))
        .args(["cc", "-O2", "-fplugin-arg-tessera-tile=64,64", "-o"])
        .arg(work.path().join("s3"))
        .arg(root.join("tests/programs/stencil3d.c"))
        .arg("-lm")
        .output()
        .expect("tessera cc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let remark = stderr
        .lines()
        .find(|l| l.contains("remark: target region offloaded with the baseline kernel: not tiled: "))
        .unwrap_or_else(|| panic!("no fallback remark:\n{stderr}"));
    assert!(remark.contains("stencil3d.c:") && remark.contains("not tiled: [tile-size-count] "), "{remark}");
}

/// `-fplugin-arg-tessera-reassociate`: floating sums accumulate in partial results
/// (II = 1). The program's data are small integers, so its sums are exact in any
/// order and the output is still the CPU's bit for bit.
#[test]
fn reassociated_reductions() {
    let (work, bin) = tessera_tests::differential_with_flags("reduction_sum.c", &["-fplugin-arg-tessera-reassociate".to_string()]);
    let dir = format!("{}.tessera", bin.display());
    let mut partial = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "cpp") {
            let src = std::fs::read_to_string(&path).unwrap();
            partial += usize::from(src.contains("_part[8] = {"));
        }
    }
    // sum, dot and lost are floating sums; balance (long) is exact anyway.
    assert_eq!(partial, 3, "kernels with partial sums in {dir}");
    drop(work);
}

/// Floating reductions on data that round differently in every order: the kernel adds
/// in the loop's order, so its results are the CPU's with one thread bit for bit; with
/// `reassociate` (partial sums) they are not, as documented.
#[test]
fn floating_reductions_in_the_loops_order() {
    let src = tessera_tests::repo_root().join("tests/sequential/reduction_order.c");
    let work = tempfile::tempdir().expect("temp dir");
    let run = |bin: &std::path::Path, report: &str| {
        let out = tessera_tests::emu_run_command(bin, &work.path().join(report)).env("OMP_NUM_THREADS", "1").output().expect("runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    let build = |mut c: std::process::Command| {
        let out = c.output().expect("builds");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    };
    let reference = work.path().join("reference");
    build(tessera_tests::reference_build_command(&src, &reference));
    let ordered = work.path().join("ordered");
    build(tessera_tests::tessera_build_command(&src, &ordered, &[]));
    let reassociated = work.path().join("reassociated");
    build(tessera_tests::tessera_build_command(&src, &reassociated, &["-fplugin-arg-tessera-reassociate".to_string()]));
    let want = run(&reference, "reference.jsonl");
    assert_eq!(run(&ordered, "ordered.jsonl"), want);
    let report = std::fs::read_to_string(work.path().join("ordered.jsonl")).unwrap();
    assert_eq!(report.lines().filter(|l| l.contains("\"device\":\"emu\"")).count(), 3, "{report}");
    let fast = run(&reassociated, "reassociated.jsonl");
    let field = |out: &str, k: &str| out.split_whitespace().skip_while(|w| *w != k).nth(1).unwrap().to_string();
    for k in ["sum", "dot"] {
        assert_ne!(field(&fast, k), field(&want, k), "{k}: partial sums round like the loop's order\n{fast}{want}");
    }
}
