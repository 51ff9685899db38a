#!/usr/bin/env bash
# What each weight coding costs the demo model in quality
# (bench/quality_weights.py): the FP16 model quantized by `quire-cli
# quantize` to EXL3 at 2, 3 and 4 bits per weight with the MUL1 codebook and
# at 4 with MCG, and to compressed-tensors W4A16 (groups of 128, symmetric,
# llm-compressor's preset), each without and with calibration text (LDLQ for
# EXL3, GPTQ for W4A16), beside the shipped EXL2 4.0 directory and the FP16 one;
# perplexity over an English text every Debian system has and the KL
# divergence of each scored position from the FP16 weights' distribution.
# Calibration runs on other license texts than the one scored, so that it
# does not see the test. Writes bench/results/<date>-demo-quality.json and
# .md; the models go to a temporary directory (kept with --keep DIR).
# About 22 minutes on two cores.
#   bench/quality-weights.sh [--keep DIR] [QUIRE_CLI] [TEXT]
set -euo pipefail
cd "$(dirname "$0")/.."

keep=""
if [[ ${1:-} == --keep ]]; then
  keep=$2
  shift 2
fi
cli=${1:-build/release/app/cli/quire-cli}
text=${2:-/usr/share/common-licenses/GPL-2}
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }
mkdir -p bench/results

if [[ -n "$keep" ]]; then
  work=$keep
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
licenses=/usr/share/common-licenses
cat "$licenses/Apache-2.0" "$licenses/MPL-2.0" "$licenses/GFDL-1.3" "$licenses/CC0-1.0" \
  "$licenses/Artistic" > "$work/calibration.txt"

source bench/results_base.sh
base=$(results_base demo-quality)
python3 bench/quality_weights.py --cli "$cli" --text "$text" --commit "$(git rev-parse --short HEAD)" \
  --fp16 resources/demo-model/fp16 --calibration "$work/calibration.txt" --work "$work" \
  --calibration-label "Apache-2.0, MPL-2.0, GFDL-1.3, CC0-1.0 and Artistic from $licenses" \
  --window 256 \
  --model "FP16=resources/demo-model/fp16" \
  --model "EXL2 4.0=resources/demo-model/exl2-4.0" \
  --quantize "EXL3 2.0=exl3:2.0" \
  --quantize "EXL3 3.0=exl3:3.0" \
  --quantize "EXL3 4.0=exl3:4.0" \
  --quantize "EXL3 4.0 MCG=exl3:4.0:mcg" \
  --quantize "EXL3 2.0 calibrated=exl3:2.0,calibrated" \
  --quantize "EXL3 3.0 calibrated=exl3:3.0,calibrated" \
  --quantize "EXL3 4.0 calibrated=exl3:4.0,calibrated" \
  --quantize "EXL3 4.0 MCG calibrated=exl3:4.0:mcg,calibrated" \
  --quantize "W4A16=w4a16" \
  --quantize "W4A16 GPTQ=w4a16,calibrated" \
  --json "$base.json" --table "$base.md"
echo "bench: wrote $base.json and $base.md" >&2
