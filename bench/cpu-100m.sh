#!/usr/bin/env bash
# CPU benchmark of a Llama-shaped synthetic model of about 96M parameters
# (hidden 768, 12 layers, 12 heads with 4 K/V heads, MLP 2560, vocabulary
# 4096) in FP16 and EXL2 4.0 bpw. Writes bench/results/<date>-cpu-100m.json
# and a Markdown table beside it, naming the date, machine and commit.
#   bench/cpu-100m.sh [QUIRE_CLI] [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
models=${2:-${TMPDIR:-/tmp}/quire-bench-models}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }

shape=(--arch llama --hidden 768 --layers 12 --heads 12 --kv-heads 4 --intermediate 2560
       --vocab 4096 --max-position-embeddings 8192 --seed 1)
mkdir -p "$models" bench/results
runs=()
for format in fp16 exl2:4.0; do
  dir="$models/llama-96m-${format/:/-}"
  [[ -f "$dir/config.json" ]] || "$cli" make-model "$dir" "${shape[@]}" --format "$format"
  out=$(mktemp)
  echo "bench: $dir" >&2
  "$cli" bench "$dir" --repeat 5 --json > "$out"
  runs+=("$out")
done

source bench/results_base.sh
base=$(results_base cpu-100m)
python3 bench/summarize.py --commit "$(git rev-parse --short HEAD)" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)" --json "$base.json" --table "$base.md" "${runs[@]}"
rm -f "${runs[@]}"
echo "bench: wrote $base.json and $base.md" >&2
