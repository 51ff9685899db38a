#!/usr/bin/env python3
"""Collects the runs of bench/cpu-residual-window.sh (CODING:WINDOW=FILE
arguments, each a `quire-cli bench --json` output) into one results file and
a Markdown table: per coding, the median decode rate at 4,096 tokens of
context over the rounds without the residual window and with it, and what
the window costs."""

import statistics

import results_file


def decode_at_4096(result):
    rows = [d for d in result.get("decode", []) if d["context"] == 4096]
    return rows[0]["tokens_per_s"] if rows else None


def main():
    args, results = results_file.summarize_runs("run", "CODING:WINDOW")
    rates = {}
    for run in results["runs"]:
        coding, window = run["run"].split(":")
        rate = decode_at_4096(run["result"])
        if rate is not None:
            rates.setdefault(coding, {}).setdefault(int(window), []).append(rate)
    rounds = max((len(v) for by in rates.values() for v in by.values()), default=0)
    lines = [results_file.title("The residual window's decode cost on the CPU", results), "",
             results_file.machine_line(results) + " Llama, 96M parameters in FP16 "
             "(12 layers, 4 KV heads of 64), one chat decoding at 4,096 tokens of context; "
             f"median of {rounds} alternating rounds, each the median of 3 runs.", "",
             "| cache | without the window (tokens/s) | with it (tokens/s) | cost |",
             "|---|---|---|---|"]
    for coding, by_window in rates.items():
        if 0 not in by_window or 4 not in by_window:
            continue
        without = statistics.median(by_window[0])
        with_window = statistics.median(by_window[4])
        cost = (without - with_window) / without * 100
        lines.append(f"| {coding} | {without:.1f} | {with_window:.1f} | {cost:+.1f}% |")
    results_file.write(args, results, lines)


if __name__ == "__main__":
    main()
