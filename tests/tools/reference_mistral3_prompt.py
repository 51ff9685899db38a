"""Images inside a Mistral Small 3.x prompt, as transformers takes them, for
reference_forward.py.

- The prompt (models/pixtral/processing_pixtral.py, PixtralProcessor): each
  [IMG] the chat template writes becomes rows of [IMG] tokens, one row per
  patch_size * spatial_merge_size pixels of the resized image's height and
  one [IMG] per as many of its width, each row followed by [IMG_BREAK] and
  the last by [IMG_END] instead. [IMG_BREAK] and [IMG_END] are ordinary
  tokens whose embeddings come from the table.
- The embeddings (models/mistral3/modeling_mistral3.py, Mistral3Model):
  get_image_features runs the Pixtral tower and the Mistral 3 projector
  (reference_pixtral.py, float64), one row per [IMG] in reading order;
  get_placeholder_mask finds the positions whose id is config.json's
  image_token_index, checks that they are as many as the rows, and
  masked_scatter writes the rows there, in order, over the text embeddings,
  which Mistral does not scale.
- Attention: the language model's own causal mask (and its sliding window
  when text_config sets one); image positions get no blocks of their own.
"""
import json
import os

import numpy as np
import torch

import reference_pixtral
import reference_vision


def read_settings(model_dir):
    """config.json's image token id, the pixels per [IMG] on a side and the
    tower's largest side, with Mistral3Config's and PixtralVisionConfig's
    defaults."""
    with open(os.path.join(model_dir, "config.json")) as f:
        raw = json.load(f)
    if "vision_config" not in raw:
        raise SystemExit("%s/config.json has no vision_config: the model takes no images"
                         % model_dir)
    vision = dict(reference_pixtral.PIXTRAL_DEFAULTS)
    vision.update({k: v for k, v in raw["vision_config"].items() if v is not None})
    merge = raw.get("spatial_merge_size") or reference_pixtral.MISTRAL3_DEFAULTS[
        "spatial_merge_size"]
    token = raw.get("image_token_index", raw.get("image_token_id", 10))
    return {"image": token, "token_pixels": vision["patch_size"] * merge,
            "image_size": vision["image_size"], "config": raw}


def image_tokens(height, width, token_pixels, image, image_break, image_end):
    """PixtralProcessor's replacement for one image of height x width
    pixels (already resized): rows of [IMG], each ended by [IMG_BREAK], the
    last by [IMG_END]; as ids."""
    rows, columns = height // token_pixels, width // token_pixels
    tokens = ([image] * columns + [image_break]) * rows
    tokens[-1] = image_end
    return tokens


def image_embeddings(model_dir, images):
    """One float64 tensor [rows * columns, text hidden] per (pixels) array
    of shape [3, height, width], through reference_pixtral's tower and
    projector."""
    settings = read_settings(model_dir)
    tensors = reference_vision.model_tensors(model_dir)
    out = []
    for pixels in images:
        _, height, width = pixels.shape
        step = settings["token_pixels"]
        if height % step or width % step or max(height, width) > settings["image_size"]:
            raise SystemExit("an image of %d x %d pixels is not what PixtralImageProcessor "
                             "gives this model (multiples of %d, at most %d)"
                             % (height, width, step, settings["image_size"]))
        rows = reference_pixtral.mistral3_embeddings(settings["config"],
                                                     pixels.astype(np.float64), tensors)
        out.append(torch.from_numpy(rows))
    return out


class Mistral3ImageInput:
    """What reference_forward.forward() needs: the rows over the [IMG]
    positions (all images, in order) and no attention blocks."""

    def __init__(self, image_token, rows):
        self.image_token = image_token
        self.rows = rows

    def positions(self, tokens):
        positions = [i for i, token in enumerate(tokens) if token == self.image_token]
        if len(positions) != self.rows.shape[0]:
            raise SystemExit("the tokens hold %d image tokens (id %d) and the images give %d "
                             "rows (get_placeholder_mask refuses that)"
                             % (len(positions), self.image_token, self.rows.shape[0]))
        return torch.tensor(positions, dtype=torch.int64)

    def blocks(self, tokens):
        return None


def image_input(model_dir, images):
    settings = read_settings(model_dir)
    return Mistral3ImageInput(settings["image"], torch.cat(image_embeddings(model_dir, images),
                                                           dim=0))
