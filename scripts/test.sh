#!/usr/bin/env bash
# Sets up a Debian 12 machine, builds Quire with AddressSanitizer and
# UndefinedBehaviorSanitizer, and runs every test that needs no GPU.
#   scripts/test.sh                 sanitized build in build/test
#   scripts/test.sh --no-sanitize   plain build in build/test-plain (faster)
#   scripts/test.sh --no-package    skip building and installing the packages
#   scripts/test.sh --no-fuzz       skip the fuzz run (scripts/fuzz.sh 30)
#   scripts/test.sh -- <ctest args> extra arguments for ctest (e.g. -L cache)
# After the tests, scripts/fuzz.sh runs every fuzz target for 30 s, and
# scripts/package-test.sh builds the Debian package, installs
# it, runs the installed programs and removes it again.
set -euo pipefail
cd "$(dirname "$0")/.."

sanitize=ON
package=1
fuzz=1
build_dir=build/test
ctest_args=()
while (($#)); do
  case "$1" in
    --no-sanitize) sanitize=OFF; build_dir=build/test-plain ;;
    --no-package) package=0 ;;
    --no-fuzz) fuzz=0 ;;
    --) shift; ctest_args=("$@"); break ;;
    *) echo "usage: scripts/test.sh [--no-sanitize] [--no-package] [--no-fuzz] [-- ctest arguments]" >&2; exit 2 ;;
  esac
  shift
done

scripts/setup-debian.sh
jobs=$(nproc)
# Unity batches (cmake/QuireUnity.cmake) cut the cold build to about a third.
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DQUIRE_SANITIZE="$sanitize" -DQUIRE_WARNINGS_AS_ERRORS=ON -DCMAKE_UNITY_BUILD=ON
cmake --build "$build_dir" --parallel "$jobs"

# Leak checking stays on; Qt's own one-time allocations are not reported.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export QT_QPA_PLATFORM=offscreen
(cd "$build_dir" && ctest --output-on-failure --parallel "$jobs" --label-exclude "gpu|release" "${ctest_args[@]}")

if ((fuzz)); then
  scripts/fuzz.sh 30
fi

if ((package)); then
  scripts/package-test.sh
fi
