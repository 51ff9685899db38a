#!/usr/bin/env bash
# Nsight Compute's time for every kernel of a short prefill and three decode
# steps (launched one by one, no graphs) on the 8B-shaped models that
# gpu-bench.sh makes: where a decode step's time goes. CSV under $1.
#   gpu-profile.sh OUTPUT_FOLDER [MODEL_FOLDER]
set -uo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?usage: gpu-profile.sh OUTPUT_FOLDER [MODEL_FOLDER]}
models=${2:-/tmp/quire-models}
mkdir -p "$out"
prompt=$(seq -s, 10 41)
for name in llama-8b-exl2-4.0 llama-8b-fp16 llama-8b-exl3-4.0; do
  dir="$models/$name"
  while [[ ! -f "$dir/.complete" && -n "${QUIRE_MODEL_MAKER:-}" ]] &&
        kill -0 "$QUIRE_MODEL_MAKER" 2>/dev/null && (( $(step_budget 2) > 1 )); do
    sleep 1
  done
  start=$SECONDS
  timeout "$(step_budget 60)" ncu --clock-control none --metrics gpu__time_duration.sum \
    --csv --print-units base --launch-count 1600 \
    quire-cli generate "$dir" --devices cuda --tokens "$prompt" --max-new 3 --greedy \
    --ignore-eos --no-step-graphs >"$out/ncu-$name.csv" 2>"$out/ncu-$name.log"
  echo "ncu $name: exit $?, $((SECONDS - start)) s, $(grep -c gpu__time_duration "$out/ncu-$name.csv") kernels"
done
