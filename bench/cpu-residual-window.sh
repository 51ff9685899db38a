#!/usr/bin/env bash
# What the residual window costs in decode speed on the CPU: the ~96M Llama
# shape of cpu-kv-codings.sh decoding at a 4,096-token context with each
# coded cache, its open page read from an FP16 mirror (--residual-window 4,
# the default) and without one (--residual-window 0), the two runs of each
# coding alternating over several rounds. Writes
# bench/results/<date>-cpu-residual-window.json and a Markdown table.
#   bench/cpu-residual-window.sh [QUIRE_CLI] [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
models=${2:-${TMPDIR:-/tmp}/quire-bench-models}
rounds=${QUIRE_BENCH_ROUNDS:-3}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }

llama="$models/llama-96m-fp16"
mkdir -p "$models" bench/results
[[ -f "$llama/config.json" ]] || "$cli" make-model "$llama" --arch llama --hidden 768 --layers 12 \
  --heads 12 --kv-heads 4 --intermediate 2560 --vocab 4096 --max-position-embeddings 8192 \
  --seed 1 --format fp16

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=()
for round in $(seq 1 "$rounds"); do
  for coding in ${QUIRE_BENCH_PAIRS:-q4 q6 fp8 q8}; do
    for window in 0 4; do
      echo "bench: round $round, --cache $coding --residual-window $window" >&2
      out="$work/$coding-$window-$round.json"
      "$cli" bench "$llama" --json --cache "$coding" --residual-window "$window" \
        --decode-contexts 4096 --prefill 512 --batches 1 --repeat 3 --context 8192 >"$out"
      runs+=("$coding:$window=$out")
    done
  done
done

source bench/results_base.sh
base=$(results_base cpu-residual-window)
python3 bench/summarize_residual_window.py --commit "$(git rev-parse --short HEAD)" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)" --json "$base.json" --table "$base.md" "${runs[@]}"
echo "bench: wrote $base.json and $base.md" >&2
