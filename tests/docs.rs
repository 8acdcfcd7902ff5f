//! Every file the repository cites exists in the repository.
//!
//! Scans the tracked text files (`git ls-files`; binary and non-UTF-8 files skipped)
//! for
//! - (a) Markdown links `[text](target)` in `.md` files with a relative target
//!   (anchor dropped), outside fenced code blocks;
//! - (b) path-like citations anywhere: a token of path characters that ends in one of
//!   [`EXTENSIONS`] and contains a `/`, or is one of the documentation names of
//!   [`DOC_NAMES`] (which must be cited with their `docs/` directory);
//!
//! and checks that each resolves to an existing file (a directory too, for links),
//! relative to the citing file's directory, one of its ancestors (a crate's
//! `CARGO_MANIFEST_DIR`-relative path), or the repository root; a path that leaves
//! the repository does not resolve. It also checks that no file mentions the design
//! notes or seed papers that once lived beside the repository (their content is in
//! `docs/`).
//!
//! Not citations, hence skipped: URLs, absolute paths (`/opt/xilinx/…`,
//! `/w/p.tessera`), tokens next to a placeholder or glob (`<kernel>.plan.txt`,
//! `crates/poly/src/*.rs`, `{}`, `$VAR`), paths under `target/` or `build/`, and
//! `#include` lines (resolved by the compiler's include path).
//!
//! Run: `cargo test --release -p tessera-tests --test docs`.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};
use std::process::Command;

/// File extensions of citable repository files.
const EXTENSIONS: &[&str] = &[".md", ".rs", ".c", ".h", ".cpp", ".txt", ".toml", ".cmake", ".sh"];

/// Documentation names that are citations even without a directory: the project's
/// docs and the names of the design notes they replace.
const DOC_NAMES: &[&str] = &[
    "method.md",
    "performance-model.md",
    "toolchain.md",
    "benchmarks.md",
    "perf-model.md",
    "seed-notes.md",
    "dtse.md",
    "peers.md",
];

/// Strings no file may contain: paths to the notes outside the repository. Built at
/// run time so that this file does not contain them.
fn forbidden() -> Vec<String> {
    vec![format!("shared{}design", '/'), format!("shared{}seeds", '/'), format!("..{}shared", '/')]
}

/// This file, which quotes bad citations on purpose (the scanner's own tests and the
/// names above); it is not scanned.
const SELF: &str = "tests/docs.rs";

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf()
}

/// One unresolved citation or forbidden mention.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Problem {
    file: String,
    line: usize,
    what: String,
}

/// Lexical normalisation of `base/rel` inside the repository: `None` when it
/// leaves the root.
fn normalize(base: &Path, rel: &str) -> Option<PathBuf> {
    let mut out: Vec<String> = Vec::new();
    for c in base.join(rel).components() {
        match c {
            Component::Normal(s) => out.push(s.to_string_lossy().into_owned()),
            Component::ParentDir => {
                out.pop()?;
            }
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out.iter().collect())
}

/// Whether `rel`, cited in `file` (repository-relative), names something that
/// `exists` (a repository-relative path predicate).
fn resolves(file: &str, rel: &str, exists: &dyn Fn(&Path) -> bool) -> bool {
    let mut dir = Path::new(file).parent();
    while let Some(d) = dir {
        if let Some(p) = normalize(d, rel) {
            if exists(&p) {
                return true;
            }
        }
        dir = d.parent();
    }
    normalize(Path::new(""), rel).is_some_and(|p| exists(&p))
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '/' | '-')
}

/// Characters that make a neighbouring token a placeholder, glob or template.
fn is_placeholder_char(c: char) -> bool {
    matches!(c, '<' | '>' | '*' | '{' | '}' | '$' | '%' | '@' | '~' | '[' | '?')
}

/// Replaces URLs by spaces.
fn blank_urls(line: &str) -> String {
    let mut s = line.to_string();
    for scheme in ["https://", "http://", "file://", "ftp://"] {
        while let Some(i) = s.find(scheme) {
            let end = s[i..]
                .find(|c: char| c.is_whitespace() || matches!(c, ')' | '>' | '"' | '\'' | '`' | ']'))
                .map_or(s.len(), |e| i + e);
            s.replace_range(i..end, &" ".repeat(end - i));
        }
    }
    s
}

