#!/usr/bin/env bash
# The memory features on a GPU, each against the plain run's tokens (sampled
# with a seed, which any difference in the logits would change):
# the offloaded cache (pages in pinned host memory streamed through a staging
# ring on the copy queues), only the global layers offloaded, the cache fixed
# on one logical device, and recovery from injected out-of-memory faults
# (workspaces freed, the step run again). Decode crosses page boundaries.
#   gpu-memory-check.sh OUTPUT_FOLDER
set -uo pipefail
source "$(dirname "$0")/env.sh"
out=${1:?usage: gpu-memory-check.sh OUTPUT_FOLDER}
models=/tmp/quire-memory-models
mkdir -p "$out" "$models"
failed=0
# Other device lists for a check of this script on the CPU backend.
one=${QUIRE_CHECK_ONE:-cuda}
three=${QUIRE_CHECK_THREE:-cuda:0:3x4GiB}

make_model() {  # NAME ARGS...
  local dir="$models/$1"
  shift
  [[ -f "$dir/config.json" ]] || quire-cli make-model "$dir" --layers 6 --hidden 256 \
    --max-position-embeddings 4096 --seed 3 "$@" >>"$out/make-models.log" 2>&1
  echo "$dir"
}

# Tokens of a 300-token prompt and 300 new ones, sampled with a fixed seed, as
# JSON ids.
tokens_of() {  # MODEL NAME ENV/ARGS...
  local model=$1 name=$2
  shift 2
  local prompt
  prompt=$(seq 5 304 | paste -sd, -)
  timeout "$(step_budget 120)" env ${FAULT:+$FAULT} quire-cli generate "$model" --tokens "$prompt" \
    --temperature 1 --top-k 0 --top-p 1 --repetition-penalty 1 --seed 7 --max-new 300 \
    --ignore-eos --json "$@" >"$out/$name.json" 2>"$out/$name.err"
  local rc=$?
  python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["tokens"])' "$out/$name.json" \
    2>/dev/null || echo "exit $rc: $(tail -c 300 "$out/$name.err")"
}

check() {  # NAME REFERENCE CANDIDATE
  if [[ "$2" == "$3" && "$2" == \[* ]]; then
    echo "PASS $1"
  else
    echo "FAIL $1"
    echo "  reference: ${2:0:200}"
    echo "  candidate: ${3:0:200}"
    failed=1
  fi
}

llama=$(make_model llama-exl2 --arch llama --format exl2:4.0)
gemma=$(make_model gemma2-fp16 --arch gemma2 --format fp16 --sliding-window 40)
for model in "$llama" "$gemma"; do
  name=$(basename "$model")
  for cache in fp16 q4; do
    ref=$(tokens_of "$model" "$name-$cache-device" --devices "$one" --cache "$cache")
    check "$name $cache offloaded" "$ref" \
      "$(tokens_of "$model" "$name-$cache-offloaded" --devices "$one" --cache "$cache" --cache-residence offloaded)"
    check "$name $cache offload-global" "$ref" \
      "$(tokens_of "$model" "$name-$cache-global" --devices "$one" --cache "$cache" --cache-residence offload-global)"
    split=$(tokens_of "$model" "$name-$cache-split" --devices "$three" --split balanced --cache "$cache")
    check "$name $cache three logical devices" "$ref" "$split"
    check "$name $cache cache fixed on device 2" "$ref" \
      "$(tokens_of "$model" "$name-$cache-fixed" --devices "$three" --split balanced --cache "$cache" --cache-device 2)"
    check "$name $cache offloaded over three devices" "$ref" \
      "$(tokens_of "$model" "$name-$cache-split-offloaded" --devices "$three" --split balanced --cache "$cache" --cache-residence offloaded)"
    for fault in linear:30 paged_attention:20 write_kv:50; do
      check "$name $cache fault $fault" "$ref" \
        "$(FAULT="QUIRE_FAULT_OP=$fault" tokens_of "$model" "$name-$cache-fault-${fault//[:+]/-}" --devices "$one" --cache "$cache")"
    done
  done
done
grep -h "ran short\|memory" "$out"/*fault*.err 2>/dev/null | sort | uniq -c | head -10
exit "$failed"
