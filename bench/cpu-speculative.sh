#!/usr/bin/env bash
# CPU benchmark of speculative decoding: decode speed without drafts, with
# n-gram (prompt lookup) drafts and with draft models, on
#   - the demo model (5.8M parameters) and the rewrite workload (a code block
#     given back with one change), where a reply may copy its prompt;
#   - a 0.98B Llama shape with random weights and the demo model's tokenizer
#     (hidden 2048, 22 layers), whose decode reads 2 GB a token as a desktop
#     model's does, drafted for by its own first two layers
#     (bench/first_layers.py: drafts agree with the model where the later
#     layers change the argmax little) and by an unrelated random model with
#     a head of its own (drafts nearly always rejected: what drafting costs
#     when it fails, with the draft length backing off);
#   - the demo model drafted for by its own first three layers, the only
#     trained pair at hand.
# Random weights tie the head to the embedding, and their greedy replies
# fall into short loops that every drafter predicts: the 0.98B rows with
# n-grams and its first layers measure what verifying drafts costs and
# saves when they are right, not how often a real drafter is right.
# Writes bench/results/<date>-cpu-speculative.json and a Markdown table.
#   bench/cpu-speculative.sh [QUIRE_CLI] [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
models=${2:-${TMPDIR:-/tmp}/quire-bench-models}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }
mkdir -p "$models" bench/results

demo=resources/demo-model/fp16
big="$models/llama-0.98b-demo-tokenizer"
first2="$models/llama-0.98b-first-2-layers"
unrelated="$models/llama-8m-unrelated-untied-draft"
demo_first3="$models/demo-first-3-layers"
[[ -f "$big/config.json" ]] || "$cli" make-model "$big" --arch llama --hidden 2048 --layers 22 \
  --heads 32 --kv-heads 4 --intermediate 5632 --vocab 4096 --tokenizer-from "$demo" \
  --max-position-embeddings 4096 --seed 1
[[ -f "$first2/config.json" ]] || python3 bench/first_layers.py "$big" 2 "$first2"
[[ -f "$unrelated/config.json" ]] || "$cli" make-model "$unrelated" --arch llama --hidden 256 \
  --layers 2 --heads 8 --kv-heads 4 --intermediate 768 --vocab 4096 --tokenizer-from "$demo" \
  --no-tie --seed 99
[[ -f "$demo_first3/config.json" ]] || python3 bench/first_layers.py "$demo" 3 "$demo_first3"

read -r -a demo_args <<<"${QUIRE_BENCH_DEMO_ARGS:---repeat 5 --decode-tokens 64 --rewrite-tokens 128}"
read -r -a big_args <<<"${QUIRE_BENCH_BIG_ARGS:---repeat 3 --decode-tokens 256 --rewrite-tokens 256}"
# Only decode and the rewrite matter here: the rest of bench is kept short.
short=(--prefill 64 --decode-contexts 128 --batches 1 --turn-words 1 --turn-reply 1 --json)
runs=()
measure() {  # label model draft args...
  local label=$1 model=$2 draft=$3
  shift 3
  local out
  out=$(mktemp)
  echo "bench: $label" >&2
  "$cli" bench "$model" --draft "$draft" "${short[@]}" "$@" >"$out"
  runs+=("$label=$out")
}
measure "demo, no drafts" "$demo" off "${demo_args[@]}"
measure "demo, n-gram" "$demo" ngram "${demo_args[@]}"
measure "demo, its first 3 layers" "$demo" "$demo_first3" "${demo_args[@]}"
measure "0.98B, no drafts" "$big" off "${big_args[@]}"
measure "0.98B, n-gram" "$big" ngram "${big_args[@]}"
measure "0.98B, its first 2 layers" "$big" "$first2" "${big_args[@]}"
measure "0.98B, unrelated draft" "$big" "$unrelated" "${big_args[@]}"

source bench/results_base.sh
base=$(results_base cpu-speculative)
python3 bench/summarize_speculative.py --commit "$(git rev-parse --short HEAD)" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)" --json "$base.json" --table "$base.md" "${runs[@]}"
rm -f "${runs[@]#*=}"
echo "bench: wrote $base.json and $base.md" >&2
