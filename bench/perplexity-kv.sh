#!/usr/bin/env bash
# Perplexity with each cache coding of keys and values (bench/perplexity_kv.py)
# on the demo model (trained, 256-token context) over an English text every
# Debian system has. A random-weight model is no use here: its logits are so
# sharp that its perplexity overflows any meaning. Writes
# bench/results/<date>-perplexity-kv.json and a Markdown table.
# --residual-window measures every coding with and without the residual
# window instead, on pages of 32 tokens and one token per step (as a chat
# decodes), so that most of each 256-token window lies in sealed pages;
# its results are <date>-perplexity-kv-window.
#   bench/perplexity-kv.sh [--residual-window] [QUIRE_CLI] [TEXT]
set -euo pipefail
cd "$(dirname "$0")/.."

name=perplexity-kv
study=()
if [[ ${1:-} == --residual-window ]]; then
  shift
  name=perplexity-kv-window
  study=(--page-size 32 --chunk 1 --residual-window-rows)
fi

cli=${1:-build/release/app/cli/quire-cli}
text=${2:-/usr/share/common-licenses/GPL-2}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }
mkdir -p bench/results

source bench/results_base.sh
base=$(results_base "$name")
python3 bench/perplexity_kv.py --cli "$cli" --text "$text" --commit "$(git rev-parse --short HEAD)" \
  ${study[@]+"${study[@]}"} \
  --model "demo model, FP16 weights=resources/demo-model/fp16:256" \
  --model "demo model, EXL2 4.0 weights=resources/demo-model/exl2-4.0:256" \
  --json "$base.json" --table "$base.md"
echo "bench: wrote $base.json and $base.md" >&2
