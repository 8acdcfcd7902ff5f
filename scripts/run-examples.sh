#!/bin/sh
# The main job until `tessera bench` exists: compiles every program in examples/
# with `tessera cc`, runs it on the emulated device, and prints what ran where from
# the runtime report. Figures: bytes are exact (counted by the runtime);
# kernel_wall_s is measured here (emulation on this machine, not FPGA time).
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/target/examples"
mkdir -p "$out"
report="$out/report.jsonl"
rm -f "$report"
status=0
for src in "$root"/examples/*.c; do
  name=$(basename "$src" .c)
  "$root/target/release/tessera" cc -O2 "$src" -o "$out/$name" -lm
  if ! TESSERA_DEVICE=emu TESSERA_REPORT="$report" TESSERA_CACHE_DIR="$root/target/tessera-cache" "$out/$name"; then
    echo "$name: FAILED" >&2
    status=1
  fi
done
python3 - "$report" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print()
print(f"{'region':34} {'kernel':34} {'device':6} {'to device (B)':>14} {'from device (B)':>16} {'emu wall (s)':>12}")
for r in rows:
    region = r["region"].split("/")[-1]
    wall = r.get("kernel_wall_s")
    wall = f"{wall:.4f}" if wall is not None else "-"
    print(f"{region:34} {str(r['kernel']):34} {r['device']:6} {r['bytes_to_device']:>14} {r['bytes_from_device']:>16} {wall:>12}")
    if r["reason"]:
        print(f"    reason: {r['reason']}")
print("\nbytes: exact (counted by the runtime); emu wall: measured here, software emulation, not FPGA time")
PY
exit $status
