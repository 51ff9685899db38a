#!/usr/bin/env bash
# CPU benchmark of a Llama-shaped synthetic model of about 96M parameters
# (hidden 768, 12 layers, 12 heads with 4 K/V heads, MLP 2560, vocabulary
# 4096) in FP16 and EXL2 4.0 bpw. Writes bench/results/<date>-cpu-100m.json
# and a Markdown table beside it, naming the date, machine and commit.
#   bench/cpu-100m.sh [QUIRE_CLI] [MODEL_DIR]
# QUIRE_BENCH_FORMATS lists other make-model formats ("fp16 exl3:4.0"), and
# QUIRE_BENCH_NAME names the results (default cpu-100m); QUIRE_BENCH_ARGS
# replaces the bench options (default --repeat 5).
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
models=${2:-${TMPDIR:-/tmp}/quire-bench-models}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }

shape=(--arch llama --hidden 768 --layers 12 --heads 12 --kv-heads 4 --intermediate 2560
       --vocab 4096 --max-position-embeddings 8192 --seed 1)
mkdir -p "$models" bench/results
runs=()
read -r -a formats <<<"${QUIRE_BENCH_FORMATS:-fp16 exl2:4.0}"
read -r -a bench_args <<<"${QUIRE_BENCH_ARGS:---repeat 5}"
for format in "${formats[@]}"; do
  dir="$models/llama-96m-${format//:/-}"
  [[ -f "$dir/config.json" ]] || "$cli" make-model "$dir" "${shape[@]}" --format "$format"
  out=$(mktemp)
  echo "bench: $dir" >&2
  "$cli" bench "$dir" "${bench_args[@]}" --json > "$out"
  runs+=("$out")
done

source bench/results_base.sh
base=$(results_base "${QUIRE_BENCH_NAME:-cpu-100m}")
python3 bench/summarize.py --commit "$(git rev-parse --short HEAD)" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)" --json "$base.json" --table "$base.md" "${runs[@]}"
rm -f "${runs[@]}"
echo "bench: wrote $base.json and $base.md" >&2
