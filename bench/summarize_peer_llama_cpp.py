#!/usr/bin/env python3
"""Collects the runs of bench/peer-llama-cpp.sh into one results file and a
Markdown table: for every shape, format pair and measurement, Quire's median
tokens/s over the rounds, llama.cpp's with flash attention off and on, and
Quire's over the faster of the two; with the machine (processor, the SIMD
flags both engines choose their kernels by), both versions, the thread count
and the logits check of each shape.

The runs folder holds round-R/SHAPE/FORMAT/{quire,llama-short,llama-depth}.json
(`quire-cli bench --json` and `llama-bench -o json` outputs); the checks
folder SHAPE.json from bench/peer/compare_logits.py."""

import argparse
import json
import os
import platform
import statistics

import results_file

FORMATS = {"fp16": ("FP16", "F16"), "8bit": ("EXL2 8.0 bpw", "Q8_0"),
           "4bit": ("EXL2 4.0 bpw", "Q4_0")}
SHAPES = {"100m": "Llama 96M (hidden 768, 12 layers, 12/4 heads, MLP 2560, vocabulary 4096)",
          "1b": "Llama 0.98B (hidden 2048, 22 layers, 32/4 heads, MLP 5632, vocabulary 4096)"}
# The flags that decide which kernels either engine runs (ggml picks one of
# its CPU builds by them; Quire dispatches on them at run time).
FLAGS = ["avx", "avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512vl", "avx512_vnni",
         "avx512_bf16", "avx_vnni", "amx_tile"]


def cpu_flags():
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("flags"):
                    present = set(line.split(":", 1)[1].split())
                    return {flag: flag in present for flag in FLAGS}
    except OSError:
        pass
    return {}


def pinned_packages():
    """The npm packages llama.cpp came from, as bench/peer/package.json pins them."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peer", "package.json")
    dependencies = load(path)["dependencies"]
    return ", ".join(f"{name}@{version}" for name, version in sorted(dependencies.items()))


def load(path):
    with open(path, encoding="utf-8") as file:
        return json.load(file)


def llama_rates(tests):
    """{(measurement, flash attention on): tokens/s} of one llama-bench run."""
    rates = {}
    for test in tests:
        if test["n_prompt"] > 0:
            measurement = f"pp{test['n_prompt']}"
        else:
            measurement = f"tg{test['n_gen']}"
        if test["n_depth"] > 0:
            measurement += f" @ d{test['n_depth']}"
        rates[(measurement, test["flash_attn"] == 1)] = test["avg_ts"]
    return rates


def prefill_runs_text(runs):
    if runs == 1:
        return "Quire's prompt processing is one run (quire-cli bench timed it once)."
    return (f"Quire's prompt processing is the median of {runs} runs, each of a prompt "
            "of its own (no warm-up run).")


def quire_rates(run, prompt, gen, depth):
    """The same measurements from one `quire-cli bench --json` run; context 1
    stands for llama-bench's empty one."""
    rates = {}
    for prefill in run["prefill"]:
        if prefill["tokens"] == prompt:
            rates[f"pp{prompt}"] = prefill["tokens_per_s"]
    for decode in run["decode"]:
        if decode["context"] == 1:
            rates[f"tg{gen}"] = decode["tokens_per_s"]
        elif decode["context"] == depth:
            rates[f"tg{gen} @ d{depth}"] = decode["tokens_per_s"]
    return rates


def collect(runs_dir):
    """{(shape, format): {"quire": [rates per round], "llama": [...], "sizes": ...}}"""
    cells = {}
    for round_name in sorted(os.listdir(runs_dir)):
        for shape in sorted(os.listdir(os.path.join(runs_dir, round_name))):
            for fmt in sorted(os.listdir(os.path.join(runs_dir, round_name, shape))):
                folder = os.path.join(runs_dir, round_name, shape, fmt)
                llama_tests = (load(os.path.join(folder, "llama-short.json"))
                               + load(os.path.join(folder, "llama-depth.json")))
                quire = load(os.path.join(folder, "quire.json"))
                cell = cells.setdefault((shape, fmt), {"quire": [], "llama": []})
                cell["quire"].append(quire)
                cell["llama"].append(llama_tests)
    return cells


def measurements(prompt, gen, depth):
    return [f"pp{prompt}", f"tg{gen}", f"tg{gen} @ d{depth}"]


def median_or_none(values):
    return statistics.median(values) if values else None


