#!/usr/bin/python3
"""Trains the demo model on the corpus from make_corpus.py, on the CPU.

  setsid nohup nice -n 19 /usr/bin/python3 train.py \
      --corpus /work/demo-train/corpus.txt \
      --tokenizer /work/demo-train/tokenizer.model \
      --out /work/demo-train/run > /work/demo-train/train.log 2>&1 &

Outputs in --out: checkpoint.pt (the latest state, written every few minutes
and on SIGTERM/SIGINT; running the same command again resumes from it),
best.pt (the weights with the lowest validation loss so far), loss.csv (one
row per logging interval) and run.json (the settings of every launch).

What is learned: the loss counts only the assistant's tokens (its reply and
the <|im_end|> that ends it). System prompts and requests are a handful of
fixed sentences plus a random dictionary word; predicting them teaches
nothing the demo needs, and leaving them out makes the logged loss say how
well the model answers. They are still in the input, so the model learns to
answer what was asked.

How the data is fed: every chat becomes <s> + its tokens; chats are shuffled
(a new seeded order every epoch), concatenated and cut into rows of
context + 1 tokens. A row may start inside a chat; <s> marks where a chat
begins, and rotary embeddings only see relative positions. The order is a
function of the seed and the step, so a resumed run sees exactly the data an
uninterrupted one would.
"""

import argparse
import csv
import json
import math
import os
import random
import signal
import sys
import time
from pathlib import Path

import sentencepiece as spm
import torch
import torch.nn.functional as F

sys.path.insert(0, str(Path(__file__).resolve().parent))
from llama import LlamaConfig, LlamaForCausalLM  # noqa: E402

BOS = 1


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--corpus", type=Path, required=True)
    p.add_argument("--tokenizer", type=Path, required=True)
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--hidden", type=int, default=256)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--kv-heads", type=int, default=4)
    p.add_argument("--intermediate", type=int, default=768)
    p.add_argument("--context", type=int, default=256)
    p.add_argument("--batch", type=int, default=16, help="rows of --context tokens per step")
    p.add_argument("--steps", type=int, default=6000)
    p.add_argument("--lr", type=float, default=2e-3)
    p.add_argument("--min-lr", type=float, default=1e-4)
    p.add_argument("--warmup", type=int, default=200)
    p.add_argument("--weight-decay", type=float, default=0.1)
    p.add_argument("--clip", type=float, default=1.0)
    p.add_argument("--val-fraction", type=float, default=0.01)
    p.add_argument("--log-every", type=int, default=20)
    p.add_argument("--eval-every", type=int, default=200)
    p.add_argument("--checkpoint-minutes", type=float, default=5.0)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1913)
    p.add_argument("--bench", type=int, default=0,
                   help="time this many steps, print tokens per second, write nothing")
    return p.parse_args()


def role_masks(ids, im_start, im_end, sp):
    """1 for the tokens of an assistant reply and its closing <|im_end|>."""
    mask = [0] * len(ids)
    i = 0
    while i < len(ids):
        if ids[i] != im_start:
            i += 1
            continue
        # The role runs up to the newline byte that ends the header line.
        j = i + 1
        while j < len(ids) and sp.id_to_piece(ids[j]) != "<0x0A>":
            j += 1
        role = sp.decode(ids[i + 1:j])
        k = j + 1
        while k < len(ids) and ids[k] != im_end:
            k += 1
        if role == "assistant":
            for m in range(j + 1, min(k + 1, len(ids))):
                mask[m] = 1
        i = k + 1
    return mask


def load_chats(corpus, sp):
    im_start, im_end = sp.piece_to_id("<|im_start|>"), sp.piece_to_id("<|im_end|>")
    chats = corpus.read_text(encoding="ascii").split("\n\n")
    encoded = sp.encode(chats)
    out = []
    for ids in encoded:
        out.append(([BOS] + ids, [0] + role_masks(ids, im_start, im_end, sp)))
    return out


