//! Kernel identity: kernels are named after their source file's absolute path and
//! their region (`tessera_compiler::region_name`), so two files with the same name in
//! different directories, each with a region on the same line, get two kernels in one
//! program; and the kernel directory holds only the current kernels of each
//! translation unit (the plugin removes the stale ones of the unit it compiles, and
//! nothing else). Needs `make build`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use tessera_tests::run;

fn tessera() -> PathBuf {
    let t = tessera_tests::repo_root().join("target/release/tessera");
    assert!(t.is_file(), "{} is missing: run `make build` first", t.display());
    t
}

fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

/// The file names in `dir`, sorted.
fn files(dir: &Path) -> BTreeSet<String> {
    std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect()
}

/// Kernel names of the `*.manifest.json` files among `files`.
fn kernels(files: &BTreeSet<String>) -> BTreeSet<String> {
    files.iter().filter_map(|f| f.strip_suffix(".manifest.json").map(String::from)).collect()
}

/// `a/k.c`: `x[i] = x[i] * 2 + 1` — the region on line 2.
const A_K: &str = "void fa(float *x, int n) {
#pragma omp target teams distribute parallel for map(tofrom: x[0:n])
  for (int i = 0; i < n; i++) x[i] = x[i] * 2.0f + 1.0f;
}
";

/// `b/k.c`: `y[i] = y[i] * 0.5 - 3` — also on line 2, another computation.
const B_K: &str = "void fb(float *y, int n) {
#pragma omp target teams distribute parallel for map(tofrom: y[0:n])
  for (int i = 0; i < n; i++) y[i] = y[i] * 0.5f - 3.0f;
}
";

const MAIN: &str = r#"#include <stdio.h>
void fa(float *x, int n);
void fb(float *y, int n);
int main(void) {
  enum { N = 37 };
  float x[N], y[N];
  for (int i = 0; i < N; i++) { x[i] = 0.25f * i - 1.0f; y[i] = 1.5f * i + 0.125f; }
  fa(x, N);
  fb(y, N);
  fa(y, N);
  for (int i = 0; i < N; i++) printf("%a %a\n", x[i], y[i]);
  return 0;
}
"#;

/// `a/k.c` and `b/k.c` (same file name, regions on the same line, different
/// computations) compiled into one program: two kernels, and on the emulated device
/// the results of plain clang.
#[test]
fn same_file_name_in_two_directories() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    write(w, "a/k.c", A_K);
    write(w, "b/k.c", B_K);
    write(w, "main.c", MAIN);
    let sources = ["main.c", "a/k.c", "b/k.c"];

    run(Command::new("clang-19").current_dir(w).args(["-fopenmp", "-O2", "-o", "ref"]).args(sources), "clang build");
    let reference = run(Command::new(w.join("ref")).env_remove("OMP_TARGET_OFFLOAD"), "reference run");
    run(Command::new(tessera()).current_dir(w).args(["cc", "-O2", "-o", "prog"]).args(sources), "tessera cc");

    let names = kernels(&files(&w.join("prog.tessera")));
    assert_eq!(names.len(), 2, "one kernel per file: {names:?}");
    for n in &names {
        assert!(n.starts_with("tessera_k_") && n.contains("_l2_r0_"), "{n}");
    }

    let report = w.join("report.jsonl");
    let cache = tessera_tests::repo_root().join("target/tessera-test-cache");
    let out = run(
        Command::new(w.join("prog"))
            .env("TESSERA_DEVICE", "emu")
            .env("TESSERA_REPORT", &report)
            .env("TESSERA_CACHE_DIR", &cache)
            .env_remove("OMP_TARGET_OFFLOAD"),
        "tessera run",
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&reference.stdout),
        "the emulated device's results differ from the CPU's"
    );
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&report)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ran: Vec<(String, String, String)> = lines
        .iter()
        .map(|l| {
            let s = |k: &str| l[k].as_str().unwrap_or_else(|| panic!("{k} in {l}")).to_string();
            (s("region"), s("kernel"), s("device"))
        })
        .collect();
    assert_eq!(ran.len(), 3, "{ran:?}");
    assert!(ran.iter().all(|(_, _, d)| d == "emu"), "{ran:?}");
    assert_eq!(ran[0].0, "a/k.c:2");
    assert_eq!(ran[1].0, "b/k.c:2");
    assert_ne!(ran[0].1, ran[1].1, "a/k.c and b/k.c ran the same kernel");
    assert_eq!(ran[0].1, ran[2].1, "fa twice: one kernel");
    assert_eq!(ran.iter().map(|r| r.1.clone()).collect::<BTreeSet<_>>(), names);
}

