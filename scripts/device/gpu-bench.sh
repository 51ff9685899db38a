#!/usr/bin/env bash
# Builds synthetic models with Llama-3-8B's layer shapes (random weights:
# speed only) in EXL2 4.0 bpw and EXL3 4.0 bpw (MUL1 codebook), each with a
# 6-bit head, in GPTQ 4-bit, FP8 and FP16, and benchmarks them on the GPU
# with Q4 and FP16 caches, then transformers' static-cache decode of the
# FP16 one. Each plain pair runs once per kernel variant of
# QUIRE_KIT_VARIANTS (env.sh), one right after the other on the same warm
# GPU, its results named MODEL-CACHE-VARIANT.json. JSON results and logs go
# under $1.
# The vocabulary is make-model's largest, 4096, not 128256: the head is 0.2%
# of the weights instead of 6.5%. Last, speculative decoding: a pair with a
# third part drafts, "ngram" by prompt lookup, "first2" with the model's
# own first two layers (first_layers.py) as the draft model; "resume"
# measures reopening chats of 8,000 and 30,000 tokens after a restart
# (bench --resume-tokens: computed, warm, from the disk tier).
#   gpu-bench.sh OUTPUT_FOLDER [MODEL_FOLDER]   make (if missing) and bench
#   gpu-bench.sh --make-only MODEL_FOLDER [FORMAT...]
#                                               only make the models (default:
#                                               every format the pairs name)
set -uo pipefail
source "$(dirname "$0")/env.sh"
make_only=0
if [[ "${1:-}" == --make-only ]]; then make_only=1; shift; fi
if (( make_only )); then models=${1:?model folder}; out=""; else
  out=${1:?usage: gpu-bench.sh OUTPUT_FOLDER [MODEL_FOLDER]}; models=${2:-/tmp/quire-models}
  mkdir -p "$out"
fi
mkdir -p "$models"
# QUIRE_BENCH_LAYERS and QUIRE_BENCH_DEVICES shrink or move a trial run;
# QUIRE_BENCH_RUN_SECONDS is what one run of a pair is expected to take
# (default 35 s, 45 with 16-bit weights: a 32-layer run on an H100).
# QUIRE_BENCH_BASE_KIT names another unpacked kit (an earlier commit's): each
# pair then runs with it too, right after this kit's run on the same warm
# GPU, its results named *-base.json, so a change is measured against its
# baseline on one machine.
shape=(--arch llama --hidden 4096 --layers "${QUIRE_BENCH_LAYERS:-32}" --heads 32 --kv-heads 8 --intermediate 14336
       --vocab 4096 --max-position-embeddings 40960 --no-tie --seed 1)
# What each plain pair measures: decode at three contexts (batch 1), batches
# of 1, 4 and 16 jobs, prefill of 2048 tokens and the first token of a
# 4000-token prompt; no rewrite and no conversation, which do not compare
# kernels and would cost seconds of every run.
measure=(--context 40960 --prefill 2048 --first-token 4000 --decode-contexts 512,4096,32768
         --decode-tokens 64 --repeat 2 --batches "${QUIRE_BENCH_BATCHES:-1,4,16}" --batch-tokens 64
         --rewrite-tokens 0 --no-conversation)
