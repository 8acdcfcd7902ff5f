#!/bin/sh
# Regenerates tests/ir/programs/*.ir.json, the region IR of tests/programs/ as the
# plugin extracts it (the Rust tests load these files without clang). Needs `make build`.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=tests/ir/programs
rm -f "$out"/*.ir.json
mkdir -p "$out"
tmp=$(mktemp -d)
for f in tests/programs/*.c tests/programs/*.cpp; do
  case $f in *.cpp) cc=clang++-19 ;; *) cc=clang-19 ;; esac
  $cc -fopenmp -fplugin=target/release/tessera_plugin.so -fplugin-arg-tessera-dump-ir=$out \
      -fplugin-arg-tessera-out-dir="$tmp" -c "$f" -o /dev/null 2>/dev/null
done
rm -rf "$tmp"
rm -f "$out"/*.data.json  # data directives: not fixtures of the region pipeline
# The region's absolute path (`source`) would tie the fixtures to this checkout's
# location; without it, kernel names hash `location.file` (crates/compiler region_name).
sed -i '/^  "source": /d' "$out"/*.ir.json
ls "$out"
