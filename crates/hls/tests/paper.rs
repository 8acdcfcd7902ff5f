//! The paper kernels as text: they compile warning-free as the emulated device and as
//! Vitis compile them, their pipelined loops contain only loops with compile-time trip
//! counts (what `#pragma HLS PIPELINE` unrolls), every buffer is completely
//! partitioned, no removed pragma spelling appears, and three of them (1D, 2D, 3D)
//! match their snapshots in `tests/snapshots/`.
//!
//! Bless the snapshots after an intended change of the generator with
//! `TESSERA_BLESS=1 cargo test --release -p tessera-hls --test paper`, then review the
//! diff.

mod common;

use common::*;
use tessera_hls::Kernel;

const VARIANTS: [Variant; 2] = [Variant::Paper, Variant::Tessera];

/// The snapshot kernels: one per dimensionality, with (port width, tile sizes), each in
/// both modes (`<name>.w<W>.cpp` paper, `<name>.tessera.w<W>.cpp` tessera).
const SNAPSHOTS: &[(&str, u32, &[i64])] = &[("1D-jacobi", 16, &[1024]), ("2D-5p", 4, &[8, 16]), ("3D-heat", 8, &[4, 4, 8])];

/// Two kernels (modes `paper` and `tessera`) per benchmark stencil, port widths and
/// tile sizes varied across them.
fn kernels() -> Vec<(String, Kernel)> {
    let small_tiles: &[&[i64]] = &[&[100], &[5, 12], &[3, 4, 8]];
    let mut v: Vec<(String, Kernel)> = Vec::new();
    for (i, name) in SMALL.iter().enumerate() {
        let r = small(name);
        let w = [4, 8, 16][i % 3];
        let depth = name.as_bytes()[0] - b'0';
        let tile = (i % 2 == 0).then(|| small_tiles[depth as usize - 1].to_vec());
        for variant in VARIANTS {
            let label = format!("{name} {} w={w} tile={tile:?}", variant.name());
            v.push((label, tiled(&r, tile.clone(), w, &format!("tessera_k{i}"), variant)));
        }
    }
    for (name, w, tile) in SNAPSHOTS {
        for variant in VARIANTS {
            let label = format!("{name} {} w={w} tile={tile:?}", variant.name());
            v.push((label, tiled(&small(name), Some(tile.to_vec()), *w, "tessera_snap", variant)));
        }
    }
    v
}

#[test]
fn kernels_compile_warning_free() {
    let tmp = tempfile::tempdir().unwrap();
    let ks = kernels();
    std::thread::scope(|s| {
        for (i, (_, k)) in ks.iter().enumerate() {
            let dir = tmp.path().join(format!("k{i}"));
            s.spawn(move || compile_check(k, &dir));
        }
    });
}

/// The body of the `{ … }` block opened at byte `open` of `src`.
fn block(src: &str, open: usize) -> &str {
    let mut depth = 0;
    for (i, c) in src[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return &src[open + 1..open + i];
                }
            }
            _ => {}
        }
    }
    panic!("unbalanced braces")
}

/// The upper bound of every `for (… v < bound; …)` header in `text`.
fn loop_bounds(text: &str) -> Vec<String> {
    text.match_indices("for (")
        .map(|(at, _)| {
            let header = &text[at..at + text[at..].find(')').unwrap()];
            let cond = header.split(';').nth(1).expect("for (init; cond; step)").trim();
            cond.split('<').nth(1).expect("an upper bound").trim().to_string()
        })
        .collect()
}

