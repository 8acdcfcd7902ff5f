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
    data_present_modifiers => "data_present.c",
    data_aliased_pointers_in_host_runs => "data_aliases.c",
    data_region_host_fallbacks => "data_fallback.c",
    data_regions_around_regions_of_unknown_footprint => "data_opaque.c",
    concurrent_offloads_from_four_threads => "parallel_offload.c",
    data_environment_invariant => "data_invariant.c",
    canonical_loop_forms => "loop_forms.c",
    continue_and_clamped_locals => "loop_bodies.c",
    guarded_writes_checked_at_launch => "guarded_writes.c",
    struct_scalars_no_pointer_reaches => "struct_scalars.c",
    target_tasks_and_defaultmap => "task_clauses.c",
    struct_member_parameters => "struct_params.c",
    struct_members_mapped_by_data_directives => "struct_members_mapped.c",
    reduction_sums_and_dot_products => "reduction_sum.c",
    reduction_integer_and_logical_operators => "reduction_int.c",
    reduction_floating_min_max_and_products => "reduction_minmax.c",
    reduction_mapped_scalars_written_by_the_region => "reduction_scalar_out.c",
    reduction_in_data_regions_and_collapsed_nests => "reduction_data.c",
    reduction_arrays_and_array_sections => "reduction_array.c",
    math_image_filters_and_norms => "math_image.c",
    math_inlined_helpers => "math_helpers.c",
    math_cxx_template_stencil => "math_stencil.cpp",
    math_fp_contraction => "math_contraction.c",
    flat_convolution_2d => "flat_conv2d.c",
    sobel_edges_on_uint8_images => "sobel_u8.c",
    flat_heat_3d => "flat_heat3d.c",
    flat_matrix_vector => "flat_matvec.c",
    flat_jacobi_2d_constant_rows => "flat_jacobi2d.c",
    flat_launch_condition_fails => "flat_guard.c",
    flat_triangular_nests => "flat_triangular.c",
    quasi_affine_bounds => "flat_bounds.c",
    polybench_kernels_on_flat_arrays => "polybench_flat.c",
    imperfect_nests_folded_into_perfect_ones => "imperfect_nests.c",
    boundary_conditions_inside_the_nest => "boundary_stencils.c",
    uint8_image_filters => "blur_u8.c",
    cxx_vector_template_stencil => "vector_stencil.cpp",
    gpu_style_region_through_the_runtime => "gpu_style.c",
    device_memory_routines_and_is_device_ptr => "device_memory.c",
    device_clause_names_a_device_or_the_host => "device_clause.c",
    statements_reading_and_writing_one_array => "statement_order.c",
    strips_of_run_time_extents => "strips.c",
    arrays_interleaved_over_two_banks => "two_banks.c",
    increments_and_counting_reductions => "increments.c",
    local_scalars_in_loop_bodies => "locals.c",
    struct_pointer_members => "struct_members.c",
    cxx_member_functions_and_references => "member_functions.cpp",
    calls_reaching_unnamed_data => "call_footprint.c",
    local_row_pointers => "row_pointers.c",
    data_scalars_and_structs => "data_scalars.c",
    guarded_reads_in_host_runs_of_threads => "guarded_parallel.c",
    arrays_of_structs => "struct_arrays.c",
    strided_host_runs_of_threads => "strided_parallel.c",
    lattice_host_runs_of_threads => "lattice_parallel.c",
    struct_locals_references_and_copies => "struct_locals.cpp",
    flat_index_locals => "flat_index_locals.c",
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
    modes: [paper, tessera, dataflow],
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
        data_present_modifiers => "data_present.c",
        data_aliased_pointers_in_host_runs => "data_aliases.c",
        data_region_host_fallbacks => "data_fallback.c",
        data_regions_around_regions_of_unknown_footprint => "data_opaque.c",
        concurrent_offloads_from_four_threads => "parallel_offload.c",
        data_environment_invariant => "data_invariant.c",
        canonical_loop_forms => "loop_forms.c",
        continue_and_clamped_locals => "loop_bodies.c",
        guarded_writes_checked_at_launch => "guarded_writes.c",
        struct_scalars_no_pointer_reaches => "struct_scalars.c",
        target_tasks_and_defaultmap => "task_clauses.c",
        struct_member_parameters => "struct_params.c",
        struct_members_mapped_by_data_directives => "struct_members_mapped.c",
        reduction_sums_and_dot_products => "reduction_sum.c",
        reduction_integer_and_logical_operators => "reduction_int.c",
        reduction_floating_min_max_and_products => "reduction_minmax.c",
        reduction_mapped_scalars_written_by_the_region => "reduction_scalar_out.c",
        reduction_in_data_regions_and_collapsed_nests => "reduction_data.c",
        reduction_arrays_and_array_sections => "reduction_array.c",
        math_image_filters_and_norms => "math_image.c",
        math_inlined_helpers => "math_helpers.c",
        math_cxx_template_stencil => "math_stencil.cpp",
        math_fp_contraction => "math_contraction.c",
        flat_convolution_2d => "flat_conv2d.c",
        sobel_edges_on_uint8_images => "sobel_u8.c",
        flat_heat_3d => "flat_heat3d.c",
        flat_matrix_vector => "flat_matvec.c",
        flat_jacobi_2d_constant_rows => "flat_jacobi2d.c",
        flat_launch_condition_fails => "flat_guard.c",
        flat_triangular_nests => "flat_triangular.c",
        quasi_affine_bounds => "flat_bounds.c",
        polybench_kernels_on_flat_arrays => "polybench_flat.c",
        imperfect_nests_folded_into_perfect_ones => "imperfect_nests.c",
        boundary_conditions_inside_the_nest => "boundary_stencils.c",
        uint8_image_filters => "blur_u8.c",
        cxx_vector_template_stencil => "vector_stencil.cpp",
        gpu_style_region_through_the_runtime => "gpu_style.c",
        device_memory_routines_and_is_device_ptr => "device_memory.c",
        device_clause_names_a_device_or_the_host => "device_clause.c",
        statements_reading_and_writing_one_array => "statement_order.c",
        strips_of_run_time_extents => "strips.c",
        arrays_interleaved_over_two_banks => "two_banks.c",
        increments_and_counting_reductions => "increments.c",
        local_scalars_in_loop_bodies => "locals.c",
        struct_pointer_members => "struct_members.c",
        cxx_member_functions_and_references => "member_functions.cpp",
        calls_reaching_unnamed_data => "call_footprint.c",
        local_row_pointers => "row_pointers.c",
        data_scalars_and_structs => "data_scalars.c",
        guarded_reads_in_host_runs_of_threads => "guarded_parallel.c",
        arrays_of_structs => "struct_arrays.c",
        strided_host_runs_of_threads => "strided_parallel.c",
    lattice_host_runs_of_threads => "lattice_parallel.c",
    struct_locals_references_and_copies => "struct_locals.cpp",
    flat_index_locals => "flat_index_locals.c",
    ]
}

