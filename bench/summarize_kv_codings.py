#!/usr/bin/env python3
"""Collects the runs of bench/cpu-kv-codings.sh (PAIR=FILE arguments, each a
`quire-cli bench --json` output with that --cache) into one results file and
a Markdown table: bits per value, cache bytes per token, decode at 4,096
tokens of context against the FP16 cache."""

import argparse
import datetime
import json

from summarize_memory import cpu_name


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--commit", required=True)
    parser.add_argument("--load", default="")
    parser.add_argument("--json", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("runs", nargs="+", help="PAIR=FILE")
    args = parser.parse_args()

    runs = []
    for argument in args.runs:
        pair, path = argument.split("=", 1)
        with open(path) as file:
            runs.append({"cache": pair, "result": json.load(file)})
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    results = {"date": date, "commit": args.commit, "machine": cpu_name(),
               "load_average": args.load, "runs": runs}
    with open(args.json, "w") as file:
        json.dump(results, file, indent=2)
        file.write("\n")

    def decode_at_4096(result):
        rows = [d for d in result.get("decode", []) if d["context"] == 4096]
        return rows[0]["tokens_per_s"] if rows else None

    fp16 = next((decode_at_4096(run["result"]) for run in runs if run["cache"] == "fp16"), None)
    lines = [f"# Cache codings of keys and values on the CPU ({date}, commit {args.commit})", "",
             f"{cpu_name()}, load average {args.load}. Llama, 96M parameters in FP16 "
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
    with open(args.table, "w") as file:
        file.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