/// Checks one kernel's structure (see the module docs); `Err` says what is wrong.
fn structure(src: &str) -> Result<(), String> {
    if src.to_ascii_lowercase().contains("resource") {
        return Err("the removed pragma spelling `resource` appears".into());
    }
    // Helpers (the shim's tessera_ship.h, which the kernels include): their loops may
    // only run to template or constexpr constants.
    let helpers = include_str!("../../../host/include/tessera_ship.h");
    if !src.contains("#include \"tessera_ship.h\"") {
        return Err("the kernel does not include tessera_ship.h".into());
    }
    let mut helper_ok = std::collections::HashMap::new();
    for (at, _) in helpers.match_indices("template <") {
        let decl_end = helpers[at..].find('{').unwrap() + at;
        let decl = &helpers[at..decl_end];
        let name = decl.split('(').next().unwrap().split_whitespace().last().unwrap().to_string();
        let body = block(helpers, decl_end);
        let mut consts: Vec<String> = decl["template <".len()..decl.find('>').unwrap()]
            .split(',')
            .filter_map(|p| p.trim().strip_prefix("int ").map(|n| n.trim().to_string()))
            .collect();
        consts.extend(body.match_indices("constexpr int ").map(|(i, _)| {
            body[i + "constexpr int ".len()..].split([' ', '=']).next().unwrap().to_string()
        }));
        let bad: Vec<String> = loop_bounds(body).into_iter().filter(|b| !consts.contains(b)).collect();
        helper_ok.insert(name, bad);
    }
    let pipelines: Vec<usize> = src.match_indices("#pragma HLS PIPELINE").map(|(i, _)| i).collect();
    if pipelines.len() != 1 {
        return Err(format!("{} PIPELINE pragmas, expected one", pipelines.len()));
    }
    let p = pipelines[0];
    let open = src[..p].rfind('{').unwrap();
    let header_start = src[..open].rfind('\n').unwrap() + 1;
    if !src[header_start..open].trim_start().starts_with("for (") {
        return Err("PIPELINE is not the first line of a loop".into());
    }
    let body = block(src, open);
    if body.contains("while") || body.contains("goto") {
        return Err("a pipelined loop contains a while loop or goto".into());
    }
    for b in loop_bounds(body) {
        if b.parse::<i64>().is_err() {
            return Err(format!("a loop inside the pipelined loop runs to `{b}`, not a constant"));
        }
    }
    for (name, bad) in &helper_ok {
        if body.contains(&format!("{name}<")) && !bad.is_empty() {
            return Err(format!("{name}, called in the pipelined loop, has loops to {bad:?}"));
        }
    }
    if !body.contains("= 0; ") || !src.contains("// Step 4") {
        return Err("the pipelined loop does not hold the computation".into());
    }
    // Every cache buffer is completely partitioned right after its declaration.
    let lines: Vec<&str> = src.lines().collect();
    for (i, l) in lines.iter().enumerate() {
        let t = l.trim();
        let is_buffer = t.ends_with("];") && !t.contains('=') && !t.contains('(');
        if is_buffer {
            let name = t.split_whitespace().last().unwrap().split('[').next().unwrap();
            let want = format!("#pragma HLS ARRAY_PARTITION variable={name} type=complete dim=0");
            if lines.get(i + 1) != Some(&want.as_str()) {
                return Err(format!("buffer {name} is not followed by `{want}`"));
            }
        }
    }
    Ok(())
}

#[test]
fn pipelined_loops_unroll_constant_loops_only() {
    for (label, k) in kernels() {
        if let Err(e) = structure(&k.source) {
            panic!("{label}: {e}\n{}", k.source);
        }
    }
    // The checker itself: a run-time bound inside the pipelined loop is caught.
    let (_, k) = &kernels()[4]; // 2D-9p, paper, tile [5, 12]
    let broken = k.source.replacen("j < 12;", "j < j_n;", 1);
    assert_ne!(broken, k.source);
    assert!(structure(&broken).is_err());
}

#[test]
fn snapshots() {
    let dir = repo().join("crates/hls/tests/snapshots");
    let mut stale = Vec::new();
    for ((name, w, tile), variant) in SNAPSHOTS.iter().flat_map(|s| VARIANTS.map(|v| (s, v))) {
        let k = tiled(&small(name), Some(tile.to_vec()), *w, "tessera_snap", variant);
        let text = format!("{}\n// ---- emulation entry ----\n{}", k.source, k.emu_entry);
        let path = match variant {
            Variant::Paper => dir.join(format!("{name}.w{w}.cpp")),
            Variant::Tessera => dir.join(format!("{name}.tessera.w{w}.cpp")),
        };
        stale.extend(common::snapshot(&path, &text));
    }
    assert!(
        stale.is_empty(),
        "kernels differ from their snapshots (review, then bless with \
         `TESSERA_BLESS=1 cargo test --release -p tessera-hls --test paper`):\n{}",
        stale.join("\n")
    );
}
