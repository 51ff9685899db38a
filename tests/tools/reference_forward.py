#!/usr/bin/python3
"""Reference logits for a model directory, independent of Quire's engine.

Follows Hugging Face transformers' modeling and configuration code for
LlamaForCausalLM, MistralForCausalLM, Qwen2ForCausalLM, Qwen3ForCausalLM,
Qwen3MoeForCausalLM, MixtralForCausalLM, Phi3ForCausalLM, Gemma2ForCausalLM,
Gemma3ForCausalLM, Gemma3ForConditionalGeneration (its text model, and
images through reference_image_prompt.py), Qwen2VLForConditionalGeneration
and Qwen2_5_VLForConditionalGeneration (their text models only) and runs it in
float64 with PyTorch:
  - RMSNorm, or Gemma's x * rsqrt(mean(x^2) + eps) * (1 + w), with Gemma's
    norms after attention and around the MLP; Qwen3's and Gemma 3's norm over
    each query and key head before RoPE;
  - rotate-half RoPE with its scaling variants (linear, dynamic, llama3, yarn,
    longrope), Phi-3's partial rotary dimensions, Gemma 3's local and global
    rotary bases, Qwen2-VL's and Qwen2.5-VL's M-RoPE (rope_scaling
    mrope_section: each section of the frequencies turned by its own one of a
    token's temporal, height and width ids, as apply_multimodal_rotary_pos_emb
    picks them);
  - grouped-query attention with a causal and optional sliding-window mask per
    layer, Gemma's query_pre_attn_scalar and attention-logit soft-capping;
  - SiLU-gated or GELU-tanh-gated MLPs, Phi-3's fused qkv_proj and
    gate_up_proj, the routed experts of Mixtral and Qwen3-MoE;
  - Gemma's embedding scale and final-logit soft-capping, tied embeddings.
Rotary angles and inverse frequencies are computed in float32, as transformers
computes them, and K and V are rounded to float16 as they are in an FP16 KV
cache. EXL2 and GPTQ weights are dequantized here from the tensors in the
files, following the formats as exllamav2 defines them. Keys a config.json
leaves out take the defaults of the transformers configuration class
(CONFIG_DEFAULTS below).

Usage: reference_forward.py MODEL_DIR --tokens 1,2,3  -> JSON {"logits": [[...], ...]}
(one row per position); for Gemma3ForConditionalGeneration, --image-pixels
FILE once per image puts images over the image tokens
(reference_image_prompt.py says how); with --mrope-positions FILE, an M-RoPE
model's ids are read from FILE's "position_ids" (3 rows of one id per token,
as reference_mrope.py prints them) instead of t = h = w = the token's index;
       reference_forward.py MODEL_DIR --rope SEQ_LEN  -> JSON {"inv_freq": [...],
"attention_factor": x} as float32 values in hexadecimal: the frequencies a
sequence of SEQ_LEN tokens uses (longrope: the short factors up to
original_max_position_embeddings tokens, the long ones beyond). Where sliding
layers rotate differently (Gemma 3), "sliding_inv_freq" and
"sliding_attention_factor" give theirs and the first two the global layers'.
"""
import argparse
import json
import os
import sys

import numpy as np
import torch

from reference_rope import rope_parameters
from reference_weights import linear, load_tensors


# Defaults of transformers' configuration classes, for the keys a config.json
# leaves out (the published gemma-3-4b-it, for one, names neither its heads nor
# its head_dim). head_dim and num_key_value_heads None: hidden_size /
# num_attention_heads and num_attention_heads. sliding_window and the
# soft-capping values None: off.
_QWEN_DEFAULTS = dict(vocab_size=151936, hidden_size=4096, intermediate_size=22016,
                      num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=32,
                      head_dim=None, hidden_act="silu", rms_norm_eps=1e-6, rope_theta=10000.0,
                      max_position_embeddings=32768, tie_word_embeddings=False,
                      use_sliding_window=False, sliding_window=4096, max_window_layers=28)
