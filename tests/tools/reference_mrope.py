"""M-RoPE position ids of a prompt with images, as transformers'
Qwen2_5_VLModel.get_rope_index computes them (models/qwen2_5_vl), written
with numpy so that no torch is needed: images only, one sequence, no
padding. Qwen2-VL's version differs only in an image's temporal ids when
its grid has more than one frame (it numbers them; Qwen2.5-VL multiplies
them by the image's zero seconds per frame); `--number-frames` follows it.

    reference_mrope.py CASE.json

CASE.json: {"input_ids": [...], "image_token_id": N, "vision_start_token_id": N,
"spatial_merge_size": 2, "image_grid_thw": [[t, h, w], ...]} with the grids
in patches, as the image processor gives them. Prints
{"position_ids": [[t...], [h...], [w...]], "rope_delta": d}.
"""
import argparse
import json

import numpy as np


def get_rope_index(input_ids, image_token_id, vision_start_token_id, spatial_merge_size,
                   image_grid_thw, number_frames=False):
    input_ids = np.asarray(input_ids, dtype=np.int64)
    if len(image_grid_thw) == 0:
        ids = np.broadcast_to(np.arange(len(input_ids)), (3, len(input_ids)))
        return ids, 0
    # The images are those whose vision-start token an image token follows.
    starts = np.argwhere(input_ids == vision_start_token_id)[:, 0]
    image_count = int((input_ids[starts + 1] == image_token_id).sum())
    tokens = input_ids.tolist()
    blocks = []
    st = 0
    image_index = 0
    for _ in range(image_count):
        ed = tokens.index(image_token_id, st)
        t, h, w = image_grid_thw[image_index]
        image_index += 1
        grid_t, grid_h, grid_w = t, h // spatial_merge_size, w // spatial_merge_size
        text_len = ed - st
        st_idx = blocks[-1].max() + 1 if blocks else 0
        blocks.append(np.broadcast_to(np.arange(text_len), (3, text_len)) + st_idx)
        frames = np.arange(grid_t).reshape(-1, 1)
        # Qwen2.5-VL: frames times seconds per grid (0 for an image) times
        # tokens per second, truncated.
        t_index = np.broadcast_to(frames * (1 if number_frames else 0),
                                  (grid_t, grid_h * grid_w)).flatten()
        h_index = np.broadcast_to(np.arange(grid_h).reshape(1, -1, 1),
                                  (grid_t, grid_h, grid_w)).flatten()
        w_index = np.broadcast_to(np.arange(grid_w).reshape(1, 1, -1),
                                  (grid_t, grid_h, grid_w)).flatten()
        blocks.append(np.stack([t_index, h_index, w_index]) + text_len + st_idx)
        st = ed + grid_t * grid_h * grid_w
    if st < len(tokens):
        st_idx = blocks[-1].max() + 1 if blocks else 0
        text_len = len(tokens) - st
        blocks.append(np.broadcast_to(np.arange(text_len), (3, text_len)) + st_idx)
    positions = np.concatenate(blocks, axis=1).reshape(3, -1)
    return positions, int(positions.max() + 1 - len(tokens))


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("case")
    parser.add_argument("--number-frames", action="store_true")
    args = parser.parse_args()
    with open(args.case) as f:
        case = json.load(f)
    positions, delta = get_rope_index(case["input_ids"], case["image_token_id"],
                                      case["vision_start_token_id"], case["spatial_merge_size"],
                                      case["image_grid_thw"], args.number_frames)
    print(json.dumps({"position_ids": positions.tolist(), "rope_delta": delta}))


if __name__ == "__main__":
    main()
