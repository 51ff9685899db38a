#!/usr/bin/env bash
# compute-sanitizer over the CUDA op suite: memcheck (out-of-bounds and
# misaligned accesses, leaks) over every op, racecheck (shared-memory
# hazards) over the attention, KV and sampling kernels. Logs under $1.
set -uo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?usage: gpu-sanitize.sh OUTPUT_FOLDER}
mkdir -p "$out"
ops="$kit/bin/test_kernels_cuda_ops"
failed=0
run() {
  local name=$1 cap=$2
  shift 2
  local start=$SECONDS
  timeout "$(step_budget "$cap")" "$@" >"$out/$name.log" 2>&1
  local status=$?
  local summary
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/$name.log" | sort | uniq -c | tr -s ' ' | head -5)
  echo "$name: exit $status, $((SECONDS - start)) s; ${summary:-no summary}"
  (( status == 0 )) || failed=1
}
# The suite's main runs each test class in a child process of its own; the
# sanitizer follows children (--target-processes all).
run memcheck 150 compute-sanitizer --tool memcheck --target-processes all --leak-check full \
  --error-exitcode 3 "$ops"
QUIRE_TEST_CLASSES=CudaKvTest,CudaSamplingTest \
  run racecheck 90 compute-sanitizer --tool racecheck --target-processes all \
  --error-exitcode 3 "$ops"
exit "$failed"
