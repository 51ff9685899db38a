#!/usr/bin/env bash
# Runs every GPU test program of the kit, each with its log under $1:
# the loader, the op suite (every CUDA op against the CPU backend) and the
# engine end to end (logits, greedy tokens, logical devices, step graphs),
# with the default kernel variant; then, for every other variant of
# QUIRE_KIT_VARIANTS (env.sh), the op suite's linear products and the
# engine again with QUIRE_CUDA_LINEAR set to it (logs NAME-VARIANT.log).
set -uo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?usage: gpu-tests.sh OUTPUT_FOLDER [all|ops|engine]}
# all: both parts; ops: every program with the default variant and the
# linear products with the others; engine: test_engine_cuda with the others.
part=${2:-all}
mkdir -p "$out"
failed=0

# run_test NAME LOG NEEDS ENV... PROGRAM: one program within its step
# budget, started only when the NEEDS seconds it takes (the last GPU runs'
# times) are left, since a suite cut part way says nothing.
run_test() {
  local name=$1 log=$2 needs=$3 start=$SECONDS
  shift 3
  if (( $(step_budget 150) < needs )); then
    echo "NOT RUN $name: $(step_budget 150) s left, it needs about $needs"
    failed=1
    return
  fi
  if timeout "$(step_budget 150)" env "$@" >"$out/$log" 2>&1; then
    echo "PASS $name ($((SECONDS - start)) s)"
    # A suite that could not reach the GPU skips rather than fails: say so.
    grep -E "^SKIP" "$out/$log" | head -5
  else
    echo "FAIL $name, exit $? ($((SECONDS - start)) s, log: $log)"
    failed=1
    grep -E "^(FAIL|QFATAL|QWARN)|Loc:" "$out/$log" | head -30
  fi
}

if [[ $part == all || $part == ops ]]; then
  for test in "$kit"/bin/test_*; do
    name=$(basename "$test")
    needs=45
    [[ $name == test_engine_cuda ]] && needs=60
    [[ $name == test_kernels_cuda_loader ]] && needs=3
    run_test "$name" "$name.log" "$needs" "QUIRE_CUDA_LINEAR=$default_variant" "$test"
  done
  for variant in "${kit_variants[@]:1}"; do
    run_test "test_kernels_cuda_ops CudaLinearTest, $variant" "test_kernels_cuda_ops-$variant.log" \
      20 "QUIRE_CUDA_LINEAR=$variant" QUIRE_TEST_CLASSES=CudaLinearTest "$kit/bin/test_kernels_cuda_ops"
  done
fi
if [[ $part == all || $part == engine ]]; then
  for variant in "${kit_variants[@]:1}"; do
    run_test "test_engine_cuda, $variant" "test_engine_cuda-$variant.log" \
      60 "QUIRE_CUDA_LINEAR=$variant" "$kit/bin/test_engine_cuda"
  done
fi
exit "$failed"