_GEMMA_DEFAULTS = dict(vocab_size=256000, hidden_size=2304, intermediate_size=9216,
                       num_hidden_layers=26, num_attention_heads=8, num_key_value_heads=4,
                       head_dim=256, hidden_activation="gelu_pytorch_tanh", rms_norm_eps=1e-6,
                       rope_theta=10000.0, max_position_embeddings=8192, tie_word_embeddings=True,
                       query_pre_attn_scalar=256, sliding_window=4096, layer_types=None,
                       final_logit_softcapping=30.0, attn_logit_softcapping=50.0)
CONFIG_DEFAULTS = {
    "LlamaForCausalLM": dict(vocab_size=32000, hidden_size=4096, intermediate_size=11008,
                             num_hidden_layers=32, num_attention_heads=32,
                             num_key_value_heads=None, head_dim=None, hidden_act="silu",
                             rms_norm_eps=1e-6, rope_theta=10000.0, max_position_embeddings=2048,
                             tie_word_embeddings=False),
    "MistralForCausalLM": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336,
                               num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                               head_dim=None, hidden_act="silu", rms_norm_eps=1e-6,
                               rope_theta=10000.0, max_position_embeddings=4096 * 32,
                               tie_word_embeddings=False, sliding_window=4096),
    "MixtralForCausalLM": dict(vocab_size=32000, hidden_size=4096, intermediate_size=14336,
                               num_hidden_layers=32, num_attention_heads=32, num_key_value_heads=8,
                               head_dim=None, hidden_act="silu", rms_norm_eps=1e-5,
                               rope_theta=1e6, max_position_embeddings=4096 * 32,
                               tie_word_embeddings=False, sliding_window=None,
                               num_local_experts=8, num_experts_per_tok=2),
    "Qwen2ForCausalLM": _QWEN_DEFAULTS,
    "Qwen3ForCausalLM": dict(_QWEN_DEFAULTS, head_dim=128),
    "Qwen3MoeForCausalLM": dict(_QWEN_DEFAULTS, hidden_size=2048, intermediate_size=6144,
                                num_hidden_layers=24, num_key_value_heads=4,
                                decoder_sparse_step=1, moe_intermediate_size=768,
                                num_experts_per_tok=8, num_experts=128, norm_topk_prob=False,
                                mlp_only_layers=[]),
    "Phi3ForCausalLM": dict(vocab_size=32064, hidden_size=3072, intermediate_size=8192,
                            num_hidden_layers=32, num_attention_heads=32,
                            num_key_value_heads=None, head_dim=None, hidden_act="silu",
                            rms_norm_eps=1e-5, rope_theta=10000.0, max_position_embeddings=4096,
                            original_max_position_embeddings=4096, tie_word_embeddings=False,
                            sliding_window=None),
    "Gemma2ForCausalLM": _GEMMA_DEFAULTS,
    "Gemma3ForCausalLM": dict(_GEMMA_DEFAULTS, vocab_size=262208, rope_theta=1e6,
                              rope_local_base_freq=10000.0, max_position_embeddings=131072,
                              sliding_window_pattern=6, final_logit_softcapping=None,
                              attn_logit_softcapping=None),
}
CONFIG_DEFAULTS["Gemma3ForConditionalGeneration"] = CONFIG_DEFAULTS["Gemma3ForCausalLM"]
# Mistral3Config builds its text_config as a MistralConfig.
CONFIG_DEFAULTS["Mistral3ForConditionalGeneration"] = CONFIG_DEFAULTS["MistralForCausalLM"]
# Qwen2VLTextConfig and Qwen2_5_VLTextConfig: Qwen2's, for the keys used here.
MROPE_ARCHITECTURES = ("Qwen2VLForConditionalGeneration", "Qwen2_5_VLForConditionalGeneration")
for _arch in MROPE_ARCHITECTURES:
    CONFIG_DEFAULTS[_arch] = dict(_QWEN_DEFAULTS, rms_norm_eps=1e-5)

# Keys whose explicit null means "off" rather than "the default".
NULL_MEANS_OFF = {"sliding_window", "final_logit_softcapping", "attn_logit_softcapping",
                  "rope_scaling", "rope_parameters", "layer_types"}

