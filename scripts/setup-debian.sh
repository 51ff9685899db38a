#!/usr/bin/env bash
# Installs the Debian 12 packages Quire needs to build and test. Idempotent:
# packages already present are skipped, and nothing runs apt when all are.
set -euo pipefail

packages=(
  # toolchain
  build-essential cmake ninja-build pkg-config ccache git python3
  # libraries
  qt6-base-dev qt6-base-dev-tools libqt6sql6-sqlite libgl-dev
  libb2-dev libsentencepiece-dev nlohmann-json3-dev libcli11-dev
  qt6-charts-dev libqt6opengl6-dev qt6-qpa-plugins
  # packaging and its checks
  dpkg-dev file desktop-file-utils appstream
  # scripts/screenshots.sh
  xvfb xauth
)

missing=()
for package in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  echo "setup: all ${#packages[@]} Debian packages are present"
  exit 0
fi

echo "setup: installing ${missing[*]}"
if [[ $(id -u) -eq 0 ]]; then
  run_as_root=()
elif command -v sudo >/dev/null 2>&1; then
  run_as_root=(sudo)
else
  echo "setup: these packages are missing and this user cannot install them:" >&2
  echo "  ${missing[*]}" >&2
  echo "Install them as root (apt-get install ...) and run this command again." >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
"${run_as_root[@]}" apt-get update -q
"${run_as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
