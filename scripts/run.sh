#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds Quire (release with debug info) and
# starts the desktop application. With no model configured yet it opens the
# bundled demo model; arguments are passed to the program (see quire --help).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-debian.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build/release --parallel "$(nproc)"
exec build/release/app/gui/quire --demo "$@"