ROPE_TYPES = {"default", "linear", "dynamic", "llama3", "yarn", "longrope"}

ACTIVATIONS = {
    "silu": torch.nn.functional.silu,
    "gelu": torch.nn.functional.gelu,
    "gelu_pytorch_tanh": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
    "gelu_new": lambda x: torch.nn.functional.gelu(x, approximate="tanh"),
}


def read_config(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        raw = json.load(f)
    text = raw.get("text_config") or {}
    architectures = raw.get("architectures") or text.get("architectures") or ["(none named)"]
    arch = architectures[0]
    if arch not in CONFIG_DEFAULTS:
        raise SystemExit("unsupported architecture %s (supported: %s)"
                         % (arch, ", ".join(sorted(CONFIG_DEFAULTS))))
    defaults = CONFIG_DEFAULTS[arch]
    # A multimodal checkpoint keeps its language model's settings in text_config.
    sources = (text, raw) if arch in ("Gemma3ForConditionalGeneration",
                                      "Mistral3ForConditionalGeneration") or \
        arch in MROPE_ARCHITECTURES else (raw, text)

    def get(key, default=None):
        for source in sources:
            if key in source:
                if source[key] is not None:
                    return source[key]
                if key in NULL_MEANS_OFF:
                    return None
        return defaults.get(key, default)

    def get_first(*keys):
        for key in keys:
            if any(source.get(key) is not None for source in sources):
                return get(key)
        return get(keys[0])

    config = {key: get(key) for key in ["hidden_size", "num_hidden_layers", "num_attention_heads",
                                          "intermediate_size", "vocab_size", "rms_norm_eps",
                                          "max_position_embeddings", "tie_word_embeddings"]}
    config["architecture"] = arch
    config["num_key_value_heads"] = get("num_key_value_heads") or config["num_attention_heads"]
    config["head_dim"] = get("head_dim") or config["hidden_size"] // config["num_attention_heads"]
    config["checkpoint_format"] = (get("quantization_config") or {}).get("checkpoint_format", "")
    config["quantization"] = get("quantization_config") or {}
    config["moe_intermediate_size"] = get("moe_intermediate_size")
    layers = config["num_hidden_layers"]
    gemma = arch.startswith("Gemma")
    config["gemma"] = gemma
    config["qk_norm"] = arch in ("Qwen3ForCausalLM", "Qwen3MoeForCausalLM") or \
        arch.startswith("Gemma3")
    config["fused_projections"] = arch == "Phi3ForCausalLM"
    config["activation"] = get("hidden_activation") if gemma else get("hidden_act")
    if config["activation"] not in ACTIVATIONS:
        raise SystemExit("unsupported activation %s" % config["activation"])
    config["attention_scale"] = (get("query_pre_attn_scalar") if gemma
                                 else config["head_dim"]) ** -0.5
    config["attn_logit_softcapping"] = get("attn_logit_softcapping")
    config["final_logit_softcapping"] = get("final_logit_softcapping")
    if get("use_bidirectional_attention"):
        raise SystemExit("use_bidirectional_attention is not supported")

    window = get("sliding_window") or 0
    layer_types = ["full_attention"] * layers
    if arch in ("MistralForCausalLM", "MixtralForCausalLM", "Phi3ForCausalLM",
                "Mistral3ForConditionalGeneration"):
        layer_types = ["sliding_attention" if window else "full_attention"] * layers
    elif arch in ("Qwen2ForCausalLM", "Qwen3ForCausalLM") + MROPE_ARCHITECTURES:
        first = get("max_window_layers")
        if get("use_sliding_window"):
            layer_types = ["sliding_attention" if i >= first else "full_attention"
                           for i in range(layers)]
    elif arch == "Qwen3MoeForCausalLM":
        # Qwen3MoeConfig keeps the window only with use_sliding_window, and then
        # every layer slides: max_window_layers is not read.
        if get("use_sliding_window"):
            layer_types = ["sliding_attention"] * layers
    elif gemma:
        if get("layer_types") is not None:
            layer_types = list(get("layer_types"))
        elif arch == "Gemma2ForCausalLM":
            # Gemma2Config: even layers (0, 2, ...) slide.
            layer_types = ["sliding_attention" if (i + 1) % 2 else "full_attention"
                           for i in range(layers)]
        else:
            # Gemma3TextConfig: every sliding_window_pattern-th layer is global.
            pattern = get("sliding_window_pattern")
            layer_types = ["sliding_attention" if (i + 1) % pattern else "full_attention"
                           for i in range(layers)]
    if len(layer_types) != layers:
        raise SystemExit("layer_types names %d layers, the model has %d"
                         % (len(layer_types), layers))
    config["windows"] = [window if kind == "sliding_attention" else 0 for kind in layer_types]

    config["rope"], config["sliding_rope"] = read_rope(config, get)
    config["ropes"] = [config["sliding_rope"] if kind == "sliding_attention" and
                       config["sliding_rope"] is not None else config["rope"]
                       for kind in layer_types]

    config["moe"] = None
    if arch == "MixtralForCausalLM":
        experts = get_first("num_local_experts", "num_experts")
        config["moe"] = {"experts": experts, "top_k": get("num_experts_per_tok"),
                         "renormalize": True, "sparse": [True] * layers,
                         "router": "block_sparse_moe.gate",
                         "expert": "block_sparse_moe.experts.%d.",
                         "names": ("w1", "w3", "w2")}
    elif arch == "Qwen3MoeForCausalLM":
        experts = get_first("num_experts", "num_local_experts")
        step = get("decoder_sparse_step")
        dense = get("mlp_only_layers") or []
        config["moe"] = {"experts": experts, "top_k": get("num_experts_per_tok"),
                         "renormalize": bool(get("norm_topk_prob")),
                         "sparse": [i not in dense and experts > 0 and (i + 1) % step == 0
                                    for i in range(layers)],
                         "router": "mlp.gate", "expert": "mlp.experts.%d.",
                         "names": ("gate_proj", "up_proj", "down_proj")}
    return config


def read_rope(config, get):
    """(rotary settings of the global layers, of the sliding layers or None when
    they are the same) as transformers' configuration classes standardize
    them into rope_parameters: rope_type, rope_theta, partial_rotary_factor,
    the scaling keys."""
    arch = config["architecture"]

    def finish(rope, theta):
        rope["rope_type"] = rope.get("rope_type", rope.get("type", "default"))
        rope.setdefault("rope_theta", theta)
        if rope["rope_type"] == "mrope":
            # Qwen2VLConfig and Qwen2_5_VLConfig read type "mrope" as "default";
            # mrope_section stays.
            rope["rope_type"] = "default"
        if arch == "Phi3ForCausalLM" and rope["rope_type"] in ("su", "yarn"):
            # Phi3Config reads the older names of LongRoPE as longrope.
            rope["rope_type"] = "longrope"
        if rope["rope_type"] not in ROPE_TYPES:
            raise SystemExit("unsupported rope type %s" % rope["rope_type"])
        if rope["rope_type"] == "longrope":
            # standardize_rope_params: a top-level original_max_position_embeddings
            # (Phi3Config always has one, 4096 by default) wins over the one in
            # the scaling dictionary; without either, max_position_embeddings.
            original = get("original_max_position_embeddings")
            if original is not None:
                rope["original_max_position_embeddings"] = original
            rope.setdefault("original_max_position_embeddings", config["max_position_embeddings"])
        return rope

    if arch.startswith("Gemma3"):
        # Global layers: rope_theta with rope_scaling; local layers:
        # rope_local_base_freq, unscaled. Newer files nest both under
        # rope_parameters by layer type.
        nested = get("rope_parameters") or {}
        if nested and set(nested) <= {"full_attention", "sliding_attention"}:
            full = dict(nested.get("full_attention") or {})
            sliding = dict(nested.get("sliding_attention") or {})
        else:
            full, sliding = dict(get("rope_scaling") or {}), {}
        return (finish(full, get("rope_theta")),
                finish(sliding, get("rope_local_base_freq")))
    rope = dict(get("rope_parameters") or get("rope_scaling") or {})
    partial = get("partial_rotary_factor")
    if partial is not None:
        rope["partial_rotary_factor"] = partial
    return finish(rope, get("rope_theta")), None


def rms_norm(x, weight, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def gemma_rms_norm(x, weight, eps):
    """Gemma's RMSNorm: the stored weight is an offset from one."""
    variance = x.pow(2).mean(-1, keepdim=True)
    return (x * torch.rsqrt(variance + eps)) * (1.0 + weight)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def apply_rotary(x, cos, sin):
    """Rotates the first cos.shape[-1] dimensions of each head (all of them
    unless a partial_rotary_factor leaves the rest as they are)."""
    rotary = cos.shape[-1]
    turned, kept = x[..., :rotary], x[..., rotary:]
    return torch.cat((turned * cos + rotate_half(turned) * sin, kept), dim=-1)


TORCH_DTYPES = {"F16": torch.float16, "BF16": torch.bfloat16, "F32": torch.float32}


def embedding_scale(config, dtype):
    """sqrt(hidden_size) as Gemma multiplies the embeddings by it: a tensor of
    the model's dtype, taken here as the embedding's dtype in the file (Gemma 2
    makes it in that dtype directly, Gemma 3 in float32 first and then casts)."""
    scale = torch.tensor(config["hidden_size"] ** 0.5, dtype=torch.float64)
    if config["architecture"] != "Gemma2ForCausalLM":
        scale = scale.float()
    return float(scale.to(TORCH_DTYPES[dtype]))


def has_linear(t, key):
    return any(key + suffix in t for suffix in (".weight", ".q_weight", ".qweight", ".trellis"))


def output_width(key, config):
    """A projection's outputs as config.json sizes them: EXL3 stores them
    padded to a multiple of 128, so the width comes from here, not the
    tensors."""
    name = key.rsplit(".", 1)[-1]
    heads, kv, dim = (config["num_attention_heads"], config["num_key_value_heads"],
                      config["head_dim"])
    inner = config["moe_intermediate_size"] if ".experts." in key and \
        config["moe_intermediate_size"] else config["intermediate_size"]
    widths = {"q_proj": heads * dim, "k_proj": kv * dim, "v_proj": kv * dim,
              "qkv_proj": (heads + 2 * kv) * dim, "o_proj": config["hidden_size"],
              "gate_proj": inner, "up_proj": inner, "w1": inner, "w3": inner,
              "gate_up_proj": 2 * inner, "down_proj": config["hidden_size"],
              "w2": config["hidden_size"], "lm_head": config["vocab_size"]}
    return widths.get(name)


def text_model_prefix(t):
    """Where the language model's tensors live: model. for text models;
    Gemma3ForConditionalGeneration saves language_model.model. (older) or
    model.language_model. (newer)."""
    for prefix in ("model.", "model.language_model.", "language_model.model."):
        if prefix + "embed_tokens.weight" in t:
            return prefix
    raise SystemExit("no embed_tokens.weight under model., model.language_model. or "
                     "language_model.model.")


def note_close_routing(probabilities, top_k, layer):
    """Routing is float64 here; where the k-th and the next expert are nearly
    tied, an engine computing in lower precision may fairly pick the other one
    and its logits then differ from these. Says so on stderr."""
    if top_k >= probabilities.shape[-1]:
        return
    ranked = torch.sort(probabilities, dim=-1, descending=True).values
    last, next_one = ranked[:, top_k - 1], ranked[:, top_k]
    for position in torch.nonzero((last - next_one) < 1e-3 * last).flatten().tolist():
        sys.stderr.write("note: layer %d, position %d: expert probabilities %.9g and %.9g "
                         "either side of the top-%d cut are nearly tied\n"
                         % (layer, position, float(last[position]), float(next_one[position]),
                            top_k))


def mrope_cos_sin(rope, inv_freq, attention_factor, mrope_positions):
    """Qwen2-VL's rotary tables: cos and sin of every axis over the whole head
    (Qwen2_5_VLRotaryEmbedding, float32), then apply_multimodal_rotary_pos_emb's
    choice: the head cut into mrope_section * 2 chunks, chunk j taken from
    axis j % 3."""
    ids = torch.tensor(mrope_positions, dtype=torch.float32)  # [3, tokens]
    freqs = ids[:, :, None] * inv_freq.float()[None, None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    cos = emb.cos() * attention_factor
    sin = emb.sin() * attention_factor
    sections = list(rope["mrope_section"]) * 2

    def pick(table):
        return torch.cat([chunk[j % 3] for j, chunk in enumerate(table.split(sections, dim=-1))],
                         dim=-1)
    return pick(cos).double(), pick(sin).double()


def forward(config, t, tokens, images=None, mrope_positions=None):
    """Logits of every position. images (reference_image_prompt.ImageInput):
    Gemma 3's image rows over the image tokens' embeddings and, unless it is
    the causal control, each image run attending within itself; or
    reference_mistral3_prompt.Mistral3ImageInput: Mistral 3's rows over its
    [IMG] tokens, attention causal.
    mrope_positions: an M-RoPE model's (t, h, w) ids, 3 rows of one per token."""
    blocks = images.blocks(tokens) if images is not None else None
    image_positions = images.positions(tokens) if images is not None else None
    tokens = torch.tensor(tokens, dtype=torch.int64)
    count = tokens.shape[0]
    heads, kv_heads, dim = (config["num_attention_heads"], config["num_key_value_heads"],
                            config["head_dim"])
    model = text_model_prefix(t)
    embed_key = model + "embed_tokens.weight"
    embed = torch.from_numpy(t[embed_key].astype(np.float64))
    if images is not None:
        # Gemma3Model.forward looks an image id beyond the vocabulary up as 0;
        # its row is replaced below either way.
        tokens = torch.where(tokens < embed.shape[0], tokens, torch.zeros_like(tokens))
    x = embed[tokens]
    if config["gemma"]:
        x = x * embedding_scale(config, t.dtypes[embed_key])
    if images is not None:
        # The image rows replace the scaled embeddings unscaled (masked_scatter).
        x[image_positions] = images.rows

    positions = torch.arange(count, dtype=torch.float32)
    rotary_tables = {}

    def rotary(rope):
        if id(rope) not in rotary_tables and "mrope_section" in rope:
            inv_freq, attention_factor = rope_parameters(config, count, rope)
            # Text alone: t = h = w = the token's index.
            ids = mrope_positions if mrope_positions is not None else [list(range(count))] * 3
            rotary_tables[id(rope)] = mrope_cos_sin(rope, inv_freq, attention_factor, ids)
        if id(rope) not in rotary_tables:
            inv_freq, attention_factor = rope_parameters(config, count, rope)
            freqs = torch.outer(positions, inv_freq)
            emb = torch.cat((freqs, freqs), dim=-1)
            # transformers scales cos and sin by the attention factor in float32.
            rotary_tables[id(rope)] = ((emb.cos() * attention_factor).double(),
                                       (emb.sin() * attention_factor).double())
        return rotary_tables[id(rope)]

    def proj(key, value):
        weight, bias = linear(t, key, config, value.shape[-1], output_width(key, config))
        out = value @ weight.T
        return out if bias is None else out + bias

    activation = ACTIVATIONS[config["activation"]]

    def gated_mlp(prefix, value, names=("gate_proj", "up_proj", "down_proj")):
        if config["fused_projections"]:
            # Phi-3: gate_up_proj's first half is the gate, the second the up projection.
            gate, up = proj(prefix + "gate_up_proj", value).chunk(2, dim=-1)
        else:
            gate = proj(prefix + names[0], value)
            up = proj(prefix + names[1], value)
        return proj(prefix + names[2], activation(gate) * up)

    def sparse_moe(p, value, layer):
        """Mixtral's and Qwen3-MoE's routed experts: softmax over the router's
        logits, the top k, renormalized to sum to one where the model says so,
        each expert a gated MLP weighted by its probability."""
        moe = config["moe"]
        probabilities = torch.softmax(proj(p + moe["router"], value), dim=-1)
        note_close_routing(probabilities, moe["top_k"], layer)
        weights, chosen = torch.topk(probabilities, moe["top_k"], dim=-1)
        if moe["renormalize"]:
            weights = weights / weights.sum(dim=-1, keepdim=True)
        out = torch.zeros_like(value)
        for expert in range(moe["experts"]):
            rows, slots = torch.nonzero(chosen == expert, as_tuple=True)
            if rows.numel() == 0:
                continue
            result = gated_mlp(p + moe["expert"] % expert, value[rows], moe["names"])
            out.index_add_(0, rows, result * weights[rows, slots, None])
        return out

    norm = gemma_rms_norm if config["gemma"] else rms_norm
    eps = config["rms_norm_eps"]
    softcap = config["attn_logit_softcapping"]
    for i in range(config["num_hidden_layers"]):
        p = model + "layers.%d." % i
        weight = lambda name: torch.from_numpy(t[p + name + ".weight"].astype(np.float64))
        h = norm(x, weight("input_layernorm"), eps)
        if config["fused_projections"]:
            # Phi-3: qkv_proj's output is q, then k, then v.
            q, k, v = proj(p + "self_attn.qkv_proj", h).split(
                [heads * dim, kv_heads * dim, kv_heads * dim], dim=-1)
        else:
            q = proj(p + "self_attn.q_proj", h)
            k = proj(p + "self_attn.k_proj", h)
            v = proj(p + "self_attn.v_proj", h)
        q = q.reshape(count, heads, dim)
        k = k.reshape(count, kv_heads, dim)
        if config["qk_norm"]:
            # Qwen3 and Gemma 3: a norm over each query and key head, before RoPE.
            q = norm(q, weight("self_attn.q_norm"), eps)
            k = norm(k, weight("self_attn.k_norm"), eps)
        q = q.transpose(0, 1)
        k = k.transpose(0, 1)
        v = v.reshape(count, kv_heads, dim).transpose(0, 1)
        cos, sin = rotary(config["ropes"][i])
        q = apply_rotary(q, cos, sin)
        k = apply_rotary(k, cos, sin)
        # Quire keeps K and V in its FP16 cache; rounding them the same way here
        # leaves the comparison to test everything else at full precision.
        k = k.half().double()
        v = v.half().double()
        k = k.repeat_interleave(heads // kv_heads, dim=0)
        v = v.repeat_interleave(heads // kv_heads, dim=0)
        scores = (q @ k.transpose(1, 2)) * config["attention_scale"]
        if softcap:
            scores = torch.tanh(scores / softcap) * softcap
        query_pos = torch.arange(count)[:, None]
        key_pos = torch.arange(count)[None, :]
        allowed = key_pos <= query_pos
        window = config["windows"][i]
        if window:
            allowed = allowed & (query_pos - key_pos < window)
        if blocks is not None:
            # Gemma 3: an image run sees all of itself, on sliding layers too.
            allowed = allowed | blocks
        scores = scores.masked_fill(~allowed, float("-inf"))
        attention = torch.softmax(scores, dim=-1) @ v
        attention = attention.transpose(0, 1).reshape(count, heads * dim)
        out = proj(p + "self_attn.o_proj", attention)
        if config["gemma"]:
            out = norm(out, weight("post_attention_layernorm"), eps)
        x = x + out
        h = norm(x, weight("pre_feedforward_layernorm" if config["gemma"]
                           else "post_attention_layernorm"), eps)
        if config["moe"] and config["moe"]["sparse"][i]:
            out = sparse_moe(p, h, i)
        else:
            out = gated_mlp(p + "mlp.", h)
        if config["gemma"]:
            out = norm(out, weight("post_feedforward_layernorm"), eps)
        x = x + out
    x = norm(x, torch.from_numpy(t[model + "norm.weight"].astype(np.float64)), eps)
    head = "language_model.lm_head" if has_linear(t, "language_model.lm_head") else "lm_head"
    if config["tie_word_embeddings"] and not has_linear(t, head):
        logits = x @ embed.T
    else:
        logits = proj(head, x)
    cap = config["final_logit_softcapping"]
    if cap:
        logits = torch.tanh(logits / cap) * cap
    return logits


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir")
    parser.add_argument("--tokens", help="comma-separated token ids")
    parser.add_argument("--rope", type=int, metavar="SEQ_LEN",
                        help="print the rotary inverse frequencies and attention factor for a "
                             "sequence of SEQ_LEN tokens instead (needs only config.json)")
    parser.add_argument("--mrope-positions", metavar="FILE",
                        help="JSON with \"position_ids\": the M-RoPE ids of the tokens, three "
                             "rows (temporal, height, width) of one id per token")
    parser.add_argument("--greedy", type=int, metavar="N",
                        help="print the ids of N tokens chosen greedily after the given ones; "
                             "fail unless each beats the runner-up by --margin of the largest "
                             "logit, so that a greedy run never hinges on a near tie")
    parser.add_argument("--margin", type=float, default=1e-3,
                        help="the least lead of each greedy token, relative to the largest "
                             "logit (default 1e-3)")
    parser.add_argument("--image-pixels", action="append", default=[], metavar="FILE",
                        help="Gemma3ForConditionalGeneration: one image's pixel_values, raw "
                             "little-endian float32 channels x size x size; repeat for each "
                             "image, in the order of their image tokens in --tokens")
    parser.add_argument("--image-attention", choices=("bidirectional", "causal"),
                        default="bidirectional",
                        help="bidirectional (transformers): each image run attends within "
                             "itself both ways; causal: a purely causal mask, as a control")
    args = parser.parse_args()
    config = read_config(args.model_dir)
    if args.rope is not None:
        result = {}
        for name, rope in (("", config["rope"]), ("sliding_", config["sliding_rope"])):
            if rope is None:
                continue
            inv_freq, attention_factor = rope_parameters(config, args.rope, rope)
            result[name + "inv_freq"] = [float.hex(v) for v in inv_freq.tolist()]
            result[name + "attention_factor"] = float.hex(float(np.float32(attention_factor)))
        json.dump(result, sys.stdout)
        sys.stdout.write("\n")
        return
    if not args.tokens:
        parser.error("--tokens is required")
    tokens = [int(token) for token in args.tokens.split(",")]
    mrope_positions = None
    if args.mrope_positions:
        if "mrope_section" not in config["rope"]:
            raise SystemExit("--mrope-positions needs a model with rope_scaling.mrope_section")
        with open(args.mrope_positions) as f:
            mrope_positions = json.load(f)["position_ids"]
        if len(mrope_positions) != 3 or any(len(row) != len(tokens) for row in mrope_positions):
            raise SystemExit("--mrope-positions must hold 3 rows of %d ids" % len(tokens))
        if args.greedy:
            raise SystemExit("--greedy does not continue M-RoPE positions")
    tensors = load_tensors(args.model_dir)
    images = None
    if args.image_pixels:
        if config["architecture"] != "Gemma3ForConditionalGeneration":
            raise SystemExit("--image-pixels: %s takes no images (only "
                             "Gemma3ForConditionalGeneration does)" % config["architecture"])
        # Imported here so that text models need nothing of the vision code.
        from reference_image_prompt import image_input
        images = image_input(args.model_dir, args.image_pixels,
                             args.image_attention == "bidirectional")
    if args.greedy:
        chosen = []
        for _ in range(args.greedy):
            with torch.no_grad():
                last = forward(config, tensors, tokens + chosen, images)[-1]
            top = torch.topk(last, 2)
            margin = float(top.values[0] - top.values[1])
            if margin < args.margin * float(last.abs().max()):
                raise SystemExit("the token after %d tokens is a near tie (margin %.3g); choose "
                                 "another seed" % (len(tokens) + len(chosen), margin))
            chosen.append(int(top.indices[0]))
        print(",".join(str(token) for token in chosen))
        return
    with torch.no_grad():
        logits = forward(config, tensors, tokens, images, mrope_positions)
    json.dump({"logits": [[float("%.9g" % v) for v in row] for row in logits.tolist()]},
              sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