def rows_of(cells, prompt, gen, depth):
    rows = []
    for shape in [s for s in SHAPES if any(k[0] == s for k in cells)]:
        for fmt in [f for f in FORMATS if (shape, f) in cells]:
            cell = cells[(shape, fmt)]
            quire_runs = [quire_rates(run, prompt, gen, depth) for run in cell["quire"]]
            llama_runs = [llama_rates(tests) for tests in cell["llama"]]
            for measurement in measurements(prompt, gen, depth):
                quire = [r[measurement] for r in quire_runs if measurement in r]
                off = [r[(measurement, False)] for r in llama_runs if (measurement, False) in r]
                on = [r[(measurement, True)] for r in llama_runs if (measurement, True) in r]
                row = {"shape": shape, "format": fmt, "quire_format": FORMATS[fmt][0],
                       "llama_type": FORMATS[fmt][1], "measurement": measurement,
                       "quire_tokens_per_s": median_or_none(quire),
                       "llama_fa_off_tokens_per_s": median_or_none(off),
                       "llama_fa_on_tokens_per_s": median_or_none(on),
                       "quire_runs": quire, "llama_fa_off_runs": off, "llama_fa_on_runs": on,
                       "quire_weight_bytes": cell["quire"][0]["weight_bytes"],
                       "llama_model_bytes": cell["llama"][0][0]["model_size"]}
                best = [v for v in (row["llama_fa_off_tokens_per_s"],
                                    row["llama_fa_on_tokens_per_s"]) if v is not None]
                row["llama_best_tokens_per_s"] = max(best) if best else None
                if best:
                    row["llama_best_flash_attn"] = (
                        "on" if row["llama_best_tokens_per_s"] == row["llama_fa_on_tokens_per_s"]
                        else "off")
                if row["quire_tokens_per_s"] and row["llama_best_tokens_per_s"]:
                    row["quire_over_llama_best"] = (row["quire_tokens_per_s"]
                                                    / row["llama_best_tokens_per_s"])
                rows.append(row)
    return rows


def rounds_text(rounds):
    return "One round" if rounds == 1 else f"Medians of {rounds} rounds"


def number(value, digits=1):
    return "-" if value is None else f"{value:,.{digits}f}"


