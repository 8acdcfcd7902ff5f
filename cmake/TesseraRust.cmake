# TesseraRust.cmake - build the Rust bridge with cargo and link it into a target.
#
# Part of Tessera. The clang plugin links the `tessera-bridge` crate (a cxx
# staticlib that bundles the whole Rust pipeline) in-process. This file
#   * runs `cargo build --release -p tessera-bridge` on every build (cargo does
#     its own up-to-date check, so Rust changes are always picked up), in the
#     one workspace-wide target directory,
#   * imports <target>/release/libtessera_bridge.a and the generated cxx headers
#     (<target>/cxxbridge/tessera-bridge/src/lib.rs.h, rust/cxx.h),
#   * provides tessera_link_rust_bridge(<target>), the link recipe of
#     docs/toolchain.md §3: the archive goes BEFORE clang-cpp/LLVM, all its
#     symbols are hidden (--exclude-libs) so that the bundled Rust/isl code never
#     binds to the ~5000 isl_* symbols libLLVM exports, and --gc-sections drops
#     dead code that references symbols the archive does not define.
#
# Inputs (cache variables):
#   TESSERA_WORKSPACE_DIR     the Cargo workspace (default: <this dir>/..)
#   TESSERA_CARGO_TARGET_DIR  CARGO_TARGET_DIR (default: <workspace>/target)

get_filename_component(_tessera_root "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
set(TESSERA_WORKSPACE_DIR "${_tessera_root}" CACHE PATH
    "Cargo workspace containing the tessera-bridge crate")
set(TESSERA_CARGO_TARGET_DIR "${TESSERA_WORKSPACE_DIR}/target" CACHE PATH
    "Cargo target directory shared by the whole workspace")

find_program(CARGO_EXECUTABLE cargo HINTS "$ENV{CARGO_HOME}/bin" "$ENV{HOME}/.cargo/bin")
if(NOT CARGO_EXECUTABLE)
  message(FATAL_ERROR "cargo not found (install Rust or set CARGO_EXECUTABLE)")
endif()

set(TESSERA_BRIDGE_LIB "${TESSERA_CARGO_TARGET_DIR}/release/libtessera_bridge.a")
set(TESSERA_BRIDGE_INCLUDE "${TESSERA_CARGO_TARGET_DIR}/cxxbridge")
set(TESSERA_BRIDGE_HEADER "${TESSERA_BRIDGE_INCLUDE}/tessera-bridge/src/lib.rs.h")

# Always out of date: cargo decides what to rebuild.
add_custom_target(tessera_bridge_cargo
  COMMAND ${CMAKE_COMMAND} -E env "CARGO_TARGET_DIR=${TESSERA_CARGO_TARGET_DIR}"
          "${CARGO_EXECUTABLE}" build --release -p tessera-bridge
  WORKING_DIRECTORY "${TESSERA_WORKSPACE_DIR}"
  BYPRODUCTS "${TESSERA_BRIDGE_LIB}" "${TESSERA_BRIDGE_HEADER}"
  COMMENT "cargo build --release -p tessera-bridge"
  USES_TERMINAL
  VERBATIM)

add_library(tessera_bridge STATIC IMPORTED GLOBAL)
set_target_properties(tessera_bridge PROPERTIES
  IMPORTED_LOCATION "${TESSERA_BRIDGE_LIB}")
add_dependencies(tessera_bridge tessera_bridge_cargo)

find_package(Threads REQUIRED)

# tessera_link_rust_bridge(<target>): call BEFORE linking clang-cpp/LLVM.
function(tessera_link_rust_bridge target)
  add_dependencies(${target} tessera_bridge_cargo)
  # The generated headers appear during the build; include them by path
  # (an imported target may not carry a not-yet-existing include directory).
  target_include_directories(${target} SYSTEM PRIVATE "${TESSERA_BRIDGE_INCLUDE}")
  target_link_libraries(${target} PRIVATE tessera_bridge)
  target_link_options(${target} PRIVATE
    "LINKER:--exclude-libs,libtessera_bridge.a"
    "LINKER:--gc-sections")
  # Rust std's native dependencies (rustc --print native-static-libs).
  target_link_libraries(${target} PRIVATE Threads::Threads dl m rt util)
  # Relink when cargo produced a new archive.
  set_property(TARGET ${target} APPEND PROPERTY LINK_DEPENDS "${TESSERA_BRIDGE_LIB}")
endfunction()
