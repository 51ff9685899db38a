#!/usr/bin/python3
"""Image embeddings in float64, for the engine's vision tests.

Gemma 3 follows transformers' modeling code (models/siglip/modeling_siglip.py:
SiglipVisionEmbeddings, SiglipEncoderLayer, SiglipVisionTransformer without
its head; models/gemma3/modeling_gemma3.py: Gemma3MultiModalProjector and
Gemma3RMSNorm); Qwen2.5-VL follows models/qwen2_5_vl/modeling_qwen2_5_vl.py
(Qwen2_5_VisionTransformerPretrainedModel: patch_embed, rot_pos_emb,
get_window_index, the blocks and Qwen2_5_VLPatchMerger). numpy only, every
weight widened exactly to float64.

    reference_vision.py MODEL_DIR PIXELS OUT                (Gemma 3)
    reference_vision.py MODEL_DIR PIXELS OUT T H W          (Qwen2.5-VL)
    reference_vision.py MODEL_DIR PIXELS OUT HEIGHT WIDTH   (Mistral 3)

PIXELS: raw little-endian float32, the processor's pixel_values for one
image: Gemma 3 channels x image_size x image_size; Qwen2.5-VL
T*H*W x channels*temporal*patch*patch, with its grid_thw T H W; Mistral 3
channels x HEIGHT x WIDTH (reference_pixtral.py computes it). OUT: raw
little-endian float64, tokens x text hidden_size."""
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


# Qwen2_5_VLVisionConfig's defaults for keys config.json omits.
QWEN_DEFAULTS = {"depth": 32, "hidden_size": 3584, "hidden_act": "silu", "intermediate_size": 3420,
                 "num_heads": 16, "in_channels": 3, "patch_size": 14, "spatial_merge_size": 2,
                 "temporal_patch_size": 2, "window_size": 112, "out_hidden_size": 3584,
                 "fullatt_block_indexes": [7, 15, 23, 31]}


def act(x, kind):
    if kind == "silu":
        return x / (1.0 + np.exp(-x))
    return gelu(x, kind)


def rms_norm(x, w, eps=1e-6):
    # Qwen2RMSNorm; the vision blocks and the merger fix eps at 1e-6.
    return w * (x / np.sqrt((x ** 2).mean(axis=-1, keepdims=True) + eps))


