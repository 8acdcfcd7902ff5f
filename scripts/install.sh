#!/bin/sh
# Installs a built Tessera (`make build`: target/release/) into PREFIX, relocatably:
#
#   $PREFIX/bin/tessera                              the driver (tessera cc, c++, bitstream, ...)
#   $PREFIX/lib/libtessera_rt.so                     the runtime
#   $PREFIX/lib/tessera_plugin.so                    the clang-19 plugin
#   $PREFIX/include/tessera/tessera_rt.h             the runtime's C ABI
#   $PREFIX/include/tessera/tessera_*.h              the HLS emulation shim headers (host/include/;
#                                                   the runtime embeds its own copies, these are
#                                                   for reading and for compiling kernels by hand)
#   $PREFIX/share/tessera/hls-headers/               Xilinx's ap_int.h & co. (when fetched by
#                                                   `make hls-headers`; the runtime finds them there)
#   $PREFIX/lib/cmake/Tessera/TesseraConfig.cmake    find_package(Tessera CONFIG)
#   $PREFIX/lib/cmake/Tessera/TesseraConfigVersion.cmake   (the workspace Cargo.toml's version)
#   $PREFIX/lib/cmake/Tessera/TesseraBitstream.cmake tessera_add_bitstream()
#
# Nothing in the installed files names PREFIX: `tessera cc` finds the plugin and the
# runtime in <its own directory>/../lib, the CMake package finds everything relative to
# its own directory, so the tree may be moved after installation.
#
# Usage: scripts/install.sh [PREFIX]     (default /usr/local; `make install PREFIX=...`)
set -eu
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
PREFIX="${1:-/usr/local}"
RELEASE="${TESSERA_RELEASE_DIR:-$ROOT/target/release}"

for f in tessera libtessera_rt.so tessera_plugin.so; do
  if [ ! -f "$RELEASE/$f" ]; then
    echo "install: $RELEASE/$f is missing: run \`make build\` first (or \`make install\`)" >&2
    exit 1
  fi
done

# [workspace.package] version = "x.y.z"
VERSION="$(sed -n '/^\[workspace\.package\]/,/^\[/ s/^version *= *"\([^"]*\)".*/\1/p' "$ROOT/Cargo.toml")"
case "$VERSION" in
  [0-9]*.[0-9]*.[0-9]*) ;;
  *) echo "install: cannot read [workspace.package] version from $ROOT/Cargo.toml" >&2; exit 1 ;;
esac

CMAKEDIR="$PREFIX/lib/cmake/Tessera"
mkdir -p "$PREFIX/bin" "$PREFIX/lib" "$CMAKEDIR" "$PREFIX/include/tessera" "$PREFIX/share/tessera"

install -m 755 "$RELEASE/tessera" "$PREFIX/bin/tessera"
install -m 755 "$RELEASE/libtessera_rt.so" "$PREFIX/lib/libtessera_rt.so"
install -m 755 "$RELEASE/tessera_plugin.so" "$PREFIX/lib/tessera_plugin.so"
install -m 644 "$ROOT/runtime/include/tessera_rt.h" "$ROOT"/host/include/*.h "$PREFIX/include/tessera/"

if [ -f "$ROOT/target/hls-headers/ap_int.h" ]; then
  rm -rf "$PREFIX/share/tessera/hls-headers"
  cp -R "$ROOT/target/hls-headers" "$PREFIX/share/tessera/hls-headers"
else
  echo "install: note: no vendor headers in target/hls-headers (make hls-headers); wide-port" \
       "kernels on the emulated device then need TESSERA_HLS_HEADERS" >&2
fi

install -m 644 "$ROOT/cmake/TesseraConfig.cmake" "$ROOT/cmake/TesseraBitstream.cmake" "$CMAKEDIR/"
sed "s/@TESSERA_VERSION@/$VERSION/" "$ROOT/cmake/TesseraConfigVersion.cmake.in" > "$CMAKEDIR/TesseraConfigVersion.cmake"

echo "install: Tessera $VERSION in $PREFIX"
