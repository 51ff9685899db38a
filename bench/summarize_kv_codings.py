#!/usr/bin/env python3
"""Collects the runs of bench/cpu-kv-codings.sh (PAIR=FILE arguments, each a
`quire-cli bench --json` output with that --cache) into one results file and
a Markdown table: bits per value, cache bytes per token, decode at 4,096
tokens of context against the FP16 cache."""

import results_file


def decode_at_4096(result):
    rows = [d for d in result.get("decode", []) if d["context"] == 4096]
    return rows[0]["tokens_per_s"] if rows else None


def main():
    args, results = results_file.summarize_runs("cache", "PAIR")
    runs = results["runs"]

    fp16 = next((decode_at_4096(run["result"]) for run in runs if run["cache"] == "fp16"), None)
    lines = [results_file.title("Cache codings of keys and values on the CPU", results), "",
             results_file.machine_line(results) + " Llama, 96M parameters in FP16 "
             "(12 layers, 4 KV heads of 64), one chat, median of 3 runs.", "",
             "| cache | KV bytes per token | decode at 4,096 tokens (tokens/s) | against FP16 |",
             "|---|---|---|---|"]
    for run in runs:
        result = run["result"]
        rate = decode_at_4096(result)
        if rate is None:
            continue
        per_token = result.get("kv_bytes_per_token", {}).get(run["cache"])
        size = f"{per_token:,.0f}" if per_token is not None else "-"
        ratio = f"{rate / fp16:.2f}x" if fp16 else "-"
        lines.append(f"| {run['cache']} | {size} | {rate:.1f} | {ratio} |")
    results_file.write(args, results, lines)


if __name__ == "__main__":
    main()
