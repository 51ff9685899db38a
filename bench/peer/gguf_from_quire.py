#!/usr/bin/env python3
"""Converts a Llama model directory written by `quire-cli make-model --format
fp16` (config.json, model.safetensors in FP16, tokenizer.model) into an F16
GGUF file that llama.cpp loads, so that both engines run the same weights.

The file follows ggml's GGUF specification (docs/gguf.md in ggml), version 3,
little-endian: a header, the metadata key/value pairs, the tensor infos, then
the tensor data, each tensor aligned to 32 bytes from the start of the data.
The Llama conventions are llama.cpp's:
  * tensors under llama.cpp's names (token_embd, blk.N.attn_q, ..., output);
  * the rows of q_proj and k_proj permuted within each head from the
    Hugging Face order (the first half of a head's dimensions rotated
    against the second half) to the order llama.cpp's Llama rope expects
    (the dimensions of each rotated pair next to each other);
  * one-dimensional tensors (the norms) stored as F32, matrices as F16;
  * the SentencePiece vocabulary as tokenizer.ggml.model "llama" with the
    pieces, their scores and types, padded to the model's vocabulary size.

Only the standard library: the safetensors file is read through mmap and its
matrices are copied row by row, so a 1B model converts in seconds.

  bench/peer/gguf_from_quire.py MODEL_DIR OUT.gguf"""

import argparse
import json
import mmap
import os
import struct
import sys

GGUF_MAGIC = b"GGUF"
GGUF_VERSION = 3
ALIGNMENT = 32

# gguf_metadata_value_type
UINT32, INT32, FLOAT32, BOOL, STRING, ARRAY = 4, 5, 6, 7, 8, 9
# ggml_type
GGML_F32, GGML_F16 = 0, 1
# general.file_type: most tensors F16
MOSTLY_F16 = 1
# SentencePiece's piece types, which llama.cpp's token types share
# (1 normal, 2 unknown, 3 control, 4 user defined, 5 unused, 6 byte).
TOKEN_NORMAL, TOKEN_UNKNOWN, TOKEN_UNUSED = 1, 2, 5


class ConversionError(Exception):
    pass


# --- reading the model directory ---------------------------------------------

def read_safetensors(path):
    """The tensors of a safetensors file as {name: (dtype, shape, memoryview)},
    the views into one read-only mapping of the file."""
    with open(path, "rb") as file:
        mapping = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
    (header_size,) = struct.unpack_from("<Q", mapping, 0)
    header = json.loads(mapping[8:8 + header_size])
    data = memoryview(mapping)[8 + header_size:]
    tensors = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        tensors[name] = (info["dtype"], info["shape"], data[begin:end])
    return tensors


def read_varint(buffer, position):
    value, shift = 0, 0
    while True:
        byte = buffer[position]
        position += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, position
        shift += 7