/// `OMP_TARGET_OFFLOAD` in its other two settings (the differential tests above run
/// with it unset, i.e. `DEFAULT`): `DISABLED` gives the CPU results with everything on
/// the host; `MANDATORY` is harmless when everything offloads and fatal otherwise.
#[test]
fn offload_policies_on_data_regions() {
    tessera_tests::offload_policies("data_time_loop.c", None);
    tessera_tests::offload_policies("data_enter_exit.c", None);
    tessera_tests::offload_policies("data_fallback.c", Some("it calls 'twice', whose body Tessera cannot see here"));
    // A `device` clause naming the host device is the program's request, not a fallback.
    tessera_tests::offload_policies("device_clause.c", None);
}

/// A region offloaded with the baseline kernel although a tiled mode was asked for
/// gets a remark at its directive saying why: here a tile list of the wrong length for
/// the 3D nest in mode `tessera` (the default `dataflow` kernel uses no tile sizes).
#[test]
fn baseline_fallbacks_are_remarked() {
    let root = tessera_tests::repo_root();
    let work = tempfile::tempdir().expect("temp dir");
    let out = std::process::Command::new(root.join("target/release/tessera"))
        .args(["cc", "-O2", "-fplugin-arg-tessera-mode=tessera", "-fplugin-arg-tessera-tile=64,64", "-o"])
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
/// (II = 1), in the baseline kernel and in the tiled one, and a 2-D floating sum, which
/// keeps the baseline kernel without the option (tiling would reorder it), is tiled
/// (`expect(reassociate):` in the program). The program's data are small integers, so
/// its sums are exact in any order and the output is still the CPU's bit for bit.
#[test]
fn reassociated_reductions() {
    let (work, bin) = tessera_tests::differential_with_flags("reduction_sum.c", &["-fplugin-arg-tessera-reassociate".to_string()]);
    let partial = kernel_sources(&bin).iter().filter(|(_, src)| src.contains("_part[8] = {")).count();
    // sum, dot, lost and gsum are floating sums; balance (long) is exact anyway.
    assert_eq!(partial, 4, "kernels with partial sums in {}.tessera", bin.display());
    drop(work);
}

/// The generated kernels of binary `bin` (`<bin>.tessera/*.cpp`): path and source.
fn kernel_sources(bin: &std::path::Path) -> Vec<(std::path::PathBuf, String)> {
    std::fs::read_dir(format!("{}.tessera", bin.display()))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "cpp"))
        .map(|p| {
            let src = std::fs::read_to_string(&p).unwrap();
            (p, src)
        })
        .collect()
}

