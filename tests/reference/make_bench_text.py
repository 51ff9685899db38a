#!/usr/bin/env python3
"""Writes the tokenizer benchmark's text: about 5 MB of English and code.

The text is built from this checkout only, so every machine that has the same
commit gets the same bytes: the documentation and source files that git
tracks (Markdown, C++, CUDA, Python, shell, CMake), in path order, then the
strings of tests/data/tokenizer_corpus.json, repeated until the text reaches
the size asked for and cut at the end of a line.

    python3 tests/reference/make_bench_text.py OUTPUT [--megabytes 5]
"""

import argparse
import json
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SUFFIXES = {".md", ".cpp", ".h", ".cu", ".cuh", ".py", ".sh", ".cmake", ".txt"}


def tracked_text_files():
    listing = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], check=True, capture_output=True
    ).stdout.decode("utf-8")
    paths = sorted(path for path in listing.split("\0") if path)
    for path in paths:
        file = ROOT / path
        if file.suffix in SUFFIXES and file.is_file() and not path.startswith("tests/data/"):
            yield file


def source_text():
    parts = []
    for file in tracked_text_files():
        try:
            parts.append(file.read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            continue  # not text after all
    corpus = ROOT / "tests" / "data" / "tokenizer_corpus.json"
    parts.append("\n".join(json.loads(corpus.read_text(encoding="utf-8"))))
    return "\n".join(parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("output", type=pathlib.Path)
    parser.add_argument("--megabytes", type=float, default=5.0)
    args = parser.parse_args()

    target = int(args.megabytes * 1_000_000)
    source = source_text().encode("utf-8")
    if not source:
        print("make_bench_text.py: no tracked text files found", file=sys.stderr)
        return 1
    text = bytearray()
    while len(text) < target:
        text += source
        text += b"\n"
    cut = text.rfind(b"\n", 0, target)
    args.output.write_bytes(bytes(text[: cut + 1 if cut >= 0 else target]))
    print(f"{args.output}: {args.output.stat().st_size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
