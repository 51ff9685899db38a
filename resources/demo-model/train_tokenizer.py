#!/usr/bin/python3
"""Trains the demo model's SentencePiece tokenizer on the corpus.

Laid out like Llama's (and like Quire's own engine::train_tokenizer): BPE,
<unk> 0, <s> 1, </s> 2, no padding piece, byte fallback so that any text
encodes, no normalization so decode(encode(text)) == text, digits split one
by one. <|im_start|> and <|im_end|> are user-defined pieces 3 and 4: each is
always one token, wherever it appears in the text.

No dummy prefix: with it, "<|im_start|>user" alone and the same text inside a
longer prompt would start with different pieces; without it, a prompt
renderer may encode the turns one by one or all at once and get the same ids.

  /usr/bin/python3 train_tokenizer.py --corpus /work/demo-train/corpus.txt \
      --vocab 4096 --out /work/demo-train/tokenizer.model
"""

import argparse
import os
import shutil
import tempfile
from pathlib import Path

import sentencepiece as spm

SPECIAL = ["<|im_start|>", "<|im_end|>"]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", required=True, type=Path)
    parser.add_argument("--vocab", type=int, default=4096)
    parser.add_argument("--out", required=True, type=Path)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        # The model file records its input and output names; fixed relative
        # names inside a scratch directory keep it byte-identical between runs.
        shutil.copy(args.corpus, Path(tmp) / "corpus.txt")
        cwd = os.getcwd()
        os.chdir(tmp)
        spm.SentencePieceTrainer.train(
            input="corpus.txt",
            model_prefix="tokenizer",
            model_type="bpe",
            vocab_size=args.vocab,
            byte_fallback=True,
            unk_id=0, bos_id=1, eos_id=2, pad_id=-1,
            user_defined_symbols=SPECIAL,
            # The corpus is plain ASCII: every character gets a piece.
            character_coverage=1.0,
            normalization_rule_name="identity",
            remove_extra_whitespaces=False,
            add_dummy_prefix=False,
            split_digits=True,
            # Training on one thread over every line in file order makes the
            # result the same on every run.
            num_threads=1,
            input_sentence_size=0,
            shuffle_input_sentence=False,
            max_sentence_length=8192,
            minloglevel=2,
        )
        os.chdir(cwd)
        args.out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(Path(tmp) / "tokenizer.model", args.out)

    sp = spm.SentencePieceProcessor(model_file=str(args.out))
    for piece in SPECIAL:
        assert len(sp.encode(piece)) == 1, piece
    text = args.corpus.read_text(encoding="ascii")
    ids = sp.encode(text.split("\n"))
    tokens = sum(len(line) for line in ids) + text.count("\n")
    print(f"{args.out}: {sp.get_piece_size()} pieces, corpus {len(text)} characters "
          f"= {tokens} tokens ({len(text) / tokens:.2f} characters per token)")


if __name__ == "__main__":
    main()
