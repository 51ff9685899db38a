#!/usr/bin/env python3
"""What each weight coding costs the demo model in quality: EXL3 and W4A16
models made by `quire-cli quantize` (with and without calibration text:
LDLQ for EXL3, GPTQ for W4A16), beside existing
directories (FP16, EXL2), each measured by `quire-cli perplexity
--kl-divergence --reference-model FP16`: perplexity over a text and every
scored position's KL divergence from the FP16 weights' distribution (both
with an FP16 cache). Writes one JSON file and a Markdown table.

  bench/quality_weights.py --cli build/release/app/cli/quire-cli --text FILE \
      --fp16 DIR --calibration FILE --work DIR --window 256 \
      --model LABEL=DIR ... --quantize LABEL=FORMAT[,calibrated] ... \
      --json OUT.json --table OUT.md"""

import argparse
import json
import os
import subprocess
import time

import results_file


def run(command):
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"quality_weights: {' '.join(command)}: {done.stderr.strip()}")
    return done


def quantize(args, label, spec):
    """Makes the model, timed; returns its directory and what it took."""
    fmt, _, flag = spec.partition(",")
    calibrated = flag == "calibrated"
    out = os.path.join(args.work, label.replace(" ", "-").replace(",", "").lower())
    command = [args.cli, "quantize", args.fp16, out, "--format", fmt]
    if calibrated:
        command += ["--calibration", args.calibration]
    start = time.monotonic()
    done = run(command)
    seconds = time.monotonic() - start
    print(f"quality_weights: {label}: {done.stdout.strip()} in {seconds:.0f} s", flush=True)
    # The command as a reader would type it: the output and the calibration
    # text by their roles rather than this run's temporary paths.
    shown = ["quire-cli"] + command[1:]
    shown[shown.index(out)] = "OUT"
    if calibrated:
        shown[shown.index(args.calibration)] = "calibration.txt"
    return out, {"format": fmt, "calibrated": calibrated, "seconds": round(seconds, 1),
                 "command": " ".join(shown), "summary": done.stdout.strip()}


def measure(args, directory):
    command = [args.cli, "perplexity", directory, "--text", args.text, "--window",
               str(args.window), "--json", "--kl-divergence", "--reference-model", args.fp16]
    return json.loads(run(command).stdout)


def bits_of(directory):
    """Bits per weight as the format stores them; compressed-tensors' integers
    with their 16-bit scale per group."""
    with open(os.path.join(directory, "config.json")) as file:
        quantization = json.load(file).get("quantization_config") or {}
    if quantization.get("quant_method") == "compressed-tensors":
        weights = quantization["config_groups"]["group_0"]["weights"]
        group = weights.get("group_size")
        return weights["num_bits"] + (16 / group if group else 0)
    return quantization.get("bits", 16)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--text", required=True)
    parser.add_argument("--fp16", required=True, help="the FP16 model, the reference")
    parser.add_argument("--calibration", required=True, help="calibration text for ,calibrated")
    parser.add_argument("--calibration-label", default="",
                        help="what the calibration text is, for the table")
    parser.add_argument("--work", required=True, help="where the quantized models go")
    parser.add_argument("--window", type=int, default=256)
    parser.add_argument("--model", action="append", default=[], help="LABEL=DIR")
    parser.add_argument("--quantize", action="append", default=[],
                        help="LABEL=FORMAT[,calibrated]")
    results_file.add_arguments(parser)
    args = parser.parse_args()

    rows = []
    for spec in args.model:
        label, directory = spec.split("=", 1)
        rows.append({"label": label, "model": directory, "made": None})
    for spec in args.quantize:
        label, what = spec.split("=", 1)
        directory, made = quantize(args, label, what)
        rows.append({"label": label, "model": directory, "made": made})
    for row in rows:
        row["bits"] = bits_of(row["model"])
        row["bytes"] = os.path.getsize(os.path.join(row["model"], "model.safetensors"))
        row["result"] = measure(args, row["model"])
        kl = row["result"]["kl_divergence"]
        print(f"quality_weights: {row['label']}: perplexity {row['result']['perplexity']:.2f}, "
              f"KL {kl['mean']:.5f}", flush=True)
    write_results(args, rows)


def write_results(args, rows):
    results = results_file.stamp(args.commit, results_file.load_average()) | {
        "text": args.text, "reference": args.fp16,
        "calibration": args.calibration_label or args.calibration,
        "window": args.window, "rows": rows}
    fp16 = next((r["result"]["perplexity"] for r in rows if r["bits"] == 16),
                rows[0]["result"]["perplexity"])
    scored = rows[0]["result"]["scored_tokens"]
    lines = [results_file.title("Weight codings of the demo model", results), "",
             f"Text: `{args.text}`, windows of {args.window} tokens, second halves scored "
             f"({scored} tokens); `quire-cli perplexity --kl-divergence --reference-model "
             f"{args.fp16}`, an FP16 cache throughout, the CPU backend. KL divergence: the "
             "mean over the scored positions of KL(FP16 weights || these weights), in nats. "
             "Calibration text, where used (`calibration.txt`): "
             f"{args.calibration_label or args.calibration}, other texts than the scored one. "
             "The demo model is tiny and this text is far from what it learned, so its "
             "perplexity is high and moves by noise of either sign (below FP16's for several "
             "codings); the KL divergence, which only grows with what a coding loses, is the "
             "measure to compare. " + results_file.machine_line(results) +
             " Quantizing shared the machine's two cores with other work; its times are "
             "wall times.", "",
             "| weights | bits per weight | model.safetensors | perplexity | against FP16 "
             "| KL divergence | same top token | quantized in |",
             "|---|---|---|---|---|---|---|---|"]
    for row in rows:
        result = row["result"]
        kl = result["kl_divergence"]
        change = 100 * (result["perplexity"] / fp16 - 1)
        made = row["made"]
        took = f"{made['seconds']:.0f} s" if made else "—"
        lines.append(f"| {row['label']} | {row['bits']:g} | {row['bytes'] / 2**20:.2f} MiB | "
                     f"{result['perplexity']:.2f} | {change:+.2f}% | {kl['mean']:.5f} | "
                     f"{100 * kl['same_top_token']:.1f}% | {took} |")
    made = [row for row in rows if row["made"]]
    if made:
        lines += ["", "Made by:", ""]
        lines += [f"- {row['label']}: `{row['made']['command']}`" for row in made]
    results_file.write(args, results, lines)


if __name__ == "__main__":
    main()
