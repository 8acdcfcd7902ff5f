#!/bin/sh
# Regenerates the paper-mode generator's fixtures (crates/hls/tests/): the region IR
# of bench/stencils/*.c at small, odd sizes (tile edges, partial tiles and misaligned
# rows in every dimension; tests/ir/bench/ holds the same stencils at the paper's
# sizes), and of src/*.c, regions that exercise other paths of the generator.
# Usage, from the repository root:
#   tests/ir/small/regen.sh [path/to/tessera_plugin.so]
set -eu
PLUGIN=$(realpath "${1:-target/release/tessera_plugin.so}")
CLANG=${TESSERA_CLANG:-clang-19}
for f in bench/stencils/*.c; do
  b=$(basename "$f" .c)
  case $b in
    1D*) set -- -DN=1999 ;;
    2D*) set -- -DNI=37 -DNJ=53 ;;
    3D*) set -- -DNI=11 -DNJ=13 -DNK=29 ;;
  esac
  tmp=$(mktemp -d)
  "$CLANG" -fopenmp -fplugin="$PLUGIN" -fplugin-arg-tessera-dump-ir="$tmp" \
    -fplugin-arg-tessera-out-dir="$tmp/kernels" "$@" -c "$f" -o /dev/null
  cp "$tmp"/*.ir.json "tests/ir/small/$b.ir.json"  # one region per source file
  rm -rf "$tmp"
done
for f in tests/ir/small/src/*.c; do
  b=$(basename "$f" .c)
  tmp=$(mktemp -d)
  (cd tests/ir/small/src && "$CLANG" -fopenmp -fplugin="$PLUGIN" -fplugin-arg-tessera-dump-ir="$tmp" \
    -fplugin-arg-tessera-out-dir="$tmp/kernels" -c "$b.c" -o /dev/null)
  cp "$tmp"/*.ir.json "tests/ir/small/$b.ir.json"
  rm -rf "$tmp"
done
