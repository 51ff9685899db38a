#!/usr/bin/env python3
"""Independent reference for Quire's page hashes, using Python's hashlib.

A page's identity is blake2b with a 16-byte digest over the previous page's
digest (absent for the first page) followed by the page's token ids as
little-endian int64. Prints a JSON list of cases:
  [{"page_size": N, "tokens": [...], "hashes": ["<32 hex>", ...]}, ...]
With --tokens FILE --page-size N it prints the "index hash" lines for the token
ids in FILE instead (the same format as `quire-cli page-hashes`).
"""
import argparse
import hashlib
import json
import random
import struct
import sys


def page_hashes(tokens, page_size):
    hashes = []
    previous = None
    for start in range(0, len(tokens) - page_size + 1, page_size):
        h = hashlib.blake2b(digest_size=16)
        if previous is not None:
            h.update(previous)
        h.update(struct.pack("<%dq" % page_size, *tokens[start:start + page_size]))
        previous = h.digest()
        hashes.append(previous.hex())
    return hashes


def cases():
    rng = random.Random(20261122)
    specs = [
        (256, list(range(256))),
        (256, [rng.randrange(0, 152064) for _ in range(600)]),
        (16, [rng.randrange(0, 32000) for _ in range(1000)]),
        (256, [rng.randrange(0, 32000) for _ in range(255)]),
        (4, [0, 2147483647, 1, 2147483646, 7, 7, 7, 7, 3]),
        (256, []),
        (1, [5, 6, 7]),
    ]
    return [{"page_size": n, "tokens": t, "hashes": page_hashes(t, n)} for n, t in specs]


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tokens", help="file of whitespace-separated token ids")
    parser.add_argument("--page-size", type=int, default=256)
    args = parser.parse_args()
    if args.tokens:
        with open(args.tokens) as f:
            tokens = [int(word) for word in f.read().split()]
        for i, h in enumerate(page_hashes(tokens, args.page_size)):
            print(i, h)
        return 0
    json.dump(cases(), sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
