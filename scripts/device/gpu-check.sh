#!/usr/bin/env bash
# Everything one GPU session checks, in order, within a deadline, every
# kernel variant of QUIRE_KIT_VARIANTS (env.sh) side by side: the test
# programs, the benchmark, Nsight Compute's kernel times, compute-sanitizer,
# then a table of the benchmark by variant (kit_summary.py, also in
# $1/summary.md). The models are made on the CPU in the background
# meanwhile. Logs go to a work folder, packed into $1/gpu-logs.tar.gz after
# each step, so a run stopped part way still returns what it did.
#   gpu-check.sh OUTPUT_FOLDER [SECONDS] [STEPS]
#   gpu-check.sh --dry-run OUTPUT_FOLDER [SECONDS] [STEPS]   (gpu-dry-run.sh)
# steps: tests (all), tests=ops or tests=engine (gpu-tests.sh), sanitize (all
# runs) or sanitize=TOOL:CLASS[:SECONDS[:VARIANT]]+...,
# bench (all pairs) or bench=PAIR+PAIR... (gpu-bench.sh), profile (three
# models) or profile=MODEL+MODEL... (gpu-profile.sh). A step may appear more
# than once. The default, in order of value, for 480 s on one GPU: every
# test program and the linear products of every variant, the headline pairs,
# the EXL2 profile, memcheck of the linear products of every variant but the
# default, the engine's tests with those variants, GPTQ and FP8, racecheck of
# sampling, the FP16 profile; what the deadline reaches. Dense weights'
# pairs and the profiles compare only the first two variants (env.sh).
set -uo pipefail
here=$(dirname "$0")
if [[ "${1:-}" == --dry-run ]]; then
  shift
  exec "$here/gpu-dry-run.sh" "$@"
fi
out=${1:?usage: gpu-check.sh OUTPUT_FOLDER [SECONDS] [STEPS]}
# The last seconds are kept for the summary and the last pack.
export QUIRE_DEADLINE=$(( $(date +%s) + ${2:-480} - 5 ))
work=${QUIRE_KIT_WORK:-/tmp/gpu-check}
models=${QUIRE_KIT_MODELS:-/tmp/quire-models}
source "$here/env.sh"
memchecks=()
for variant in "${kit_variants[@]:1}"; do memchecks+=("memcheck:CudaLinearTest:90:$variant"); done
default_steps="tests=ops,bench=exl2:4.0/q4+fp16/fp16,profile=llama-8b-exl2-4.0"
(( ${#memchecks[@]} )) && default_steps+=",sanitize=$(IFS=+; echo "${memchecks[*]}")"
default_steps+=",tests=engine,bench=gptq/q4+fp8/fp16"
default_steps+=",sanitize=racecheck:CudaSamplingTest:240,profile=llama-8b-fp16"
steps=${3:-$default_steps}
mkdir -p "$out" "$work"
pack() { tar -czf "$out/gpu-logs.tar.gz" -C "$work" . 2>/dev/null; }
{ uname -a; nvidia-smi; nvidia-smi -q -d CLOCK,POWER | head -40; nproc; free -g; } >"$work/machine.txt" 2>&1
head -12 "$work/machine.txt" | grep -E "NVIDIA|Driver|MiB"
ldd "$kit/lib/quire/libquire_cuda.so" "$kit"/bin/* | grep "not found" | sort -u
echo "variants: $QUIRE_KIT_VARIANTS; steps: $steps"

# The formats the bench and profile steps need, in the order they need them.
formats=()
for step in ${steps//,/ }; do
  named=${step#*=}
  case $step in
    bench) formats+=(exl2:4.0 fp16 gptq fp8 exl3:4.0) ;;
    bench=*) for pair in ${named//+/ }; do formats+=("${pair%%/*}"); done ;;
    profile) formats+=(exl2:4.0 fp16 exl3:4.0) ;;
    profile=*)
      for name in ${named//+/ }; do name=${name#llama-8b-}; formats+=("${name/-/:}"); done ;;
  esac
done
formats=("${formats[@]/#reference/fp16}")
if (( ${#formats[@]} )); then
  # Its own process group, so that what is still making when the run ends
  # is stopped with it.
  setsid nice -n 5 "$here/gpu-bench.sh" --make-only "$models" "${formats[@]}" \
    >"$work/make-models.log" 2>&1 &
  export QUIRE_MODEL_MAKER=$!
fi
for step in ${steps//,/ }; do
  # A step started with no time left would only be cut: say so instead.
  if (( $(step_budget 100000) <= 1 )); then
    echo "== $step skipped: the deadline has passed"
    continue
  fi
  echo "== $step (at $SECONDS s, $(step_budget 100000) s left)"
  arguments=()
  [[ $step == *=* ]] && IFS=+ read -ra arguments <<<"${step#*=}"
  case ${step%%=*} in
    tests) "$here/gpu-tests.sh" "$work/tests" "${arguments[@]}" ;;
    sanitize) "$here/gpu-sanitize.sh" "$work/sanitize" "${arguments[@]}" ;;
    bench) QUIRE_BENCH_PAIRS="${arguments[*]}" "$here/gpu-bench.sh" "$work/bench" "$models" ;;
    profile) "$here/gpu-profile.sh" "$work/profile" "$models" "${arguments[@]}" ;;
    *) echo "unknown step ${step%%=*}: tests, sanitize, bench or profile" ;;
  esac
  pack
done
echo "== summary (at $SECONDS s)"
python3 "$here/kit_summary.py" "$work/bench" --variants "$QUIRE_KIT_VARIANTS" | tee "$out/summary.md"
for csv in "$work"/profile/ncu-*.csv; do
  [[ -f $csv ]] && python3 "$here/ncu_summary.py" "$csv" --top 10 >"${csv%.csv}.md" 2>&1
done
[[ -n "${QUIRE_MODEL_MAKER:-}" ]] && kill -- "-$QUIRE_MODEL_MAKER" 2>/dev/null
echo "== done at $SECONDS s"
pack
