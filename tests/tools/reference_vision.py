#!/usr/bin/python3
"""Gemma 3's image embeddings in float64, for the engine's vision tests.

Follows transformers' modeling code (models/siglip/modeling_siglip.py:
SiglipVisionEmbeddings, SiglipEncoderLayer, SiglipVisionTransformer without
its head; models/gemma3/modeling_gemma3.py: Gemma3MultiModalProjector and
Gemma3RMSNorm) with numpy only, every weight widened exactly to float64.

    reference_vision.py MODEL_DIR PIXELS OUT [HEIGHT WIDTH]

PIXELS: raw little-endian float32, channels x image_size x image_size (the
processor's pixel_values for one image). OUT: raw little-endian float64,
mm_tokens_per_image x text hidden_size.

Mistral3ForConditionalGeneration (Mistral Small 3.x) goes to
reference_pixtral.py; its images have their own HEIGHT and WIDTH, and OUT is
one row per merged square of patches."""
import json
import math
import os
import struct
import sys

import numpy as np

# SiglipVisionConfig's and Gemma3Config's defaults for keys config.json omits.
SIGLIP_DEFAULTS = {"hidden_size": 768, "intermediate_size": 3072, "num_hidden_layers": 12,
                   "num_attention_heads": 12, "num_channels": 3, "image_size": 224,
                   "patch_size": 16, "hidden_act": "gelu_pytorch_tanh", "layer_norm_eps": 1e-6}
TOWER_PREFIXES = [("vision_tower.vision_model.", "multi_modal_projector."),
                  ("model.vision_tower.vision_model.", "model.multi_modal_projector.")]


def file_tensors(path):
    """name -> float64 array of every tensor in one safetensors file."""
    with open(path, "rb") as f:
        blob = f.read()
    (length,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + length])
    start = 8 + length
    arrays = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        raw = blob[start + begin:start + end]
        kind = entry["dtype"]
        if kind == "BF16":
            values = (np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16).view(np.float32)
        elif kind in ("F16", "F32"):
            values = np.frombuffer(raw, dtype="<f2" if kind == "F16" else "<f4")
        else:
            continue  # quantized text weights: not the tower's
        arrays[name] = values.astype(np.float64).reshape(entry["shape"])
    return arrays


def model_tensors(model_dir):
    arrays = {}
    for name in sorted(os.listdir(model_dir)):
        if name.endswith(".safetensors"):
            arrays.update(file_tensors(os.path.join(model_dir, name)))
    return arrays


def gelu(x, kind):
    if kind in ("gelu_pytorch_tanh", "gelu_new"):
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if kind == "gelu":
        erf = np.vectorize(math.erf)
        return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    raise SystemExit("unsupported hidden_act " + kind)


def layer_norm(x, w, b, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * w + b


def linear(x, t, key):
    return x @ t[key + ".weight"].T + t[key + ".bias"]


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def siglip(pixels, cfg, t, p):
    size, patch, width = cfg["image_size"], cfg["patch_size"], cfg["hidden_size"]
    heads, eps = cfg["num_attention_heads"], cfg["layer_norm_eps"]
    side = size // patch
    # Conv2d(kernel=stride=patch): each output is a dot product over one patch.
    kernel = t[p + "embeddings.patch_embedding.weight"]  # [width, C, patch, patch]
    grid = pixels.reshape(cfg["num_channels"], side, patch, side, patch)
    embedded = np.einsum("crisj,ocij->rso", grid, kernel).reshape(side * side, width)
    x = embedded + t[p + "embeddings.patch_embedding.bias"]
    x = x + t[p + "embeddings.position_embedding.weight"]
    head_dim = width // heads
    for i in range(cfg["num_hidden_layers"]):
        layer = p + "encoder.layers.%d." % i
        h = layer_norm(x, t[layer + "layer_norm1.weight"], t[layer + "layer_norm1.bias"], eps)
        q, k, v = (linear(h, t, layer + "self_attn." + name).reshape(-1, heads, head_dim)
                   .transpose(1, 0, 2) for name in ("q_proj", "k_proj", "v_proj"))
        weights = softmax(q @ k.transpose(0, 2, 1) * head_dim ** -0.5)
        attended = (weights @ v).transpose(1, 0, 2).reshape(-1, width)
        x = x + linear(attended, t, layer + "self_attn.out_proj")
        h = layer_norm(x, t[layer + "layer_norm2.weight"], t[layer + "layer_norm2.bias"], eps)
        x = x + linear(gelu(linear(h, t, layer + "mlp.fc1"), cfg["hidden_act"]), t,
                       layer + "mlp.fc2")
    return layer_norm(x, t[p + "post_layernorm.weight"], t[p + "post_layernorm.bias"], eps)


def project(tower_out, cfg, tokens, t, p):
    side = cfg["image_size"] // cfg["patch_size"]
    per_side = int(round(math.sqrt(tokens)))
    kernel = side // per_side
    width = tower_out.shape[1]
    grid = tower_out.T.reshape(width, per_side, kernel, per_side, kernel)
    pooled = grid.mean(axis=(2, 4)).reshape(width, tokens).T
    rms = np.sqrt((pooled ** 2).mean(axis=-1, keepdims=True) + cfg["layer_norm_eps"])
    normed = pooled / rms * (1.0 + t[p + "mm_soft_emb_norm.weight"])
    return normed @ t[p + "mm_input_projection_weight"]


def main():
    model_dir, pixels_path, out_path = sys.argv[1:4]
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    cfg = dict(SIGLIP_DEFAULTS)
    cfg.update({k: v for k, v in config["vision_config"].items() if v is not None})
    tokens = config.get("mm_tokens_per_image", 256)
    t = model_tensors(model_dir)
    if config.get("architectures", [""])[0] == "Mistral3ForConditionalGeneration":
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import reference_pixtral
        height, width = int(sys.argv[4]), int(sys.argv[5])
        channels = config["vision_config"].get("num_channels") or 3
        pixels = np.fromfile(pixels_path, dtype="<f4").astype(np.float64)
        out = reference_pixtral.mistral3_embeddings(config, pixels.reshape(channels, height, width),
                                                    t)
        out.astype("<f8").tofile(out_path)
        return
    prefixes = [pair for pair in TOWER_PREFIXES
                if pair[0] + "embeddings.patch_embedding.weight" in t]
    if not prefixes:
        raise SystemExit(model_dir + " holds no vision tower")
    tower, projector = prefixes[0]
    size = cfg["image_size"]
    pixels = np.fromfile(pixels_path, dtype="<f4").astype(np.float64)
    pixels = pixels.reshape(cfg["num_channels"], size, size)
    out = project(siglip(pixels, cfg, t, tower), cfg, tokens, t, projector)
    out.astype("<f8").tofile(out_path)


if __name__ == "__main__":
    main()
