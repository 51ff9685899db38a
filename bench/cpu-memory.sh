#!/usr/bin/env bash
# CPU benchmark of the cache's memory choices, on the ~96M-parameter shapes of
# cpu-100m.sh in FP16: a Llama and a Gemma 2 (alternate layers sliding over
# 1,024 tokens).
# - decode at a 4,096-token context with the cache on the device, offloaded
#   to host memory (pages streamed through the staging ring each step), and,
#   for Gemma, only its global layers offloaded;
# - 8 concurrent chats (64 prompt tokens, 256 new) in a 1,024-token cache,
#   under each page-reservation policy: how many run at once, the mean time
#   to first token, preemptions and the tokens computed again.
# Writes bench/results/<date>-cpu-memory.json and a Markdown table beside it.
#   bench/cpu-memory.sh [QUIRE_CLI] [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
models=${2:-${TMPDIR:-/tmp}/quire-bench-models}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }

shape=(--hidden 768 --layers 12 --heads 12 --kv-heads 4 --intermediate 2560 --vocab 4096
       --max-position-embeddings 8192 --seed 1 --format fp16)
llama="$models/llama-96m-fp16"
gemma="$models/gemma2-96m-fp16"
mkdir -p "$models" bench/results
[[ -f "$llama/config.json" ]] || "$cli" make-model "$llama" --arch llama "${shape[@]}"
[[ -f "$gemma/config.json" ]] || "$cli" make-model "$gemma" --arch gemma2 "${shape[@]}" \
  --sliding-window 1024

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=()
run() {  # LABEL MODEL OPTIONS...
  local label=$1 model=$2
  shift 2
  echo "bench: $label" >&2
  "$cli" bench "$model" --json "$@" >"$work/${#runs[@]}.json"
  runs+=("$label=$work/${#runs[@]}.json")
}
decode=(--decode-contexts 4096 --prefill 512 --batches 1 --repeat 3 --context 8192)
run "llama, cache on device" "$llama" "${decode[@]}" --cache-residence device
run "llama, cache offloaded" "$llama" "${decode[@]}" --cache-residence offloaded
run "gemma2, cache on device" "$gemma" "${decode[@]}" --cache-residence device
run "gemma2, cache offloaded" "$gemma" "${decode[@]}" --cache-residence offloaded
run "gemma2, global layers offloaded" "$gemma" "${decode[@]}" --cache-residence offload-global
chats=(--context 1024 --batches 8 --decode-tokens 256 --batch-tokens 256 --decode-contexts 64 --prefill 64 --repeat 1)
run "llama, 8 chats, every page reserved" "$llama" "${chats[@]}" --reserve-pages all
run "llama, 8 chats, pages on demand" "$llama" "${chats[@]}" --reserve-pages on-demand

source bench/results_base.sh
base=$(results_base cpu-memory)
python3 bench/summarize_memory.py --commit "$(git rev-parse --short HEAD)" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)" --json "$base.json" --table "$base.md" "${runs[@]}"
echo "bench: wrote $base.json and $base.md" >&2
