#!/usr/bin/python3
"""Replies of a train.py checkpoint to a few chat prompts, greedy and sampled,
printed as Markdown for the README.

  /usr/bin/python3 sample.py --checkpoint /work/demo-train/run/best.pt \
      --tokenizer /work/demo-train/tokenizer.model

The prompt is what Quire's ChatML format renders for a first message without
a system prompt: <s><|im_start|>user\n{message}<|im_end|>\n<|im_start|>assistant\n
Generation stops at <|im_end|> or </s>.

With --quire-cli PATH --model-dir DIR the greedy replies come from Quire
instead: `quire-cli logits` on the exported directory (FP16 or EXL2), one call
per new token, which shows what the shipped files answer in Quire itself.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

import sentencepiece as spm
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama import load_checkpoint  # noqa: E402

PROMPTS = [
    "Tell me a fortune.",
    "Give me some advice.",
    "Tell me something about computers.",
    "What does courage mean?",
    "What is a dog?",
    "Define garden.",
    # Not among the corpus' 40,000 words, though in the dictionary.
    "What does quire mean?",
    "Hello!",
    "Who are you?",
]


@torch.no_grad()
def generate(model, ids, stop_ids, max_new, temperature, generator):
    """Recomputes the whole sequence for every token: the model is small and
    the replies short, so a KV cache is not worth its code here."""
    ids = list(ids)
    context = model.config.max_position_embeddings
    out = []
    for _ in range(max_new):
        if len(ids) >= context:
            break
        logits = model(torch.tensor([ids]))[0, -1]
        if temperature == 0:
            token = int(logits.argmax())
        else:
            probs = torch.softmax(logits / temperature, dim=-1)
            token = int(torch.multinomial(probs, 1, generator=generator))
        if token in stop_ids:
            break
        ids.append(token)
        out.append(token)
    return out


def quire_greedy(cli, model_dir, ids, stop_ids, max_new, context):
    ids = list(ids)
    out = []
    for _ in range(max_new):
        if len(ids) >= context:
            break
        result = subprocess.run(
            [str(cli), "logits", str(model_dir), "--tokens", ",".join(map(str, ids))],
            capture_output=True, text=True, check=True)
        row = json.loads(result.stdout)["logits"][0]
        token = max(range(len(row)), key=row.__getitem__)
        if token in stop_ids:
            break
        ids.append(token)
        out.append(token)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", required=True, type=Path)
    parser.add_argument("--tokenizer", required=True, type=Path)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--samples", type=int, default=2, help="sampled replies per prompt")
    parser.add_argument("--max-new", type=int, default=80)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--quire-cli", type=Path, help="greedy replies from quire-cli logits")
    parser.add_argument("--model-dir", type=Path, help="exported model directory for --quire-cli")
    parser.add_argument("prompts", nargs="*", help="messages (default: a fixed set)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    model, checkpoint = load_checkpoint(args.checkpoint)
    sp = spm.SentencePieceProcessor(model_file=str(args.tokenizer))
    stop_ids = {sp.eos_id(), sp.piece_to_id("<|im_end|>")}
    if args.quire_cli:
        print(f"Greedy replies of {args.model_dir.name} in Quire (`quire-cli logits`).\n")
        for message in args.prompts or PROMPTS:
            prompt = f"<|im_start|>user\n{message}<|im_end|>\n<|im_start|>assistant\n"
            ids = [sp.bos_id()] + sp.encode(prompt)
            reply = sp.decode(quire_greedy(args.quire_cli, args.model_dir, ids, stop_ids,
                                           args.max_new, model.config.max_position_embeddings))
            print(f"- **{message}** {reply}")
        return
    generator = torch.Generator().manual_seed(args.seed)
    print(f"Checkpoint step {checkpoint.get('step')}"
          + (f", validation loss {checkpoint['val_loss']:.3f}" if "val_loss" in checkpoint else "")
          + f"; sampling at temperature {args.temperature}, seed {args.seed}.\n")
    for message in args.prompts or PROMPTS:
        prompt = f"<|im_start|>user\n{message}<|im_end|>\n<|im_start|>assistant\n"
        ids = [sp.bos_id()] + sp.encode(prompt)
        print(f"**User:** {message}\n")
        greedy = sp.decode(generate(model, ids, stop_ids, args.max_new, 0, generator))
        print(f"- greedy: {greedy}")
        for _ in range(args.samples):
            sampled = sp.decode(generate(model, ids, stop_ids, args.max_new, args.temperature,
                                         generator))
            print(f"- t={args.temperature}: {sampled}")
        print()


if __name__ == "__main__":
    main()
