//! The part of tapasco-standin (NOT TaPaSCo) written in Rust. libtapasco is a Rust
//! static library and so carries its own copy of Rust's standard library; this file,
//! compiled as a `staticlib` and archived together with `standin.c`, gives the
//! stand-in's `libtapasco.a` the same property, so the test also checks that
//! `runtime/build/tapasco.rs` links such an archive into the (Rust) runtime.

use std::collections::HashMap;

/// Writes a line describing the stand-in into `buf` (at most `len` bytes, NUL
/// terminated) using the standard library's collections, formatting and unwinding;
/// returns the line's length.
///
/// # Safety
/// `buf` points at `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn tapasco_standin_rust_banner(buf: *mut u8, len: usize) -> usize {
    let line = std::panic::catch_unwind(|| {
        let words: HashMap<usize, String> = (1..=3).map(|i| (i, format!("w{i}"))).collect();
        let mut keys: Vec<&usize> = words.keys().collect();
        keys.sort();
        format!("rust-part {}", keys.iter().map(|k| words[k].as_str()).collect::<Vec<_>>().join(","))
    })
    .unwrap_or_else(|_| "rust-part panicked".to_string());
    let n = line.len().min(len.saturating_sub(1));
    std::ptr::copy_nonoverlapping(line.as_ptr(), buf, n);
    *buf.add(n) = 0;
    n
}
