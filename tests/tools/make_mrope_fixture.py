"""Writes an M-RoPE golden fixture (tests/data/reference_mrope/NAME.json) for
test_mrope_golden: a small random Qwen2 made by `quire-cli make-model`, its
config.json rewritten into Qwen2.5-VL's layout (as first published: the text
model's keys at the top level, rope_scaling {"type": "mrope",
"mrope_section": ...}), and its logits by reference_forward.py over a prompt
laid out as two images with text between would be, the image tokens'
positions from reference_mrope.py (get_rope_index) and their ids replaced by
ordinary ones, since no tower runs here.

    make_mrope_fixture.py QUIRE_CLI NAME OUT_DIR MAKE_MODEL_ARGS...
"""
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
VISION_START, IMAGE, VISION_END = 5, 9, 6
MERGE = 2


def qwen25_vl_config(config):
    """Qwen2.5-VL-7B-Instruct's layout around a Qwen2 text model's keys."""
    head_dim = config["hidden_size"] // config["num_attention_heads"]
    half = head_dim // 2
    # Qwen2.5-VL's [16, 24, 24] of 64, scaled to this head.
    section = [half // 4, 3 * half // 8, half - half // 4 - 3 * half // 8]
    out = dict(config)
    out["architectures"] = ["Qwen2_5_VLForConditionalGeneration"]
    out["model_type"] = "qwen2_5_vl"
    out["rope_scaling"] = {"type": "mrope", "mrope_section": section}
    out["image_token_id"] = IMAGE
    out["vision_start_token_id"] = VISION_START
    out["vision_end_token_id"] = VISION_END
    out["vision_config"] = {"spatial_merge_size": MERGE, "tokens_per_second": 2}
    return out


def main():
    cli, name, out_dir = sys.argv[1:4]
    make_args = sys.argv[4:]
    python = os.environ.get("PYTHON", "/usr/bin/python3")
    with tempfile.TemporaryDirectory() as work:
        model = os.path.join(work, name)
        subprocess.run([cli, "make-model", model] + make_args, check=True,
                       stdout=subprocess.DEVNULL)
        digests = {}
        for file in sorted(os.listdir(model)):
            if file != "config.json":
                with open(os.path.join(model, file), "rb") as f:
                    digests[file] = hashlib.sha256(f.read()).hexdigest()
        with open(os.path.join(model, "config.json")) as f:
            config = qwen25_vl_config(json.load(f))
        with open(os.path.join(model, "config.json"), "w") as f:
            json.dump(config, f, indent=2)

        # Text, an image of 2 x 3 merged tokens, text, an image of 3 x 4, text.
        grids = [[1, 4, 6], [1, 6, 8]]  # in patches, as the image processor gives them
        layout = [11, 12, 13, VISION_START] + [IMAGE] * 6 + [VISION_END, 21, 22, VISION_START] + \
            [IMAGE] * 12 + [VISION_END, 31, 32, 33]
        case = {"input_ids": layout, "image_token_id": IMAGE, "vision_start_token_id": VISION_START,
                "spatial_merge_size": MERGE, "image_grid_thw": grids}
        case_path = os.path.join(work, "case.json")
        with open(case_path, "w") as f:
            json.dump(case, f)
        positions = json.loads(subprocess.run(
            [python, os.path.join(HERE, "reference_mrope.py"), case_path], check=True,
            capture_output=True, text=True).stdout)
        positions_path = os.path.join(work, "positions.json")
        with open(positions_path, "w") as f:
            json.dump(positions, f)
        rng = random.Random(38)
        tokens = [rng.randrange(16, 512) if token == IMAGE else token for token in layout]
        logits = json.loads(subprocess.run(
            [python, os.path.join(HERE, "reference_forward.py"), model, "--tokens",
             ",".join(map(str, tokens)), "--mrope-positions", positions_path],
            check=True, capture_output=True, text=True).stdout)["logits"]
        # Every third position, and the last.
        rows = list(range(2, len(tokens), 3))
        if rows[-1] != len(tokens) - 1:
            rows.append(len(tokens) - 1)
        fixture = {"name": name, "make_model": make_args, "sha256": digests, "config": config,
                   "layout": layout, "image_token_id": IMAGE,
                   "grids": [[t, h // MERGE, w // MERGE] for t, h, w in grids],
                   "position_ids": positions["position_ids"], "rope_delta": positions["rope_delta"],
                   "tokens": tokens, "positions": rows,
                   "logits": [[float("%.7g" % v) for v in logits[p]] for p in rows]}
    os.makedirs(out_dir, exist_ok=True)
    target = os.path.join(out_dir, name + ".json")
    with open(target, "w") as f:
        json.dump(fixture, f, separators=(",", ":"))
        f.write("\n")
    print("wrote " + target)


if __name__ == "__main__":
    main()
