#!/usr/bin/python3
"""Writes a Qwen2.5-VL golden fixture (tests/data/reference/NAME.json) for
test_engine_images' QwenImageGoldenTest: logits of a prompt that holds an
image, for a small random model made by `quire-cli make-model --arch
qwen2_5_vl`, computed as transformers' Qwen2_5_VLModel does
(models/qwen2_5_vl/modeling_qwen2_5_vl.py), in float64:

- the prompt as Qwen2_5_VLProcessor lays it out: <|vision_start|>, the
  image token repeated grid_t * grid_h * grid_w / merge_size^2 times,
  <|vision_end|>, with the text before and after tokenized by the model's
  tokenizer (`quire-cli tokenize`);
- the image's rows: the vision tower and patch merger (reference_vision.py's
  qwen25_vision) over the image's patches, scattered in order over the
  image token's positions (get_placeholder_mask, masked_scatter), text
  embeddings unscaled;
- positions: get_rope_index (reference_mrope.py) over the whole prompt, and
  M-RoPE in every layer (reference_forward.py); attention causal throughout;
- greedy decoding: each next token is the argmax after the prompt and the
  tokens before it; a generated token in slot p turns by p + rope_delta on
  every axis (transformers adds rope_deltas to the cache position), which is
  what get_rope_index gives over the longer sequence.

    make_qwen_vision_fixture.py QUIRE_CLI [OUT_DIR]

Fixture format (one JSON object):
  name, make_model, sha256   as the gemma3-vision-* fixtures
                             (make_vision_fixtures.sh)
  tokens        the prompt's ids, the image's positions as the image token
  image_token, vision_start, vision_end   config.json's ids
  images        per image: first (index of its first image token), count,
                grid_thw (in patches, as the image processor gives it), and
                pixels {"formula", "shape": [patches, values], "phase"}: the
                patches the tower reads, float32 (vision_fixture_pixels.py's
                formula over the flat index)
  position_ids  get_rope_index's [3][tokens]; rope_delta
  positions     the rows of `logits`: the token before the image, the
                image's tokens, <|vision_end|> and the rest of the prompt
  logits        those rows after the whole prompt (7 digits)
  greedy        tokens chosen greedily after the prompt, each winning by at
                least 1e-3 of the largest logit
  greedy_logits the rows after each greedy token but the last (the logits
                that chose the next one), so decode steps are compared too
  greedy_slots  the greedy tokens the reference chooses when generated
                tokens turn by their slot instead of slot + rope_delta: a
                control that must differ from `greedy`
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import reference_forward  # noqa: E402
import reference_mrope  # noqa: E402
import reference_vision  # noqa: E402
from reference_weights import load_tensors  # noqa: E402
from vision_fixture_pixels import FORMULA  # noqa: E402

NAME = "qwen25vl-vision-fp16"
MAKE_MODEL = ["--arch", "qwen2_5_vl", "--format", "fp16", "--seed", "304", "--layers", "2"]
# The image's grid in patches: 8 x 12, merged 2 x 2 into 4 x 6 tokens, so
# its ids span 6 columns for 24 tokens (rope_delta -18).
GRID = [1, 8, 12]
BEFORE, AFTER = "Describe the picture", "in one word."
GREEDY_TOKENS = 4
GREEDY_MARGIN = 1e-3


class QwenImageInput:
    """reference_forward.forward's images: the tower's rows over the image
    token's positions, causal attention (no blocks)."""

    def __init__(self, image_token, rows):
        self.image_token = image_token
        self.rows = rows

    def positions(self, tokens):
        found = [i for i, token in enumerate(tokens) if token == self.image_token]
        if len(found) != self.rows.shape[0]:
            raise SystemExit("%d image tokens for %d rows" % (len(found), self.rows.shape[0]))
        return torch.tensor(found, dtype=torch.int64)

    def blocks(self, tokens):
        return None


def tokenize(cli, model_dir, text, bos):
    command = [cli, "tokenize", model_dir, "--text", text] + ([] if bos else ["--no-bos"])
    return json.loads(subprocess.run(command, check=True, capture_output=True,
                                     text=True).stdout)


def patches(shape, phase):
    """vision_fixture_pixels' formula over a [patches, values] tensor."""
    index = np.arange(shape[0] * shape[1], dtype=np.int64)
    values = ((index * 40503 + phase * 7919 + 12345) % 65536).astype(np.float64) / 32768.0 - 1.0
    return values.astype(np.float32).reshape(shape)