def protobuf_fields(buffer):
    """(field number, wire type, value) of each field of a protobuf message:
    an int for varints and fixed-width fields, bytes for length-delimited."""
    position = 0
    while position < len(buffer):
        key, position = read_varint(buffer, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = read_varint(buffer, position)
        elif wire == 1:
            value = struct.unpack_from("<Q", buffer, position)[0]
            position += 8
        elif wire == 2:
            length, position = read_varint(buffer, position)
            value = bytes(buffer[position:position + length])
            position += length
        elif wire == 5:
            value = struct.unpack_from("<I", buffer, position)[0]
            position += 4
        else:
            raise ConversionError(f"tokenizer.model: protobuf wire type {wire} is not supported")
        yield number, wire, value


def read_sentencepiece(path):
    """The pieces of a SentencePiece model (ModelProto field 1, each a
    SentencePiece message: 1 piece, 2 score as float, 3 type) as a list of
    (text bytes, score, type), in id order."""
    with open(path, "rb") as file:
        buffer = file.read()
    pieces = []
    for number, wire, value in protobuf_fields(buffer):
        if number != 1 or wire != 2:
            continue
        text, score, kind = b"", 0.0, TOKEN_NORMAL
        for field, field_wire, field_value in protobuf_fields(value):
            if field == 1 and field_wire == 2:
                text = field_value
            elif field == 2 and field_wire == 5:
                score = struct.unpack("<f", struct.pack("<I", field_value))[0]
            elif field == 3 and field_wire == 0:
                kind = field_value
        pieces.append((text, score, kind))
    if not pieces:
        raise ConversionError(f"{path}: no SentencePiece pieces found")
    return pieces


def vocabulary(model_dir, vocab_size):
    """Tokens, scores and types for the GGUF, one per row of the embedding.
    Ids past the tokenizer's pieces (a model may have more rows than its
    tokenizer has pieces) get unused placeholder tokens, so ids still map
    one to one."""
    pieces = read_sentencepiece(os.path.join(model_dir, "tokenizer.model"))
    if len(pieces) > vocab_size:
        raise ConversionError(f"tokenizer.model has {len(pieces)} pieces, more than the "
                              f"model's {vocab_size} rows")
    for index in range(len(pieces), vocab_size):
        pieces.append((f"[PAD{index}]".encode(), 0.0, TOKEN_UNUSED))
    return pieces


def check_config(config):
    """Refuses what this converter does not translate, rather than writing a
    file that computes something else."""
    architectures = config.get("architectures", [])
    if architectures != ["LlamaForCausalLM"]:
        raise ConversionError(f"architectures {architectures}: only LlamaForCausalLM converts")
    if config.get("rope_scaling"):
        raise ConversionError("rope_scaling is not converted")
    for bias in ("attention_bias", "mlp_bias"):
        if config.get(bias):
            raise ConversionError(f"{bias} is not converted")
    if config.get("hidden_act", "silu") != "silu":
        raise ConversionError(f"hidden_act {config['hidden_act']} is not converted")


# --- the GGUF file -----------------------------------------------------------

def gguf_string(text):
    data = text.encode("utf-8") if isinstance(text, str) else text
    return struct.pack("<Q", len(data)) + data


def gguf_value(kind, value):
    if kind == UINT32:
        return struct.pack("<I", value)
    if kind == INT32:
        return struct.pack("<i", value)
    if kind == FLOAT32:
        return struct.pack("<f", value)
    if kind == BOOL:
        return struct.pack("<B", 1 if value else 0)
    if kind == STRING:
        return gguf_string(value)
    raise ConversionError(f"metadata type {kind} is not written")


def gguf_kv(key, kind, value, element=None):
    """One metadata pair; an ARRAY names the type of its elements."""
    out = gguf_string(key) + struct.pack("<I", kind)
    if kind != ARRAY:
        return out + gguf_value(kind, value)
    out += struct.pack("<IQ", element, len(value))
    if element == FLOAT32:
        return out + struct.pack(f"<{len(value)}f", *value)
    if element == INT32:
        return out + struct.pack(f"<{len(value)}i", *value)
    return out + b"".join(gguf_value(element, item) for item in value)


def padding(position):
    return (ALIGNMENT - position % ALIGNMENT) % ALIGNMENT


class GgufTensor:
    """A tensor to write: its GGUF name, its dimensions in ggml's order
    (the fastest-varying first, so [columns, rows] for a matrix), its ggml
    type, and the chunks of bytes that make up its data."""

    def __init__(self, name, dims, ggml_type, chunks, size):
        self.name, self.dims, self.ggml_type = name, dims, ggml_type
        self.chunks, self.size = chunks, size


def write_gguf(path, metadata, tensors):
    """metadata: bytes of the key/value pairs, in order; tensors: GgufTensor."""
    offsets, offset = [], 0
    for tensor in tensors:
        offsets.append(offset)
        offset += tensor.size + padding(tensor.size)
    header = GGUF_MAGIC + struct.pack("<IQQ", GGUF_VERSION, len(tensors), len(metadata))
    infos = b"".join(
        gguf_string(t.name) + struct.pack(f"<I{len(t.dims)}QIQ", len(t.dims), *t.dims,
                                          t.ggml_type, o)
        for t, o in zip(tensors, offsets))
    head = header + b"".join(metadata) + infos
    with open(path + ".part", "wb") as file:
        file.write(head + bytes(padding(len(head))))
        for tensor in tensors:
            for chunk in tensor.chunks():
                file.write(chunk)
            file.write(bytes(padding(tensor.size)))
    os.replace(path + ".part", path)


# --- tensors: names, the q/k row order, types ---------------------------------

def rope_row_order(rows, heads):
    """Source row of each destination row of q_proj or k_proj. In each head of
    `rows / heads` rows, Hugging Face's Llama rotates dimension i against
    dimension i + half; llama.cpp's Llama rope rotates 2i against 2i + 1.
    So destination row 2i + j of a head takes source row j * half + i."""
    per_head = rows // heads
    half = per_head // 2
    order = []
    for head in range(heads):
        base = head * per_head
        for i in range(half):
            order.extend((base + i, base + half + i))
    return order


def matrix(name, source, row_order=None):
    """An F16 matrix [rows, columns] of the source, rows reordered if given."""
    dtype, shape, data = source
    if dtype != "F16" or len(shape) != 2:
        raise ConversionError(f"{name}: {dtype} {shape}, expected a 2-D F16 tensor")
    rows, columns = shape
    row_bytes = columns * 2

    def chunks():
        if row_order is None:
            yield data
            return
        for row in row_order:
            yield data[row * row_bytes:(row + 1) * row_bytes]

    return GgufTensor(name, [columns, rows], GGML_F16, chunks, rows * row_bytes)


def vector(name, source):
    """A 1-D F16 tensor widened to F32, as llama.cpp keeps its norms."""
    dtype, shape, data = source
    if dtype != "F16" or len(shape) != 1:
        raise ConversionError(f"{name}: {dtype} {shape}, expected a 1-D F16 tensor")
    values = struct.unpack(f"<{shape[0]}e", data)
    packed = struct.pack(f"<{shape[0]}f", *values)
    return GgufTensor(name, [shape[0]], GGML_F32, lambda: [packed], len(packed))


def gguf_tensors(config, source):
    heads = config["num_attention_heads"]
    kv_heads = config.get("num_key_value_heads", heads)
    used = set()

    def take(name):
        if name not in source:
            raise ConversionError(f"model.safetensors has no {name}")
        used.add(name)
        return source[name]

    tensors = [matrix("token_embd.weight", take("model.embed_tokens.weight"))]
    for layer in range(config["num_hidden_layers"]):
        hf, blk = f"model.layers.{layer}.", f"blk.{layer}."
        q = take(hf + "self_attn.q_proj.weight")
        k = take(hf + "self_attn.k_proj.weight")
        tensors += [
            vector(blk + "attn_norm.weight", take(hf + "input_layernorm.weight")),
            matrix(blk + "attn_q.weight", q, rope_row_order(q[1][0], heads)),
            matrix(blk + "attn_k.weight", k, rope_row_order(k[1][0], kv_heads)),
            matrix(blk + "attn_v.weight", take(hf + "self_attn.v_proj.weight")),
            matrix(blk + "attn_output.weight", take(hf + "self_attn.o_proj.weight")),
            vector(blk + "ffn_norm.weight", take(hf + "post_attention_layernorm.weight")),
            matrix(blk + "ffn_gate.weight", take(hf + "mlp.gate_proj.weight")),
            matrix(blk + "ffn_up.weight", take(hf + "mlp.up_proj.weight")),
            matrix(blk + "ffn_down.weight", take(hf + "mlp.down_proj.weight")),
        ]
    tensors.append(vector("output_norm.weight", take("model.norm.weight")))
    # A tied head has no tensor of its own; llama.cpp then reads token_embd.
    if "lm_head.weight" in source and not config.get("tie_word_embeddings", False):
        tensors.append(matrix("output.weight", take("lm_head.weight")))
    left = sorted(set(source) - used - {"lm_head.weight"})
    if left:
        raise ConversionError(f"tensors not converted: {', '.join(left)}")
    return tensors


# --- metadata ----------------------------------------------------------------

def gguf_metadata(config, pieces, name):
    heads = config["num_attention_heads"]
    head_dim = config.get("head_dim") or config["hidden_size"] // heads
    bos, eos = config.get("bos_token_id"), config.get("eos_token_id")
    if isinstance(eos, list):
        eos = eos[0]
    unknown = next((i for i, p in enumerate(pieces) if p[2] == TOKEN_UNKNOWN), None)
    pairs = [
        gguf_kv("general.architecture", STRING, "llama"),
        gguf_kv("general.name", STRING, name),
        gguf_kv("general.alignment", UINT32, ALIGNMENT),
        gguf_kv("general.file_type", UINT32, MOSTLY_F16),
        gguf_kv("llama.vocab_size", UINT32, config["vocab_size"]),
        gguf_kv("llama.context_length", UINT32, config["max_position_embeddings"]),
        gguf_kv("llama.embedding_length", UINT32, config["hidden_size"]),
        gguf_kv("llama.block_count", UINT32, config["num_hidden_layers"]),
        gguf_kv("llama.feed_forward_length", UINT32, config["intermediate_size"]),
        gguf_kv("llama.attention.head_count", UINT32, heads),
        gguf_kv("llama.attention.head_count_kv", UINT32,
                config.get("num_key_value_heads", heads)),
        gguf_kv("llama.attention.key_length", UINT32, head_dim),
        gguf_kv("llama.attention.value_length", UINT32, head_dim),
        gguf_kv("llama.attention.layer_norm_rms_epsilon", FLOAT32, config["rms_norm_eps"]),
        gguf_kv("llama.rope.freq_base", FLOAT32, config.get("rope_theta", 10000.0)),
        gguf_kv("llama.rope.dimension_count", UINT32, head_dim),
        gguf_kv("tokenizer.ggml.model", STRING, "llama"),
        gguf_kv("tokenizer.ggml.tokens", ARRAY, [p[0] for p in pieces], STRING),
        gguf_kv("tokenizer.ggml.scores", ARRAY, [p[1] for p in pieces], FLOAT32),
        gguf_kv("tokenizer.ggml.token_type", ARRAY, [p[2] for p in pieces], INT32),
        gguf_kv("tokenizer.ggml.add_bos_token", BOOL, bos is not None),
        gguf_kv("tokenizer.ggml.add_eos_token", BOOL, False),
    ]
    if bos is not None:
        pairs.append(gguf_kv("tokenizer.ggml.bos_token_id", UINT32, bos))
    if eos is not None:
        pairs.append(gguf_kv("tokenizer.ggml.eos_token_id", UINT32, eos))
    if unknown is not None:
        pairs.append(gguf_kv("tokenizer.ggml.unknown_token_id", UINT32, unknown))
    return pairs


def convert(model_dir, out_path):
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as file:
        config = json.load(file)
    check_config(config)
    source = read_safetensors(os.path.join(model_dir, "model.safetensors"))
    pieces = vocabulary(model_dir, config["vocab_size"])
    name = os.path.basename(os.path.normpath(model_dir))
    tensors = gguf_tensors(config, source)
    write_gguf(out_path, gguf_metadata(config, pieces, name), tensors)
    return len(tensors)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model_dir", help="a quire-cli make-model --format fp16 directory")
    parser.add_argument("out", help="the GGUF file to write")
    args = parser.parse_args()
    try:
        count = convert(args.model_dir, args.out)
    except (ConversionError, OSError, KeyError, ValueError) as error:
        print(f"gguf_from_quire: {error}", file=sys.stderr)
        return 1
    print(f"gguf_from_quire: wrote {args.out} ({count} tensors)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
