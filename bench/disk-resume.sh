#!/usr/bin/env bash
# Reopening a long chat after a restart, on the CPU: for prompts of 8,000 and
# 30,000 tokens, time to first token computed on a cold cache without a disk
# tier, warm (the pages in the device cache), and from disk (the first
# runtime archives its cache and is destroyed; a new runtime over the same
# folder restores the pages): `quire-cli bench --resume-tokens N`. On the
# 0.98B Llama shape of cpu-speculative.sh (hidden 2048, 22 layers, 4 KV heads,
# random weights, the demo model's tokenizer), with room for 32k positions.
# The page files are read back just after they were written, so the
# operating system's page cache likely holds them: put QUIRE_BENCH_DISK_DIR
# on the disk to be measured, and drop the page cache between the runs' steps
# for a cold disk (which this script does not do).
# Writes bench/results/<date>-cpu-disk-resume.json and a Markdown table.
#   bench/disk-resume.sh [QUIRE_CLI] [MODEL_DIR]
# Environment:
#   QUIRE_BENCH_RESUME_TOKENS  prompt lengths (default "8000 30000")
#   QUIRE_BENCH_REPEAT         runs of each length, the median reported (default 3)
#   QUIRE_BENCH_SHAPE          0.98b (default) or tiny (a 2-layer model, to check the script)
#   QUIRE_BENCH_DISK_DIR       where the page files go (default: $TMPDIR or /tmp)
#   QUIRE_BENCH_OUT            a folder for the results instead of bench/results
# A quick check of the script itself:
#   QUIRE_BENCH_SHAPE=tiny QUIRE_BENCH_RESUME_TOKENS=600 QUIRE_BENCH_REPEAT=1 \
#     QUIRE_BENCH_OUT=/tmp bench/disk-resume.sh build/test/app/cli/quire-cli
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
models=${2:-${TMPDIR:-/tmp}/quire-bench-models}
lengths=${QUIRE_BENCH_RESUME_TOKENS:-8000 30000}
repeat=${QUIRE_BENCH_REPEAT:-3}
shape=${QUIRE_BENCH_SHAPE:-0.98b}
disk=${QUIRE_BENCH_DISK_DIR:-${TMPDIR:-/tmp}}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }
mkdir -p "$models" "$disk"

demo=resources/demo-model/fp16
case "$shape" in
  0.98b)
    model="$models/llama-0.98b-demo-tokenizer-32k"
    [[ -f "$model/config.json" ]] || "$cli" make-model "$model" --arch llama --hidden 2048 \
      --layers 22 --heads 32 --kv-heads 4 --intermediate 5632 --vocab 4096 \
      --tokenizer-from "$demo" --max-position-embeddings 32768 --seed 1
    ;;
  tiny)
    model="$models/llama-tiny-demo-tokenizer-32k"
    [[ -f "$model/config.json" ]] || "$cli" make-model "$model" --arch llama --hidden 128 \
      --layers 2 --heads 4 --kv-heads 2 --intermediate 256 --vocab 4096 \
      --tokenizer-from "$demo" --max-position-embeddings 32768 --seed 1
    ;;
  *)
    echo "bench: QUIRE_BENCH_SHAPE=$shape is not 0.98b or tiny" >&2
    exit 2
    ;;
esac

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
runs=()
load=$(cut -d' ' -f1-3 /proc/loadavg)
for tokens in $lengths; do
  echo "bench: reopening a chat of $tokens tokens ($shape, $repeat runs)" >&2
  out="$work/$tokens.json"
  "$cli" bench "$model" --resume-tokens "$tokens" --repeat "$repeat" --resume-folder "$disk" \
    --json >"$out"
  runs+=("$tokens=$out")
done

if [[ -n "${QUIRE_BENCH_OUT:-}" ]]; then
  mkdir -p "$QUIRE_BENCH_OUT"
  base="$QUIRE_BENCH_OUT/$(date -u +%Y-%m-%d-%H%M)-cpu-disk-resume"
else
  mkdir -p bench/results
  source bench/results_base.sh
  base=$(results_base cpu-disk-resume)
fi
python3 bench/summarize_disk_resume.py --commit "$(git rev-parse --short HEAD)" --load "$load" \
  --shape "$shape" --json "$base.json" --table "$base.md" "${runs[@]}"
echo "bench: wrote $base.json and $base.md" >&2