def main():
    cli = os.path.realpath(sys.argv[1])
    out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "..", "data", "reference")
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, NAME)
        subprocess.run([cli, "make-model", model] + MAKE_MODEL, check=True,
                       stdout=subprocess.DEVNULL)
        with open(os.path.join(model, "config.json")) as f:
            raw = json.load(f)
        image_token = raw["image_token_id"]
        start, end = raw["vision_start_token_id"], raw["vision_end_token_id"]
        vision = dict(reference_vision.QWEN_DEFAULTS)
        vision.update({k: v for k, v in raw["vision_config"].items() if v is not None})
        merge = vision["spatial_merge_size"]
        count = GRID[0] * GRID[1] * GRID[2] // (merge * merge)

        before = tokenize(cli, model, BEFORE, bos=True)
        after = tokenize(cli, model, AFTER, bos=False)
        clash = sorted(set(before + after) & {image_token, start, end})
        if clash:
            raise SystemExit("the text tokenizes to the vision id(s) %s" % clash)
        first = len(before) + 1
        tokens = before + [start] + [image_token] * count + [end] + after

        values = 3 * vision["temporal_patch_size"] * vision["patch_size"] ** 2
        shape = [GRID[0] * GRID[1] * GRID[2], values]
        pixels = patches(shape, 0)
        t = reference_vision.model_tensors(model)
        prefix = [p for p in ("visual.", "model.visual.") if p + "patch_embed.proj.weight" in t][0]
        rows = reference_vision.qwen25_vision(pixels.astype(np.float64), vision, [GRID], t, prefix)
        images = QwenImageInput(image_token, torch.from_numpy(rows))

        config = reference_forward.read_config(model)
        tensors = load_tensors(model)

        def rope(sequence):
            ids, delta = reference_mrope.get_rope_index(sequence, image_token, start, merge,
                                                        [GRID])
            return ids.tolist(), delta

        def by_slot(sequence):
            """The control: generated tokens turn by their slot."""
            ids, _ = rope(tokens)
            for p in range(len(tokens), len(sequence)):
                for axis in range(3):
                    ids[axis].append(p)
            return ids

        def greedy(positions_of, check_margin):
            chosen = []
            for _ in range(GREEDY_TOKENS):
                sequence = tokens + chosen
                last = reference_forward.forward(config, tensors, sequence, images,
                                                 positions_of(sequence))[-1]
                top = torch.topk(last, 2)
                margin = float(top.values[0] - top.values[1])
                if check_margin and margin < GREEDY_MARGIN * float(last.abs().max()):
                    raise SystemExit("the greedy token after %d tokens is a near tie (margin "
                                     "%.3g); choose another seed" % (len(sequence), margin))
                chosen.append(int(top.indices[0]))
            return chosen

        with torch.no_grad():
            position_ids, delta = rope(tokens)
            logits = reference_forward.forward(config, tensors, tokens, images, position_ids)
            continuation = greedy(lambda s: rope(s)[0], True)
            control = greedy(by_slot, False)
            whole = tokens + continuation
            decode_logits = reference_forward.forward(config, tensors, whole, images,
                                                      rope(whole)[0])
        if control == continuation:
            raise SystemExit("the control (slots without rope_delta) chooses the same tokens; "
                             "choose another seed or grid")
        positions = list(range(first - 1, len(tokens)))
        decode_rows = list(range(len(tokens), len(whole) - 1))

        def rows_of(values, which):
            return [[float("%.7g" % v) for v in values[p].tolist()] for p in which]

        digests = {}
        for file in sorted(os.listdir(model)):
            with open(os.path.join(model, file), "rb") as f:
                digests[file] = hashlib.sha256(f.read()).hexdigest()
        fixture = {
            "name": NAME, "make_model": MAKE_MODEL, "sha256": digests, "tokens": tokens,
            "image_token": image_token, "vision_start": start, "vision_end": end,
            "images": [{"first": first, "count": count, "grid_thw": GRID,
                        "pixels": {"formula": FORMULA, "shape": shape, "phase": 0}}],
            "position_ids": position_ids, "rope_delta": delta, "positions": positions,
            "logits": rows_of(logits, positions), "greedy": continuation,
            "greedy_logits": rows_of(decode_logits, decode_rows), "greedy_slots": control,
        }
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, NAME + ".json")
    with open(target, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
    sys.stderr.write("rope_delta %d, greedy %s, control %s\n" % (delta, continuation, control))
    print("wrote " + target)


if __name__ == "__main__":
    main()
