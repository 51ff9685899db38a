#!/usr/bin/python3
"""Writes the "Results" section of README.md (between the results markers)
from a finished run: the loss log, the export and quantize messages, the
sample replies, the sizes of the exported directories, and how far the EXL2
model's logits lie from the FP16 model's in Quire.

  /usr/bin/python3 report.py --run /work/demo-train/run \
      --quire-cli build/demo/app/cli/quire-cli

finish.sh runs it last; see FINISH.md.
"""

import argparse
import csv
import json
import re
import subprocess
from pathlib import Path

import sentencepiece as spm

HERE = Path(__file__).resolve().parent
BEGIN, END = "<!-- results:begin -->", "<!-- results:end -->"
PROMPT = "<|im_start|>user\nWhat does courage mean?<|im_end|>\n<|im_start|>assistant\n"


def quire_logits(cli, model_dir, ids):
    result = subprocess.run(
        [str(cli), "logits", str(model_dir), "--tokens", ",".join(map(str, ids)), "--all"],
        capture_output=True, text=True, check=True)
    return json.loads(result.stdout)["logits"]


def exl2_vs_fp16(cli, tokenizer):
    sp = spm.SentencePieceProcessor(model_file=str(tokenizer))
    ids = [sp.bos_id()] + sp.encode(PROMPT)
    fp16 = quire_logits(cli, HERE / "fp16", ids)
    exl2 = quire_logits(cli, HERE / "exl2-4.0", ids)
    diff = max(abs(a - b) for ra, rb in zip(fp16, exl2) for a, b in zip(ra, rb))
    scale = max(abs(a) for row in fp16 for a in row)
    argmax = lambda row: max(range(len(row)), key=row.__getitem__)  # noqa: E731
    agree = sum(argmax(a) == argmax(b) for a, b in zip(fp16, exl2)) / len(fp16)
    return (f"over the {len(ids)} positions of a chat prompt the EXL2 logits differ from the "
            f"FP16 ones by at most {diff:.3f} (largest logit {scale:.2f}); the most likely "
            f"next token is the same at {agree:.0%} of the positions")


def directory_size(path):
    return sum(f.stat().st_size for f in path.iterdir() if f.is_file())


def loss_summary(run):
    rows = list(csv.DictReader(open(run / "loss.csv", newline="")))
    vals = [(int(r["step"]), float(r["val_loss"])) for r in rows if r["val_loss"]]
    last = rows[-1]
    best_step, best_val = min(vals, key=lambda v: v[1])
    first_val = vals[0]
    return (f"{int(last['step'])} steps, {int(last['tokens']) / 1e6:.1f} M tokens, "
            f"{float(last['elapsed_s']) / 3600:.1f} hours of training on the 2-core machine. "
            f"Validation loss (assistant tokens, nats per token): {first_val[1]:.3f} at step "
            f"{first_val[0]}, best {best_val:.3f} at step {best_step}; training loss over the "
            f"last logging interval {float(last['train_loss']):.3f}.")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--run", type=Path, required=True)
    parser.add_argument("--quire-cli", type=Path, required=True)
    parser.add_argument("--tokenizer", type=Path)
    args = parser.parse_args()
    tokenizer = args.tokenizer or args.run.parent / "tokenizer.model"

    fp16_bytes, exl2_bytes = directory_size(HERE / "fp16"), directory_size(HERE / "exl2-4.0")
    export_line = (args.run / "export.txt").read_text().strip().splitlines()
    quantize_line = (args.run / "quantize.txt").read_text().strip()
    samples = (args.run / "samples.md").read_text().strip()
    quire_samples = (args.run / "quire_samples.md").read_text().strip()

    block = "\n".join([
        BEGIN,
        "## Results",
        "",
        loss_summary(args.run),
        "",
        "![loss curve](loss.png)",
        "",
        "Sizes: `fp16/` " + f"{fp16_bytes / 2**20:.1f} MiB, `exl2-4.0/` "
        f"{exl2_bytes / 2**20:.1f} MiB, together {(fp16_bytes + exl2_bytes) / 1e6:.1f} MB.",
        "",
        "Checks:",
        "",
        "- export: `" + export_line[0] + "`",
        "- Quire against PyTorch (FP16 directory, `quire-cli logits --all`, PyTorch in float64 "
        "on the same FP16 weights): `" + (export_line[1] if len(export_line) > 1 else "") + "`",
        "- quantize: `" + quantize_line + "`",
        "- EXL2 against FP16, both in Quire: " + exl2_vs_fp16(args.quire_cli, tokenizer) + ".",
        "",
        "### Sample replies (PyTorch, from the checkpoint)",
        "",
        samples,
        "",
        "### The shipped EXL2 model in Quire",
        "",
        quire_samples,
        END,
    ])
    readme = HERE / "README.md"
    text = readme.read_text()
    text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: block, text, flags=re.S)
    readme.write_text(text)
    print(f"updated {readme}")


if __name__ == "__main__":
    main()
