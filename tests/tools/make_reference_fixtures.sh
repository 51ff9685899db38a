#!/usr/bin/env bash
# Regenerates tests/data/reference/*.json: for each case, a small random model
# made by `quire-cli make-model`, and its logits computed by
# tests/tools/reference_forward.py (PyTorch, following transformers' modeling
# code) -- an implementation independent of Quire's engine.
#
#   tests/tools/make_reference_fixtures.sh build/dev/app/cli/quire-cli [NAME...]
#
# With names, only those cases are written (the others' files stay as they are).
#
# Needs python3 with torch and numpy (Debian: python3-torch python3-numpy).
set -euo pipefail
cli=${1:?usage: make_reference_fixtures.sh path/to/quire-cli [NAME...]}
cli=$(realpath "$cli")
shift
only=("$@")
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../data/reference"
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | make-model arguments
cases=(
  "llama-fp16|--arch llama --format fp16 --seed 11"
  "llama-bf16|--arch llama --format bf16 --seed 12 --no-tie"
  "llama-exl2|--arch llama --format exl2:4.0 --seed 13"
  "llama-gptq|--arch llama --format gptq --seed 14"
  "llama-llama3-rope|--arch llama --format fp16 --seed 15 --rope-scaling llama3 --rope-theta 500000"
  "llama-linear-rope|--arch llama --format fp16 --seed 16 --rope-scaling linear:4"
  "llama-dynamic-rope|--arch llama --format fp16 --seed 17 --rope-scaling dynamic:2 --max-position-embeddings 16"
  "mistral-fp16-window|--arch mistral --format fp16 --seed 21 --sliding-window 8"
  "mistral-exl2|--arch mistral --format exl2:3.0 --seed 22 --sliding-window 8"
  "mistral-gptq|--arch mistral --format gptq --seed 23"
  "qwen2-fp16|--arch qwen2 --format fp16 --seed 31"
  "qwen2-bf16-window|--arch qwen2 --format bf16 --seed 32 --sliding-window 8"
  "qwen2-exl2|--arch qwen2 --format exl2:5.0 --seed 33"
  "qwen2-gptq-v2|--arch qwen2 --format gptq --seed 34 --gptq-v2"
  # Qwen3: per-head q/k norms; head_dim 64 with 4 heads over hidden 128, so
  # the attention is wider than the model, as in Qwen3-0.6B.
  "qwen3-fp16-wide-heads|--arch qwen3 --format fp16 --seed 51 --head-dim 64"
  "qwen3-bf16-window|--arch qwen3 --format bf16 --seed 52 --sliding-window 8 --tie"
  "qwen3-exl2|--arch qwen3 --format exl2:4.0 --seed 53"
  "qwen3-gptq|--arch qwen3 --format gptq --seed 54"
  # Scaled-down shapes of published models (make-model --like): llama3
  # scaling over 8192 original positions at theta 500000, untied; tied with
  # head_dim written out; Qwen2.5's biases with tied embeddings, a padded
  # embedding and yarn over a short original context, so that short prompts
  # reach the blended frequencies; Nemo's head_dim unlike hidden / heads with
  # a null window.
  "llama31-like|--like llama-3.1-8b-instruct --seed 41"
  "llama32-like-tied|--like llama-3.2-3b-instruct --seed 42"
  "qwen25-like-yarn|--like qwen2.5-1.5b-instruct --seed 43 --rope-scaling yarn:4.0:16"
  "nemo-like-head-dim|--like mistral-nemo-instruct-2407 --seed 44"
  # Gemma 2: (1 + w) norms, four per layer, GELU, scaled embeddings, soft caps
  # (tight ones, so that they bend these small logits and scores),
  # a window on every other layer (shorter than the prompt).
  "gemma2-fp16-window|--arch gemma2 --format fp16 --seed 61 --sliding-window 5 --softcap 3:2"
  "gemma2-exl2|--arch gemma2 --format exl2:4.0 --seed 62 --sliding-window 8"
  "gemma2-gptq|--arch gemma2 --format gptq --seed 63 --layers 3 --softcap 2:4"
  # Gemma 3: q/k norms, local layers on their own rotary base, one global
  # layer in three here; the multimodal wrapper in both tensor layouts.
  "gemma3-bf16-pattern|--arch gemma3 --format bf16 --seed 64 --layers 3 --sliding-window 7 --sliding-window-pattern 3"
  "gemma3-multimodal-fp16|--arch gemma3 --multimodal --format fp16 --seed 65 --sliding-window 6 --rope-scaling linear:8"
  "gemma3-multimodal-new-layout-exl2|--arch gemma3 --multimodal --text-prefix model.language_model. --format exl2:5.0 --seed 66 --sliding-window 9"
  "gemma3-gptq|--arch gemma3 --format gptq --seed 67 --sliding-window 10 --layers 3 --sliding-window-pattern 2"
  # Phi-3: fused qkv and gate_up, partial rotary, longrope past its original
  # context (16 < 24 tokens) and within it (64).
  "phi3-fp16-longrope|--arch phi3 --format fp16 --seed 71 --partial-rotary-factor 0.75 --rope-scaling longrope:16 --max-position-embeddings 256"
  "phi3-bf16-short-factors|--arch phi3 --format bf16 --seed 72 --rope-scaling longrope:64 --max-position-embeddings 1024"
  "phi3-exl2|--arch phi3 --format exl2:4.0 --seed 73 --sliding-window 8"
  "phi3-gptq|--arch phi3 --format gptq --seed 74 --partial-rotary-factor 0.5"
  # Mixtures of experts: Mixtral (top 2 of 4, renormalized) and Qwen3-MoE
  # (a dense layer among sparse ones, top 3 of 8; unnormalized weights).
  "mixtral-fp16|--arch mixtral --format fp16 --seed 81"
  "mixtral-exl2|--arch mixtral --format exl2:4.0 --seed 82"
  "mixtral-gptq-window|--arch mixtral --format gptq --seed 83 --sliding-window 8"
  "qwen3moe-bf16|--arch qwen3_moe --format bf16 --seed 91 --layers 3 --mlp-only-layers 1 --experts 8 --experts-per-token 3"
  "qwen3moe-exl2|--arch qwen3_moe --format exl2:4.0 --seed 92 --no-norm-topk-prob"
  "qwen3moe-gptq|--arch qwen3_moe --format gptq --seed 93"
  # FP8 weights as llm-compressor writes them: a scale per output row
  # (FP8_DYNAMIC) or per tensor, lm_head and embeddings in BF16; Mixtral's
  # experts in FP8 too.
  "llama-fp8|--arch llama --format fp8 --seed 18"
  "qwen3-fp8-tensor|--arch qwen3 --format fp8-tensor --seed 55"
  "mixtral-fp8|--arch mixtral --format fp8 --seed 84"
  # EXL3 as exllamav3 writes it (random trellis symbols): each codebook,
  # whole and mixed widths, outputs padded to 128 (K/V projections of 64),
  # padded biases (Qwen2), fused projections (Phi-3), experts (Qwen3-MoE),
  # a quantized head beside tied embeddings (Gemma 3, Qwen3), an FP16 head.
  "llama-exl3|--arch llama --format exl3:4.0 --seed 19"
  "qwen3-exl3-mcg|--arch qwen3 --format exl3:3.0:mcg --seed 56 --tie"
  "qwen2-exl3-3inst|--arch qwen2 --format exl3:2.5:3inst --seed 35"
  "phi3-exl3|--arch phi3 --format exl3:5.0 --seed 75 --head-bits 16"
  "qwen3moe-exl3|--arch qwen3_moe --format exl3:3.5 --seed 94"
  "gemma3-exl3|--arch gemma3 --format exl3:4.0 --seed 69 --sliding-window 7 --layers 3 --sliding-window-pattern 3"
  "published-qwen3-8b-exl3|--config-from @CONFIGS@/qwen3-8b.json --format exl3:4.0 --seed 112"
  # Integer weights as llm-compressor, AutoAWQ and GPTQModel write them:
  # compressed-tensors' pack-quantized W4A16 (symmetric with group actorder,
  # and with zero points), W8A16 per channel, naive int8, AutoAWQ's GEMM
  # layout and 8-bit GPTQ, on Llama, Qwen2 (biases) and both mixtures of
  # experts (routers and lm_head left in BF16 or FP16).
  "llama-w4a16-actorder|--arch llama --format w4a16 --group-size 32 --actorder --seed 19"
  "llama-w4a16-asym|--arch llama --format w4a16-asym --group-size 64 --seed 20"
  "llama-w8a16|--arch llama --format w8a16 --seed 24"
  "llama-int8|--arch llama --format int8 --seed 25"
  "llama-awq|--arch llama --format awq --group-size 32 --seed 26"
  "llama-gptq8|--arch llama --format gptq:8 --seed 27"
  "qwen2-w4a16-bias|--arch qwen2 --format w4a16 --group-size 32 --seed 35"
  "qwen2-awq-bias|--arch qwen2 --format awq --group-size 64 --seed 36"
  "qwen3moe-w4a16-asym-actorder|--arch qwen3_moe --format w4a16-asym --group-size 32 --actorder --seed 94"
  "qwen3moe-w8a16|--arch qwen3_moe --format w8a16 --seed 95"
  "qwen3moe-int8|--arch qwen3_moe --format int8 --seed 96"
  "mixtral-awq|--arch mixtral --format awq --group-size 64 --seed 85"
  "mixtral-gptq8|--arch mixtral --format gptq:8 --seed 87"
  # The published config.json files of tests/data/configs, shapes scaled
  # down, every other key as released.
  "published-qwen3-8b|--config-from @CONFIGS@/qwen3-8b.json --seed 111"
  "published-qwen3-30b-a3b|--config-from @CONFIGS@/qwen3-30b-a3b.json --seed 102"
  "published-gemma-2-9b-it|--config-from @CONFIGS@/gemma-2-9b-it.json --seed 103"
  "published-gemma-3-4b-it|--config-from @CONFIGS@/gemma-3-4b-it.json --seed 104"
  "published-phi-3.5-mini-instruct|--config-from @CONFIGS@/phi-3.5-mini-instruct.json --seed 105"
  # Phi-4-mini: grouped heads, RoPE on three quarters of each, a tied head;
  # BF16 as published, FP16, and EXL2 (no lm_head: the head is the embedding).
  "published-phi-4-mini-instruct|--config-from @CONFIGS@/phi-4-mini-instruct.json --seed 107"
  "published-phi-4-mini-instruct-fp16|--config-from @CONFIGS@/phi-4-mini-instruct.json --format fp16 --seed 108"
  "published-phi-4-mini-instruct-exl2|--config-from @CONFIGS@/phi-4-mini-instruct.json --format exl2:4.0 --seed 109"
  "published-mixtral-8x7b-instruct|--config-from @CONFIGS@/mixtral-8x7b-instruct-v0.1.json --seed 106"
)

