#!/usr/bin/env bash
# compute-sanitizer over the CUDA op suite: memcheck (out-of-bounds and
# misaligned accesses, leaks) over every class of it, racecheck
# (shared-memory hazards) over the attention/KV, sampling and linear kernels.
# One class per run: the suite's main runs several classes in child
# processes, and the sanitizer then waits for the parent, which never
# touches the GPU, until it gives up. A run may name a kernel variant
# (QUIRE_CUDA_LINEAR, env.sh); without one it runs the default. Logs under $1.
#   gpu-sanitize.sh OUTPUT_FOLDER [TOOL:CLASS[:SECONDS[:VARIANT]] ...]
set -uo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?usage: gpu-sanitize.sh OUTPUT_FOLDER [TOOL:CLASS ...]}
shift
runs=("$@")
# racecheck over the sampling suite took more than 90 s on an H200. The
# linear suite's racecheck covers the EXL3 product's shared-memory ring;
# memcheck of it runs once per kernel variant.
if (( ! ${#runs[@]} )); then
  runs=(memcheck:CudaOpsTest memcheck:CudaSamplingTest memcheck:CudaKvTest)
  for variant in "${kit_variants[@]}"; do runs+=("memcheck:CudaLinearTest:90:$variant"); done
  runs+=(racecheck:CudaSamplingTest:240 racecheck:CudaKvTest:120 racecheck:CudaLinearTest:150)
fi
mkdir -p "$out"
failed=0
for run in "${runs[@]}"; do
  IFS=: read -r tool class cap variant <<<"$run"
  variant=${variant:-$default_variant}
  extra=()
  [[ $tool == memcheck ]] && extra=(--leak-check full)
  log="$out/$tool-$class-$variant.log"
  # A run cut off by the deadline says nothing: not started with less than a
  # third of its time left.
  if (( $(step_budget "${cap:-90}") * 3 < ${cap:-90} )); then
    echo "$tool $class ($variant) skipped: $(step_budget "${cap:-90}") s left of its ${cap:-90}"
    continue
  fi
  start=$SECONDS
  QUIRE_CUDA_LINEAR=$variant QUIRE_TEST_CLASSES=$class timeout "$(step_budget "${cap:-90}")" compute-sanitizer --tool "$tool" \
    "${extra[@]}" --error-exitcode 3 "$kit/bin/test_kernels_cuda_ops" >"$log" 2>&1
  status=$?
  summary=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|^Totals" "$log" | tr -s ' ' | paste -sd ';')
  echo "$tool $class ($variant): exit $status, $((SECONDS - start)) s; ${summary:-no summary}"
  (( status == 0 )) || failed=1
  if grep -q "No attachable process" "$log"; then
    echo "the sanitizer could not attach; the remaining runs would not either"
    exit 1
  fi
done
exit "$failed"
