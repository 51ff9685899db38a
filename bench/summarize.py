#!/usr/bin/env python3
"""Collects `quire-cli bench --json` outputs into one results file and a short
Markdown table, with the date, machine and commit, and checks them against the
project's targets (warm turn-10 time to first token within 1.2x of turn 1's;
batch-1 decode within 2x of the memory-bandwidth bound)."""

import argparse
import datetime
import json
import platform

import results_file


def target_checks(run):
    conversation = run["conversation"]
    warm_ratio = conversation["turn_10_warm_ttft_s"] / conversation["turn_1_ttft_s"]
    shortest = min(run["decode"], key=lambda d: d["context"])
    return {
        "turn_10_warm_over_turn_1_ttft": warm_ratio,
        "turn_10_warm_ttft_within_1_2x": warm_ratio <= 1.2,
        "decode_context": shortest["context"],
        "decode_fraction_of_bandwidth_bound": shortest["fraction_of_bandwidth_bound"],
        "decode_within_2x_of_bound": shortest["fraction_of_bandwidth_bound"] >= 0.5,
    }


def model_label(run):
    return run["model"].rstrip("/").rsplit("/", 1)[-1]


def table(results):
    runs = results["runs"]
    lines = [
        f"# CPU benchmark, {results['date']}",
        "",
        f"Machine: {results['machine']['cpu']}, {results['machine']['hardware_threads']} hardware "
        f"threads, {results['machine']['system']}; load average before the run "
        f"{results['machine']['load_average']}. Commit {results['commit']}.",
        "",
        "| | " + " | ".join(model_label(r) for r in runs) + " |",
        "|---|" + "---|" * len(runs),
    ]

    def row(label, values):
        lines.append(f"| {label} | " + " | ".join(values) + " |")

    row("parameters", [f"{r['parameters'] / 1e6:.1f} M" for r in runs])
    row("weights", [f"{r['weight_bytes'] / 2**20:.1f} MiB" for r in runs])
    row("copy bandwidth", [f"{r['copy_bandwidth_gb_s']:.1f} GB/s" for r in runs])
    if all("read_bandwidth_gb_s" in r for r in runs):
        row("read bandwidth (decode's bound)",
            [f"{r['read_bandwidth_gb_s']:.1f} GB/s" for r in runs])
    if all("matmul" in r for r in runs):
        row("dense FP16 product",
            [f"{r['matmul']['multiply_adds_per_s'] / 1e9:.1f} G multiply-adds/s" for r in runs])
    for index, prefill in enumerate(runs[0]["prefill"]):
        row(f"prefill {prefill['tokens']} tokens",
            [f"{r['prefill'][index]['tokens_per_s']:.0f} tok/s"
             + (f" ({100 * r['prefill'][index]['fraction_of_matmul_rate']:.0f}% of product rate)"
                if "fraction_of_matmul_rate" in r["prefill"][index] else "")
             for r in runs])
    for index, decode in enumerate(runs[0]["decode"]):
        row(f"decode at {decode['context']} context",
            [f"{r['decode'][index]['tokens_per_s']:.1f} tok/s "
             f"({100 * r['decode'][index]['fraction_of_bandwidth_bound']:.0f}% of bound)"
             for r in runs])
    def against_one_job(r, index, key):
        one = r["batch"][0] if r["batch"] and r["batch"][0]["jobs"] == 1 else None
        value = r["batch"][index].get(key)
        if value is None:
            return "—"
        ratio = f" ({value / one[key]:.2f}x one job)" if one and one.get(key) else ""
        return f"{value:.1f} tok/s{ratio}"

    for index, batch in enumerate(runs[0]["batch"]):
        row(f"{batch['jobs']} concurrent jobs",
            [against_one_job(r, index, "tokens_per_s") for r in runs])
        row(f"{batch['jobs']} concurrent jobs, prompts cached",
            [against_one_job(r, index, "decode_tokens_per_s") for r in runs])
    row("TTFT turn 1", [f"{r['conversation']['turn_1_ttft_s'] * 1000:.0f} ms" for r in runs])
    row("TTFT turn 10, warm cache",
        [f"{r['conversation']['turn_10_warm_ttft_s'] * 1000:.0f} ms" for r in runs])
    row("TTFT turn 10, empty cache",
        [f"{r['conversation']['turn_10_cold_ttft_s'] * 1000:.0f} ms" for r in runs])
    row("turn 10 prompt / from cache",
        [f"{r['conversation']['turns'][-1]['prompt_tokens']} / "
         f"{r['conversation']['turns'][-1]['cached_tokens']}" for r in runs])
    row("warm turn 10 / turn 1 (target <= 1.2)",
        [f"{r['targets']['turn_10_warm_over_turn_1_ttft']:.2f}" for r in runs])
    row("decode / bandwidth bound (target >= 0.5)",
        [f"{r['targets']['decode_fraction_of_bandwidth_bound']:.2f}" for r in runs])
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("runs", nargs="+", help="files written by quire-cli bench --json")
    parser.add_argument("--commit", required=True)
    parser.add_argument("--load", default="")
    parser.add_argument("--json", required=True, help="results file to write")
    parser.add_argument("--table", required=True, help="Markdown table to write")
    args = parser.parse_args()

    runs = []
    for path in args.runs:
        with open(path, encoding="utf-8") as handle:
            run = json.load(handle)
        run["targets"] = target_checks(run)
        runs.append(run)
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": args.commit,
        "machine": {
            "cpu": runs[0]["cpu"],
            "hardware_threads": runs[0]["hardware_threads"],
            "system": f"{platform.system()} {platform.release()}",
            "load_average": args.load,
        },
        "runs": runs,
    }
    results_file.write(args, results, table(results))


if __name__ == "__main__":
    main()
