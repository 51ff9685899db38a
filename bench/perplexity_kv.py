#!/usr/bin/env python3
"""Perplexity with each cache coding of keys and values (`quire-cli
perplexity --cache ...`), against the FP16 cache, on one or more models:
what each coding costs in quality, beside the bits it stores per element.
Writes one JSON file and a Markdown table. An FP8 cache with calibrated scales
(`quire-cli calibrate-kv` on the same text, into a temporary copy) is
measured too, unless --no-calibrated. Each run also reports its KL divergence
from the FP16 cache (`--kl-divergence`), which unlike perplexity does not move
by noise of either sign. --residual-window-rows adds, for every coding, a run
with the residual window (the open page read from its FP16 copy); --page-size
and --chunk pass on (pages of 32 and chunks of 1 token let a model of 256
positions show what the window does: most of each window sealed, every token
computed as a chat's decode step computes it).

  bench/perplexity_kv.py --cli build/me/app/cli/quire-cli --text FILE \
      --model LABEL=DIR:WINDOW[:MAX_TOKENS] ... [--page-size N] [--chunk N] \
      [--residual-window-rows] --json OUT.json --table OUT.md"""

import argparse
import json
import os
import subprocess
import tempfile

import results_file

CODINGS = ["fp16", "fp8", "q8", "k16v8", "q6", "kf8v4", "k16v4", "k4v16", "q4"]


def run_options(args):
    """The options every perplexity run takes from the command line."""
    options = []
    if args.page_size:
        options += ["--page-size", str(args.page_size)]
    if args.chunk:
        options += ["--chunk", str(args.chunk)]
    return options


def measure(cli, directory, text, window, max_tokens, cache, options, residual_window=0):
    command = [cli, "perplexity", directory, "--text", text, "--window", str(window),
               "--cache", cache, "--json", "--kl-divergence",
               "--residual-window", str(residual_window)] + options
    if max_tokens:
        command += ["--max-tokens", str(max_tokens)]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"perplexity_kv: {' '.join(command)}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def calibrated_fp8(cli, directory, text, window, max_tokens, options):
    """Perplexity with the FP8 cache under scales calibrated on `text` itself:
    the best case for static scales, since nothing scored lies outside them."""
    with tempfile.TemporaryDirectory() as scratch:
        out = os.path.join(scratch, "calibrated")
        command = [cli, "calibrate-kv", directory, "--text", text, "--out", out,
                   "--window", str(window)]
        if max_tokens:
            command += ["--max-tokens", str(max_tokens)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"perplexity_kv: {' '.join(command)}: {done.stderr.strip()}")
        return measure(cli, out, text, window, max_tokens, "fp8", options)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--cli", required=True)
    parser.add_argument("--text", required=True)
    parser.add_argument("--model", action="append", required=True,
                        help="LABEL=DIR:WINDOW[:MAX_TOKENS]")
    parser.add_argument("--no-calibrated", action="store_true",
                        help="leave out the FP8 cache with calibrated scales")
    parser.add_argument("--residual-window-rows", action="store_true",
                        help="measure every coding with the residual window too")
    parser.add_argument("--page-size", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=0)
    results_file.add_arguments(parser, commit_required=False)
    args = parser.parse_args()
    options = run_options(args)

    models = []
    for spec in args.model:
        label, rest = spec.split("=", 1)
        parts = rest.split(":")
        directory, window = parts[0], int(parts[1])
        max_tokens = int(parts[2]) if len(parts) > 2 else 0
        runs = []
        for cache in CODINGS:
            result = measure(args.cli, directory, args.text, window, max_tokens, cache, options)
            runs.append(result)
            print(f"perplexity_kv: {label}, {cache}: {result['perplexity']:.4f}", flush=True)
            if args.residual_window_rows and cache != "fp16":
                result = measure(args.cli, directory, args.text, window, max_tokens, cache,
                                 options, 1)
                runs.append(result)
                print(f"perplexity_kv: {label}, {cache} with the residual window: "
                      f"{result['perplexity']:.4f}", flush=True)
        if not args.no_calibrated:
            result = calibrated_fp8(args.cli, directory, args.text, window, max_tokens, options)
            runs.append(result)
            print(f"perplexity_kv: {label}, fp8 calibrated: {result['perplexity']:.4f}",
                  flush=True)
        models.append({"label": label, "model": directory, "window": window, "runs": runs})

    write_results(args, models, options)


def write_results(args, models, options):
    results = results_file.stamp(args.commit) | {"text": args.text, "models": models,
                                                  "run_options": options}
    lines = [results_file.title("Perplexity with each cache coding", results), "",
             f"Text: `{args.text}`. Each window's second half is scored "
             "(`quire-cli perplexity`); the CPU backend. The demo model is tiny and this "
             "text is far from what it learned (fortunes and dictionary entries in chat "
             "turns), so its perplexity is high; what matters is each coding's change "
             "against the FP16 cache. With one text, differences of a few tenths of a "
             "percent either way are not shown to be more than chance; the KL divergence "
             "from the FP16 cache (mean over the scored positions, in nats) and how often "
             "both put the same token first are the steadier measures."]
    if options:
        lines += ["", f"Every run with `{' '.join(options)}`."]
    for model in models:
        fp16 = next(r["perplexity"] for r in model["runs"] if r["cache_format"] == "fp16")
        scored = model["runs"][0]["scored_tokens"]
        page = model["runs"][0].get("page_size", 256)
        lines += ["", f"## {model['label']}", "",
                  f"`{model['model']}`, windows of {model['window']} tokens, "
                  f"{scored} tokens scored, pages of {page} tokens.", "",
                  "| cache | residual window | bits per element | perplexity | against FP16 "
                  "| KL divergence | same top token |",
                  "|---|---|---|---|---|---|---|"]
        for run in model["runs"]:
            change = 100 * (run["perplexity"] / fp16 - 1)
            name = run["cache_format"]
            if run.get("fp8_scales") == "calibrated":
                name += " (calibrated scales)"
            window = "yes" if run.get("residual_window", 0) > 0 else "no"
            if run["cache_format"] == "fp16":
                window = "—"
            kl = run.get("kl_divergence") or {}
            divergence = f"{kl['mean']:.5f}" if kl else "—"
            same = f"{100 * kl['same_top_token']:.1f}%" if kl else "—"
            lines.append(f"| {name} | {window} | {run['cache_bits_per_element']:g} | "
                         f"{run['perplexity']:.4f} | {change:+.2f}% | {divergence} | {same} |")
    results_file.write(args, results, lines)


if __name__ == "__main__":
    main()
