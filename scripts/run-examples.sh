#!/bin/sh
# The main job until `tessera bench` exists: compiles every program in examples/
# with `tessera cc`, runs it on the emulated device, and prints what ran where from
# the runtime report. Figures: bytes and bursts are exact (counted by the runtime
# and the emulated memory ports); kernel_wall_s is measured here (emulation on this
# machine, not FPGA time).
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
print(f"{'region':22} {'kernel':28} {'device':6} {'to dev (B)':>11} {'from dev (B)':>12} {'DDR read (B)':>12} {'DDR write (B)':>13} {'bursts':>9} {'emu wall (s)':>12}")
for r in rows:
    region = r["region"].split("/")[-1]
    fmt = lambda v: "-" if v is None else str(v)
    wall = r.get("kernel_wall_s")
    wall = f"{wall:.4f}" if wall is not None else "-"
    print(f"{region:22} {str(r['kernel']):28} {r['device']:6} {r['bytes_to_device']:>11} {r['bytes_from_device']:>12} "
          f"{fmt(r.get('ddr_read_bytes')):>12} {fmt(r.get('ddr_write_bytes')):>13} {fmt(r.get('bursts')):>9} {wall:>12}")
    if r["reason"]:
        print(f"    reason: {r['reason']}")
print("\nbytes and bursts: exact (counted by the runtime and the emulated memory ports);")
print("emu wall: measured here (software emulation on this machine), not FPGA time")
PY
exit $status
