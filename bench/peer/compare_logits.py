#!/usr/bin/env python3
"""Compares the logits of Quire (`quire-cli logits DIR --tokens ... --all`)
with llama.cpp's (`llama-logits MODEL.gguf ...`) for the same tokens and the
same FP16 weights. Prints the agreement as one JSON object and fails when the
largest difference exceeds TOLERANCE times the range of Quire's logits.

The two engines round differently (llama.cpp's CPU products turn activations
to FP16 before multiplying F16 weights; Quire keeps them in FP32), so the
logits differ by rounding, a small fraction of their range; a wrong q/k row
order, rope or epsilon moves them by a large fraction after the first token.

  bench/peer/compare_logits.py QUIRE.json LLAMA.json [--tolerance 0.01]"""

import argparse
import json
import sys


def rows_of(path):
    with open(path, encoding="utf-8") as file:
        return json.load(file)["logits"]


def argmax(row):
    return max(range(len(row)), key=row.__getitem__)


def compare(quire, llama):
    if len(quire) != len(llama) or any(len(a) != len(b) for a, b in zip(quire, llama)):
        raise ValueError(f"shapes differ: {len(quire)} rows of {len(quire[0])} against "
                         f"{len(llama)} rows of {len(llama[0])}")
    values = [v for row in quire for v in row]
    value_range = max(values) - min(values)
    per_row = [max(abs(a - b) for a, b in zip(q, l)) for q, l in zip(quire, llama)]
    largest = max(per_row)
    return {
        "positions": len(quire),
        "vocabulary": len(quire[0]),
        "max_abs_difference": largest,
        "max_abs_difference_per_position": per_row,
        "logit_range": value_range,
        "max_difference_over_range": largest / value_range if value_range else 0.0,
        "same_argmax_positions": sum(argmax(q) == argmax(l) for q, l in zip(quire, llama)),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("quire")
    parser.add_argument("llama")
    parser.add_argument("--tolerance", type=float, default=0.01,
                        help="largest difference allowed, as a fraction of the logits' range")
    args = parser.parse_args()
    result = compare(rows_of(args.quire), rows_of(args.llama))
    result["tolerance"] = args.tolerance
    result["agree"] = result["max_difference_over_range"] <= args.tolerance
    print(json.dumps(result))
    if not result["agree"]:
        print(f"compare_logits: largest difference {result['max_abs_difference']:.4g} is "
              f"{result['max_difference_over_range']:.3g} of the range "
              f"{result['logit_range']:.4g}, above {args.tolerance}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
