#!/usr/bin/env python3
"""One table of the device kit's benchmark (gpu-bench.sh's JSON files,
MODEL-CACHE-VARIANT.json) by pair and kernel variant, from which the
defaults of QUIRE_CUDA_LINEAR can be set.

Columns: decode at 512, 4k and 32k context, batch 1 (tokens/s and the
fraction of the bandwidth bound: weights and the context's KV read once a
token at the measured copy rate); batch 4 and 16 over batch 1 (jobs decoding
with their prompts cached, so almost only decode steps; the batch-16 rate in
brackets); prefill of 2048 tokens as a fraction of the backend's own FP16
product rate; the time to the first token of a 4000-token prompt. In each
pair the best variant of a column is marked *; "wins" counts the columns a
variant is best in (decode and batch 16: most tokens/s; prefill: highest
fraction; first token: least time). A missing file or figure (a step the
deadline cut) shows as -.

Usage: kit_summary.py BENCH_FOLDER [--variants "fp32 half2"]
Standard library only: it runs on the GPU machine.
"""

import argparse
import json
import os
import sys

CONTEXTS = [512, 4096, 32768]


def figures(data):
    """The numbers of one benchmark, None where absent."""
    decode = {d.get("context"): d for d in data.get("decode", [])}
    batch = {b.get("jobs"): b.get("decode_tokens_per_s") for b in data.get("batch", [])}
    prefill = {p.get("tokens"): p for p in data.get("prefill", [])}
    first = {f.get("tokens"): f.get("seconds") for f in data.get("first_token", [])}
    result = {}
    for context in CONTEXTS:
        entry = decode.get(context, {})
        result[f"decode {context}"] = entry.get("tokens_per_s")
        result[f"bound {context}"] = entry.get("fraction_of_bandwidth_bound")
    result["batch 1"], result["batch 4"], result["batch 16"] = (batch.get(1), batch.get(4),
                                                                  batch.get(16))
    result["prefill 2048"] = prefill.get(2048, {}).get("fraction_of_matmul_rate")
    result["first token 4000"] = first.get(4000)
    return result


# Column -> True where more is better.
COMPARED = {"decode 512": True, "decode 4096": True, "decode 32768": True, "batch 16": True,
            "prefill 2048": True, "first token 4000": False}


def read_runs(folder, variants):
    """(pair, variant) -> figures, pairs in the order of their files' times."""
    runs, order = {}, []
    names = sorted(os.listdir(folder), key=lambda n: os.path.getmtime(os.path.join(folder, n)))
    for name in names:
        if not name.endswith(".json"):
            continue
        stem = name[:-5]
        variant = next((v for v in variants if stem.endswith("-" + v)), None)
        if variant is None:
            continue  # resume, reference or a base kit's run (drafting pairs show as
            # pairs of their own, with the default variant only)
        pair = stem[:-len(variant) - 1]
        try:
            with open(os.path.join(folder, name)) as f:
                data = json.load(f)
        except (OSError, ValueError):
            data = {}  # cut off by its budget: an empty or partial file
        runs[(pair, variant)] = figures(data)
        if pair not in order:
            order.append(pair)
    return runs, order


def cell(value, digits=1):
    return "-" if value is None else f"{value:.{digits}f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder")
    parser.add_argument("--variants", default=os.environ.get("QUIRE_KIT_VARIANTS", "fp32 half2"))
    args = parser.parse_args()
    variants = args.variants.split()
    if not os.path.isdir(args.folder):
        print(f"kit_summary.py: no benchmark results in {args.folder}", file=sys.stderr)
        return 1
    runs, pairs = read_runs(args.folder, variants)
    print("| pair | variant | decode 512 | decode 4k | decode 32k | batch 4 / 1 | batch 16 / 1 "
          "| prefill 2048 | first token 4000 | wins |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for pair in pairs:
        present = [v for v in variants if (pair, v) in runs]
        best = {}
        for column, more in COMPARED.items():
            values = [(runs[(pair, v)][column], v) for v in present
                      if runs[(pair, v)][column] is not None]
            if len(values) > 1:
                best[column] = (max if more else min)(values)[1]
        for variant in present:
            f = runs[(pair, variant)]

            def mark(column, text):
                return text + (" *" if best.get(column) == variant else "")

            cells = []
            for context in CONTEXTS:
                rate, bound = f[f"decode {context}"], f[f"bound {context}"]
                text = "-" if rate is None else f"{rate:.1f} ({100 * (bound or 0):.1f}%)"
                cells.append(mark(f"decode {context}", text))
            one = f["batch 1"]
            for jobs in (4, 16):
                rate = f[f"batch {jobs}"]
                text = "-" if rate is None or not one else f"{rate / one:.2f}x"
                if jobs == 16 and rate is not None:
                    text += f" ({rate:.0f})"
                cells.append(mark("batch 16", text) if jobs == 16 else text)
            prefill = f["prefill 2048"]
            cells.append(mark("prefill 2048", "-" if prefill is None else f"{100 * prefill:.1f}%"))
            cells.append(mark("first token 4000", cell(f["first token 4000"], 3) +
                              ("" if f["first token 4000"] is None else " s")))
            wins = sum(1 for v in best.values() if v == variant)
            print(f"| {pair} | {variant} | " + " | ".join(cells) + f" | {wins} |")
    if not pairs:
        print(f"(no results named MODEL-CACHE-VARIANT.json for variants {' '.join(variants)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