# Headline first: the EXL2 model with each cache, then FP16 weights against
# transformers, then EXL3 beside EXL2's headline, then the remaining pairs.
pairs=${QUIRE_BENCH_PAIRS:-exl2:4.0/q4 exl2:4.0/fp16 fp16/fp16 reference gptq/q4 fp8/fp16 exl3:4.0/q4 fp16/q4 exl2:4.0/q4/ngram fp16/fp16/first2 exl2:4.0/q4/resume}
# gpu-check.sh makes the models in the background: wait for the one needed.
wait_for_model() {
  while [[ ! -f "$1/.complete" && -n "${QUIRE_MODEL_MAKER:-}" ]] &&
        kill -0 "$QUIRE_MODEL_MAKER" 2>/dev/null && (( $(step_budget 2) > 1 )); do
    sleep 1
  done
}
# Within the step's budget when benchmarking (the background maker may have
# been slower than the steps before); without one when only making.
make_model() {
  local format=$1 dir="$models/llama-8b-${1/:/-}" head=() limit=()
  [[ "$format" == exl2:* || "$format" == exl3:* ]] && head=(--head-bits 6)
  [[ -f "$dir/.complete" ]] && return 0
  (( make_only )) || limit=(timeout "$(step_budget 600)")
  "${limit[@]}" quire-cli make-model "$dir" "${shape[@]}" --format "$format" "${head[@]}" &&
    touch "$dir/.complete"
}
if (( make_only )); then
  shift
  formats=("$@")
  if (( ! ${#formats[@]} )); then
    for pair in $pairs; do
      [[ $pair == reference ]] && formats+=(fp16) || formats+=("${pair%%/*}")
    done
  fi
  declare -A made=()
  for format in "${formats[@]}"; do
    [[ -n "${made[$format]:-}" ]] && continue
    made[$format]=1
    start=$SECONDS
    make_model "$format" || echo "make-model $format failed"
    echo "make-model $format: $((SECONDS - start)) s"
  done
  exit
fi
for pair in $pairs; do
  if [[ "$pair" == reference ]]; then
    dir="$models/llama-8b-fp16"
    wait_for_model "$dir"
    make_model fp16 || { echo "make-model fp16 failed"; continue; }
    timeout "$(step_budget 240)" python3 "$kit/transformers_decode.py" "$dir" \
      --contexts 512,4096 --tokens 64 >"$out/transformers-fp16.json" 2>"$out/transformers-fp16.log"
    echo "transformers: exit $?"
    continue
  fi
  IFS=/ read -r format cache draft <<<"$pair"
  dir="$models/llama-8b-${format/:/-}"
  wait_for_model "$dir"
  make_model "$format" || { echo "make-model $format failed"; continue; }
  drafting=()
  case "${draft:-}" in
    "") ;;
    resume)
      for tokens in 8000 30000; do
        name="$(basename "$dir")-$cache-resume-$tokens"
        start=$SECONDS
        timeout "$(step_budget 120)" quire-cli bench "$dir" --devices "${QUIRE_BENCH_DEVICES:-cuda}" \
          --cache "$cache" --resume-tokens "$tokens" --resume-folder "$out/disk-cache" --repeat 2 \
          --json >"$out/$name.json" 2>"$out/$name.log"
        echo "bench $name: exit $?, $((SECONDS - start)) s"
      done
      continue ;;
    ngram) drafting=(--draft ngram) ;;
    first2)
      [[ -f "$dir-first2/config.json" ]] ||
        timeout "$(step_budget 120)" python3 "$kit/first_layers.py" "$dir" 2 "$dir-first2" ||
        { echo "first_layers.py failed"; continue; }
      drafting=(--draft "$dir-first2") ;;
    *) echo "unknown draft $draft"; continue ;;
  esac
  # A drafting pair measures drafting: the default variant only.
  read -ra variants <<<"$(variants_for "$format")"
  [[ -n "${draft:-}" ]] && variants=("$default_variant")
  # A pair is a comparison of its variants: one that cannot finish them all
  # before the deadline is not started.
  run_seconds=35
  [[ $format == fp16 || $format == bf16 ]] && run_seconds=45
  needed=$(( ${#variants[@]} * ${QUIRE_BENCH_RUN_SECONDS:-$run_seconds} ))
  if (( $(step_budget "$needed") < needed )); then
    echo "bench $pair skipped: $(step_budget "$needed") s left, its ${#variants[@]} runs need about $needed"
    continue
  fi
  for variant in "${variants[@]}"; do
    for base in "" ${QUIRE_BENCH_BASE_KIT:+"$QUIRE_BENCH_BASE_KIT"}; do
      name="$(basename "$dir")-$cache${draft:+-$draft}-$variant${base:+-base}"
      runner=(env "QUIRE_CUDA_LINEAR=$variant" quire-cli)
      if [[ -n "$base" ]]; then
        runner=(env "QUIRE_CUDA_LINEAR=$variant" "LD_LIBRARY_PATH=$base/lib:$LD_LIBRARY_PATH"
                "QUIRE_CUDA_LIBRARY=$base/lib/quire/libquire_cuda.so" "$base/bin/quire-cli")
      fi
      start=$SECONDS
      timeout "$(step_budget 90)" "${runner[@]}" bench "$dir" --devices "${QUIRE_BENCH_DEVICES:-cuda}" \
        --cache "$cache" "${measure[@]}" "${drafting[@]}" --json >"$out/$name.json" 2>"$out/$name.log"
      echo "bench $name: exit $?, $((SECONDS - start)) s"
      grep "^bench:" "$out/$name.log" | sed 's/^/  /'
    done
  done
done
