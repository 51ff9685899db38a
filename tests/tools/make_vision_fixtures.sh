#!/usr/bin/env bash
# Regenerates tests/data/reference/gemma3-vision-*.json and
# mistral3-vision-*.json. gemma3-vision-*: logits of Gemma 3
# prompts that hold images, for small random models made by
# `quire-cli make-model --arch gemma3 --multimodal`, computed by
# tests/tools/reference_forward.py with tests/tools/reference_image_prompt.py
# (PyTorch and numpy in float64, following transformers' Gemma3Model: the
# SigLIP tower and projector's rows over the image tokens, unscaled, and each
# image's run of tokens attending to itself in both directions, on sliding
# layers too) -- an implementation independent of Quire's engine.
#
#   tests/tools/make_vision_fixtures.sh build/test/app/cli/quire-cli [NAME...]
#
# With names, only those cases are written. Needs python3 with torch and
# numpy (Debian: python3-torch python3-numpy); the tests never run it.
#
# Fixture format (one JSON object):
#   name          the case's name (the file is NAME.json)
#   make_model    `quire-cli make-model DIR` arguments that make the model
#   sha256        file name -> SHA-256 of every file make-model wrote: the
#                 logits belong to exactly these files
#   prompt        the prompt's parts as given below (text, "@IMAGE@" per image)
#   tokens        the prompt's token ids: text as the model's tokenizer gives
#                 it (BOS first), each image as Gemma3Processor spells it,
#                 "\n\n" boi image_token x count eoi "\n\n"
#   image_token, boi_token, eoi_token
#                 config.json's image_token_index, boi_token_index and
#                 eoi_token_index (read config.json; these repeat it)
#   images        one entry per image, in prompt order:
#                   first   index in tokens of its first image token
#                   count   its image tokens (config.json's mm_tokens_per_image)
#                   pixels  {"formula", "shape": [C, H, W], "phase": k}: the
#                           pixel_values the tower takes, float32, channels
#                           x image_size x image_size; with i the flat index
#                           (channel, then row, then column),
#                           v[i] = ((i * 40503 + k * 7919 + 12345) mod 65536)
#                                  / 32768 - 1, exact in float32
#                           (vision_fixture_pixels.py)
#   positions     the positions whose logits are kept: each image's boi, its
#                 image tokens and its eoi, and the prompt's last position
#   logits        one row per kept position: the vocabulary's logits after the
#                 whole prompt is prefilled as transformers does (7 digits)
#   logits_causal the same positions with a purely causal mask (images still
#                 embedded): a control that shows what the image blocks change
#   greedy        4 tokens chosen greedily after the prompt (with its images),
#                 each winning by at least 1e-3 of the largest logit
#
# The greedy tokens come from a reference without a cache that reruns the
# whole prompt; the images' blocks stay as they were at prefill, so they are
# what a cached decode after one prefill gives.
#
# mistral3-vision-*: logits of Mistral Small 3 prompts with images, for
# models made by `quire-cli make-model --arch mistral --multimodal`, computed
# by tests/tools/mistral3_fixture_case.py with reference_mistral3_prompt.py
# (following transformers' PixtralProcessor and Mistral3Model: the Pixtral
# tower and Mistral 3 projector's rows over the [IMG] tokens, causal
# attention). Fields as above, except:
#   prompt        text parts and "@IMAGE:HxW@" per image (a 3 x H x W pixel
#                 tensor, H and W multiples of patch_size * spatial_merge_size)
#   tokens        each image as PixtralProcessor spells it: per row of the
#                 merged patch grid, [IMG] x columns then [IMG_BREAK], the last
#                 row's break replaced by [IMG_END]
#   image_token, image_break_token, image_end_token
#                 config.json's image_token_index; 12 and 13 as in Mistral
#                 Small 3.1's tokenizer (plain text tokens to the model)
#   images        per image: height, width, runs (one [first, count] per row
#                 of [IMG] tokens), pixels ({"formula", "shape", "phase"} as
#                 above, shape [3, H, W])
#   positions     the position before each image, all of the image's own
#                 positions, and the prompt's last
#   logits_text   the same positions with no images at all (every token's
#                 row from the embedding table): a control that shows what
#                 the images change
#   greedy        as above, with the images, causal attention throughout
set -euo pipefail
cli=${1:?usage: make_vision_fixtures.sh path/to/quire-cli [NAME...]}
cli=$(realpath "$cli")
shift
only=("$@")
here=$(cd "$(dirname "$0")" && pwd)
out="$here/../data/reference"
python=${PYTHON:-/usr/bin/python3}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# name | make-model arguments | prompt parts (@IMAGE@ for an image), "|"-separated
cases=(
  # The published layout (language_model.model.), FP16; 56x56 images in
  # patches of 14 pooled to 4 tokens; a window of 2 on the sliding layers
  # (two in three), shorter than the image's 4 tokens, so an image token
  # sees the whole image only through its block.
  "gemma3-vision-fp16-window|--arch gemma3 --multimodal --format fp16 --seed 201 --layers 3 --sliding-window-pattern 3 --sliding-window 2|Describe the picture|@IMAGE@|in one word."
  # Newer transformers' layout (model.language_model.), BF16, two images:
  # each image's block is its own, the second image's tokens see the first
  # only causally; a window of 8 reaches from the second image into the
  # text between them.
  "gemma3-vision-new-layout-two-images|--arch gemma3 --multimodal --text-prefix model.language_model. --format bf16 --seed 202 --layers 3 --sliding-window-pattern 3 --sliding-window 8|Compare|@IMAGE@|with|@IMAGE@|Which is brighter?"
  # Mistral Small 3 as published (language_model.model., language_model.lm_head),
  # FP16, full attention; a 56 x 56 image: two rows of two [IMG].
  "mistral3-vision-fp16|--arch mistral --multimodal --format fp16 --seed 301 --layers 2 --no-tie|Describe the picture|@IMAGE:56x56@|in one word."
  # Newer transformers' layout (model.language_model., lm_head), BF16, a
  # window of 5 on every layer, two images of other shapes: two rows of one
  # [IMG], then one row of two.
  "mistral3-vision-new-layout-two-images|--arch mistral --multimodal --text-prefix model.language_model. --format bf16 --seed 302 --layers 2 --sliding-window 5 --no-tie|Compare|@IMAGE:56x28@|with|@IMAGE:28x56@|Which is brighter?"
)

for entry in "${cases[@]}"; do
  IFS='|' read -r -a fields <<<"$entry"
  name=${fields[0]}
  args=${fields[1]}
  prompt=("${fields[@]:2}")
  if ((${#only[@]})) && [[ ! " ${only[*]} " == *" $name "* ]]; then
    continue
  fi
  dir="$work/$name"
  # shellcheck disable=SC2086
  "$cli" make-model "$dir" $args >/dev/null
  case_script=vision_fixture_case.py
  [[ $name == mistral3-* ]] && case_script=mistral3_fixture_case.py
  $python "$here/$case_script" "$cli" "$dir" "$name" "$args" "$out/$name.json" \
    "${prompt[@]}"
  echo "wrote $out/$name.json"
done
