"""Images inside a Gemma 3 prompt, as transformers' Gemma3Model.forward takes
them (models/gemma3/modeling_gemma3.py), for reference_forward.py.

- Each image's embeddings are the vision tower and projector's output
  (reference_vision.py, float64). They replace the embeddings of the
  positions whose id is config.json's image_token_index, in order,
  mm_tokens_per_image positions per image (get_placeholder_mask and
  masked_scatter). Text embeddings are scaled by sqrt(hidden_size); the image
  rows are not: they replace the already scaled embeddings as they are.
- Attention: the positions of one contiguous run of image tokens attend to
  each other in both directions (create_causal_mask_mapping numbers the runs,
  token_type_ids_mask_function allows query and key of the same run). That
  permission is OR-ed onto the causal mask AND onto the sliding-window causal
  mask (masking_utils: or_masks over sliding_window_causal_mask_function), so
  on sliding layers an image's positions see every position of their run even
  where the run is longer than the window, while text, and an image position
  looking at anything outside its run, keep the causal (windowed) mask. A run
  cannot see a later run. Older transformers (4.50 to 4.52, before
  masking_utils) built it differently: every image token of the prompt saw
  every other one, whichever image it belonged to, and sliding layers then
  hid the keys a window or more behind the query, image keys included. This
  follows the current code.
- The boi and eoi tokens around an image are text: token_type_ids is 1 only
  where the id is the image token.
"""
import json
import os

import numpy as np
import torch

import reference_vision


def read_image_settings(model_dir):
    """(image token id, mm_tokens_per_image, channels, image size) from
    config.json, with Gemma3Config's and SiglipVisionConfig's defaults."""
    with open(os.path.join(model_dir, "config.json")) as f:
        raw = json.load(f)
    if "vision_config" not in raw:
        raise SystemExit("%s/config.json has no vision_config: the model takes no images"
                         % model_dir)
    token = raw.get("image_token_index", raw.get("image_token_id", 262144))
    per_image = raw.get("mm_tokens_per_image") or 256
    vision = dict(reference_vision.SIGLIP_DEFAULTS)
    vision.update({k: v for k, v in raw["vision_config"].items() if v is not None})
    return token, per_image, vision["num_channels"], vision["image_size"]


def image_embeddings(model_dir, pixel_files):
    """One float64 tensor [mm_tokens_per_image, hidden] per pixel file (raw
    little-endian float32, channels x size x size), through reference_vision's
    SigLIP tower and Gemma 3 projector."""
    with open(os.path.join(model_dir, "config.json")) as f:
        raw = json.load(f)
    cfg = dict(reference_vision.SIGLIP_DEFAULTS)
    cfg.update({k: v for k, v in raw["vision_config"].items() if v is not None})
    _, per_image, channels, size = read_image_settings(model_dir)
    tensors = reference_vision.model_tensors(model_dir)
    prefixes = [pair for pair in reference_vision.TOWER_PREFIXES
                if pair[0] + "embeddings.patch_embedding.weight" in tensors]
    if not prefixes:
        raise SystemExit(model_dir + " holds no vision tower")
    tower, projector = prefixes[0]
    out = []
    for path in pixel_files:
        pixels = np.fromfile(path, dtype="<f4")
        if pixels.size != channels * size * size:
            raise SystemExit("%s holds %d floats; an image of this model is %d x %d x %d = %d "
                             "(channels x image_size x image_size, float32)"
                             % (path, pixels.size, channels, size, size,
                                channels * size * size))
        pixels = pixels.astype(np.float64).reshape(channels, size, size)
        rows = reference_vision.project(reference_vision.siglip(pixels, cfg, tensors, tower),
                                        cfg, per_image, tensors, projector)
        out.append(torch.from_numpy(rows))
    return out


def image_positions(tokens, image_token, per_image, images):
    """Positions of the image tokens, checked against the images given: as
    get_placeholder_mask, there must be exactly per_image of them per image."""
    positions = [i for i, token in enumerate(tokens) if token == image_token]
    if len(positions) != per_image * images:
        raise SystemExit("the tokens hold %d image tokens (id %d); %d image(s) of %d tokens "
                         "each need %d" % (len(positions), image_token, images, per_image,
                                           per_image * images))
    return positions


def image_runs(tokens, image_token):
    """create_causal_mask_mapping's image_group_ids: each contiguous run of
    image tokens numbered from 0, text -1."""
    groups, current, previous_image = [], -1, False
    for token in tokens:
        is_image = token == image_token
        if is_image and not previous_image:
            current += 1
        groups.append(current if is_image else -1)
        previous_image = is_image
    return torch.tensor(groups, dtype=torch.int64)


def bidirectional_blocks(tokens, image_token):
    """[query, key] booleans: True where both are image tokens of the same run
    (token_type_ids_mask_function), to be OR-ed onto every layer's mask."""
    groups = image_runs(tokens, image_token)
    return (groups[:, None] == groups[None, :]) & (groups[:, None] >= 0)


class ImageInput:
    """What forward() needs: the rows that replace the image tokens'
    embeddings (all images, in order) and whether an image's run attends
    within itself in both directions (False: the causal control)."""

    def __init__(self, image_token, per_image, rows, bidirectional):
        self.image_token = image_token
        self.per_image = per_image
        self.rows = rows
        self.bidirectional = bidirectional

    def positions(self, tokens):
        images = self.rows.shape[0] // self.per_image
        return torch.tensor(image_positions(tokens, self.image_token, self.per_image, images),
                            dtype=torch.int64)

    def blocks(self, tokens):
        """Permissions to OR onto every layer's mask, or None."""
        return bidirectional_blocks(tokens, self.image_token) if self.bidirectional else None


def image_input(model_dir, pixel_files, bidirectional=True):
    image_token, per_image, _, _ = read_image_settings(model_dir)
    rows = torch.cat(image_embeddings(model_dir, pixel_files), dim=0)
    return ImageInput(image_token, per_image, rows, bidirectional)