/// Path-like citations of one line (b).
fn path_tokens(line: &str) -> Vec<String> {
    let t = line.trim_start();
    if t.starts_with("#include") || t.starts_with("# include") {
        return vec![];
    }
    let line = blank_urls(line);
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if !is_path_char(chars[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < chars.len() && is_path_char(chars[i]) {
            i += 1;
        }
        let before = if start > 0 { Some(chars[start - 1]) } else { None };
        let after = chars.get(i).copied();
        if before.is_some_and(is_placeholder_char) || after.is_some_and(is_placeholder_char) {
            continue;
        }
        // `Foo::bar.rs`-like Rust paths and `a:b` forms are not file citations.
        if before == Some(':') && start >= 2 && chars[start - 2] == ':' {
            continue;
        }
        let tok: String = chars[start..i].iter().collect();
        let tok = tok.trim_end_matches('.');
        let tok = tok.strip_prefix("./").unwrap_or(tok);
        if tok.is_empty() || tok.starts_with('/') || tok.starts_with('.') && !tok.starts_with("..") {
            continue;
        }
        if !EXTENSIONS.iter().any(|e| tok.ends_with(e) && tok.len() > e.len()) {
            continue;
        }
        let name = tok.rsplit('/').next().unwrap_or(tok);
        if !tok.contains('/') && !DOC_NAMES.contains(&name) {
            continue;
        }
        if tok.starts_with("target/") || tok.starts_with("build/") || tok.contains("/target/") {
            continue;
        }
        out.push(tok.to_string());
    }
    out
}

/// Relative Markdown link targets of one line (a).
fn link_targets(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line;
    while let Some(i) = rest.find("](") {
        rest = &rest[i + 2..];
        let Some(end) = rest.find(')') else { break };
        let target = rest[..end].split_whitespace().next().unwrap_or("");
        let target = target.trim_start_matches('<').trim_end_matches('>');
        let path = target.split('#').next().unwrap_or("");
        let external = path.contains("://") || path.starts_with("mailto:") || path.starts_with('/');
        if !path.is_empty() && !external {
            out.push(path.to_string());
        }
        rest = &rest[end..];
    }
    out
}

/// Whether a path token is meant as a repository path: a bare documentation name,
/// a path that climbs (`../`), or one whose first directory exists next to the citing
/// file or at the root (`docs/…`, `crates/…`, a crate's `src/…`). Other relative
/// paths (`xrt/xrt_bo.h`, `etc/ap_private.h`, test fixtures like `a/k.c`) are paths
/// in someone else's tree.
fn is_repository_citation(file: &str, tok: &str, exists: &dyn Fn(&Path) -> bool) -> bool {
    let Some((first, _)) = tok.split_once('/') else { return true };
    if first == ".." {
        return true;
    }
    let dir = Path::new(file).parent().unwrap_or(Path::new(""));
    exists(&dir.join(first)) || exists(Path::new(first))
}

/// All problems of one file's text.
fn check_text(file: &str, text: &str, exists: &dyn Fn(&Path) -> bool) -> Vec<Problem> {
    let forbidden = forbidden();
    let markdown = file.ends_with(".md");
    let mut fenced = false;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let problem = |what: String| Problem { file: file.to_string(), line: n + 1, what };
        for f in &forbidden {
            if line.contains(f.as_str()) {
                out.push(problem(format!("mentions `{f}` (outside the repository; cite docs/)")));
            }
        }
        if markdown && line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if markdown && !fenced {
            for t in link_targets(line) {
                if !resolves(file, &t, exists) {
                    out.push(problem(format!("link target `{t}` does not exist")));
                }
            }
        }
        for t in path_tokens(line) {
            if !is_repository_citation(file, &t, exists) {
                continue;
            }
            if !resolves(file, &t, &|p: &Path| exists(p) && !p.as_os_str().is_empty()) {
                out.push(problem(format!("cited path `{t}` does not exist")));
            }
        }
    }
    out
}

