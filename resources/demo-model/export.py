#!/usr/bin/python3
"""Writes a train.py checkpoint as a Hugging Face model directory in FP16:

  config.json             LlamaForCausalLM, tied embeddings, torch_dtype float16
  generation_config.json  eos_token_id [</s>, <|im_end|>]: a reply ends at the
                          end of its turn
  tokenizer_config.json   LlamaTokenizer, add_bos_token, a ChatML chat_template
  special_tokens_map.json
  tokenizer.model         the SentencePiece model the checkpoint was trained with
  model.safetensors       FP16 tensors under Hugging Face's names

  /usr/bin/python3 export.py --checkpoint /work/demo-train/run/best.pt \
      --tokenizer /work/demo-train/tokenizer.model --out fp16

With --check-cli PATH/TO/quire-cli it then runs `quire-cli logits` on the
written directory for a short chat prompt and prints the largest difference
from this PyTorch model's logits (computed from the same FP16 weights).
"""

import argparse
import json
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import sentencepiece as spm
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama import dump_json, hf_config, load_checkpoint  # noqa: E402

BOS_ID, EOS_ID = 1, 2

# ChatML, as Qwen and OpenHermes write it, after <s>: the model was trained
# on BOS + ChatML, and a chat template is rendered and tokenized without
# adding special tokens (as transformers' apply_chat_template does), so the
# template writes the BOS itself.
CHAT_TEMPLATE = (
    "{{ bos_token }}"
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + '<|im_end|>' + '\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def write_safetensors(path, tensors, metadata):
    """The safetensors layout: an 8-byte little-endian header length, the
    header JSON padded with spaces to a multiple of 8, then the tensors'
    bytes back to back in the order given."""
    header, offset, blobs = {"__metadata__": metadata}, 0, []
    for name, tensor in tensors:
        data = tensor.detach().to(torch.float16).contiguous().numpy().tobytes()
        header[name] = {"dtype": "F16", "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        offset += len(data)
        blobs.append(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    tmp = path.with_suffix(".tmp")
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for blob in blobs:
            f.write(blob)
    tmp.replace(path)


def hf_order(name):
    """Embeddings, then layer by layer, then the final norm."""
    parts = name.split(".")
    if name.startswith("model.embed_tokens"):
        return (0, 0, name)
    if name.startswith("model.layers."):
        return (1, int(parts[2]), name)
    return (2, 0, name)


def export(model, tokenizer_path, out):
    config = model.config
    sp = spm.SentencePieceProcessor(model_file=str(tokenizer_path))
    im_start, im_end = sp.piece_to_id("<|im_start|>"), sp.piece_to_id("<|im_end|>")
    assert sp.get_piece_size() == config.vocab_size
    assert (sp.bos_id(), sp.eos_id(), sp.unk_id()) == (BOS_ID, EOS_ID, 0)

    out.mkdir(parents=True, exist_ok=True)
    dump_json(out / "config.json", hf_config(config, BOS_ID, EOS_ID))
    dump_json(out / "generation_config.json", {
        "bos_token_id": BOS_ID,
        "eos_token_id": [EOS_ID, im_end],
        "do_sample": True,
        "temperature": 0.7,
        "max_length": config.max_position_embeddings,
    })
    special = {i: sp.id_to_piece(i) for i in (0, BOS_ID, EOS_ID, im_start, im_end)}
    dump_json(out / "tokenizer_config.json", {
        "add_bos_token": True,
        "add_eos_token": False,
        "bos_token": "<s>",
        "eos_token": "</s>",
        "unk_token": "<unk>",
        "pad_token": None,
        "added_tokens_decoder": {
            str(i): {"content": piece, "special": True, "normalized": False,
                     "lstrip": False, "rstrip": False, "single_word": False}
            for i, piece in special.items()},
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
        "chat_template": CHAT_TEMPLATE,
        "clean_up_tokenization_spaces": False,
        "legacy": True,
        "model_max_length": config.max_position_embeddings,
        "tokenizer_class": "LlamaTokenizer",
    })
    dump_json(out / "special_tokens_map.json", {
        "bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>",
        "additional_special_tokens": ["<|im_start|>", "<|im_end|>"],
    })
    shutil.copy(tokenizer_path, out / "tokenizer.model")
    state = model.export_state_dict()
    write_safetensors(out / "model.safetensors",
                      sorted(state.items(), key=lambda item: hf_order(item[0])),
                      {"format": "pt"})


def check_cli(model, tokenizer_path, out, cli):
    """Largest |PyTorch - Quire| over the logits of every position of a chat
    prompt. PyTorch runs in float64 on the FP16-rounded weights, so the
    difference is Quire's own arithmetic (FP16 activations and cache)."""
    sp = spm.SentencePieceProcessor(model_file=str(tokenizer_path))
    prompt = ("<|im_start|>user\nWhat does courage mean?<|im_end|>\n"
              "<|im_start|>assistant\n")
    ids = [BOS_ID] + sp.encode(prompt)
    result = subprocess.run(
        [str(cli), "logits", str(out), "--tokens", ",".join(map(str, ids)), "--all"],
        capture_output=True, text=True, check=True)
    quire = torch.tensor(json.loads(result.stdout)["logits"], dtype=torch.float64)

    rounded = type(model)(model.config)
    rounded.load_state_dict({k: v.half().double() for k, v in model.state_dict().items()})
    rounded = rounded.double().eval()
    with torch.no_grad():
        reference = rounded(torch.tensor([ids]))[0]
    diff = (reference - quire).abs().max().item()
    scale = reference.abs().max().item()
    agree = (reference.argmax(-1) == quire.argmax(-1)).float().mean().item()
    print(f"quire-cli logits vs PyTorch on {len(ids)} tokens: max |difference| {diff:.2e} "
          f"(largest logit {scale:.2f}, relative {diff / scale:.1e}); "
          f"argmax agrees at {agree:.0%} of positions")
    return diff, scale


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, type=Path)
    parser.add_argument("--tokenizer", required=True, type=Path)
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--check-cli", type=Path, help="quire-cli to compare logits with")
    args = parser.parse_args()

    model, checkpoint = load_checkpoint(args.checkpoint)
    export(model, args.tokenizer, args.out)
    size = sum(f.stat().st_size for f in args.out.iterdir())
    print(f"wrote {args.out}: step {checkpoint.get('step')}, "
          f"{model.count_parameters()} parameters, {size} bytes")
    if args.check_cli:
        check_cli(model, args.tokenizer, args.out, args.check_cli)


if __name__ == "__main__":
    main()
