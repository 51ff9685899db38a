#!/usr/bin/env python3
"""Collects bench/cpu-speculative.sh's `quire-cli bench --json` runs into a
results file and a Markdown table: decode and rewrite speed with and without
drafts, the drafts' acceptance and tokens per model step, and the speed-up
over the same model without drafts. Targets: at least 1.5x where at least 60%
of drafts are accepted, and at most 5% slower where nearly none are.

  summarize_speculative.py --commit C --load L --json F --table F LABEL=FILE..."""

import results_file


def measurements(run):
    """(name, entry) for the decode measurements and the rewrite."""
    result = run["result"]
    found = [(f"decode at {d['context']}", d) for d in result["decode"]]
    if result.get("rewrite"):
        found.append(("rewrite", result["rewrite"]))
    return found


def baseline(runs, run):
    """The run of the same model without drafts."""
    for other in runs:
        if (other["result"]["model"] == run["result"]["model"]
                and other["result"]["draft"]["method"] == "off"):
            return other
    return None


def verdict(speedup, acceptance):
    if acceptance >= 0.6:
        return "meets >= 1.5x" if speedup >= 1.5 else "below 1.5x"
    if acceptance <= 0.1:
        return "meets <= 5% slower" if speedup >= 0.95 else "more than 5% slower"
    return ""


def main():
    args, results = results_file.summarize_runs("label", "LABEL")
    runs = results["runs"]
    lines = [results_file.title("Speculative decoding on the CPU", results), "",
             results_file.machine_line(results) +
             " Greedy decode (`quire-cli bench`, median of the runs); each draft run's"
             " replies are token for token those without drafts. Speed-up: tokens/s"
             " over the same model's without drafts.", "",
             "| model and drafter | measurement | tokens/s | drafts accepted | tokens per step"
             " | speed-up | target |",
             "|---|---|---|---|---|---|---|"]
    summary = []
    for run in runs:
        plain = baseline(runs, run)
        plain_measurements = dict(measurements(plain)) if plain else {}
        for name, entry in measurements(run):
            speed = entry["tokens_per_s"]
            drafting = run["result"]["draft"]["method"] != "off"
            reference = plain_measurements.get(name)
            speedup = speed / reference["tokens_per_s"] if reference and drafting else None
            acceptance = entry.get("acceptance_rate", 0.0)
            drafted = entry.get("drafted_tokens", 0)
            target = verdict(speedup, acceptance) if speedup is not None and drafted else ""
            lines.append(
                f"| {run['label']} | {name} | {speed:.1f} | "
                + (f"{100 * acceptance:.0f}% of {drafted}" if drafting else "—") + " | "
                + (f"{entry.get('tokens_per_step', 1.0):.2f}" if drafting else "1") + " | "
                + (f"{speedup:.2f}x" if speedup is not None else "—") + f" | {target} |")
            summary.append({"label": run["label"], "measurement": name, "tokens_per_s": speed,
                            "acceptance_rate": acceptance, "drafted_tokens": drafted,
                            "speedup": speedup, "target": target})
    results["summary"] = summary
    results_file.write(args, results, lines)


if __name__ == "__main__":
    main()
