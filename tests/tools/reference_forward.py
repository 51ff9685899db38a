#!/usr/bin/python3
"""Reference logits for a model directory, independent of Quire's engine.

Follows Hugging Face transformers' modeling code for LlamaForCausalLM,
MistralForCausalLM, Qwen2ForCausalLM and Qwen3ForCausalLM (RMSNorm, Qwen3's
RMSNorm over each query and key head before RoPE, rotate-half RoPE with its
scaling variants, grouped-query attention with a causal and optional sliding
window mask, SiLU-gated MLP, tied embeddings) and runs it in float64 with
PyTorch. Rotary angles and inverse frequencies are computed in float32, as
transformers computes them, and K and V are rounded to float16 as they are in
an FP16 KV cache. EXL2 and GPTQ weights are dequantized here from
the tensors in the files, following the formats as exllamav2 defines them.

Usage: reference_forward.py MODEL_DIR --tokens 1,2,3  -> JSON {"logits": [[...], ...]}
(one row per position);
       reference_forward.py MODEL_DIR --rope SEQ_LEN  -> JSON {"inv_freq": [...],
"attention_factor": x} as float32 values in hexadecimal.
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I32": np.int32,
          "I16": np.int16, "U8": np.uint8}


def read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    base = 8 + length
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[base + begin:base + end], dtype=DTYPES[entry["dtype"]])
        array = array.reshape(entry["shape"])
        if entry["dtype"] == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = array
    return tensors


def load_tensors(model_dir):
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = sorted(name for name in os.listdir(model_dir) if name.endswith(".safetensors"))
    tensors = {}
    for name in files:
        tensors.update(read_safetensors(os.path.join(model_dir, name)))
    return tensors


def fp16_round(values):
    return np.asarray(values, dtype=np.float64).astype(np.float16).astype(np.float64)


def dequant_exl2(t, key):
    """W [N, K]. Row k of the packed matrix is input row perm[k]; each group of
    rows is a little-endian bit stream per column; scale = fp16(qs^2 * max / 256)."""
    q_weight = t[key + ".q_weight"].astype(np.int64) & 0xFFFFFFFF
    perm = np.argsort(t[key + ".q_invperm"].astype(np.int64), kind="stable")
    q_scale = t[key + ".q_scale"].astype(np.int64) & 0xFFFFFFFF
    scale_max = t[key + ".q_scale_max"].astype(np.float64)
    groups = t[key + ".q_groups"].astype(np.int64).reshape(-1, 2)
    total_qrows, columns = q_weight.shape
    rows_out = []
    for g, (bits, qrow) in enumerate(groups):
        next_qrow = groups[g + 1][1] if g + 1 < len(groups) else total_qrows
        rows = (next_qrow - qrow) * 32 // bits
        words = q_weight[qrow:next_qrow]
        stream = np.zeros((rows, columns), dtype=np.int64)
        for r in range(rows):
            bit = r * bits
            word, shift = bit // 32, bit % 32
            value = words[word] >> shift
            if shift + bits > 32:
                value = value | (words[word + 1] << (32 - shift))
            stream[r] = value & ((1 << bits) - 1)
        n = np.arange(columns)
        qs = ((q_scale[g][n // 8] >> (4 * (n % 8))) & 15) + 1
        scale = fp16_round(qs * qs * fp16_round(scale_max[g] / 256.0))
        rows_out.append((stream - (1 << (bits - 1))) * scale[None, :])
    packed = np.concatenate(rows_out, axis=0)  # [K, N] in permuted order
    weight = np.zeros_like(packed)
    weight[perm] = packed
    return weight.T


def dequant_gptq(t, key, exact_zeros):
    """W [N, K] = (q - zero) * scale, zero stored minus one unless gptq_v2."""
    qweight = t[key + ".qweight"].astype(np.int64) & 0xFFFFFFFF
    qzeros = t[key + ".qzeros"].astype(np.int64) & 0xFFFFFFFF
    scales = t[key + ".scales"].astype(np.float64)
    k_rows = qweight.shape[0] * 8
    groups = scales.shape[0]
    k = np.arange(k_rows)
    q = (qweight[k // 8] >> (4 * (k % 8))[:, None]) & 15
    if key + ".g_idx" in t:
        g_idx = t[key + ".g_idx"].astype(np.int64)
    else:
        size = 1
        while size * groups < k_rows:
            size *= 2
        g_idx = k // size
    n = np.arange(scales.shape[1])
    zeros = (qzeros[:, n // 8] >> (4 * (n % 8))[None, :]) & 15
    if not exact_zeros:
        zeros = zeros + 1
    weight = (q - zeros[g_idx]) * scales[g_idx]
    return weight.T


def linear(t, key, config):
    if key + ".q_weight" in t:
        weight = dequant_exl2(t, key)
    elif key + ".qweight" in t:
        weight = dequant_gptq(t, key, config["checkpoint_format"] == "gptq_v2")
    else:
        weight = t[key + ".weight"].astype(np.float64)
    bias = t.get(key + ".bias")
    return (torch.from_numpy(np.ascontiguousarray(weight, dtype=np.float64)),
            None if bias is None else torch.from_numpy(bias.astype(np.float64)))


def read_config(model_dir):
    with open(os.path.join(model_dir, "config.json")) as f:
        raw = json.load(f)
    text = raw.get("text_config", {})

    def get(key, default=None):
        value = raw.get(key)
        if value is None:
            value = text.get(key, default)
        return default if value is None else value

    config = {key: get(key) for key in ["hidden_size", "num_hidden_layers", "num_attention_heads",
                                          "intermediate_size", "vocab_size"]}
    config["architecture"] = get("architectures")[0]
    config["num_key_value_heads"] = get("num_key_value_heads", config["num_attention_heads"])
    config["head_dim"] = get("head_dim", config["hidden_size"] // config["num_attention_heads"])
    config["rms_norm_eps"] = get("rms_norm_eps", 1e-6)
    config["rope_theta"] = get("rope_theta", 10000.0)
    config["rope_scaling"] = get("rope_scaling")
    config["max_position_embeddings"] = get("max_position_embeddings", 4096)
    config["tie_word_embeddings"] = get("tie_word_embeddings", False)
    config["checkpoint_format"] = (get("quantization_config") or {}).get("checkpoint_format", "")
    layers = config["num_hidden_layers"]
    window = get("sliding_window")
    arch = config["architecture"]
    if arch == "MistralForCausalLM":
        config["windows"] = [window or 0] * layers
    elif arch in ("Qwen2ForCausalLM", "Qwen3ForCausalLM"):
        use = get("use_sliding_window", False)
        first = get("max_window_layers", 28)
        config["windows"] = [(window or 0) if use and i >= first else 0 for i in range(layers)]
    elif arch == "LlamaForCausalLM":
        config["windows"] = [0] * layers
    else:
        raise SystemExit("unsupported architecture " + arch)
    return config


def rope_parameters(config, seq_len):
    """transformers' rope initialisation functions: (inv_freq in float32,
    attention factor that cos and sin are multiplied by)."""
    dim = config["head_dim"]
    base = config["rope_theta"]
    scaling = config["rope_scaling"] or {}
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    factor = scaling.get("factor", 1.0)
    if kind == "yarn":
        return yarn_parameters(config, scaling, dim, base, factor)
    if kind == "dynamic" and seq_len > config["max_position_embeddings"]:
        original = config["max_position_embeddings"]
        base = base * ((factor * seq_len / original) - (factor - 1)) ** (dim / (dim - 2))
    freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    if kind == "linear":
        freq = freq / factor
    if kind == "llama3":
        low, high = scaling["low_freq_factor"], scaling["high_freq_factor"]
        old = scaling["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / freq
        scaled = torch.where(wavelen > low_wavelen, freq / factor, freq)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        freq = torch.where(medium, smoothed, scaled)
    return freq, 1.0


def yarn_parameters(config, scaling, dim, base, factor):
    """YaRN as transformers' _compute_yarn_parameters: frequencies blended
    between extrapolation and interpolation by a linear ramp over the
    dimensions whose rotations over the original context lie between
    beta_slow and beta_fast; attention factor 0.1 ln(factor) + 1 (or the
    mscale ratio, or as given)."""
    original = scaling.get("original_max_position_embeddings") or config["max_position_embeddings"]

    def mscale_of(scale, mscale=1.0):
        return 1.0 if scale <= 1 else 0.1 * mscale * math.log(scale) + 1.0

    attention = scaling.get("attention_factor")
    if attention is None:
        mscale, mscale_all_dim = scaling.get("mscale"), scaling.get("mscale_all_dim")
        if mscale and mscale_all_dim:
            attention = mscale_of(factor, mscale) / mscale_of(factor, mscale_all_dim)
        else:
            attention = mscale_of(factor)
    beta_fast = scaling.get("beta_fast") or 32
    beta_slow = scaling.get("beta_slow") or 1

    def dimension_of(rotations):
        return dim * math.log(original / (rotations * 2 * math.pi)) / (2 * math.log(base))

    low, high = dimension_of(beta_fast), dimension_of(beta_slow)
    if scaling.get("truncate", True):
        low, high = math.floor(low), math.ceil(high)
    low, high = max(low, 0), min(high, dim - 1)
    if low == high:
        high += 0.001
    position_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    extrapolated = 1.0 / position_freqs
    interpolated = 1.0 / (factor * position_freqs)
    ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
    keep = 1 - ramp
    return interpolated * (1 - keep) + extrapolated * keep, float(attention)


def rms_norm(x, weight, eps):
    variance = x.pow(2).mean(-1, keepdim=True)
    return weight * (x * torch.rsqrt(variance + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat((-x[..., half:], x[..., :half]), dim=-1)


def forward(config, t, tokens):
    tokens = torch.tensor(tokens, dtype=torch.int64)
    count = tokens.shape[0]
    heads, kv_heads, dim = (config["num_attention_heads"], config["num_key_value_heads"],
                            config["head_dim"])
    embed = torch.from_numpy(t["model.embed_tokens.weight"].astype(np.float64))
    x = embed[tokens]

    positions = torch.arange(count, dtype=torch.float32)
    inv_freq, attention_factor = rope_parameters(config, count)
    freqs = torch.outer(positions, inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    # transformers scales cos and sin by the attention factor in float32.
    cos = (emb.cos() * attention_factor).double()
    sin = (emb.sin() * attention_factor).double()

    def proj(key, value):
        weight, bias = linear(t, key, config)
        out = value @ weight.T
        return out if bias is None else out + bias

    eps = config["rms_norm_eps"]
    for i in range(config["num_hidden_layers"]):
        p = "model.layers.%d." % i
        norm = lambda name: torch.from_numpy(t[p + name + ".weight"].astype(np.float64))
        h = rms_norm(x, norm("input_layernorm"), eps)
        q = proj(p + "self_attn.q_proj", h).view(count, heads, dim)
        k = proj(p + "self_attn.k_proj", h).view(count, kv_heads, dim)
        if config["architecture"] == "Qwen3ForCausalLM":
            # Qwen3Attention: q_norm and k_norm over each head, before RoPE.
            q = rms_norm(q, norm("self_attn.q_norm"), eps)
            k = rms_norm(k, norm("self_attn.k_norm"), eps)
        q = q.transpose(0, 1)
        k = k.transpose(0, 1)
        v = proj(p + "self_attn.v_proj", h).view(count, kv_heads, dim).transpose(0, 1)
        q = q * cos + rotate_half(q) * sin
        k = k * cos + rotate_half(k) * sin
        # Quire keeps K and V in its FP16 cache; rounding them the same way here
        # leaves the comparison to test everything else at full precision.
        k = k.half().double()
        v = v.half().double()
        k = k.repeat_interleave(heads // kv_heads, dim=0)
        v = v.repeat_interleave(heads // kv_heads, dim=0)
        scores = q @ k.transpose(1, 2) / math.sqrt(dim)
        query_pos = torch.arange(count)[:, None]
        key_pos = torch.arange(count)[None, :]
        allowed = key_pos <= query_pos
        window = config["windows"][i]
        if window:
            allowed = allowed & (query_pos - key_pos < window)
        scores = scores.masked_fill(~allowed, float("-inf"))
        attention = torch.softmax(scores, dim=-1) @ v
        attention = attention.transpose(0, 1).reshape(count, heads * dim)
        x = x + proj(p + "self_attn.o_proj", attention)
        h = rms_norm(x, norm("post_attention_layernorm"), eps)
        gate = proj(p + "mlp.gate_proj", h)
        up = proj(p + "mlp.up_proj", h)
        x = x + proj(p + "mlp.down_proj", torch.nn.functional.silu(gate) * up)
    x = rms_norm(x, torch.from_numpy(t["model.norm.weight"].astype(np.float64)), eps)
    if config["tie_word_embeddings"] and "lm_head.weight" not in t and "lm_head.q_weight" not in t:
        return x @ embed.T
    return proj("lm_head", x)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir")
    parser.add_argument("--tokens", help="comma-separated token ids")
    parser.add_argument("--rope", type=int, metavar="SEQ_LEN",
                        help="print the rotary inverse frequencies and attention factor for a "
                             "sequence of SEQ_LEN tokens instead (needs only config.json)")
    args = parser.parse_args()
    config = read_config(args.model_dir)
    if args.rope is not None:
        inv_freq, attention_factor = rope_parameters(config, args.rope)
        json.dump({"inv_freq": [float.hex(v) for v in inv_freq.tolist()],
                   "attention_factor": float.hex(float(np.float32(attention_factor)))},
                  sys.stdout)
        sys.stdout.write("\n")
        return
    if not args.tokens:
        parser.error("--tokens is required")
    tokens = [int(token) for token in args.tokens.split(",")]
    with torch.no_grad():
        logits = forward(config, load_tensors(args.model_dir), tokens)
    json.dump({"logits": [[float("%.9g" % v) for v in row] for row in logits.tolist()]},
              sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
