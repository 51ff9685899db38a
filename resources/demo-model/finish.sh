#!/bin/sh
# Turns a finished (or good enough) training run into the shipped files:
#   fp16/       the Hugging Face directory, written by export.py from best.pt
#   exl2-4.0/   the same model at 4.0 bits per weight, by `quire-cli quantize`
#   loss.png    the loss curve
#   README.md   its Results section: loss numbers, sizes, checks, samples
#
#   resources/demo-model/finish.sh [RUN_DIR] [QUIRE_CLI]
#
# RUN_DIR defaults to /work/demo-train/run (tokenizer.model next to it);
# QUIRE_CLI to build/demo/app/cli/quire-cli. Fails when the two model
# directories together reach 20 MB.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
run=${1:-/work/demo-train/run}
cli=${2:-$here/../../build/demo/app/cli/quire-cli}
tokenizer=${TOKENIZER:-$(dirname "$run")/tokenizer.model}
checkpoint=${CHECKPOINT:-$run/best.pt}
python=/usr/bin/python3

cli=$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli")
[ -x "$cli" ] || { echo "finish.sh: no quire-cli at $cli; build it first" >&2; exit 2; }
[ -f "$checkpoint" ] || { echo "finish.sh: no checkpoint $checkpoint" >&2; exit 2; }

rm -rf "$here/fp16" "$here/exl2-4.0"
nice $python "$here/export.py" --checkpoint "$checkpoint" --tokenizer "$tokenizer" \
  --out "$here/fp16" --check-cli "$cli" | tee "$run/export.txt"
"$cli" quantize "$here/fp16" "$here/exl2-4.0" --format exl2:4.0 --seed 1 | tee "$run/quantize.txt"

bytes=$(cat "$here"/fp16/* "$here"/exl2-4.0/* | wc -c)
echo "exported: $bytes bytes"
[ "$bytes" -lt 20000000 ] || { echo "finish.sh: the exports reach 20 MB" >&2; exit 1; }

nice $python "$here/sample.py" --checkpoint "$checkpoint" --tokenizer "$tokenizer" \
  > "$run/samples.md"
nice $python "$here/sample.py" --checkpoint "$checkpoint" --tokenizer "$tokenizer" \
  --quire-cli "$cli" --model-dir "$here/exl2-4.0" > "$run/quire_samples.md"
$python "$here/plot_loss.py" "$run/loss.csv" "$here/loss.png"
$python "$here/report.py" --run "$run" --quire-cli "$cli" --tokenizer "$tokenizer"
