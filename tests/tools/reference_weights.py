"""Model weights for the reference forward pass: safetensors files read
directly, EXL2 and GPTQ projections dequantized from their tensors,
following the formats as exllamav2 defines them (GPTQ in 4 and 8 bits as
GPTQModel packs them), FP8 projections (compressed-tensors' float-quantized)
from the E4M3 bits, EXL3 projections decoded as exllamav3's reconstruct
kernel and get_weight_tensor do (see dequant_exl3), compressed-tensors'
pack-quantized and naive-quantized integers as its decompressors do, and
AutoAWQ's GEMM layout as its dequantize_gemm does (see dequant_awq)."""
import re
import json
import os
import struct

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I32": np.int32,
          "I16": np.int16, "U8": np.uint8, "F8_E4M3": np.uint8, "I64": np.int64, "I8": np.int8}


class Tensors(dict):
    """Tensor name -> numpy array (BF16 widened to float32), with the dtype
    each had in the file in .dtypes."""

    def __init__(self):
        super().__init__()
        self.dtypes = {}


def read_safetensors(path, tensors):
    with open(path, "rb") as f:
        data = f.read()
    (length,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + length])
    base = 8 + length
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(data[base + begin:base + end], dtype=DTYPES[entry["dtype"]])
        array = array.reshape(entry["shape"])
        if entry["dtype"] == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = array
        tensors.dtypes[name] = entry["dtype"]


def load_tensors(model_dir):
    index = os.path.join(model_dir, "model.safetensors.index.json")
    if os.path.exists(index):
        with open(index) as f:
            files = sorted(set(json.load(f)["weight_map"].values()))
    else:
        files = sorted(name for name in os.listdir(model_dir) if name.endswith(".safetensors"))
    tensors = Tensors()
    for name in files:
        read_safetensors(os.path.join(model_dir, name), tensors)
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


