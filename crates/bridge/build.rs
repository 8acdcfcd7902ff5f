//! Generates the C++ side of the bridge (`tessera-bridge/src/lib.rs.h` under
//! `<target>/cxxbridge/`), which the clang plugin includes.
fn main() {
    cxx_build::bridge("src/lib.rs").std("c++17").compile("tessera-bridge-cxx");
    println!("cargo:rerun-if-changed=src/lib.rs");
}