fn tracked_files(root: &Path) -> Vec<String> {
    let out = Command::new("git")
        .args(["ls-files", "-z"])
        .current_dir(root)
        .output()
        .expect("run git ls-files (the docs test needs git and the repository's work tree)");
    assert!(out.status.success(), "git ls-files failed: {}", String::from_utf8_lossy(&out.stderr));
    out.stdout
        .split(|&b| b == 0)
        .filter(|s| !s.is_empty())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

#[test]
fn every_cited_repository_path_exists() {
    let root = root();
    let files = tracked_files(&root);
    assert!(files.len() > 50, "git ls-files listed only {} files", files.len());
    let tracked: BTreeSet<PathBuf> = files.iter().map(PathBuf::from).collect();
    // Tracked files and the directories that hold them; nothing untracked counts.
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    for f in &tracked {
        let mut d = f.parent();
        while let Some(p) = d {
            if !p.as_os_str().is_empty() {
                dirs.insert(p.to_path_buf());
            }
            d = p.parent();
        }
    }
    let exists = |p: &Path| tracked.contains(p) || dirs.contains(p);
    let mut problems = Vec::new();
    let mut scanned = 0;
    for f in files.iter().filter(|f| f.as_str() != SELF) {
        let Ok(bytes) = std::fs::read(root.join(f)) else { continue };
        if bytes.contains(&0) {
            continue;
        }
        let Ok(text) = String::from_utf8(bytes) else { continue };
        scanned += 1;
        problems.extend(check_text(f, &text, &exists));
    }
    assert!(scanned > 50, "scanned only {scanned} text files");
    let list: Vec<String> =
        problems.iter().map(|p| format!("  {}:{}: {}", p.file, p.line, p.what)).collect();
    assert!(problems.is_empty(), "{} bad citation(s):\n{}", problems.len(), list.join("\n"));
}

/// The scanner itself: what it flags and what it leaves alone.
#[test]
fn the_scanner_flags_bad_citations_only() {
    let have = |p: &Path| {
        ["docs/method.md", "crates/poly/src/lib.rs", "crates/model/Cargo.toml", "docs", "crates/poly/README.md"]
            .iter()
            .any(|h| Path::new(h) == p)
    };
    let ok = |file: &str, text: &str| check_text(file, text, &have);
    let missing = format!("docs/{}.md", "missing");
    let outside = format!("../../shared{}design/benchmarks.md", '/');
    // Flagged.
    assert_eq!(ok("crates/poly/src/tiling.rs", &format!("//! see `{missing}`.")).len(), 1);
    // two forbidden mentions and the unresolved path
    assert_eq!(ok("bench/stencils/x.c", &format!("/* set ({outside}). */")).len(), 3);
    assert_eq!(ok("crates/poly/src/lib.rs", &format!("// {}", "toolchain.md §3")).len(), 1);
    assert_eq!(ok("docs/a.md", &format!("see [m]({}.md)", "nope")).len(), 1);
    assert_eq!(ok("docs/a.md", "see [m](../docs/method.md#step-2) and [d](../docs/)").len(), 0);
    // Resolved: relative to the file, an ancestor (manifest-relative) or the root.
    assert!(ok("crates/poly/README.md", "[method](../../docs/method.md), docs/method.md").is_empty());
    assert!(ok("crates/model/src/params.rs", r#"join("../../docs/method.md")"#).is_empty());
    assert_eq!(ok("crates/poly/src/buffers.rs", "(`crates/poly/src/lib.rs`, method.md)").len(), 1);
    assert!(ok("crates/poly/src/buffers.rs", "(`crates/poly/src/lib.rs`)").is_empty());
    // Not citations.
    for text in [
        "https://example.org/a/b.md and http://x.y/z.rs",
        "writes <kernel>.plan.txt and <out>/<target>/k.cpp",
        "tests/ir/src/*.c and crates/poly/src/*.rs",
        "tessera cc /w/p.tessera -o /tmp/x.c",
        "target/release/libtessera_bridge.a, target/bench/bench.txt",
        "#include \"tessera-bridge/src/lib.rs.h\"",
        "format!(\"{dir}/{name}.cpp\")",
        "README.md, Cargo.toml, x.c",
        "test fixtures a/k.c, b/k.c; vendor headers xrt/xrt_bo.h, etc/ap_private.h",
    ] {
        assert!(ok("docs/a.md", text).is_empty(), "{text}: {:?}", ok("docs/a.md", text));
    }
}
