#!/usr/bin/env python3
"""Summarizes the CSV that scripts/device/gpu-profile.sh writes (Nsight
Compute's gpu__time_duration of every kernel of a 32-token prefill and the
decode steps after it): per step, kernels grouped by name and launch shape,
largest total first, as a Markdown table.

Steps are told apart by the embedding kernel each forward pass starts with.

Usage: ncu_summary.py NCU_CSV [--top N]
"""

import argparse
import collections
import csv
import re


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    with open(args.csv) as lines:
        rows = list(csv.DictReader(line for line in lines if line.startswith('"')))
    rows = [r for r in rows if r["Metric Name"] == "gpu__time_duration.sum"]

    def short(name):
        return re.sub(r"\(.*", "", name).replace("(anonymous namespace)::", "")[:64]

    starts = [i for i, r in enumerate(rows) if "embed" in r["Kernel Name"].lower()]
    bounds = starts + [len(rows)]
    for step, (first, last) in enumerate(zip(bounds, bounds[1:])):
        groups = collections.defaultdict(lambda: [0, 0.0])
        total = 0.0
        for r in rows[first:last]:
            ns = float(r["Metric Value"].replace(",", ""))
            key = (short(r["Kernel Name"]), r["Block Size"], r["Grid Size"])
            groups[key][0] += 1
            groups[key][1] += ns
            total += ns
        kind = "prefill" if step == 0 else f"decode step {step}"
        complete = "" if last < len(rows) else " (cut off by the launch count)"
        print(f"\n{kind}: {last - first} kernels, {total / 1e3:.0f} us{complete}\n")
        print("| launches | total us | us each | kernel | block | grid |")
        print("| ---: | ---: | ---: | --- | --- | --- |")
        ranked = sorted(groups.items(), key=lambda item: -item[1][1])
        for (name, block, grid), (count, ns) in ranked[: args.top]:
            print(f"| {count} | {ns / 1e3:.0f} | {ns / count / 1e3:.2f} | `{name}` | {block} | {grid} |")


if __name__ == "__main__":
    main()
