#!/usr/bin/env bash
# Nsight Compute's time for every kernel of a short prefill and three decode
# steps (launched one by one, no graphs) on the 8B-shaped models that
# gpu-bench.sh makes: where a decode step's time goes, once per kernel
# variant of QUIRE_KIT_VARIANTS (env.sh), the variants of one model one
# after the other. CSV under $1, ncu-MODEL-VARIANT.csv.
#   gpu-profile.sh OUTPUT_FOLDER [MODEL_FOLDER [MODEL...]]
# Models are folder names under MODEL_FOLDER (default: the EXL2, FP16 and
# EXL3 ones).
set -uo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?usage: gpu-profile.sh OUTPUT_FOLDER [MODEL_FOLDER [MODEL...]]}
models=${2:-/tmp/quire-models}
shift $(( $# < 2 ? $# : 2 ))
names=("$@")
(( ${#names[@]} )) || names=(llama-8b-exl2-4.0 llama-8b-fp16 llama-8b-exl3-4.0)
mkdir -p "$out"
prompt=$(seq -s, 10 41)
for name in "${names[@]}"; do
  dir="$models/$name"
  while [[ ! -f "$dir/.complete" && -n "${QUIRE_MODEL_MAKER:-}" ]] &&
        kill -0 "$QUIRE_MODEL_MAKER" 2>/dev/null && (( $(step_budget 2) > 1 )); do
    sleep 1
  done
  # The variants of a model are a comparison: all of them or none.
  read -ra variants <<<"$(variants_for "$name" profile)"
  needed=$(( ${#variants[@]} * 30 ))
  if (( $(step_budget "$needed") < needed )); then
    echo "ncu $name skipped: $(step_budget "$needed") s left, its ${#variants[@]} runs need about $needed"
    continue
  fi
  for variant in "${variants[@]}"; do
    start=$SECONDS
    QUIRE_CUDA_LINEAR=$variant timeout "$(step_budget 60)" ncu --clock-control none \
      --metrics gpu__time_duration.sum --csv --print-units base --launch-count 1600 \
      quire-cli generate "$dir" --devices cuda --tokens "$prompt" --max-new 3 --greedy \
      --ignore-eos --no-step-graphs >"$out/ncu-$name-$variant.csv" 2>"$out/ncu-$name-$variant.log"
    echo "ncu $name $variant: exit $?, $((SECONDS - start)) s," \
      "$(grep -c gpu__time_duration "$out/ncu-$name-$variant.csv") kernels"
  done
done