/// Recompiling a translation unit removes the kernel files its earlier compilation
/// wrote for regions that are gone or changed; another unit's kernels in the same
/// directory, bitstreams and other files stay. The same source compiled again keeps
/// its kernel names.
#[test]
fn stale_kernels_of_a_translation_unit_are_removed() {
    let work = tempfile::tempdir().unwrap();
    let w = work.path();
    write(w, "a/k.c", A_K);
    write(w, "b/k.c", B_K);
    let kdir = w.join("kernels");
    let compile = |src: &str| {
        run(
            Command::new(tessera())
                .current_dir(w)
                .args(["cc", "-O2", "-c", src, "-o", "/dev/null", "-fplugin-arg-tessera-out-dir=kernels"]),
            &format!("tessera cc -c {src}"),
        );
    };
    compile("a/k.c");
    let a1 = kernels(&files(&kdir));
    compile("b/k.c");
    let both = files(&kdir);
    let b1: BTreeSet<String> = kernels(&both).difference(&a1).cloned().collect();
    assert_eq!((a1.len(), b1.len()), (1, 1), "{both:?}");
    let (a1, b1) = (a1.into_iter().next().unwrap(), b1.into_iter().next().unwrap());
    // The same source again: the same names, nothing removed.
    compile("a/k.c");
    assert_eq!(files(&kdir), both);

    // Files that are not the plugin's: a bitstream and its record of a's kernel, notes.
    for f in [format!("{a1}.xclbin"), format!("{a1}.xclbin.json"), "notes.txt".to_string()] {
        write(&kdir, &f, "user\n");
    }

    // Edit a/k.c: the region changes (a new kernel name) and a second region appears.
    write(
        w,
        "a/k.c",
        &A_K.replace("2.0f", "4.0f").replace(
            "}\n",
            "}\nvoid ga(float *x, int n) {\n#pragma omp target teams distribute parallel for map(tofrom: x[0:n])\n  \
             for (int i = 0; i < n; i++) x[i] += 1.0f;\n}\n",
        ),
    );
    compile("a/k.c");
    let now = files(&kdir);
    let ks = kernels(&now);
    assert!(!ks.contains(&a1), "a's old kernel is still there: {now:?}");
    assert!(ks.contains(&b1), "b's kernel was removed: {now:?}");
    assert_eq!(ks.len(), 3, "{now:?}");
    let a_prefix = &a1[..a1.find("_l2_").unwrap() + 1];
    let a2: Vec<&String> = ks.iter().filter(|k| k.starts_with(a_prefix)).collect();
    assert_eq!(a2.len(), 2, "{now:?}");
    // Nothing of the old kernel the plugin wrote is left; the rest stays.
    for suffix in [".cpp", ".ir.json", ".manifest.json", ".plan.txt"] {
        assert!(!now.contains(&format!("{a1}{suffix}")), "{a1}{suffix} is stale: {now:?}");
        assert!(now.contains(&format!("{b1}{suffix}")), "{b1}{suffix} of b/k.c was removed: {now:?}");
    }
    for f in [format!("{a1}.xclbin"), format!("{a1}.xclbin.json"), "notes.txt".to_string()] {
        assert!(now.contains(&f), "{f} was removed: {now:?}");
    }

    // No region left in a/k.c: none of its kernels either; b's stay.
    write(w, "a/k.c", "int fa(int x) { return x + 1; }\n");
    compile("a/k.c");
    let last = files(&kdir);
    assert_eq!(kernels(&last), BTreeSet::from([b1.clone()]), "{last:?}");
    assert_eq!(last.len(), 4 + 3, "b's four files, the bitstream, its record and the notes: {last:?}");
}
