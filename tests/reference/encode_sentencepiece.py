#!/usr/bin/env python3
"""Encodes strings with the SentencePiece library (Debian's python3-sentencepiece):
the reference for tokenizer.model directories, as encode.mjs is for tokenizer.json.

    python3 encode_sentencepiece.py TOKENIZER_MODEL CORPUS_JSON
        prints a JSON array with, per string, {ids, ids_plain, decoded,
        decoded_skip}: ids is ids_plain after the BOS id (when the model has
        one); SentencePiece's decode drops control pieces either way, so
        decoded and decoded_skip are the same.
    python3 encode_sentencepiece.py TOKENIZER_MODEL --bench TEXT_FILE [--repeat N] [--paragraphs]
        encodes the whole file N times after one warm-up pass and prints
        {"bytes", "tokens", "seconds", "mb_per_s"}; only encoding is timed.
        --paragraphs encodes each piece between blank lines on its own.
"""

import json
import sys
import time

import sentencepiece


def usage():
    print(__doc__, file=sys.stderr)
    sys.exit(2)


def main(args):
    if len(args) < 2:
        usage()
    processor = sentencepiece.SentencePieceProcessor(model_file=args[0])
    if args[1] == "--bench":
        if len(args) < 3:
            usage()
        repeat, paragraphs, rest = 1, False, args[3:]
        while rest:
            if rest[0] == "--repeat" and len(rest) > 1:
                repeat, rest = int(rest[1]), rest[2:]
            elif rest[0] == "--paragraphs":
                paragraphs, rest = True, rest[1:]
            else:
                usage()
        with open(args[2], encoding="utf-8", newline="") as file:
            text = file.read()
        pieces = text.split("\n\n") if paragraphs else [text]
        # One piece at a time: a list would be encoded on several threads.
        for piece in pieces:
            processor.encode(piece)
        tokens = 0
        start = time.perf_counter()
        for _ in range(repeat):
            tokens += sum(len(processor.encode(piece)) for piece in pieces)
        seconds = time.perf_counter() - start
        size = len(text.encode("utf-8")) * repeat
        print(json.dumps({"bytes": size, "tokens": tokens, "seconds": seconds,
                          "mb_per_s": size / 1e6 / seconds}))
        return 0
    if len(args) != 2:
        usage()
    with open(args[1], encoding="utf-8") as file:
        corpus = json.load(file)
    bos = processor.bos_id()
    results = []
    for text in corpus:
        plain = processor.encode(text)
        decoded = processor.decode(plain)
        results.append({"ids": ([bos] if bos >= 0 else []) + plain, "ids_plain": plain,
                        "decoded": decoded, "decoded_skip": decoded})
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
