#!/usr/bin/env python3
"""Summarizes bench/tokenizer.sh's measurements into a JSON file and a Markdown table.

Input: JSON lines {"tokenizer", "side" ("quire" or "reference"), "result":
{"bytes", "tokens", "seconds", "mb_per_s"}} or {..., "error": "..."}. Per
tokenizer the table gives the median MB/s of each side, Quire's speed as a
multiple of the reference's, and whether both produced the same number of
tokens (a quick sign that they tokenize alike; the tests check the ids).
"""

import argparse
import datetime
import json
import os
import platform
import statistics

import results_file


def summarize(runs):
    tokenizers = {}
    for run in runs:
        entry = tokenizers.setdefault(run["tokenizer"], {"quire": [], "reference": [], "errors": {}})
        if "error" in run:
            entry["errors"][run["side"]] = run["error"]
        else:
            entry[run["side"]].append(run["result"])
    summary = {}
    for name, entry in tokenizers.items():
        row = {}
        for side in ("quire", "reference"):
            results = entry[side]
            if results:
                row[side] = {
                    "mb_per_s": statistics.median(r["mb_per_s"] for r in results),
                    "runs": [r["mb_per_s"] for r in results],
                    "tokens": results[0].get("tokens"),
                    "bytes": results[0]["bytes"],
                }
            elif side in entry["errors"]:
                row[side] = {"error": entry["errors"][side]}
        quire, reference = row.get("quire", {}), row.get("reference", {})
        if "mb_per_s" in quire and "mb_per_s" in reference:
            row["ratio"] = quire["mb_per_s"] / reference["mb_per_s"]
            row["same_token_count"] = quire["tokens"] == reference["tokens"]
        summary[name] = row
    return summary


def cell(side):
    if "mb_per_s" in side:
        return f"{side['mb_per_s']:.2f}"
    if "error" in side:
        first_line = side["error"].splitlines()[-1] if side["error"] else "failed"
        return "failed: " + first_line.replace("|", "\\|")[:120]
    return "-"


def table(results):
    machine = results["machine"]
    lines = [
        f"# Tokenizer benchmark, {results['date']}",
        "",
        f"Machine: {machine['cpu']}, {machine['hardware_threads']} hardware threads, "
        f"{machine['system']}; load average before the run {results['load']}. "
        f"Commit {results['commit']}. Text: {results['text_bytes']} bytes of English and code "
        f"(tests/reference/make_bench_text.py), each piece between blank lines encoded on its own, "
        f"special tokens spelled in the text recognised for tokenizer.json (as Hugging Face's encode "
        f"does) and not for tokenizer.model (as SentencePiece's does), none added; "
        f"median of {results['rounds']} rounds, Quire and the reference alternating.",
        "",
        "| tokenizer | Quire MB/s | reference MB/s | Quire / reference | same token count |",
        "|---|---|---|---|---|",
    ]
    for name, row in results["tokenizers"].items():
        ratio = f"{row['ratio']:.2f}x" if "ratio" in row else "-"
        same = {True: "yes", False: "**no**"}.get(row.get("same_token_count"), "-")
        lines.append(
            f"| {name} | {cell(row.get('quire', {}))} | {cell(row.get('reference', {}))} | {ratio} | {same} |"
        )
    lines += [
        "",
        "References: `@huggingface/tokenizers` (JavaScript, Node.js) for tokenizer.json files; "
        "SentencePiece (Debian's python3-sentencepiece, C++ under Python) for tokenizer.model files.",
    ]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--commit", required=True)
    parser.add_argument("--load", required=True)
    parser.add_argument("--text-bytes", type=int, required=True)
    parser.add_argument("--json", required=True)
    parser.add_argument("--table", required=True)
    parser.add_argument("runs")
    args = parser.parse_args()

    with open(args.runs, encoding="utf-8") as file:
        runs = [json.loads(line) for line in file if line.strip()]
    rounds = max(
        (sum(1 for r in runs if r["tokenizer"] == name and r["side"] == "quire")
         for name in {r["tokenizer"] for r in runs}),
        default=0,
    )
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": args.commit,
        "load": args.load,
        "machine": {
            "cpu": results_file.cpu_name(),
            "hardware_threads": os.cpu_count(),
            "system": f"{platform.system()} {platform.release()}",
        },
        "text_bytes": args.text_bytes,
        "rounds": rounds,
        "tokenizers": summarize(runs),
    }
    results_file.write(args, results, table(results))


if __name__ == "__main__":
    main()
