#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds Quire (release with debug info) and
# starts the desktop application. With no model configured yet it opens the
# bundled demo model; arguments are passed to the program (see quire --help).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-debian.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
# Only the program: its target brings what it needs at run time (the CUDA
# backend plugin, through the loader's dependency); the tests and tools are
# scripts/test.sh's to build.
cmake --build build/release --parallel "$(nproc)" --target quire
exec build/release/app/gui/quire --demo "$@"
