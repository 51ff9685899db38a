"""Mistral Small 3.x's image embeddings in float64, for the engine's vision tests.

Follows transformers' modeling code (models/pixtral/modeling_pixtral.py:
PixtralVisionModel with PixtralRotaryEmbedding, PixtralAttentionLayer,
PixtralRMSNorm; models/mistral3/modeling_mistral3.py: get_image_features with
vision_feature_layer, Mistral3MultiModalProjector, Mistral3PatchMerger) with
numpy only, for one image. reference_vision.py calls mistral3_embeddings()
when config.json names Mistral3ForConditionalGeneration."""
import math

import numpy as np

# PixtralVisionConfig's and Mistral3Config's defaults for keys config.json omits.
PIXTRAL_DEFAULTS = {"hidden_size": 1024, "intermediate_size": 4096, "num_hidden_layers": 24,
                    "num_attention_heads": 16, "num_channels": 3, "image_size": 1024,
                    "patch_size": 16, "hidden_act": "gelu", "rope_theta": 10000.0}
MISTRAL3_DEFAULTS = {"projector_hidden_act": "gelu", "vision_feature_layer": -1,
                     "multimodal_projector_bias": False, "spatial_merge_size": 2}
PIXTRAL_PREFIXES = [("vision_tower.", "multi_modal_projector."),
                    ("model.vision_tower.", "model.multi_modal_projector.")]
PIXTRAL_NORM_EPS = 1e-5  # PixtralRMSNorm(..., eps=1e-5) in the model's code


def act(x, kind):
    if kind in ("silu", "swish"):
        return x / (1.0 + np.exp(-x))
    if kind in ("gelu_pytorch_tanh", "gelu_new"):
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if kind == "gelu":
        erf = np.vectorize(math.erf)
        return 0.5 * x * (1.0 + erf(x / math.sqrt(2.0)))
    raise SystemExit("unsupported activation " + kind)


def rms_norm(x, weight, eps):
    variance = (x ** 2).mean(axis=-1, keepdims=True)
    return weight * (x / np.sqrt(variance + eps))


def rotary_tables(cfg, positions):
    """PixtralRotaryEmbedding: inv_freq per flattened (row, column) id, cos and sin."""
    dim = cfg["hidden_size"] // cfg["num_attention_heads"]
    side = cfg["image_size"] // cfg["patch_size"]
    freqs = 1.0 / (cfg["rope_theta"] ** (np.arange(0, dim, 2, dtype=np.float64) / dim))
    rows = np.arange(side, dtype=np.float64)
    freqs_h = np.outer(rows, freqs[::2])
    freqs_w = np.outer(rows, freqs[1::2])
    inv_freq = np.concatenate([np.repeat(freqs_h[:, None, :], side, axis=1),
                               np.repeat(freqs_w[None, :, :], side, axis=0)],
                              axis=-1).reshape(-1, dim // 2)
    inv_freq = np.concatenate([inv_freq, inv_freq], axis=-1)
    angles = inv_freq[positions]
    return np.cos(angles), np.sin(angles)


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def pixtral_hidden_states(pixels, cfg, t, p):
    """Every hidden state PixtralTransformer returns with output_hidden_states:
    [0] is ln_pre's output, [i] the output of layer i."""
    patch, width = cfg["patch_size"], cfg["hidden_size"]
    heads = cfg["num_attention_heads"]
    channels, height, image_width = pixels.shape
    grid_h, grid_w = height // patch, image_width // patch
    # Conv2d(kernel=stride=patch, bias=False), then flatten(1).T: patches in reading order.
    kernel = t[p + "patch_conv.weight"]  # [width, C, patch, patch]
    grid = pixels.reshape(channels, grid_h, patch, grid_w, patch)
    x = np.einsum("crisj,ocij->rso", grid, kernel).reshape(grid_h * grid_w, width)
    x = rms_norm(x, t[p + "ln_pre.weight"], PIXTRAL_NORM_EPS)
    # position_ids_in_meshgrid: row * max_width + column.
    max_width = cfg["image_size"] // patch
    rows, columns = np.meshgrid(np.arange(grid_h), np.arange(grid_w), indexing="ij")
    cos, sin = rotary_tables(cfg, (rows * max_width + columns).reshape(-1))
    head_dim = width // heads
    states = [x]
    for i in range(cfg["num_hidden_layers"]):
        layer = p + "transformer.layers.%d." % i
        h = rms_norm(x, t[layer + "attention_norm.weight"], PIXTRAL_NORM_EPS)
        q, k, v = (
            (h @ t[layer + "attention.%s.weight" % name].T).reshape(-1, heads, head_dim)
            .transpose(1, 0, 2) for name in ("q_proj", "k_proj", "v_proj"))
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # One image: the block-diagonal mask is all zeros.
        weights = softmax(q @ k.transpose(0, 2, 1) * head_dim ** -0.5)
        attended = (weights @ v).transpose(1, 0, 2).reshape(-1, width)
        x = x + attended @ t[layer + "attention.o_proj.weight"].T
        h = rms_norm(x, t[layer + "ffn_norm.weight"], PIXTRAL_NORM_EPS)
        ff = layer + "feed_forward."
        gate = act(h @ t[ff + "gate_proj.weight"].T, cfg["hidden_act"])
        x = x + (gate * (h @ t[ff + "up_proj.weight"].T)) @ t[ff + "down_proj.weight"].T
        states.append(x)
    return states, grid_h, grid_w


def linear(x, t, key, bias):
    out = x @ t[key + ".weight"].T
    return out + t[key + ".bias"] if bias else out


def unfold(grid, m):
    """torch.nn.functional.unfold(kernel_size=stride=m) of [d, h, w], then .view(d*m*m, -1).t():
    one row per m x m square (reading order), value (channel, i, j) at channel*m*m + i*m + j."""
    d, h, w = grid.shape
    blocks = grid.reshape(d, h // m, m, w // m, m)        # [d, bh, i, bw, j]
    blocks = blocks.transpose(0, 2, 4, 1, 3)              # [d, i, j, bh, bw]
    return blocks.reshape(d * m * m, -1).T


def mistral3_embeddings(config, pixels, t):
    cfg = dict(PIXTRAL_DEFAULTS)
    cfg.update({k: v for k, v in config["vision_config"].items() if v is not None})
    if "rope_parameters" in cfg and "rope_theta" in cfg["rope_parameters"]:
        cfg["rope_theta"] = cfg["rope_parameters"]["rope_theta"]
    top = dict(MISTRAL3_DEFAULTS)
    top.update({k: v for k, v in config.items() if v is not None and k in MISTRAL3_DEFAULTS})
    text = config.get("text_config", {})
    prefixes = [pair for pair in PIXTRAL_PREFIXES if pair[0] + "patch_conv.weight" in t]
    if not prefixes:
        raise SystemExit("the model holds no Pixtral tower")
    tower, projector = prefixes[0]
    states, grid_h, grid_w = pixtral_hidden_states(pixels, cfg, t, tower)
    features = states[top["vision_feature_layer"]]
    normed = rms_norm(features, t[projector + "norm.weight"], text.get("rms_norm_eps", 1e-5))
    m = top["spatial_merge_size"]
    grid = normed.reshape(grid_h, grid_w, -1).transpose(2, 0, 1)
    merged = unfold(grid, m) @ t[projector + "patch_merger.merging_layer.weight"].T
    bias = top["multimodal_projector_bias"]
    hidden = act(linear(merged, t, projector + "linear_1", bias), top["projector_hidden_act"])
    return linear(hidden, t, projector + "linear_2", bias)
