#!/usr/bin/env bash
# Perplexity with each cache coding of keys and values (bench/perplexity_kv.py)
# on the demo model (trained, 256-token context) over an English text every
# Debian system has. A random-weight model is no use here: its logits are so
# sharp that its perplexity overflows any meaning. Writes
# bench/results/<date>-perplexity-kv.json and a Markdown table.
#   bench/perplexity-kv.sh [QUIRE_CLI] [TEXT]
set -euo pipefail
cd "$(dirname "$0")/.."

cli=${1:-build/release/app/cli/quire-cli}
text=${2:-/usr/share/common-licenses/GPL-2}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }
mkdir -p bench/results

source bench/results_base.sh
base=$(results_base perplexity-kv)
python3 bench/perplexity_kv.py --cli "$cli" --text "$text" --commit "$(git rev-parse --short HEAD)" \
  --model "demo model, FP16 weights=resources/demo-model/fp16:256" \
  --model "demo model, EXL2 4.0 weights=resources/demo-model/exl2-4.0:256" \
  --json "$base.json" --table "$base.md"
echo "bench: wrote $base.json and $base.md" >&2
