#!/bin/sh
# Regenerates the optimizer's region fixtures with the Tessera clang plugin.
# Usage: tests/ir/regen.sh [path/to/tessera_plugin.so]   (from the repository root)
set -eu
PLUGIN=$(realpath "${1:-target/release/tessera_plugin.so}")
CLANG=${TESSERA_CLANG:-clang-19}
dump() { # <out.ir.json> <dir to run in> <source> [defines…]
  out=$1; dir=$2; src=$3; shift 3
  tmp=$(mktemp -d)
  (cd "$dir" && "$CLANG" -fopenmp -fplugin="$PLUGIN" -fplugin-arg-tessera-dump-ir="$tmp" -fplugin-arg-tessera-out-dir="$tmp/kernels" "$@" -c "$src" -o /dev/null)
  cp "$tmp"/*.ir.json "$out"  # one region per source file
  # No absolute path (`source`) in fixtures: it would tie them to this checkout.
  sed -i '/^  "source": /d' "$out"
  rm -rf "$tmp"
}
for f in tests/ir/src/*.c; do
  b=$(basename "$f" .c)
  dump "tests/ir/$b.ir.json" tests/ir/src "$b.c"
done
for f in bench/stencils/*.c; do
  b=$(basename "$f" .c)
  case $b in
    1D*) set -- -DN=16777216 ;;
    2D*) set -- -DNI=4096 -DNJ=4096 ;;
    3D*) set -- -DNI=256 -DNJ=256 -DNK=256 ;;
  esac
  dump "tests/ir/bench/$b.ir.json" . "$f" "$@"
done
