#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds Quire (release with debug info) and
# starts it. Arguments are passed to the program.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup-debian.sh
cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
cmake --build build/release --parallel "$(nproc)"
if (($# == 0)); then set -- --help; fi
exec build/release/app/cli/quire-cli "$@"