def table(results):
    machine = results["machine"]
    flags = ", ".join(f for f, present in machine["flags"].items() if present) or "unknown"
    llama = results["llama_cpp"]
    lines = [results_file.title("Quire against llama.cpp on the CPU", results), "",
             f"{machine['cpu']}, {machine['hardware_threads']} hardware threads, "
             f"{machine['system']}; flags: {flags}. Load average before the runs "
             f"{results['load_average']}.", "",
             f"Quire {results['commit']}; llama.cpp {llama['version']['commit']} (build "
             f"{llama['version']['build_number']}, libllama {llama['version']['llama_version']}, "
             f"ggml {llama['version']['ggml_version']}) from npm {llama['package']}, "
             f"CPU backend {llama['cpu_backend']}. {results['threads']} threads each; KV "
             f"cache {results['quire_cache_format']} (Quire) and {llama['kv_type']} (llama.cpp). "
             f"{rounds_text(results['rounds'])}, each engine's own figure per round being the "
             f"mean (llama-bench) or median (Quire) of {results['reps']} runs; "
             f"{prefill_runs_text(results.get('quire_prefill_runs', 1))} Quire's generation "
             "on an empty context follows a one-token prompt.", ""]
    if results.get("isa") == "avx2":
        lines += ["Both engines were held to their AVX2 kernels on this processor "
                  "(`--isa avx2`: Quire with QUIRE_CPU_VECTOR_BITS=256, llama.cpp with only "
                  "its haswell CPU variant at hand); its caches, clocks and memory are this "
                  "machine's, not an AVX2-only one's.", ""]
    paths = results.get("quire_kernel_paths") or {}
    if paths:
        peak = results.get("quire_multiply_add_peak") or {}
        lines += ["Quire's kernels on this processor: " +
                  "; ".join(f"{kernel}: {path}" for kernel, path in paths.items()) +
                  (f". Measured multiply-add peak {peak['per_s'] / 1e9:.1f} G/s "
                   f"({peak['instructions']})." if peak else "."), ""]
    for shape, check in results["logits_checks"].items():
        lines.append(f"Logits, {shape}, Quire FP16 against llama.cpp F16 on the converted "
                     f"model: largest difference {check['max_abs_difference']:.3g} over "
                     f"{check['positions']} positions, {check['max_difference_over_range']:.2e} "
                     f"of the logits' range {check['logit_range']:.3g} (tolerance "
                     f"{check['tolerance']}); the same top token at "
                     f"{check['same_argmax_positions']} of {check['positions']} positions.")
    lines += ["", "Tokens/s; the ratio is Quire's over llama.cpp's faster flash-attention "
              "setting in that row.", "",
              "| model | Quire / llama.cpp | test | Quire | llama.cpp FA off | llama.cpp FA on "
              "| Quire / best |", "|---|---|---|---|---|---|---|"]
    for row in results["rows"]:
        ratio = row.get("quire_over_llama_best")
        sizes = (f"{row['quire_format']} ({row['quire_weight_bytes'] / 2**20:,.0f} MiB) / "
                 f"{row['llama_type']} ({row['llama_model_bytes'] / 2**20:,.0f} MiB)")
        lines.append(f"| {row['shape']} | {sizes} | {row['measurement']} | "
                     f"{number(row['quire_tokens_per_s'])} | "
                     f"{number(row['llama_fa_off_tokens_per_s'])} | "
                     f"{number(row['llama_fa_on_tokens_per_s'])} | "
                     f"{'-' if ratio is None else f'{ratio:.2f}'} |")
    lines += ["", "Models: " + "; ".join(f"{k}: {SHAPES[k]}" for k in SHAPES
                                          if any(r["shape"] == k for r in results["rows"]))
              + ". llama.cpp's models are Quire's FP16 one converted to GGUF "
              "(bench/peer/gguf_from_quire.py) and quantized by llama-quantize with its "
              "defaults (Q4_0 stores the embedding, which is also the head, as Q6_K); Quire's "
              "EXL2 models are made by quire-cli make-model with the same seed and have a head "
              "of their own in 6 bits. Sizes are those each engine reports for its weights."]
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    results_file.add_arguments(parser, load=True)
    parser.add_argument("--threads", type=int, required=True)
    parser.add_argument("--rounds", type=int, required=True)
    parser.add_argument("--reps", type=int, required=True)
    parser.add_argument("--prompt", type=int, required=True)
    parser.add_argument("--gen", type=int, required=True)
    parser.add_argument("--depth", type=int, required=True)
    parser.add_argument("--llama-version", required=True, help="llama-logits --version")
    parser.add_argument("--llama-cpu-backend", default="unknown")
    parser.add_argument("--isa", default="native",
                        help="avx2: both engines were held to their AVX2 kernels")
    parser.add_argument("--checks", required=True, help="folder of logits checks")
    parser.add_argument("--runs", required=True, help="folder of the rounds' outputs")
    args = parser.parse_args()

    cells = collect(args.runs)
    first_quire = next(iter(cells.values()))["quire"][0]
    results = results_file.stamp(args.commit, args.load)
    results["machine"] = {"cpu": results_file.cpu_name(),
                          "hardware_threads": first_quire["hardware_threads"],
                          "system": f"{platform.system()} {platform.release()}",
                          "flags": cpu_flags()}
    results.update({"threads": args.threads, "rounds": args.rounds, "reps": args.reps,
                    "isa": args.isa,
                    "quire_cache_format": first_quire["cache_format"],
                    # Older builds timed the prefill once, without these.
                    "quire_prefill_runs": len(first_quire["prefill"][0].get("runs_tokens_per_s",
                                                                            [None])),
                    "quire_kernel_paths": first_quire.get("kernel_paths", {}),
                    "quire_multiply_add_peak": first_quire.get("multiply_add_peak"),
                    "llama_cpp": {"version": json.loads(args.llama_version),
                                  "package": pinned_packages(),
                                  "cpu_backend": args.llama_cpu_backend,
                                  "kv_type": next(iter(cells.values()))["llama"][0][0]["type_k"]}})
    results["logits_checks"] = {
        name[:-len(".json")]: load(os.path.join(args.checks, name))
        for name in sorted(os.listdir(args.checks)) if name.endswith(".json")
        and not name.endswith("-quire.json") and not name.endswith("-llama.json")}
    results["rows"] = rows_of(cells, args.prompt, args.gen, args.depth)
    results_file.write(args, results, table(results))


if __name__ == "__main__":
    main()
