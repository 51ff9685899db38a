#!/usr/bin/env python3
"""Writes a draft model made of a model's first layers.

    bench/first_layers.py MODEL_DIR LAYERS OUT_DIR

The draft keeps the embedding, layers 0..LAYERS-1, the final norm and the
head of a single-file FP16/BF16 safetensors model (a Llama-style layout), and
the model's tokenizer files, so it shares the tokenizer by construction. Its
hidden states after those layers go straight to the final norm and the head:
an early exit, which agrees with the whole model where the later layers
change the argmax little. The benchmarks use it to measure speculative
decoding with a draft model on the demo model without training a second one.
"""

import json
import shutil
import struct
import sys
from pathlib import Path


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    source, layers, out = Path(sys.argv[1]), int(sys.argv[2]), Path(sys.argv[3])
    config = json.loads((source / "config.json").read_text())
    total = config["num_hidden_layers"]
    if not 1 <= layers < total:
        print(f"first_layers: LAYERS must be 1..{total - 1} for {source}", file=sys.stderr)
        return 2
    with open(source / "model.safetensors", "rb") as weights:
        header_size = struct.unpack("<Q", weights.read(8))[0]
        header = json.loads(weights.read(header_size))
        data = weights.read()

    def kept(name: str) -> bool:
        if not name.startswith("model.layers."):
            return True
        return int(name.split(".")[2]) < layers

    tensors = {}
    chunks = []
    offset = 0
    for name, info in header.items():
        if name == "__metadata__" or not kept(name):
            continue
        begin, end = info["data_offsets"]
        chunks.append(data[begin:end])
        tensors[name] = {**info, "data_offsets": [offset, offset + end - begin]}
        offset += end - begin
    if "__metadata__" in header:
        tensors["__metadata__"] = header["__metadata__"]
    encoded = json.dumps(tensors, separators=(",", ":")).encode()
    encoded += b" " * (-len(encoded) % 8)

    out.mkdir(parents=True, exist_ok=True)
    with open(out / "model.safetensors", "wb") as draft:
        draft.write(struct.pack("<Q", len(encoded)))
        draft.write(encoded)
        for chunk in chunks:
            draft.write(chunk)
    config["num_hidden_layers"] = layers
    (out / "config.json").write_text(json.dumps(config, indent=2) + "\n")
    for path in source.iterdir():
        if path.name not in ("config.json", "model.safetensors") and path.is_file():
            shutil.copy2(path, out / path.name)
    print(f"first_layers: wrote {out}: layers 0..{layers - 1} of {source} ({total} layers)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
