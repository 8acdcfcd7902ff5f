//! Compiles `src/entry.c`, the variadic half of the `__tessera_offload` entry point.

fn main() {
    println!("cargo:rerun-if-changed=src/entry.c");
    cc::Build::new().file("src/entry.c").warnings(true).extra_warnings(true).compile("tessera_entry");
}
