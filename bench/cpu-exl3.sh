#!/usr/bin/env bash
# The CPU benchmark of bench/cpu-100m.sh (the 96M Llama shape) with EXL3 4.0
# bpw weights in each codebook beside FP16 and EXL2 4.0: prefill, decode at
# three contexts, batches and the 10-turn conversation. Writes
# bench/results/<date>-cpu-exl3.{json,md}.
#   bench/cpu-exl3.sh [QUIRE_CLI] [MODEL_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
QUIRE_BENCH_FORMATS=${QUIRE_BENCH_FORMATS:-"fp16 exl2:4.0 exl3:4.0 exl3:4.0:mcg exl3:4.0:3inst"} \
  QUIRE_BENCH_NAME=cpu-exl3 exec bench/cpu-100m.sh "$@"
