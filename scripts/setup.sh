#!/bin/sh
# Installs the Debian packages Tessera needs when they are missing.
# As root it runs apt-get; otherwise it prints the exact command and fails.
# Usage: scripts/setup.sh <package>...
set -eu
missing=""
for p in "$@"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing="$missing $p"
  fi
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" -eq 0 ]; then
  echo "setup: installing$missing" >&2
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q $missing
else
  echo "setup: missing Debian packages:$missing" >&2
  echo "setup: run:  sudo apt-get update && sudo apt-get install -y$missing" >&2
  exit 1
fi