# Tokens of the greedy continuation each fixture records.
greedy_tokens=6
tokens=$($python -c "import random; r=random.Random(7); print(','.join(str(r.randrange(3, 512)) for _ in range(24)))")
for entry in "${cases[@]}"; do
  name=${entry%%|*}
  args=${entry#*|}
  if ((${#only[@]})) && [[ ! " ${only[*]} " == *" $name "* ]]; then
    continue
  fi
  dir="$work/$name"
  # @CONFIGS@ stands for tests/data/configs wherever the fixture is read.
  # shellcheck disable=SC2086
  "$cli" make-model "$dir" ${args//@CONFIGS@/$here/../data/configs} >/dev/null
  $python "$here/reference_forward.py" "$dir" --tokens "$tokens" > "$work/$name.logits.json"
  # A greedy continuation by the reference: each token the argmax of the
  # logits after the prompt and the tokens before it.
  # EXL3 decode steps round MUL1's inputs to 8 bits and skip the FP16
  # rounding of the other codebooks' values (as llama.cpp rounds its
  # activations): their greedy tokens must win by more.
  margin=1e-3
  [[ "$name" == *exl3* ]] && margin=1e-2
  greedy_list=$($python "$here/reference_forward.py" "$dir" --tokens "$tokens" --greedy "$greedy_tokens" --margin "$margin")
  $python - "$name" "$args" "$tokens" "$dir" "$work/$name.logits.json" "$out/$name.json" "$greedy_list" <<'PY'
import hashlib, json, os, sys
name, args, tokens, directory, logits_path, target, greedy = sys.argv[1:]
digests = {}
for file in sorted(os.listdir(directory)):
    with open(os.path.join(directory, file), "rb") as f:
        digests[file] = hashlib.sha256(f.read()).hexdigest()
with open(logits_path) as f:
    logits = json.load(f)["logits"]
# Every fourth position keeps the files small; the last one is always there.
positions = list(range(3, len(logits), 4))
rows = [[float("%.7g" % v) for v in logits[p]] for p in positions]
fixture = {"name": name, "make_model": args.split(), "tokens": [int(t) for t in tokens.split(",")],
           "sha256": digests, "positions": positions, "logits": rows,
           "greedy": [int(t) for t in greedy.split(",")]}
with open(target, "w") as f:
    json.dump(fixture, f, separators=(",", ":"))
    f.write("\n")
PY
  echo "wrote $out/$name.json"
done

# M-RoPE: Qwen2.5-VL's language model over a prompt laid out as two images
# would be (tests/data/reference_mrope/, read by test_mrope_golden).
mrope_cases=(
  "qwen25vl-mrope-fp16|--arch qwen2 --format fp16 --seed 38 --hidden 256"
)
for entry in "${mrope_cases[@]}"; do
  name=${entry%%|*}
  args=${entry#*|}
  if ((${#only[@]})) && [[ ! " ${only[*]} " == *" $name "* ]]; then
    continue
  fi
  # shellcheck disable=SC2086
  PYTHON=$python $python "$here/make_mrope_fixture.py" "$cli" "$name" "$here/../data/reference_mrope" $args
done