/// `-fplugin-arg-tessera-lanes=4`: the dataflow kernels evaluate 4 of a word's 16
/// lanes per cycle (a word every 4 cycles, the operators of 4 lanes shared) — the
/// same expressions per element, so the outputs are still the CPU's bit for bit, in
/// 1D, 2D and 3D, with whole rows and with strips of run-time extents.
#[test]
fn dataflow_kernels_with_fewer_lanes_than_the_port_width() {
    for program in ["stencil1d.c", "stencil3d.c", "strips.c"] {
        let (work, bin) = tessera_tests::differential_with_flags(program, &["-fplugin-arg-tessera-lanes=4".to_string()]);
        let mut dataflow = 0;
        for (path, src) in kernel_sources(&bin).iter().filter(|(_, src)| src.contains("#pragma HLS DATAFLOW")) {
            dataflow += 1;
            assert!(src.contains("#pragma HLS PIPELINE II=4") && !src.contains("lanes per cycle."), "{}", path.display());
            let plan = std::fs::read_to_string(path.with_extension("plan.txt")).unwrap();
            assert!(plan.contains("lanes: 4 per cycle, a word of 16 every 4 cycles (lanes=4;"), "{plan}");
        }
        assert!(dataflow > 0, "{program}: no dataflow kernel in {}.tessera", bin.display());
        drop(work);
    }
}

