#!/usr/bin/env python3
"""Collects the runs of bench/disk-resume.sh (TOKENS=FILE arguments, each a
`quire-cli bench --resume-tokens TOKENS --json` output) into one results
file and a Markdown table: per prompt length, the time to first token
computed on a cold cache, warm, and restored from disk by a new runtime,
against issue 47's targets (from disk at most 2x the warm time, and at
least 10x faster than computing the prompt)."""

import argparse

import results_file

SHAPES = {
    "0.98b": "Llama, 0.98B parameters with random weights (hidden 2048, 22 layers, "
             "4 KV heads of 64)",
    "tiny": "A 2-layer Llama of hidden 128 (a check of the script, not a measurement)",
}


def mib(value):
    return value / (1 << 20)


def main():
    parser = argparse.ArgumentParser()
    results_file.add_arguments(parser, load=True)
    parser.add_argument("--shape", default="0.98b", choices=sorted(SHAPES),
                        help="the model shape the script made")
    parser.add_argument("runs", nargs="+", help="TOKENS=FILE")
    args = parser.parse_args()
    results = results_file.stamp(args.commit, args.load) | {
        "shape": args.shape, "runs": results_file.labelled_runs(args.runs, "tokens")}

    first = results["runs"][0]["result"]
    repeats = first["resume"]["runs"]
    runs = (f"median of {repeats} runs, each with a prompt of its own" if repeats > 1
            else "one run")
    lines = [results_file.title("Reopening a chat after a restart, from the disk cache", results),
             "",
             results_file.machine_line(results) + f" {SHAPES[args.shape]}, "
             f"{first['cache_format']} cache on {first['devices']}; time to first token, {runs}. "
             "From disk: a new runtime over the folder the first one archived to, in the same "
             "process; the files were just written, so the page cache may hold them.", "",
             "| prompt tokens | computed (s) | warm (s) | from disk (s) | restored tokens "
             "| read (MiB) | disk vs warm (target <= 2x) | computed vs disk (target >= 10x) "
             "| same first token |",
             "|---|---|---|---|---|---|---|---|---|"]
    for run in results["runs"]:
        r = run["result"]["resume"]
        lines.append(
            f"| {r['prompt_tokens']:,} | {r['cold_ttft_s']:.3f} | {r['warm_ttft_s']:.3f} "
            f"| {r['disk_ttft_s']:.3f} | {r['disk_tokens']:,} | {mib(r['disk_bytes_read']):.1f} "
            f"| {r['disk_vs_warm']:.2f}x | {r['cold_vs_disk']:.1f}x "
            f"| {'yes' if r['same_first_token'] else 'no'} |")
    results_file.write(args, results, lines)


if __name__ == "__main__":
    main()