class Stream:
    """Rows of context + 1 tokens (and their loss masks), in an order fixed by
    the seed: row r of the run is row r % rows_per_epoch of epoch
    r // rows_per_epoch."""

    def __init__(self, chats, context, seed):
        self.chats, self.context, self.seed = chats, context, seed
        total = sum(len(ids) for ids, _ in chats)
        self.rows_per_epoch = total // (context + 1)
        self.epoch, self.tokens, self.masks = None, None, None

    def _load_epoch(self, epoch):
        order = list(range(len(self.chats)))
        random.Random(self.seed * 1000003 + epoch).shuffle(order)
        ids = [t for i in order for t in self.chats[i][0]]
        mask = [m for i in order for m in self.chats[i][1]]
        n = self.rows_per_epoch * (self.context + 1)
        self.tokens = torch.tensor(ids[:n]).view(-1, self.context + 1)
        self.masks = torch.tensor(mask[:n], dtype=torch.bool).view(-1, self.context + 1)
        self.epoch = epoch

    def rows(self, first, count):
        out_ids, out_mask = [], []
        for r in range(first, first + count):
            epoch, row = divmod(r, self.rows_per_epoch)
            if epoch != self.epoch:
                self._load_epoch(epoch)
            out_ids.append(self.tokens[row])
            out_mask.append(self.masks[row])
        return torch.stack(out_ids), torch.stack(out_mask)


def masked_loss(model, ids, mask):
    """Mean cross-entropy over the masked targets. The head runs only on the
    positions whose next token counts, which saves most of its cost."""
    inputs, targets, keep = ids[:, :-1], ids[:, 1:], mask[:, 1:]
    hidden = model.hidden_states(inputs)
    logits = model.lm_head(hidden[keep])
    return F.cross_entropy(logits.float(), targets[keep])


def lr_at(step, args):
    if step < args.warmup:
        return args.lr * (step + 1) / args.warmup
    progress = min(1.0, (step - args.warmup) / max(1, args.steps - args.warmup))
    return args.min_lr + 0.5 * (args.lr - args.min_lr) * (1 + math.cos(math.pi * progress))


@torch.no_grad()
def evaluate(model, val_rows):
    model.eval()
    total, count = 0.0, 0
    for ids, mask in val_rows:
        n = int(mask[:, 1:].sum())
        total += float(masked_loss(model, ids, mask)) * n
        count += n
    model.train()
    return total / max(1, count)


