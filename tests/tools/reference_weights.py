"""Model weights for the reference forward pass: safetensors files read
directly, EXL2 and GPTQ projections dequantized from their tensors,
following the formats as exllamav2 defines them, and FP8 projections
(compressed-tensors' float-quantized) from the E4M3 bits."""
import json
import os
import struct

import numpy as np
import torch

DTYPES = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I32": np.int32,
          "I16": np.int16, "U8": np.uint8, "F8_E4M3": np.uint8}


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


def linear(t, key, config):
    if t.dtypes.get(key + ".weight") == "F8_E4M3":
        weight = dequant_fp8(t, key)
    elif key + ".q_weight" in t:
        weight = dequant_exl2(t, key)
    elif key + ".qweight" in t:
        weight = dequant_gptq(t, key, config["checkpoint_format"] == "gptq_v2")
    else:
        weight = t[key + ".weight"].astype(np.float64)
    bias = t.get(key + ".bias")
    return (torch.from_numpy(np.ascontiguousarray(weight, dtype=np.float64)),
            None if bias is None else torch.from_numpy(bias.astype(np.float64)))
