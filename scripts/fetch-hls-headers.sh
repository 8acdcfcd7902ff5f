#!/bin/sh
# Fetches Xilinx's arbitrary-precision headers (ap_int.h, ap_fixed.h, hls_stream.h,
# etc/ap_private.h, ...; Apache-2.0) from the PyPI package hls4ml and unpacks them
# into DEST (default: target/hls-headers), where the runtime finds them for emulation
# kernels that include tessera_wide.h. Never commit them.
#
# Usage: scripts/fetch-hls-headers.sh [DEST]
# Environment: HLS4ML_VERSION (default 1.3.0), PYTHON (default python3).
# Idempotent: does nothing when DEST already holds this version. The new directory is
# assembled next to DEST and renamed into place, so a reader never sees half of it.
set -eu
VERSION="${HLS4ML_VERSION:-1.3.0}"
PYTHON="${PYTHON:-python3}"
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
DEST="${1:-$ROOT/target/hls-headers}"
STAMP="hls4ml-$VERSION"

if [ -f "$DEST/ap_int.h" ] && [ "$(cat "$DEST/VERSION" 2>/dev/null || true)" = "$STAMP" ]; then
  exit 0
fi

mkdir -p "$(dirname "$DEST")"
TMP="$(mktemp -d "$(dirname "$DEST")/.hls-headers.XXXXXX")"
trap 'rm -rf "$TMP"' EXIT INT TERM

echo "fetch-hls-headers: pip download --no-deps hls4ml==$VERSION" >&2
"$PYTHON" -m pip download --quiet --no-deps --disable-pip-version-check \
  --only-binary=:all: -d "$TMP/wheel" "hls4ml==$VERSION" >&2

# Unpack only templates/vivado/ap_types/ (and the package's license) from the wheel.
"$PYTHON" - "$TMP/wheel" "$TMP/out" "$STAMP" <<'EOF'
import os, sys, zipfile, glob
wheel_dir, out, stamp = sys.argv[1:4]
wheels = glob.glob(os.path.join(wheel_dir, "hls4ml-*.whl"))
if len(wheels) != 1:
    sys.exit(f"fetch-hls-headers: expected one hls4ml wheel, found {wheels}")
prefix = "hls4ml/templates/vivado/ap_types/"
n = 0
with zipfile.ZipFile(wheels[0]) as z:
    for info in z.infolist():
        name = info.filename
        if name.startswith(prefix) and not name.endswith("/"):
            rel = name[len(prefix):]
        elif name.endswith(".dist-info/licenses/LICENSE") or name.endswith(".dist-info/LICENSE"):
            rel = "LICENSE"
        else:
            continue
        if rel.startswith("/") or ".." in rel.split("/"):
            sys.exit(f"fetch-hls-headers: refusing path {name}")
        path = os.path.join(out, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with z.open(info) as src, open(path, "wb") as dst:
            dst.write(src.read())
        n += 1
if not os.path.isfile(os.path.join(out, "ap_int.h")):
    sys.exit("fetch-hls-headers: the wheel has no templates/vivado/ap_types/ap_int.h")
with open(os.path.join(out, "VERSION"), "w") as f:
    f.write(stamp + "\n")
with open(os.path.join(out, "README"), "w") as f:
    f.write("Xilinx arbitrary-precision headers (Apache-2.0, see LICENSE), unpacked from the\n"
            f"PyPI package {stamp} (hls4ml/templates/vivado/ap_types/) by\n"
            "scripts/fetch-hls-headers.sh. Generated; do not commit.\n")
print(f"fetch-hls-headers: {n} files", file=sys.stderr)
EOF

# Another run may have finished meanwhile: keep its copy.
if [ -f "$DEST/ap_int.h" ] && [ "$(cat "$DEST/VERSION" 2>/dev/null || true)" = "$STAMP" ]; then
  exit 0
fi
rm -rf "$DEST.old"
if [ -e "$DEST" ]; then mv "$DEST" "$DEST.old"; fi
mv "$TMP/out" "$DEST"
rm -rf "$DEST.old"
echo "fetch-hls-headers: $DEST ($STAMP)" >&2