def rot_pos_emb(cfg, grid_thw):
    """Qwen2_5_VisionTransformerPretrainedModel.rot_pos_emb: (h, w) of each
    patch in the processor's order, times the rotary frequencies."""
    m = cfg["spatial_merge_size"]
    head_dim = cfg["hidden_size"] // cfg["num_heads"]
    dim = head_dim // 2
    # Qwen2_5_VisionRotaryEmbedding(dim) keeps inv_freq and the angles in float32.
    inv_freq = (1.0 / (10000.0 ** (np.arange(0, dim, 2, dtype=np.float64) / dim))).astype(np.float32)
    pos_ids = []
    for t, h, w in grid_thw:
        hpos = np.broadcast_to(np.arange(h)[:, None], (h, w))
        hpos = hpos.reshape(h // m, m, w // m, m).transpose(0, 2, 1, 3).reshape(-1)
        wpos = np.broadcast_to(np.arange(w)[None, :], (h, w))
        wpos = wpos.reshape(h // m, m, w // m, m).transpose(0, 2, 1, 3).reshape(-1)
        pos_ids.append(np.tile(np.stack([hpos, wpos], axis=-1), (t, 1)))
    pos_ids = np.concatenate(pos_ids, axis=0)
    max_grid = max(max(h, w) for _, h, w in grid_thw)
    full = np.outer(np.arange(max_grid, dtype=np.float32), inv_freq).astype(np.float32)
    return full[pos_ids].reshape(pos_ids.shape[0], -1).astype(np.float64)


def get_window_index(cfg, grid_thw):
    m = cfg["spatial_merge_size"]
    window = cfg["window_size"] // m // cfg["patch_size"]
    window_index, cu_window_seqlens, index_id = [], [0], 0
    for t, h, w in grid_thw:
        lh, lw = h // m, w // m
        index = np.arange(t * lh * lw).reshape(t, lh, lw)
        pad_h = window - lh % window
        pad_w = window - lw % window
        nh, nw = (lh + pad_h) // window, (lw + pad_w) // window
        padded = np.pad(index, ((0, 0), (0, pad_h), (0, pad_w)), constant_values=-100)
        padded = padded.reshape(t, nh, window, nw, window).transpose(0, 1, 3, 2, 4)
        padded = padded.reshape(t, nh * nw, window, window)
        seqlens = (padded != -100).sum(axis=(2, 3)).reshape(-1)
        flat = padded.reshape(-1)
        window_index.append(flat[flat != -100] + index_id)
        cu_window_seqlens.extend((np.cumsum(seqlens) * m * m + cu_window_seqlens[-1]).tolist())
        index_id += t * lh * lw
    return np.concatenate(window_index), cu_window_seqlens


def unique_consecutive(values):
    out = [values[0]]
    for v in values[1:]:
        if v != out[-1]:
            out.append(v)
    return out


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def qwen_attention(x, t, key, cfg, cu_seqlens, cos, sin):
    heads = cfg["num_heads"]
    n, width = x.shape
    qkv = linear(x, t, key + "qkv").reshape(n, 3, heads, -1).transpose(1, 0, 2, 3)
    q, k, v = qkv[0], qkv[1], qkv[2]  # [n, heads, head_dim]
    q = q * cos[:, None, :] + rotate_half(q) * sin[:, None, :]
    k = k * cos[:, None, :] + rotate_half(k) * sin[:, None, :]
    head_dim = q.shape[-1]
    out = np.zeros_like(q)
    for begin, end in zip(cu_seqlens[:-1], cu_seqlens[1:]):
        qs, ks, vs = (a[begin:end].transpose(1, 0, 2) for a in (q, k, v))
        weights = softmax(qs @ ks.transpose(0, 2, 1) * head_dim ** -0.5)
        out[begin:end] = (weights @ vs).transpose(1, 0, 2)
    return linear(out.reshape(n, width), t, key + "proj")


def qwen25_vision(patches, cfg, grid_thw, t, p):
    m = cfg["spatial_merge_size"]
    unit = m * m
    width = cfg["hidden_size"]
    # Conv3d(kernel = stride = (temporal, patch, patch), no bias) over each patch.
    kernel = t[p + "patch_embed.proj.weight"]
    x = patches.reshape(patches.shape[0], -1) @ kernel.reshape(kernel.shape[0], -1).T
    rotary = rot_pos_emb(cfg, grid_thw)
    window_index, cu_window_seqlens = get_window_index(cfg, grid_thw)
    cu_window_seqlens = unique_consecutive(cu_window_seqlens)
    n = x.shape[0]
    x = x.reshape(n // unit, unit, -1)[window_index].reshape(n, -1)
    rotary = rotary.reshape(n // unit, unit, -1)[window_index].reshape(n, -1)
    emb = np.concatenate([rotary, rotary], axis=-1)
    cos, sin = np.cos(emb), np.sin(emb)
    cu_seqlens = [0]
    for frames, h, w in grid_thw:
        for _ in range(frames):
            cu_seqlens.append(cu_seqlens[-1] + h * w)
    for i in range(cfg["depth"]):
        block = p + "blocks.%d." % i
        spans = cu_seqlens if i in cfg["fullatt_block_indexes"] else cu_window_seqlens
        x = x + qwen_attention(rms_norm(x, t[block + "norm1.weight"]), t, block + "attn.", cfg,
                               spans, cos, sin)
        h = rms_norm(x, t[block + "norm2.weight"])
        gated = act(linear(h, t, block + "mlp.gate_proj"), cfg["hidden_act"]) * \
            linear(h, t, block + "mlp.up_proj")
        x = x + linear(gated, t, block + "mlp.down_proj")
    merged = rms_norm(x, t[p + "merger.ln_q.weight"]).reshape(-1, unit * width)
    merged = linear(gelu(linear(merged, t, p + "merger.mlp.0"), "gelu"), t, p + "merger.mlp.2")
    return merged[np.argsort(window_index, kind="stable")]


def qwen_main(config, model_dir, pixels_path, out_path, grid):
    cfg = dict(QWEN_DEFAULTS)
    cfg.update({k: v for k, v in config["vision_config"].items() if v is not None})
    t = model_tensors(model_dir)
    prefixes = [p for p in ("visual.", "model.visual.") if p + "patch_embed.proj.weight" in t]
    if not prefixes:
        raise SystemExit(model_dir + " holds no Qwen2.5-VL vision tower")
    patches = np.fromfile(pixels_path, dtype="<f4").astype(np.float64)
    patches = patches.reshape(grid[0] * grid[1] * grid[2], -1)
    qwen25_vision(patches, cfg, [grid], t, prefixes[0]).astype("<f8").tofile(out_path)


def main():
    model_dir, pixels_path, out_path = sys.argv[1:4]
    with open(os.path.join(model_dir, "config.json")) as f:
        config = json.load(f)
    if config.get("architectures", [None])[0] == "Qwen2_5_VLForConditionalGeneration":
        qwen_main(config, model_dir, pixels_path, out_path, [int(v) for v in sys.argv[4:7]])
        return
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
