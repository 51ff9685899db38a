#!/usr/bin/env bash
# CPU benchmark of the cache's key and value codings on the ~96M-parameter
# Llama shape of cpu-100m.sh in FP16: decode at a 4,096-token context with
# each pair (the named ones, and one coarse half at a time), against the
# FP16 cache. Writes bench/results/<date>-cpu-kv-codings.json and a Markdown
# table beside it.
#   bench/cpu-kv-codings.sh [QUIRE_CLI] [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
models=${2:-${TMPDIR:-/tmp}/quire-bench-models}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }

llama="$models/llama-96m-fp16"
mkdir -p "$models" bench/results
[[ -f "$llama/config.json" ]] || "$cli" make-model "$llama" --arch llama --hidden 768 --layers 12 \
  --heads 12 --kv-heads 4 --intermediate 2560 --vocab 4096 --max-position-embeddings 8192 \
  --seed 1 --format fp16

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=()
for pair in ${QUIRE_BENCH_PAIRS:-fp16 q8 fp8 q6 q4 k16v8 k16v4 kf8v4 k4v16}; do
  echo "bench: --cache $pair" >&2
  "$cli" bench "$llama" --json --cache "$pair" --decode-contexts 4096 --prefill 512 --batches 1 \
    --repeat 3 --context 8192 >"$work/$pair.json"
  runs+=("$pair=$work/$pair.json")
done

source bench/results_base.sh
base=$(results_base cpu-kv-codings)
python3 bench/summarize_kv_codings.py --commit "$(git rev-parse --short HEAD)" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)" --json "$base.json" --table "$base.md" "${runs[@]}"
echo "bench: wrote $base.json and $base.md" >&2
