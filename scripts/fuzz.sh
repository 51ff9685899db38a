#!/usr/bin/env bash
# Builds the libFuzzer targets of fuzz/ with clang (AddressSanitizer and
# UndefinedBehaviorSanitizer on, see cmake/QuireFuzz.cmake) in build/fuzz, and
# runs each for SECONDS (default 60). Fails when any target finds a crash, a
# leak, a sanitizer report or an input slower than 25 s; the input is kept in
# build/fuzz/artifacts/<target>/ and the command that replays it is printed.
#   scripts/fuzz.sh [SECONDS]
# Each target starts from its seeds in fuzz/corpus/<target>/ and from what
# earlier runs found, kept in build/fuzz/corpus/<target>/.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-60}
if ! [[ $seconds =~ ^[0-9]+$ ]] || ((seconds == 0)); then
  echo "usage: scripts/fuzz.sh [SECONDS]  (seconds per fuzz target, default 60)" >&2
  exit 2
fi
for program in clang clang++; do
  if ! command -v "$program" >/dev/null 2>&1; then
    echo "fuzz: $program is missing; scripts/setup-debian.sh installs it" >&2
    exit 1
  fi
done

build_dir=build/fuzz
# Warnings are enforced by the GCC builds; clang's differ, and a fuzz run
# should not stop at one.
mkdir -p "$build_dir"
CC=clang CXX=clang++ cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DQUIRE_FUZZ=ON -DQUIRE_CUDA=OFF -DQUIRE_BUILD_TESTS=OFF -DQUIRE_WARNINGS_AS_ERRORS=OFF \
  -DCMAKE_UNITY_BUILD=ON \
  >"$build_dir/configure.log" 2>&1 || { cat "$build_dir/configure.log" >&2; exit 1; }
cmake --build "$build_dir" --target quire_fuzzers --parallel "$(nproc)"

mapfile -t fuzzers <"$build_dir/fuzzers.txt"
if ((${#fuzzers[@]} == 0)); then
  echo "fuzz: no fuzz targets are built yet (fuzz/*.cpp)"
  exit 0
fi

# The targets run side by side, as many at once as there are cores: each is
# one process, and CI's two cores would otherwise idle through half the run.
run_one() {
  local fuzzer=$1
  local seeds=fuzz/corpus/$fuzzer
  local found=$build_dir/corpus/$fuzzer
  local artifacts=$build_dir/artifacts/$fuzzer
  local log=$build_dir/$fuzzer.log
  mkdir -p "$found" "$artifacts"
  [[ -d $seeds ]] || seeds=
  if "$build_dir/fuzz/$fuzzer" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix="$artifacts/" "$found" ${seeds:+"$seeds"} >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_units|^Done ' "$log" | sed "s/^/fuzz: $fuzzer: /"
  else
    {
      tail -n 60 "$log"
      echo "fuzz: $fuzzer FAILED; the log is $log, the input in $artifacts/."
      echo "fuzz: replay it with: $build_dir/fuzz/$fuzzer $artifacts/<file>"
    } >&2
    return 1
  fi
}

slots=$(nproc)
declare -A running=()  # pid -> fuzzer
failed=()
reap() {
  local pid
  wait -n -p pid "${!running[@]}" || failed+=("${running[$pid]}")
  unset "running[$pid]"
}
echo "fuzz: ${#fuzzers[@]} targets, ${seconds} s each, $slots at a time"
for fuzzer in "${fuzzers[@]}"; do
  while ((${#running[@]} >= slots)); do reap; done
  run_one "$fuzzer" &
  running[$!]=$fuzzer
done
while ((${#running[@]})); do reap; done

if ((${#failed[@]})); then
  echo "fuzz: ${#failed[@]} of ${#fuzzers[@]} fuzz targets failed: ${failed[*]}" >&2
  exit 1
fi
echo "fuzz: ${#fuzzers[@]} fuzz targets ran ${seconds} s each without a failure"