def dequant_gptq(t, key, exact_zeros, bits=4):
    """W [N, K] = (q - zero) * scale, zero stored minus one unless gptq_v2;
    32 / bits values to a word, the first in the low bits, along K in
    qweight and along N in qzeros (GPTQModel's pack for 2, 4 and 8 bits)."""
    per_word = 32 // bits
    mask = (1 << bits) - 1
    qweight = t[key + ".qweight"].astype(np.int64) & 0xFFFFFFFF
    qzeros = t[key + ".qzeros"].astype(np.int64) & 0xFFFFFFFF
    scales = t[key + ".scales"].astype(np.float64)
    k_rows = qweight.shape[0] * per_word
    groups = scales.shape[0]
    k = np.arange(k_rows)
    q = (qweight[k // per_word] >> (bits * (k % per_word))[:, None]) & mask
    if key + ".g_idx" in t:
        g_idx = t[key + ".g_idx"].astype(np.int64)
    else:
        size = 1
        while size * groups < k_rows:
            size *= 2
        g_idx = k // size
    n = np.arange(scales.shape[1])
    zeros = (qzeros[:, n // per_word] >> (bits * (n % per_word))[None, :]) & mask
    if not exact_zeros:
        zeros = zeros + 1
    weight = (q - zeros[g_idx]) * scales[g_idx]
    return weight.T


# AutoAWQ's GEMM layout, after awq/utils/packing_utils.py (unpack_awq,
# reverse_awq_order, dequantize_gemm): eight 4-bit values of consecutive
# output columns to a word, interleaved in AWQ_ORDER.
AWQ_REVERSE_ORDER = [0, 4, 1, 5, 2, 6, 3, 7]


def unpack_awq(packed, bits=4):
    """unpack_awq: each word's values from the low bits up, then the
    columns put back with reverse_awq_order."""
    shifts = np.arange(0, 32, bits)
    values = (packed.astype(np.int64)[:, :, None] >> shifts[None, None, :]) & ((1 << bits) - 1)
    values = values.reshape(packed.shape[0], -1)
    order = np.arange(values.shape[1]).reshape(-1, 32 // bits)[:, AWQ_REVERSE_ORDER].reshape(-1)
    return values[:, order]


def dequant_awq(t, key):
    """dequantize_gemm: W^T [K, N] = (q - z) * s with z and s repeated over
    each group of K / G consecutive inputs."""
    iweight = unpack_awq(t[key + ".qweight"])
    izeros = unpack_awq(t[key + ".qzeros"])
    scales = t[key + ".scales"].astype(np.float64)
    group_size = iweight.shape[0] // scales.shape[0]
    scales = np.repeat(scales, group_size, axis=0)
    izeros = np.repeat(izeros, group_size, axis=0)
    return ((iweight - izeros) * scales).T


# compressed-tensors, after compressors/pack_quantized/helpers.py
# (unpack_from_int32), compressors/naive_quantized and
# quantization/lifecycle/forward.py (dequantize with the strategy inferred
# from the scale's shape), and utils/match.py for which config group a
# layer belongs to.

def ct_unpack(packed, bits, count, packed_dim=1):
    """unpack_from_int32: element i of a row at global bit i * bits of its
    words (dense packing), minus the 2^(bits-1) offset."""
    words = packed.astype(np.int64) & 0xFFFFFFFF
    if packed_dim == 0:
        words = words.T
    stream_bits = ((words[:, :, None] >> np.arange(32)[None, None, :]) & 1).reshape(
        words.shape[0], -1)
    values = np.zeros((words.shape[0], count), dtype=np.int64)
    for b in range(bits):
        values |= stream_bits[:, np.arange(count) * bits + b] << b
    values = values - (1 << (bits - 1))
    return values.T if packed_dim == 0 else values


def ct_dequantize(x_q, scale, zero_point=None, g_idx=None):
    """forward.py's dequantize without args: tensor for a 0- or 1-dimensional
    scale, channel for [N, 1], group otherwise; a group's inputs are those
    g_idx names (sorted by group and cut into equal groups) unless g_idx is
    absent or holds -1 (column order)."""
    x = x_q.astype(np.float64)
    scale = np.asarray(scale, dtype=np.float64)
    zero = None if zero_point is None else np.asarray(zero_point, dtype=np.float64)
    if scale.ndim < 2 or scale.shape[1] == 1:
        if scale.ndim == 2:
            scale = scale.reshape(-1, 1)
            zero = None if zero is None else zero.reshape(-1, 1)
        return (x - (0.0 if zero is None else zero)) * scale
    rows, columns = x.shape
    groups = scale.shape[1]
    group_size = columns // groups
    perm = None
    if g_idx is not None and not (np.asarray(g_idx) == -1).any():
        perm = np.argsort(np.asarray(g_idx), kind="stable")
        x = x[:, perm]
    x = x.reshape(rows, groups, group_size)
    if zero is not None:
        x = x - zero[:, :, None]
    out = (x * scale[:, :, None]).reshape(rows, columns)
    if perm is not None:
        out = out[:, np.argsort(perm)]
    return out


def ct_matches(name, target):
    """utils/match.py's match_name, and every projection is a Linear."""
    if target == "Linear":
        return True
    if target.startswith("re:"):
        return re.match(target[3:], name) is not None
    return target == name


def ct_weights_scheme(quantization, key):
    """The weights' QuantizationArgs of the first config group targeting the
    layer, unless "ignore" names it."""
    if any(ct_matches(key, target) for target in quantization.get("ignore") or []):
        return None
    for group in (quantization.get("config_groups") or {}).values():
        if any(ct_matches(key, target) for target in group.get("targets") or []):
            return group.get("weights")
    return None


def dequant_pack_quantized(t, key, quantization):
    scheme = ct_weights_scheme(quantization, key)
    bits = scheme["num_bits"]
    rows, columns = (int(v) for v in t[key + ".weight_shape"])
    unpacked = ct_unpack(t[key + ".weight_packed"], bits, columns)
    scale = t[key + ".weight_scale"]
    zero = t.get(key + ".weight_zero_point")
    if zero is not None and t.dtypes[key + ".weight_zero_point"] == "I32":
        zero = ct_unpack(zero, bits, rows, packed_dim=0)
    return ct_dequantize(unpacked, scale, zero, t.get(key + ".weight_g_idx"))


def dequant_naive_quantized(t, key):
    return ct_dequantize(t[key + ".weight"], t[key + ".weight_scale"],
                         t.get(key + ".weight_zero_point"), t.get(key + ".weight_g_idx"))


def e4m3_values(codes):
    """The OCP 8-bit float E4M3 (PyTorch's float8_e4m3fn) from its bits: bias
    7, subnormals at exponent 0, S.1111.111 NaN. Where PyTorch has the type,
    its own conversion must agree."""
    codes = np.asarray(codes, dtype=np.int64)
    sign = np.where(codes & 0x80, -1.0, 1.0)
    exponent = (codes >> 3) & 15
    mantissa = (codes & 7).astype(np.float64)
    values = np.where(exponent == 0, mantissa / 8.0 * 2.0 ** -6,
                      (1.0 + mantissa / 8.0) * 2.0 ** (exponent - 7))
    values = sign * np.where((exponent == 15) & (codes & 7 == 7), np.nan, values)
    if hasattr(torch, "float8_e4m3fn"):
        bits = torch.from_numpy(np.ascontiguousarray(codes.astype(np.uint8)))
        theirs = bits.view(torch.float8_e4m3fn).to(torch.float64).numpy()
        assert np.array_equal(values, theirs, equal_nan=True), "E4M3 decoding disagrees"
    return values


def dequant_fp8(t, key):
    """W [N, K] = e4m3(weight) * weight_scale, the scale per output row
    ([N, 1]) or one for the tensor."""
    values = e4m3_values(t[key + ".weight"])
    scale = np.asarray(t[key + ".weight_scale"], dtype=np.float64)
    if scale.size == 1:
        return values * scale.reshape(())
    return values * scale.reshape(-1, 1)


# EXL3, after exllamav3: modules/quant/exl3.py (get_weight_tensor),
# modules/quant/exl3_lib/quantize.py (tensor_core_perm, preapply_had_l/r),
# util/hadamard.py (Sylvester's construction from the 1x1 matrix) and the CUDA
# decoder exllamav3_ext/quant/exl3_dq.cuh (dq) with codebook.cuh
# (decode_3inst). Values are computed in numpy float16 where the CUDA code
# computes in half precision.

def exl3_tensor_core_perm():
    """quantize.py's tensor_core_perm: perm[i] is the row-major tile element
    (row * 16 + column, rows along the inputs) stored at tile position i."""
    perm = [0] * 256
    for t in range(32):
        r0 = (t % 4) * 2
        r1 = r0 + 1
        r2 = r0 + 8
        r3 = r0 + 9
        c0 = t // 4
        c1 = c0 + 8
        perm[t * 8:t * 8 + 8] = [r0 * 16 + c0, r1 * 16 + c0, r2 * 16 + c0, r3 * 16 + c0,
                                 r0 * 16 + c1, r1 * 16 + c1, r2 * 16 + c1, r3 * 16 + c1]
    return np.array(perm)


def exl3_states(tile_words, bits):
    """dq() of exl3_dq.cuh for every position of one tile: the tile's int16
    words read as uint32 (little-endian pairs), the state of position t the 16
    bits ending at bit (t + 1) * bits + 256 * bits of the stream, each uint32
    read from its top bit, indices modulo the tile's words."""
    words32 = tile_words.astype(np.uint16).view(np.uint32).astype(np.int64)
    count = bits * 256 // 32
    states = np.zeros(256, dtype=np.int64)
    for t in range(256):
        b0 = t * bits + bits - 16 + 256 * bits
        b1 = b0 + 16
        i0 = b0 // 32
        i1 = (b1 - 1) // 32
        s0 = (i1 + 1) * 32 - b1
        a = words32[i0 % count]
        b = words32[i1 % count]
        merged = (a << 32) | b  # __funnelshift_r(b, a, s0)
        states[t] = (merged >> s0) & 0xFFFF
    return states


def exl3_codebook(states, codebook):
    """decode_3inst<cb> of codebook.cuh in float16: cb 0 multiply-add, cb 1
    the MCG multiplier, each then lop3(x, 0x8fff8fff, 0x3b603b60, 0x6a) and
    the two halves added; cb 2 the MUL1 multiplier, the byte sum plus 0x6400
    as a half, times 0x1eee plus 0xc931 in one rounding (hfma)."""
    x = states.astype(np.uint64)
    mask32 = np.uint64(0xFFFFFFFF)
    if codebook == "mul1":
        x = (x * np.uint64(0x83DCD12D)) & mask32
        byte_sum = (x & 255) + ((x >> 8) & 255) + ((x >> 16) & 255) + (x >> 24)
        h = (byte_sum + np.uint64(0x6400)).astype(np.uint16).view(np.float16)
        k_inv = np.array([0x1EEE], dtype=np.uint16).view(np.float16)[0]
        k_bias = np.array([0xC931], dtype=np.uint16).view(np.float16)[0]
        # hfma rounds once: the exact value in float64, then to float16.
        exact = h.astype(np.float64) * np.float64(k_inv) + np.float64(k_bias)
        return exact.astype(np.float16).astype(np.float64)
    if codebook == "mcg":
        x = (x * np.uint64(0xCBAC1FED)) & mask32
    else:
        x = (x * np.uint64(89226354) + np.uint64(64248484)) & mask32
    x = (x & np.uint64(0x8FFF8FFF)) ^ np.uint64(0x3B603B60)
    low = (x & np.uint64(0xFFFF)).astype(np.uint16).view(np.float16)
    high = (x >> np.uint64(16)).astype(np.uint16).view(np.float16)
    return (low + high).astype(np.float64)  # __hadd: float16 addition


def exl3_hadamard(size):
    """get_hadamard(128) of util/hadamard.py: Sylvester's doubling from [[1]],
    scaled by 1 / sqrt(size) as get_hadamard_dt scales it."""
    h = np.ones((1, 1))
    while h.shape[0] < size:
        h = np.block([[h, h], [h, -h]])
    return h / np.sqrt(size)


def dequant_exl3(t, key, in_features, out_features):
    """W [N, K]: the trellis decoded into W^ [Kp, Np] (tile [kt, nt] holds
    rows 16 kt.. and columns 16 nt.., position i at tensor_core_perm[i]),
    then exl3.py's get_weight_tensor: H W^ (blocks of 128 rows), times suh
    per row, W H (blocks of 128 columns), times svh per column; the padding
    beyond K inputs and N outputs cut off."""
    trellis = t[key + ".trellis"]
    tiles_k, tiles_n, words = trellis.shape
    bits = words // 16
    codebook = "mcg" if key + ".mcg" in t else "mul1" if key + ".mul1" in t else "3inst"
    perm = exl3_tensor_core_perm()
    w = np.zeros((tiles_k * 16, tiles_n * 16))
    for kt in range(tiles_k):
        for nt in range(tiles_n):
            values = exl3_codebook(exl3_states(trellis[kt, nt], bits), codebook)
            tile = np.zeros(256)
            tile[perm] = values
            w[kt * 16:kt * 16 + 16, nt * 16:nt * 16 + 16] = tile.reshape(16, 16)
    if key + ".suh" in t:
        suh = t[key + ".suh"].astype(np.float64)
        svh = t[key + ".svh"].astype(np.float64)
    else:  # exl3.py's unpack_bf of the packed signs: bit set -> -1
        unpack = lambda packed: 1.0 - 2.0 * ((packed.astype(np.uint16)[:, None].astype(np.int64)
                                               >> np.arange(16)) & 1).reshape(-1)
        suh, svh = unpack(t[key + ".su"]), unpack(t[key + ".sv"])
    had = exl3_hadamard(128)
    kp, np_ = w.shape
    w = (had @ w.reshape(-1, 128, np_)).reshape(kp, np_)  # preapply_had_l
    w = w * suh[:, None]
    w = (w.reshape(kp, -1, 128) @ had).reshape(kp, np_)  # preapply_had_r
    w = w * svh[None, :]
    return w[:in_features, :out_features].T


def linear(t, key, config, in_features=None, out_features=None):
    if key + ".trellis" in t:
        weight = dequant_exl3(t, key, in_features, out_features)
        bias = t.get(key + ".bias")
        if bias is not None:
            bias = bias[:out_features]
        return (torch.from_numpy(np.ascontiguousarray(weight, dtype=np.float64)),
                None if bias is None else torch.from_numpy(bias.astype(np.float64)))
    quantization = config.get("quantization") or {}
    if t.dtypes.get(key + ".weight") == "F8_E4M3":
        weight = dequant_fp8(t, key)
    elif t.dtypes.get(key + ".weight") == "I8":
        weight = dequant_naive_quantized(t, key)
    elif key + ".weight_packed" in t:
        weight = dequant_pack_quantized(t, key, quantization)
    elif key + ".q_weight" in t:
        weight = dequant_exl2(t, key)
    elif key + ".qweight" in t and quantization.get("quant_method") == "awq":
        weight = dequant_awq(t, key)
    elif key + ".qweight" in t:
        weight = dequant_gptq(t, key, config["checkpoint_format"] == "gptq_v2",
                              quantization.get("bits", 4))
    else:
        weight = t[key + ".weight"].astype(np.float64)
    bias = t.get(key + ".bias")
    return (torch.from_numpy(np.ascontiguousarray(weight, dtype=np.float64)),
            None if bias is None else torch.from_numpy(bias.astype(np.float64)))
