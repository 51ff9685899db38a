#!/usr/bin/env python3
"""Collects the runs of bench/cpu-memory.sh (LABEL=FILE arguments, each a
`quire-cli bench --json` output) into one results file and a Markdown table
with the date, machine and commit."""

import results_file


def main():
    args, results = results_file.summarize_runs("label", "LABEL")
    runs = results["runs"]

    lines = [results_file.title("Cache memory choices on the CPU", results), "",
             results_file.machine_line(results), "",
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
    results_file.write(args, results, lines)


if __name__ == "__main__":
    main()
