#!/usr/bin/env bash
# Load test of `quire-cli serve` on the CPU (bench/serve_load.py): 1, 4 and
# 16 clients at once, each a 4-turn streamed chat, on the ~96M-parameter
# Llama shape of cpu-100m.sh in FP16 with Llama 3.1's tokenizer layout and
# chat template. Writes bench/results/<date>-serve-load.json and a Markdown
# table beside it.
#   bench/serve-load.sh [QUIRE_CLI] [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
models=${2:-${TMPDIR:-/tmp}/quire-bench-models}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }

model="$models/llama31-96m-fp16"
mkdir -p "$models" bench/results
[[ -f "$model/config.json" ]] || "$cli" make-model "$model" --like llama-3.1-8b-instruct \
  --hidden 768 --layers 12 --heads 12 --kv-heads 4 --intermediate 2560 \
  --max-position-embeddings 8192 --seed 1 --format fp16

source bench/results_base.sh
base=$(results_base serve-load)
python3 bench/serve_load.py --cli "$cli" --model "$model" --clients "${QUIRE_BENCH_CLIENTS:-1,4,16}" \
  --turns 4 --max-tokens 32 --commit "$(git rev-parse --short HEAD)" \
  --json "$base.json" --table "$base.md" -- --context 16384
echo "bench: wrote $base.json and $base.md" >&2
