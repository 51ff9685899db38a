#!/usr/bin/env python3
"""Unit check of gguf_from_quire.py on a small model written here: reads the
GGUF back with a reader of its own (from the specification, not from the
writer's code) and checks the header, the metadata, the tensor infos and
alignment, the q/k row order and the F32 norms.

  python3 bench/peer/test_gguf_from_quire.py"""

import json
import os
import struct
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gguf_from_quire  # noqa: E402

HIDDEN, LAYERS, HEADS, KV_HEADS, MLP, VOCAB, PIECES = 64, 2, 4, 2, 96, 300, 260
HEAD_DIM = HIDDEN // HEADS


def f16_values(count, seed):
    """Distinct FP16-exact values, so that every row can be recognised."""
    return [((seed * 7919 + i * 31) % 2048 - 1024) / 1024.0 for i in range(count)]


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name, (shape, values) in tensors.items():
        blob = struct.pack(f"<{len(values)}e", *values)
        header[name] = {"dtype": "F16", "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    text = json.dumps(header).encode()
    with open(path, "wb") as file:
        file.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def varint(value):
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def write_sentencepiece(path, pieces):
    """A ModelProto with only its pieces, plus an unrelated field (trainer
    spec, field 2) that the reader must skip."""
    out = bytearray()
    for text, score, kind in pieces:
        body = (b"\x0a" + varint(len(text)) + text + b"\x15" + struct.pack("<f", score)
                + b"\x18" + varint(kind))
        out += b"\x0a" + varint(len(body)) + body
    trainer = b"\x18" + varint(2)
    out += b"\x12" + varint(len(trainer)) + trainer
    with open(path, "wb") as file:
        file.write(bytes(out))


class GgufReader:
    """Reads a GGUF v3 file: metadata as {key: value}, tensors as
    {name: (dims, type, bytes)}."""

    def __init__(self, path):
        with open(path, "rb") as file:
            self.data = file.read()
        self.position = 0
        assert self.take(4) == b"GGUF"
        self.version, tensor_count, kv_count = self.unpack("<IQQ")
        self.metadata = {}
        for _ in range(kv_count):
            key = self.string()
            (kind,) = self.unpack("<I")
            self.metadata[key] = self.value(kind)
        infos = []
        for _ in range(tensor_count):
            name = self.string()
            (dims_count,) = self.unpack("<I")
            dims = list(self.unpack(f"<{dims_count}Q"))
            kind, offset = self.unpack("<IQ")
            infos.append((name, dims, kind, offset))
        alignment = self.metadata.get("general.alignment", 32)
        self.data_start = self.position + (alignment - self.position % alignment) % alignment
        self.offsets = [info[3] for info in infos]
        self.tensors = {}
        for name, dims, kind, offset in infos:
            count = 1
            for dim in dims:
                count *= dim
            size = count * (4 if kind == 0 else 2)
            start = self.data_start + offset
            self.tensors[name] = (dims, kind, self.data[start:start + size])

    def take(self, size):
        chunk = self.data[self.position:self.position + size]
        self.position += size
        return chunk

    def unpack(self, layout):
        values = struct.unpack_from(layout, self.data, self.position)
        self.position += struct.calcsize(layout)
        return values

    def string(self):
        (length,) = self.unpack("<Q")
        return self.take(length).decode("utf-8")

    def value(self, kind):
        scalar = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?",
                  10: "<Q", 11: "<q", 12: "<d"}
        if kind in scalar:
            return self.unpack(scalar[kind])[0]
        if kind == 8:
            return self.string()
        if kind == 9:
            element, count = self.unpack("<IQ")
            return [self.value(element) for _ in range(count)]
        raise AssertionError(f"unknown metadata type {kind}")


class ConvertTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory()
        model = cls.directory.name
        config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama",
                  "hidden_size": HIDDEN, "num_hidden_layers": LAYERS,
                  "num_attention_heads": HEADS, "num_key_value_heads": KV_HEADS,
                  "intermediate_size": MLP, "hidden_act": "silu", "vocab_size": VOCAB,
                  "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
                  "max_position_embeddings": 2048, "attention_bias": False,
                  "mlp_bias": False, "tie_word_embeddings": True, "bos_token_id": 1,
                  "eos_token_id": 2, "torch_dtype": "float16"}
        with open(os.path.join(model, "config.json"), "w") as file:
            json.dump(config, file)
        cls.source = {"model.embed_tokens.weight": ([VOCAB, HIDDEN], f16_values(VOCAB * HIDDEN, 1)),
                      "model.norm.weight": ([HIDDEN], f16_values(HIDDEN, 2))}
        shapes = {"self_attn.q_proj": [HIDDEN, HIDDEN],
                  "self_attn.k_proj": [KV_HEADS * HEAD_DIM, HIDDEN],
                  "self_attn.v_proj": [KV_HEADS * HEAD_DIM, HIDDEN],
                  "self_attn.o_proj": [HIDDEN, HIDDEN], "mlp.gate_proj": [MLP, HIDDEN],
                  "mlp.up_proj": [MLP, HIDDEN], "mlp.down_proj": [HIDDEN, MLP],
                  "input_layernorm": [HIDDEN], "post_attention_layernorm": [HIDDEN]}
        seed = 3
        for layer in range(LAYERS):
            for part, shape in shapes.items():
                count = shape[0] * (shape[1] if len(shape) > 1 else 1)
                cls.source[f"model.layers.{layer}.{part}.weight"] = (shape, f16_values(count, seed))
                seed += 1
        write_safetensors(os.path.join(model, "model.safetensors"), cls.source)
        pieces = [(b"<unk>", 0.0, 2), (b"<s>", 0.0, 3), (b"</s>", 0.0, 3)]
        pieces += [(f"<0x{b:02X}>".encode(), 0.0, 6) for b in range(256)]
        pieces.append(("\u2581the".encode(), -1.5, 1))
        assert len(pieces) == PIECES
        write_sentencepiece(os.path.join(model, "tokenizer.model"), pieces)
        cls.out = os.path.join(model, "model.gguf")
        gguf_from_quire.convert(model, cls.out)
        cls.gguf = GgufReader(cls.out)

    @classmethod
    def tearDownClass(cls):
        cls.directory.cleanup()

    def rows(self, data, columns):
        size = columns * 2
        return [data[i:i + size] for i in range(0, len(data), size)]

    def source_bytes(self, name):
        shape, values = self.source[name]
        return struct.pack(f"<{len(values)}e", *values)

    def test_header_and_metadata(self):
        meta = self.gguf.metadata
        self.assertEqual(self.gguf.version, 3)
        self.assertEqual(meta["general.architecture"], "llama")
        self.assertEqual(meta["llama.embedding_length"], HIDDEN)
        self.assertEqual(meta["llama.block_count"], LAYERS)
        self.assertEqual(meta["llama.feed_forward_length"], MLP)
        self.assertEqual(meta["llama.attention.head_count"], HEADS)
        self.assertEqual(meta["llama.attention.head_count_kv"], KV_HEADS)
        self.assertEqual(meta["llama.context_length"], 2048)
        self.assertEqual(meta["llama.rope.dimension_count"], HEAD_DIM)
        self.assertAlmostEqual(meta["llama.attention.layer_norm_rms_epsilon"], 1e-5, places=9)
        self.assertEqual(meta["llama.rope.freq_base"], 10000.0)
        self.assertEqual(meta["tokenizer.ggml.bos_token_id"], 1)
        self.assertEqual(meta["tokenizer.ggml.eos_token_id"], 2)
        self.assertEqual(meta["tokenizer.ggml.unknown_token_id"], 0)

    def test_vocabulary_padded_one_to_one(self):
        meta = self.gguf.metadata
        tokens = meta["tokenizer.ggml.tokens"]
        self.assertEqual(len(tokens), VOCAB)
        self.assertEqual(len(meta["tokenizer.ggml.scores"]), VOCAB)
        self.assertEqual(len(meta["tokenizer.ggml.token_type"]), VOCAB)
        self.assertEqual(tokens[:3], ["<unk>", "<s>", "</s>"])
        self.assertEqual(tokens[3 + 0x0A], "<0x0A>")
        self.assertEqual(tokens[PIECES - 1], "\u2581the")
        self.assertEqual(meta["tokenizer.ggml.scores"][PIECES - 1], -1.5)
        self.assertEqual(meta["tokenizer.ggml.token_type"][PIECES:], [5] * (VOCAB - PIECES))
        self.assertEqual(len(set(tokens)), VOCAB)

    def test_tensor_names_dims_and_alignment(self):
        tensors = self.gguf.tensors
        self.assertEqual(len(tensors), 2 + 9 * LAYERS)  # tied head: no output.weight
        self.assertNotIn("output.weight", tensors)
        self.assertEqual(tensors["token_embd.weight"][:2], ([HIDDEN, VOCAB], 1))
        self.assertEqual(tensors["blk.1.attn_k.weight"][:2], ([HIDDEN, KV_HEADS * HEAD_DIM], 1))
        self.assertEqual(tensors["blk.0.ffn_down.weight"][:2], ([MLP, HIDDEN], 1))
        self.assertEqual(tensors["blk.0.attn_norm.weight"][:2], ([HIDDEN], 0))
        self.assertEqual(self.gguf.data_start % 32, 0)
        self.assertTrue(all(offset % 32 == 0 for offset in self.gguf.offsets))
        self.assertEqual(self.gguf.data_start + self.gguf.offsets[-1]
                         + len(tensors["output_norm.weight"][2]), os.path.getsize(self.out))

    def test_unpermuted_tensors_copied(self):
        for gguf_name, hf_name in (("token_embd.weight", "model.embed_tokens.weight"),
                                   ("blk.1.attn_v.weight", "model.layers.1.self_attn.v_proj.weight"),
                                   ("blk.0.ffn_gate.weight", "model.layers.0.mlp.gate_proj.weight")):
            self.assertEqual(self.gguf.tensors[gguf_name][2], self.source_bytes(hf_name))

    def test_q_and_k_rows_interleave_the_halves_of_each_head(self):
        half = HEAD_DIM // 2
        for part, heads in (("q", HEADS), ("k", KV_HEADS)):
            source = self.rows(self.source_bytes(f"model.layers.0.self_attn.{part}_proj.weight"),
                               HIDDEN)
            target = self.rows(self.gguf.tensors[f"blk.0.attn_{part}.weight"][2], HIDDEN)
            self.assertEqual(len(target), heads * HEAD_DIM)
            for head in range(heads):
                base = head * HEAD_DIM
                for i in range(half):
                    self.assertEqual(target[base + 2 * i], source[base + i])
                    self.assertEqual(target[base + 2 * i + 1], source[base + half + i])

    def test_norms_widened_to_f32(self):
        _, values = self.source["model.layers.1.post_attention_layernorm.weight"]
        data = self.gguf.tensors["blk.1.ffn_norm.weight"][2]
        self.assertEqual(list(struct.unpack(f"<{HIDDEN}f", data)), values)

    def test_rope_row_order_small(self):
        # Two heads of 4 rows: [a0 a1 b0 b1] becomes [a0 b0 a1 b1] in each.
        self.assertEqual(gguf_from_quire.rope_row_order(8, 2), [0, 2, 1, 3, 4, 6, 5, 7])

    def test_refuses_other_architectures(self):
        with self.assertRaises(gguf_from_quire.ConversionError):
            gguf_from_quire.check_config({"architectures": ["Qwen2ForCausalLM"]})


if __name__ == "__main__":
    unittest.main()
