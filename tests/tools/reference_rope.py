"""Rotary inverse frequencies and attention factors as transformers'
rope initialisation functions compute them (float32 tensors, Python
doubles as scalars): default, linear, dynamic, llama3, yarn and longrope."""
import math

import torch

def rope_parameters(config, seq_len, rope=None):
    """transformers' rope initialisation functions: (inv_freq in float32,
    attention factor that cos and sin are multiplied by)."""
    rope = config["rope"] if rope is None else rope
    dim = int(config["head_dim"] * rope.get("partial_rotary_factor", 1.0))
    base = rope["rope_theta"]
    kind = rope["rope_type"]
    factor = rope.get("factor", 1.0)
    if kind == "yarn":
        return yarn_parameters(config, rope, dim, base, factor)
    if kind == "longrope":
        return longrope_parameters(config, rope, dim, base, seq_len)
    if kind == "dynamic" and seq_len > config["max_position_embeddings"]:
        original = config["max_position_embeddings"]
        base = base * ((factor * seq_len / original) - (factor - 1)) ** (dim / (dim - 2))
    freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    if kind == "linear":
        freq = freq / factor
    if kind == "llama3":
        low, high = rope["low_freq_factor"], rope["high_freq_factor"]
        old = rope["original_max_position_embeddings"]
        low_wavelen, high_wavelen = old / low, old / high
        wavelen = 2 * math.pi / freq
        scaled = torch.where(wavelen > low_wavelen, freq / factor, freq)
        smooth = (old / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        freq = torch.where(medium, smoothed, scaled)
    return freq, 1.0


def longrope_parameters(config, rope, dim, base, seq_len):
    """LongRoPE as transformers' _compute_longrope_parameters with its dynamic
    update: frequencies divided per dimension by short_factor, or by
    long_factor once the sequence is longer than original_max_position_embeddings
    (the update recomputes them then); attention factor
    sqrt(1 + ln(factor) / ln(original)), factor max_position_embeddings /
    original unless given, or attention_factor as given."""
    original = rope["original_max_position_embeddings"]
    factor = rope.get("factor")
    if factor is None:
        factor = config["max_position_embeddings"] / original
    attention = rope.get("attention_factor")
    if attention is None:
        attention = 1.0 if factor <= 1.0 else math.sqrt(1 + math.log(factor) / math.log(original))
    chosen = rope["long_factor"] if seq_len and seq_len > original else rope["short_factor"]
    if len(chosen) != dim // 2:
        raise SystemExit("longrope factors: %d values for %d rotary dimensions"
                         % (len(chosen), dim))
    ext_factors = torch.tensor(chosen, dtype=torch.float32)
    shape = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    return 1.0 / (ext_factors * base ** shape), float(attention)


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
