#!/usr/bin/env python3
"""Collects the runs of bench/cpu-memory.sh (LABEL=FILE arguments, each a
`quire-cli bench --json` output) into one results file and a Markdown table
with the date, machine and commit."""

import argparse
import datetime
import json
import platform


def cpu_name():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--commit", required=True)
    parser.add_argument("--load", default="")
    parser.add_argument("--json", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("runs", nargs="+", help="LABEL=FILE")
    args = parser.parse_args()

    runs = []
    for argument in args.runs:
        label, path = argument.split("=", 1)
        with open(path) as file:
            runs.append({"label": label, "result": json.load(file)})
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    results = {"date": date, "commit": args.commit, "machine": cpu_name(),
               "load_average": args.load, "runs": runs}
    with open(args.json, "w") as file:
        json.dump(results, file, indent=2)
        file.write("\n")

    lines = [f"# Cache memory choices on the CPU ({date}, commit {args.commit})", "",
             f"{cpu_name()}, load average {args.load}.", "",
             "| run | decode at 4,096 tokens (tokens/s) | prefill 512 (tokens/s) |",
             "|---|---|---|"]
    for run in runs:
        result = run["result"]
        decode = [d for d in result.get("decode", []) if d["context"] == 4096]
        prefill = [p for p in result.get("prefill", []) if p.get("tokens") == 512]
        if not decode:
            continue
        prefill_rate = f"{prefill[0]['tokens_per_s']:.0f}" if prefill else "-"
        lines.append(f"| {run['label']} | {decode[0]['tokens_per_s']:.1f} | {prefill_rate} |")
    lines += ["", "| run | chats | at once (most) | mean first token (s) | preemptions "
              "| tokens computed | tokens/s |", "|---|---|---|---|---|---|---|"]
    for run in runs:
        for batch in run["result"].get("batch", []):
            if batch["jobs"] < 2:
                continue
            lines.append(f"| {run['label']} | {batch['jobs']} | {batch['most_running']} | "
                         f"{batch['mean_first_token_s']:.2f} | {batch['preemptions']} | "
                         f"{batch['computed_tokens']} | {batch['tokens_per_s']:.1f} |")
    with open(args.table, "w") as file:
        file.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
