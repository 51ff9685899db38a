#!/usr/bin/env bash
# Perplexity with each cache coding of keys and values (bench/perplexity_kv.py)
# on the demo model (trained, 256-token context) and on the ~96M-parameter
# random Llama of cpu-100m.sh (random weights: only the change against the
# FP16 cache means anything there), over an English text every Debian system
# has. Writes bench/results/<date>-perplexity-kv.json and a Markdown table.
#   bench/perplexity-kv.sh [QUIRE_CLI] [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
models=${2:-${TMPDIR:-/tmp}/quire-bench-models}
text=${QUIRE_BENCH_TEXT:-/usr/share/common-licenses/GPL-2}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }

llama="$models/llama-96m-fp16"
mkdir -p "$models" bench/results
[[ -f "$llama/config.json" ]] || "$cli" make-model "$llama" --arch llama --hidden 768 --layers 12 \
  --heads 12 --kv-heads 4 --intermediate 2560 --vocab 4096 --max-position-embeddings 8192 \
  --seed 1 --format fp16

stamp=$(date -u +%Y-%m-%d)
base="bench/results/${stamp}-perplexity-kv"
[[ -e "$base.json" ]] && base="bench/results/${stamp}-$(date -u +%H%M)-perplexity-kv"
python3 bench/perplexity_kv.py --cli "$cli" --text "$text" --commit "$(git rev-parse --short HEAD)" \
  --model "demo model, FP16 weights=resources/demo-model/fp16:256" \
  --model "random Llama, 96M, FP16 weights=$llama:1024:4096" \
  --json "$base.json" --table "$base.md"
echo "bench: wrote $base.json and $base.md" >&2