def save_atomic(obj, path):
    tmp = path.with_suffix(".tmp")
    torch.save(obj, tmp)
    os.replace(tmp, path)


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    sp = spm.SentencePieceProcessor(model_file=str(args.tokenizer))

    config = LlamaConfig(
        vocab_size=sp.get_piece_size(), hidden_size=args.hidden,
        intermediate_size=args.intermediate, num_hidden_layers=args.layers,
        num_attention_heads=args.heads, num_key_value_heads=args.kv_heads,
        max_position_embeddings=args.context)
    model = LlamaForCausalLM(config)

    chats = load_chats(args.corpus, sp)
    random.Random(args.seed).shuffle(chats)
    n_val = max(1, int(len(chats) * args.val_fraction))
    val_chats, train_chats = chats[:n_val], chats[n_val:]
    stream = Stream(train_chats, args.context, args.seed)
    val_stream = Stream(val_chats, args.context, args.seed)
    val_rows = [val_stream.rows(r, min(args.batch, val_stream.rows_per_epoch - r))
                for r in range(0, val_stream.rows_per_epoch, args.batch)]
    train_tokens = stream.rows_per_epoch * (args.context + 1)
    print(f"{config}\nparameters {model.count_parameters()}; {len(train_chats)} training chats, "
          f"{train_tokens} tokens ({train_tokens / (args.batch * (args.context + 1)):.0f} steps "
          f"an epoch); {len(val_chats)} validation chats", flush=True)

    # Weight decay on matrices only; norm gains stay free.
    decay = [p for p in model.parameters() if p.dim() == 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": args.weight_decay},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=args.lr, betas=(0.9, 0.95), eps=1e-8)

    if args.bench:
        model.train()
        start = time.time()
        for step in range(args.bench):
            ids, mask = stream.rows(step * args.batch, args.batch)
            loss = masked_loss(model, ids, mask)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            if step == 0:
                start = time.time()  # the first step pays for warm-up
        took = time.time() - start
        tokens = (args.bench - 1) * args.batch * args.context
        print(f"{tokens / took:.0f} tokens/s, {took / (args.bench - 1):.2f} s/step, "
              f"loss {float(loss):.3f}")
        return

    args.out.mkdir(parents=True, exist_ok=True)
    ckpt_path, best_path, csv_path = (args.out / "checkpoint.pt", args.out / "best.pt",
                                      args.out / "loss.csv")
    step, best_val, elapsed_before = 0, float("inf"), 0.0
    if ckpt_path.exists():
        state = torch.load(ckpt_path, map_location="cpu")
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        step, best_val, elapsed_before = state["step"], state["best_val"], state["elapsed"]
        torch.set_rng_state(state["torch_rng"])
        print(f"resumed at step {step}", flush=True)
    else:
        with open(csv_path, "w", newline="") as f:
            csv.writer(f).writerow(["step", "tokens", "train_loss", "val_loss", "lr",
                                    "elapsed_s", "tokens_per_s"])

    # The settings of every launch, so a resumed run with changed options
    # (say, fewer --steps) still says what it did.
    launches = json.loads((args.out / "run.json").read_text()) if (
        args.out / "run.json").exists() else []
    launches = launches if isinstance(launches, list) else [launches]
    launches.append({"start_step": step, **{k: str(v) if isinstance(v, Path) else v
                                            for k, v in vars(args).items()}})
    (args.out / "run.json").write_text(json.dumps(launches, indent=2) + "\n")

    stop = {"now": False}

    def request_stop(signum, frame):
        stop["now"] = True

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)

    def checkpoint(elapsed):
        save_atomic({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                     "step": step, "best_val": best_val, "elapsed": elapsed,
                     "torch_rng": torch.get_rng_state(), "config": config.to_dict(),
                     "args": {k: str(v) for k, v in vars(args).items()}}, ckpt_path)

    model.train()
    session_start = time.time()
    last_checkpoint = time.time()
    window_loss, window_steps, window_start = 0.0, 0, time.time()
    while step < args.steps and not stop["now"]:
        lr = lr_at(step, args)
        for group in optimizer.param_groups:
            group["lr"] = lr
        ids, mask = stream.rows(step * args.batch, args.batch)
        loss = masked_loss(model, ids, mask)
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        optimizer.step()
        step += 1
        window_loss += float(loss)
        window_steps += 1

        val = None
        if step % args.eval_every == 0 or step == args.steps:
            val = evaluate(model, val_rows)
            if val < best_val:
                best_val = val
                save_atomic({"model": model.state_dict(), "step": step, "val_loss": val,
                             "config": config.to_dict()}, best_path)
        if step % args.log_every == 0 or val is not None:
            now = time.time()
            elapsed = elapsed_before + now - session_start
            rate = window_steps * args.batch * args.context / (now - window_start)
            with open(csv_path, "a", newline="") as f:
                csv.writer(f).writerow([step, step * args.batch * args.context,
                                        f"{window_loss / window_steps:.4f}",
                                        "" if val is None else f"{val:.4f}", f"{lr:.6f}",
                                        f"{elapsed:.0f}", f"{rate:.0f}"])
            eta = (args.steps - step) * args.batch * args.context / rate
            print(f"step {step}/{args.steps} loss {window_loss / window_steps:.4f}"
                  + ("" if val is None else f" val {val:.4f}")
                  + f" lr {lr:.2e} {rate:.0f} tok/s eta {eta / 60:.0f} min", flush=True)
            window_loss, window_steps, window_start = 0.0, 0, now
        if time.time() - last_checkpoint > args.checkpoint_minutes * 60:
            checkpoint(elapsed_before + time.time() - session_start)
            last_checkpoint = time.time()

    checkpoint(elapsed_before + time.time() - session_start)
    print(("stopped" if stop["now"] else "finished") + f" at step {step}; best validation "
          f"loss {best_val:.4f}", flush=True)


if __name__ == "__main__":
    main()
