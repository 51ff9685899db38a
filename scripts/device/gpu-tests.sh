#!/usr/bin/env bash
# Runs every GPU test program of the kit, each with its log under $1:
# the loader, the op suite (every CUDA op against the CPU backend) and the
# engine end to end (logits, greedy tokens, logical devices, step graphs).
set -uo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?usage: gpu-tests.sh OUTPUT_FOLDER}
mkdir -p "$out"
failed=0
for test in "$kit"/bin/test_*; do
  name=$(basename "$test")
  start=$SECONDS
  if timeout "$(step_budget 150)" "$test" >"$out/$name.log" 2>&1; then
    echo "PASS $name ($((SECONDS - start)) s)"
    # A suite that could not reach the GPU skips rather than fails: say so.
    grep -E "^SKIP" "$out/$name.log" | head -5
  else
    echo "FAIL $name, exit $? ($((SECONDS - start)) s, log: $name.log)"
    failed=1
    grep -E "^(FAIL|QFATAL|QWARN)|Loc:" "$out/$name.log" | head -30
  fi
done
exit "$failed"
