#!/usr/bin/python3
"""One gemma3-vision-* fixture (make_vision_fixtures.sh describes the format).

    vision_fixture_case.py QUIRE_CLI MODEL_DIR NAME "MAKE-MODEL ARGS" OUT.json PROMPT...

PROMPT: the prompt's parts in order, text or the word @IMAGE@ for an image.
Each image becomes the sequence Gemma3Processor puts in its place,
"\\n\\n" <boi> <image token> x mm_tokens_per_image <eoi> "\\n\\n": the special
ids split the text there, so the text before an image (with "\\n\\n" at its
end) and after it (with "\\n\\n" at its start) are tokenized as separate
pieces by the model's tokenizer (`quire-cli tokenize`; the first piece with
BOS). The logits come from reference_forward.py's forward with the images'
embeddings (reference_image_prompt.py), once with the bidirectional image
blocks (as transformers) and once with a purely causal mask.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import reference_forward  # noqa: E402
import reference_image_prompt  # noqa: E402
from reference_weights import load_tensors  # noqa: E402
from vision_fixture_pixels import FORMULA, fixture_pixels  # noqa: E402

IMAGE = "@IMAGE@"
GREEDY_TOKENS = 4
GREEDY_MARGIN = 1e-3


def tokenize(cli, model_dir, text, bos):
    command = [cli, "tokenize", model_dir, "--text", text] + ([] if bos else ["--no-bos"])
    return json.loads(subprocess.run(command, check=True, capture_output=True,
                                     text=True).stdout)


def prompt_tokens(cli, model_dir, parts, ids):
    """Token ids of the prompt and, per image, the position of its first image
    token."""
    pieces, current = [], ""
    for part in parts:
        if part == IMAGE:
            pieces.append(current + "\n\n")
            pieces.append(IMAGE)
            current = "\n\n"
        else:
            current += part
    pieces.append(current)
    tokens, firsts = [], []
    for index, piece in enumerate(pieces):
        if piece == IMAGE:
            firsts.append(len(tokens) + 1)
            tokens += [ids["boi"]] + [ids["image"]] * ids["per_image"] + [ids["eoi"]]
            continue
        text_ids = tokenize(cli, model_dir, piece, bos=index == 0)
        clash = sorted(set(text_ids) & {ids["boi"], ids["eoi"], ids["image"]})
        if clash:
            raise SystemExit("the text %r tokenizes to the image id(s) %s of this random "
                             "model; choose other words" % (piece, clash))
        tokens += text_ids
    return tokens, firsts


def model_ids(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    image, per_image, channels, size = reference_image_prompt.read_image_settings(model_dir)
    return {"image": image, "per_image": per_image, "boi": config["boi_token_index"],
            "eoi": config["eoi_token_index"], "shape": [channels, size, size]}


def greedy(config, tensors, tokens, images):
    """reference_forward.py's --greedy with the images: each token the argmax
    after the prompt and the tokens before it, each winning by a clear margin."""
    chosen = []
    for _ in range(GREEDY_TOKENS):
        last = reference_forward.forward(config, tensors, tokens + chosen, images)[-1]
        top = torch.topk(last, 2)
        margin = float(top.values[0] - top.values[1])
        if margin < GREEDY_MARGIN * float(last.abs().max()):
            raise SystemExit("the greedy token after %d tokens is a near tie (margin %.3g); "
                             "choose another seed" % (len(tokens) + len(chosen), margin))
        chosen.append(int(top.indices[0]))
    return chosen


def main():
    cli, model_dir, name, make_args, target = sys.argv[1:6]
    parts = sys.argv[6:]
    ids = model_ids(model_dir)
    tokens, firsts = prompt_tokens(cli, model_dir, parts, ids)

    work = tempfile.mkdtemp()
    pixel_files = []
    for phase in range(len(firsts)):
        path = os.path.join(work, "image%d.f32" % phase)
        fixture_pixels(ids["shape"], phase).astype("<f4").tofile(path)
        pixel_files.append(path)

    config = reference_forward.read_config(model_dir)
    tensors = load_tensors(model_dir)
    images = reference_image_prompt.image_input(model_dir, pixel_files, bidirectional=True)
    causal = reference_image_prompt.image_input(model_dir, pixel_files, bidirectional=False)
    with torch.no_grad():
        logits = reference_forward.forward(config, tensors, tokens, images)
        logits_causal = reference_forward.forward(config, tensors, tokens, causal)
        continuation = greedy(config, tensors, tokens, images)
    for path in pixel_files:
        os.remove(path)
    os.rmdir(work)

    # The rows kept: each image's boi (text before it, which the images cannot
    # change), its image tokens, its eoi (the first text after it), and the
    # prompt's last position.
    count = ids["per_image"]
    positions = set([len(tokens) - 1])
    for first in firsts:
        positions.update(range(first - 1, first + count + 1))
    positions = sorted(positions)

    def rows(values):
        return [[float("%.7g" % v) for v in values[p].tolist()] for p in positions]

    difference = float((logits - logits_causal)[positions].abs().max())
    scale = float(logits[positions].abs().max())
    sys.stderr.write("%s: bidirectional vs causal image attention: largest difference %.4g "
                     "(%.3g of the largest logit %.4g)\n"
                     % (name, difference, difference / scale, scale))

    digests = {}
    for file in sorted(os.listdir(model_dir)):
        with open(os.path.join(model_dir, file), "rb") as f:
            digests[file] = hashlib.sha256(f.read()).hexdigest()
    fixture = {
        "name": name, "make_model": make_args.split(), "prompt": parts, "tokens": tokens,
        "image_token": ids["image"], "boi_token": ids["boi"], "eoi_token": ids["eoi"],
        "images": [{"first": first, "count": count,
                    "pixels": {"formula": FORMULA, "shape": ids["shape"], "phase": phase}}
                   for phase, first in enumerate(firsts)],
        "sha256": digests, "positions": positions, "logits": rows(logits),
        "logits_causal": rows(logits_causal), "greedy": continuation,
    }
    with open(target, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")


if __name__ == "__main__":
    main()