/// `-fplugin-arg-tessera-banks=2` with dataflow kernels: a kernel whose streams whole
/// arrays cannot split evenly between the banks interleaves its arrays over both (two
/// ports per array, segments alternating between the banks) — three regions of
/// two_banks.c, inplace.c's first, data_present.c's in-place product and three of
/// parallel_offload.c's (launched from four threads at once); the others
/// keep whole arrays (their streams split evenly: one array read and one written, or
/// two against an in-place one). Either way the outputs are the CPU's bit for bit, in
/// data regions, over time steps and through a present pointer into the middle of a
/// mapping; the emulated device reports each half's traffic (`tdf_b1_<array>`), half
/// of each interleaved stream per bank give or take a segment.
#[test]
fn dataflow_kernels_on_two_banks() {
    let flags = ["-fplugin-arg-tessera-mode=dataflow".to_string(), "-fplugin-arg-tessera-banks=2".to_string()];
    let programs = [
        ("two_banks.c", 3),
        ("inplace.c", 1),
        ("data_time_loop.c", 0),
        ("data_present.c", 1),
        ("stencil3d.c", 0),
        ("types.c", 0),
        ("parallel_offload.c", 3),
    ];
    for (program, want) in programs {
        let (work, bin) = tessera_tests::differential_with_flags(program, &flags);
        let sources = kernel_sources(&bin);
        let interleaved: Vec<_> = sources.iter().filter(|(_, src)| src.contains("hls::burst_maxi") && src.contains(" tdf_b1_")).collect();
        assert_eq!(interleaved.len(), want, "{program}: interleaved kernels in {}.tessera", bin.display());
        for (path, _) in &interleaved {
            let plan = std::fs::read_to_string(path.with_extension("plan.txt")).unwrap();
            assert!(plan.contains("interleaved in segments of 4096 bytes"), "{plan}");
        }
        if want > 0 {
            let report = work.path().join("report.jsonl");
            run_one_thread(&bin, &report);
            let text = std::fs::read_to_string(&report).unwrap();
            // Arrays of one segment (inplace.c's) have an empty second half.
            let (mut halves, mut both) = (0, 0);
            for line in text.lines() {
                let r: serde_json::Value = serde_json::from_str(line).unwrap();
                let Some(arrays) = r["arrays"].as_object() else { continue };
                for (name, t) in arrays.iter().filter(|(n, _)| n.starts_with("tdf_b1_")) {
                    halves += 1;
                    let own = &arrays[name.trim_start_matches("tdf_b1_")];
                    let bytes = |t: &serde_json::Value| t["read_bytes"].as_u64().unwrap() + t["write_bytes"].as_u64().unwrap();
                    let (a, b) = (bytes(own), bytes(t));
                    assert!(a.abs_diff(b) <= 2 * 4096 * 2, "{program}: {name} {b} bytes against {a}: {line}");
                    if b > 0 {
                        both += 1;
                    }
                }
            }
            assert!(halves > 0, "{program}: no second half in the report:\n{text}");
            assert!(program != "two_banks.c" || both >= 3, "{program}: second halves without traffic:\n{text}");
        }
        drop(work);
    }
}

