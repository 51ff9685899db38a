#!/usr/bin/python3
"""One mistral3-vision-* fixture (make_vision_fixtures.sh describes the format).

    mistral3_fixture_case.py QUIRE_CLI MODEL_DIR NAME "MAKE-MODEL ARGS" OUT.json PROMPT...

PROMPT: the prompt's parts in order, text or @IMAGE:HxW@ for an image whose
pixel tensor (as PixtralImageProcessor would give it) is 3 x H x W. Each
image becomes PixtralProcessor's rows of [IMG] with [IMG_BREAK] and
[IMG_END] (reference_mistral3_prompt.py); the text pieces between images are
tokenized by the model's tokenizer (`quire-cli tokenize`; the first piece
with BOS). The logits come from reference_forward.py's forward with the
images' rows over the [IMG] positions, causal attention; a control without
the images (every position from the embedding table) shows what they change.
"""
import hashlib
import json
import os
import re
import subprocess
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import reference_forward  # noqa: E402
import reference_mistral3_prompt  # noqa: E402
from reference_weights import load_tensors  # noqa: E402
from vision_fixture_pixels import FORMULA, fixture_pixels  # noqa: E402

IMAGE = re.compile(r"^@IMAGE:(\d+)x(\d+)@$")
# [IMG_BREAK] and [IMG_END] as Mistral Small 3.1's tokenizer numbers them;
# config.json names only the image token.
IMAGE_BREAK = 12
IMAGE_END = 13
GREEDY_TOKENS = 4
GREEDY_MARGIN = 1e-3


def tokenize(cli, model_dir, text, bos):
    command = [cli, "tokenize", model_dir, "--text", text] + ([] if bos else ["--no-bos"])
    return json.loads(subprocess.run(command, check=True, capture_output=True,
                                     text=True).stdout)


def main():
    cli, model_dir, name, make_args, target = sys.argv[1:6]
    parts = sys.argv[6:]
    settings = reference_mistral3_prompt.read_settings(model_dir)
    special = {settings["image"], IMAGE_BREAK, IMAGE_END}
    tokens, images, pixels = [], [], []
    for index, part in enumerate(parts):
        shape = IMAGE.match(part)
        if not shape:
            text_ids = tokenize(cli, model_dir, part, bos=index == 0)
            clash = sorted(set(text_ids) & special)
            if clash:
                raise SystemExit("the text %r tokenizes to the image id(s) %s of this random "
                                 "model; choose other words" % (part, clash))
            tokens += text_ids
            continue
        height, width = int(shape.group(1)), int(shape.group(2))
        phase = len(images)
        image = reference_mistral3_prompt.image_tokens(
            height, width, settings["token_pixels"], settings["image"], IMAGE_BREAK, IMAGE_END)
        runs, first = [], len(tokens)
        for offset, token in enumerate(image):
            if token != settings["image"]:
                continue
            if runs and runs[-1][0] + runs[-1][1] == first + offset:
                runs[-1][1] += 1
            else:
                runs.append([first + offset, 1])
        images.append({"height": height, "width": width, "runs": runs,
                       "pixels": {"formula": FORMULA, "shape": [3, height, width],
                                  "phase": phase}})
        pixels.append(fixture_pixels([3, height, width], phase))
        tokens += image

    config = reference_forward.read_config(model_dir)
    tensors = load_tensors(model_dir)
    inputs = reference_mistral3_prompt.image_input(model_dir, pixels)
    with torch.no_grad():
        logits = reference_forward.forward(config, tensors, tokens, inputs)
        logits_text = reference_forward.forward(config, tensors, tokens, None)
        chosen = []
        for _ in range(GREEDY_TOKENS):
            last = reference_forward.forward(config, tensors, tokens + chosen, inputs)[-1]
            top = torch.topk(last, 2)
            margin = float(top.values[0] - top.values[1])
            if margin < GREEDY_MARGIN * float(last.abs().max()):
                raise SystemExit("the greedy token after %d tokens is a near tie (margin %.3g); "
                                 "choose another seed" % (len(tokens) + len(chosen), margin))
            chosen.append(int(top.indices[0]))

    # The rows kept: the position before each image (text the image cannot
    # change), every position of the image ([IMG], [IMG_BREAK], [IMG_END]),
    # and the prompt's last position.
    positions = set([len(tokens) - 1])
    for image in images:
        begin = image["runs"][0][0]
        end = image["runs"][-1][0] + image["runs"][-1][1] + 1  # through [IMG_END]
        positions.update(range(begin - 1, end))
    positions = sorted(positions)

    def rows(values):
        return [[float("%.7g" % v) for v in values[p].tolist()] for p in positions]

    difference = float((logits - logits_text)[positions].abs().max())
    scale = float(logits[positions].abs().max())
    sys.stderr.write("%s: with vs without the images: largest difference %.4g (%.3g of the "
                     "largest logit %.4g)\n" % (name, difference, difference / scale, scale))

    digests = {}
    for file in sorted(os.listdir(model_dir)):
        with open(os.path.join(model_dir, file), "rb") as f:
            digests[file] = hashlib.sha256(f.read()).hexdigest()
    fixture = {
        "name": name, "make_model": make_args.split(), "prompt": parts, "tokens": tokens,
        "image_token": settings["image"], "image_break_token": IMAGE_BREAK,
        "image_end_token": IMAGE_END, "images": images, "sha256": digests,
        "positions": positions, "logits": rows(logits), "logits_text": rows(logits_text),
        "greedy": chosen,
    }
    with open(target, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