/// Runs `bin` on the emulated device with one OpenMP thread, its report in `report`;
/// its stdout (it must succeed).
fn run_one_thread(bin: &std::path::Path, report: &std::path::Path) -> String {
    let out = tessera_tests::emu_run_command(bin, report).env("OMP_NUM_THREADS", "1").output().expect("runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

/// Runs a build command, which must succeed.
fn build(mut c: std::process::Command) {
    let out = c.output().expect("builds");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

/// Floating reductions on data that round differently in every order: the kernels add
/// in the loop's order — the tiled ones of the 1-D loops (tiles in order, a partial last
/// one; with the default tiles and with tiles of 7), the baseline one of the 2-D sum —
/// so their results are the CPU's with one thread bit for bit; with `reassociate`
/// (partial sums, the 2-D sum tiled too) they are not, as documented.
#[test]
fn floating_reductions_in_the_loops_order() {
    let src = tessera_tests::repo_root().join("tests/sequential/reduction_order.c");
    let source = std::fs::read_to_string(&src).unwrap();
    let line_2d = source.lines().position(|l| l.contains("reduction(+: gsum)")).unwrap() + 1;
    let work = tempfile::tempdir().expect("temp dir");
    let run = |bin: &std::path::Path, report: &str| run_one_thread(bin, &work.path().join(report));
    // The kernel mode of every execution: (2-D region?, mode).
    let modes = |report: &str| -> Vec<(bool, String)> {
        let text = std::fs::read_to_string(work.path().join(report)).unwrap();
        text.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                assert_eq!(v["device"], "emu", "{l}");
                (v["region"].as_str().unwrap().ends_with(&format!(":{line_2d}")), v["mode"].as_str().unwrap().to_string())
            })
            .collect()
    };
    let reference = work.path().join("reference");
    build(tessera_tests::reference_build_command(&src, &reference));
    let want = run(&reference, "reference.jsonl");
    for (name, flags) in [("ordered", vec![]), ("small-tiles", vec!["-fplugin-arg-tessera-tile=7".to_string()])] {
        let bin = work.path().join(name);
        build(tessera_tests::tessera_build_command(&src, &bin, &flags));
        assert_eq!(run(&bin, &format!("{name}.jsonl")), want, "{name}");
        let m = modes(&format!("{name}.jsonl"));
        assert_eq!(m.len(), 4, "{m:?}");
        for (two_d, mode) in m {
            assert_eq!(mode == "baseline", two_d, "{name}: the 1-D sums tiled, the 2-D one not: {mode}");
        }
    }
    let reassociated = work.path().join("reassociated");
    build(tessera_tests::tessera_build_command(&src, &reassociated, &["-fplugin-arg-tessera-reassociate".to_string()]));
    let fast = run(&reassociated, "reassociated.jsonl");
    assert!(modes("reassociated.jsonl").iter().all(|(_, mode)| mode != "baseline"));
    let field = |out: &str, k: &str| out.split_whitespace().skip_while(|w| *w != k).nth(1).unwrap().to_string();
    for k in ["sum", "dot", "gsum"] {
        assert_ne!(field(&fast, k), field(&want, k), "{k}: partial sums round like the loop's order\n{fast}{want}");
    }
}

/// Floating reductions on array sections whose result depends on the private copy
/// starting at the identity (`y[j] + (x0 + x1 + …)`, not `((y[j] + x0) + x1) + …`): the
/// program reports that the in-place order would differ for every element, and its
/// output on the emulated device is the CPU's with one thread, bit for bit, every
/// region on the device.
#[test]
fn floating_array_reductions_start_at_the_identity() {
    let src = tessera_tests::repo_root().join("tests/sequential/reduction_array_order.c");
    let work = tempfile::tempdir().expect("temp dir");
    let run = |bin: &std::path::Path, report: &str| run_one_thread(bin, &work.path().join(report));
    let reference = work.path().join("reference");
    build(tessera_tests::reference_build_command(&src, &reference));
    let want = run(&reference, "reference.jsonl");
    assert!(want.contains("in-place sums differ: 13 of 13") && want.contains("in-place products differ: 5 of 5"), "{want}");
    let bin = work.path().join("tessera");
    build(tessera_tests::tessera_build_command(&src, &bin, &[]));
    assert_eq!(run(&bin, "tessera.jsonl"), want);
    let report = std::fs::read_to_string(work.path().join("tessera.jsonl")).unwrap();
    assert_eq!(report.lines().count(), 2, "{report}");
    for l in report.lines() {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!((v["device"].as_str(), v["mode"].as_str()), (Some("emu"), Some("tessera")), "{l}");
    }
}

/// `-fplugin-arg-tessera-math=relaxed`: the `expf` region of `math_image.c`, which
/// stays on the host by default, runs on the emulated device, whose `hls::exp` is the
/// host's C library (so the output is still the CPU's; a Vitis kernel would compute
/// Vitis' approximation instead). No region is left on the host and no remark printed.
#[test]
fn relaxed_math_offloads_library_dependent_functions() {
    let root = tessera_tests::repo_root();
    let src = root.join("tests/programs/math_image.c");
    let work = tempfile::tempdir().expect("temp dir");
    let (ref_bin, bin, report) = (work.path().join("ref"), work.path().join("relaxed"), work.path().join("report.jsonl"));
    let ok = |c: &mut std::process::Command| {
        let o = c.output().expect("runs");
        assert!(o.status.success(), "{c:?}: {}", String::from_utf8_lossy(&o.stderr));
        o
    };
    ok(&mut tessera_tests::reference_build_command(&src, &ref_bin));
    let reference = ok(&mut std::process::Command::new(&ref_bin)).stdout;
    let build = ok(&mut tessera_tests::tessera_build_command(&src, &bin, &["-fplugin-arg-tessera-math=relaxed".to_string()]));
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(!stderr.contains("not offloaded"), "{stderr}");
    let out = ok(&mut tessera_tests::emu_run_command(&bin, &report));
    assert!(out.stdout == reference, "relaxed build: output differs from the CPU's");
    let expf_line = std::fs::read_to_string(&src).unwrap().lines().position(|l| l.contains("e[j] = expf(")).unwrap();
    let lines = std::fs::read_to_string(&report).unwrap();
    let region = format!("math_image.c:{}\"", expf_line - 1); // the pragma, two lines above the statement
    let runs: Vec<&str> = lines.lines().filter(|l| l.contains(&region)).collect();
    assert!(!runs.is_empty(), "no report line for {region}:\n{lines}");
    assert!(runs.iter().all(|l| l.contains("\"device\":\"emu\"")), "{runs:?}");
    assert!(lines.lines().all(|l| !l.contains("\"device\":\"host\"")), "{lines}");
}

/// `math_contraction.c` built with `-mfma` (host and Tessera alike): clang then fuses
/// the `a * b + c` of two regions into one rounding, which the kernels would not, so
/// those two stay on the host with the remark `host-fp-contraction` at the
/// expression; the `fma()` region and the one under `#pragma STDC FP_CONTRACT OFF` are
/// still offloaded. On a CPU with FMA the output is the `-mfma` reference's (which
/// differs from the plain reference's: the test can tell fused from unfused).
#[test]
fn host_fp_contraction_keeps_fused_regions_on_the_host() {
    let root = tessera_tests::repo_root();
    let src = root.join("tests/programs/math_contraction.c");
    let source = std::fs::read_to_string(&src).unwrap();
    let line_of = |needle: &str| source.lines().position(|l| l.contains(needle)).unwrap() + 1;
    let work = tempfile::tempdir().expect("temp dir");
    let (ref_bin, bin, report) = (work.path().join("ref"), work.path().join("fma"), work.path().join("report.jsonl"));
    let ok = |c: &mut std::process::Command| {
        let o = c.output().expect("runs");
        assert!(o.status.success(), "{c:?}: {}", String::from_utf8_lossy(&o.stderr));
        o
    };
    let build = ok(&mut tessera_tests::tessera_build_command(&src, &bin, &["-mfma".to_string()]));
    let stderr = String::from_utf8_lossy(&build.stderr);
    let remarks: Vec<&str> = stderr.lines().filter(|l| l.contains("remark: target region not offloaded")).collect();
    let fused = [(line_of("y[i] = a * x[i] + y[i]; // fused"), 12, "a * x[i] + y[i]"), (line_of("r[i] -= 0.5"), 5, "r[i] -= 0.5 * x[i - 1] * x[i + 1]")];
    assert_eq!(remarks.len(), fused.len(), "{stderr}");
    for ((line, col, text), remark) in fused.iter().zip(&remarks) {
        assert!(
            remark.contains(&format!("math_contraction.c:{line}:{col}: remark: target region not offloaded: [host-fp-contraction] the host compilation fuses '{text}' into one multiply-add")),
            "{remark}"
        );
    }
    let cpu_has_fma = std::fs::read_to_string("/proc/cpuinfo").is_ok_and(|c| c.split_whitespace().any(|w| w == "fma"));
    if !cpu_has_fma {
        eprintln!("this CPU has no FMA instructions: the -mfma binaries are not run");
        return;
    }
    ok(tessera_tests::reference_build_command(&src, &ref_bin).arg("-mfma"));
    let reference = ok(&mut std::process::Command::new(&ref_bin)).stdout;
    let out = ok(&mut tessera_tests::emu_run_command(&bin, &report));
    assert!(out.stdout == reference, "-mfma build: output differs from the -mfma CPU run");
    let lines = std::fs::read_to_string(&report).unwrap();
    let emu = lines.lines().filter(|l| l.contains("\"device\":\"emu\"")).count();
    assert_eq!(emu, 2, "the fma() and FP_CONTRACT OFF regions run on the device:\n{lines}");
}

/// The OpenMP queries in a region: the kernel is one team of one thread on a device
/// that is not the initial one, so `omp_get_team_num()`, `omp_get_num_teams()`,
/// `omp_get_thread_num()`, `omp_get_num_threads()` and `omp_is_initial_device()` are
/// the constants 0, 1, 0, 1, 0 in the region's IR (and subscripts stay affine); the
/// host fallback (`OMP_TARGET_OFFLOAD=DISABLED`) runs the original calls, where
/// `omp_is_initial_device()` is 1.
#[test]
fn omp_queries_are_the_kernels_single_team_and_thread() {
    let work = tempfile::tempdir().expect("temp dir");
    let src = work.path().join("queries.c");
    std::fs::write(
        &src,
        "#include <omp.h>\n#include <stdio.h>\nint main(void) {\n  int a[16];\n\
         #pragma omp target map(from: a[0:16])\n  for (int i = 0; i < 8; i++) {\n\
         a[i + omp_get_team_num() + omp_get_thread_num()] = omp_is_initial_device() + 10 * omp_get_num_teams();\n\
         a[8 + i] = 100 * omp_get_num_threads() + i;\n  }\n\
         for (int i = 0; i < 16; i++) printf(\" %d\", a[i]);\n  printf(\"\\n\");\n  return 0;\n}\n",
    )
    .unwrap();
    let (bin, dump, report) = (work.path().join("q"), work.path().join("ir"), work.path().join("report.jsonl"));
    std::fs::create_dir(&dump).unwrap();
    let build = tessera_tests::tessera_build_command(&src, &bin, &[format!("-fplugin-arg-tessera-dump-ir={}", dump.display())])
        .output()
        .expect("tessera cc runs");
    let stderr = String::from_utf8_lossy(&build.stderr);
    assert!(build.status.success() && !stderr.contains("not offloaded"), "{stderr}");
    let ir_file = std::fs::read_dir(&dump).unwrap().map(|e| e.unwrap().path()).find(|p| p.to_string_lossy().ends_with(".ir.json")).unwrap();
    let ir: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&ir_file).unwrap()).unwrap();
    let text = ir["body"].to_string();
    assert!(!text.contains("unsupported") && !text.contains("omp_") && !text.contains("\"call\""), "{text}");
    // The subscript a[i + omp_get_team_num() + omp_get_thread_num()]: (i + 0) + 0.
    let target = &ir["body"][0]["body"][0]["target"]["index"][0];
    assert_eq!((target["rhs"]["kind"].as_str(), target["rhs"]["value"].as_i64()), (Some("int"), Some(0)), "{target}");
    let device = tessera_tests::emu_run_command(&bin, &report).output().unwrap();
    assert_eq!(String::from_utf8_lossy(&device.stdout), format!("{}\n", " 10".repeat(8) + " 100 101 102 103 104 105 106 107"));
    assert!(std::fs::read_to_string(&report).unwrap().contains("\"device\":\"emu\""));
    let host = tessera_tests::emu_run_command(&bin, &report).env("OMP_TARGET_OFFLOAD", "DISABLED").output().unwrap();
    assert_eq!(String::from_utf8_lossy(&host.stdout), format!("{}\n", " 11".repeat(8) + " 100 101 102 103 104 105 106 107"));
}
