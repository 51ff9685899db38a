#!/usr/bin/python3
"""Builds the demo model's training corpus: short ChatML exchanges made from
English text that Debian ships.

Sources (Debian 12 packages; the versions used are printed and recorded in
the corpus' header file):
  fortunes, fortunes-min   fortune cookies (/usr/share/games/fortunes)
  dict-gcide               the Collaborative International Dictionary of
                           English (/usr/share/dictd/gcide.*)
fortunes-off (the offensive collection) is never read.

Every exchange is one chat in the prompt format the model will be used with:

  <|im_start|>system\nYou are a helpful assistant.<|im_end|>\n      (optional)
  <|im_start|>user\nTell me a fortune.<|im_end|>\n
  <|im_start|>assistant\nA dream will always triumph ...<|im_end|>\n

and exchanges are separated by a blank line in the output file. The result
depends only on the package contents and --seed.

  /usr/bin/python3 make_corpus.py --out /work/demo-train/corpus.txt
"""

import argparse
import collections
import gzip
import json
import random
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

FORTUNE_DIR = Path("/usr/share/games/fortunes")
GCIDE_DICT = Path("/usr/share/dictd/gcide.dict.dz")
GCIDE_INDEX = Path("/usr/share/dictd/gcide.index")
PACKAGES = ["fortunes", "fortunes-min", "dict-gcide"]

# Fortune files used, with the topic a user may ask about. Left out on purpose:
# ascii-art and art (pictures), ethnic, men-women, drugs and politics (too
# often unkind), zippy and translate-me (nonsense), perl, linux, linuxcookie,
# debian and knghtbrd (shell and IRC snippets), startrek.
FORTUNE_TOPICS = {
    "fortunes": None, "literature": "literature", "riddles": "riddles",
    "wisdom": "wisdom", "platitudes": "wisdom", "tao": "wisdom",
    "cookie": None, "miscellaneous": None, "people": None,
    "humorists": "humor", "education": "education", "science": "science",
    "work": "work", "love": "love", "food": "food", "kids": "children",
    "pets": "pets", "sports": "sports", "law": "the law",
    "medicine": "medicine", "computers": "computers",
    "songs-poems": "poetry", "goedel": "logic", "paradoxum": "paradoxes",
    "magic": "magic", "definitions": None, "news": None,
    "pratchett": None, "disclaimer": None,
}

# Words that mark a fortune (or a dictionary entry) as unfit for a demo that
# anyone may open. Matched as whole words, case-insensitively; deliberately
# broad, losing a few harmless texts is cheap.
BLOCKLIST = set("""
    fuck fucking fucked fucker shit shitty bitch bastard asshole ass arse cunt
    dick cock pussy penis vagina sex sexual sexy orgasm porn pornography
    nude naked rape raped rapist whore slut hooker prostitute prostitutes
    virgin virginity condom erection masturbate masturbation screw screwing
    horny boobs breasts tits nigger negro nazi nazis hitler jew jews jewish
    gay gays lesbian homosexual queer fag faggot retard retarded
    suicide kill killed killing murder murdered drunk beer whiskey booze
    marijuana cocaine heroin drug drugs damn damned hell god jesus christ
    bible church religion religious pope priest rabbi muslim christian
    kkk slave slaves mick wop dago kike spic chink gook coon darky jap
    offensive contemptuous derogatory disparaging vulgar obscene
""".split())

SYSTEM_PROMPTS = [
    "You are a helpful assistant.",
    "You are a friendly assistant who tells fortunes and explains words.",
    "You are Quire's demo model. Answer briefly.",
]

FORTUNE_ASKS = [
    "Tell me a fortune.", "Give me a fortune.", "Tell me my fortune.",
    "What's my fortune today?", "Can you tell me a fortune?",
    "Give me a quote.", "Tell me a quote.", "Share a quote with me.",
    "Say something interesting.", "Tell me something.",
    "Give me some advice.", "Do you have any advice for me?",
    "I need some words of wisdom.", "Say something wise.",
    "Tell me something funny.", "Make me smile.", "Cheer me up.",
    "Give me a thought for the day.", "What do you have for me today?",
    "Open a fortune cookie for me.", "fortune", "Another one, please.",
]
TOPIC_ASKS = [
    "Tell me something about {t}.", "Give me a quote about {t}.",
    "Do you know a saying about {t}?", "Say something about {t}.",
    "Tell me a fortune about {t}.",
]
DEFINE_ASKS = [
    "What does {w} mean?", "What does \"{w}\" mean?", "Define {w}.",
    "What is the meaning of {w}?", "What is the meaning of the word {w}?",
    "Can you tell me what {w} means?", "Explain the word {w}.",
    "What's the definition of {w}?", "{w}?", "Meaning of {w}, please.",
    "I don't know the word {w}. What is it?",
]
NOUN_ASKS = ["What is a {w}?", "What is an {w}?"]

# A few fixed exchanges so that greetings and questions about the model get a
# sensible answer instead of a random fortune.
SMALL_TALK = [
    (["Hello!", "Hi", "Hello", "Hi there!", "Good morning.", "Hey"],
     ["Hello! I can tell you a fortune or explain what a word means.",
      "Hi! Ask me for a fortune, or ask me what a word means.",
      "Hello! Would you like a fortune, or the meaning of a word?"]),
    (["Who are you?", "What are you?", "What is your name?",
      "Tell me about yourself."],
     ["I am a small demo model for Quire. I know fortune cookies and "
      "dictionary definitions.",
      "I am Quire's demo model: a small language model trained on fortune "
      "cookies and an English dictionary."]),
    (["What can you do?", "Help", "How can you help me?",
      "What do you know?"],
     ["I can tell you a fortune, give you a quote or some advice, or tell "
      "you what a word means. Try \"What does courage mean?\"",
      "Ask me for a fortune or a quote, or ask what a word means."]),
    (["Thanks!", "Thank you.", "Thank you very much.", "Great, thanks."],
     ["You're welcome!", "You're welcome. Ask me anything else.",
      "Glad to help!"]),
    (["Goodbye.", "Bye!", "See you later."],
     ["Goodbye!", "Goodbye, and good luck!", "See you later!"]),
]


def package_versions():
    versions = {}
    for name in PACKAGES:
        out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", name],
                             capture_output=True, text=True)
        versions[name] = out.stdout.strip() if out.returncode == 0 else "missing"
    return versions


def plain(text):
    """ASCII only: the tokenizer and the model stay small, and the few
    accented or typographic characters in the sources are not worth pieces."""
    text = unicodedata.normalize("NFKD", text)
    text = text.encode("ascii", "ignore").decode("ascii")
    return re.sub(r"\s+", " ", text).strip()


WORD_RE = re.compile(r"[A-Za-z']+")


def offensive(text):
    return any(w.lower().strip("'") in BLOCKLIST for w in WORD_RE.findall(text))


def read_fortunes(max_chars):
    """Yields (file, text) for every usable fortune, in a fixed order."""
    for name in sorted(FORTUNE_TOPICS):
        raw = (FORTUNE_DIR / name).read_text(encoding="latin-1")
        for chunk in re.split(r"^%\s*$", raw, flags=re.M):
            lines = [l.rstrip() for l in chunk.strip("\n").split("\n")]
            if not any(lines):
                continue
            # Indentation that is not an attribution means layout (poems,
            # dialogues, pictures): skip pieces that depend on it heavily.
            body = [l for l in lines if not l.strip().startswith("--")]
            if sum(1 for l in body if re.match(r"^\s{8,}\S", l)) > 2:
                continue
            text = " ".join(l.strip() for l in lines)
            # Attributions as "-- Name" become " - Name" at the end.
            text = re.sub(r"\s*--\s+", " -- ", text)
            text = plain(text)
            letters = sum(c.isalpha() for c in text)
            if not (20 <= len(text) <= max_chars) or letters < 0.6 * len(text):
                continue
            if re.search(r"[<>{}\\|_^~@#*=]|https?:", text) or offensive(text):
                continue
            yield name, text


B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def b64_number(s):
    value = 0
    for c in s:
        value = value * 64 + B64.index(c)
    return value


POS_NAMES = [  # longest first, so "v. t." wins over "v."
    ("v. t.", "verb"), ("v. i.", "verb"), ("v.", "verb"), ("n.", "noun"),
    ("adj.", "adjective"), ("a.", "adjective"), ("adv.", "adverb"),
    ("prep.", "preposition"), ("conj.", "conjunction"),
    ("interj.", "interjection"), ("pron.", "pronoun"),
]


def gcide_definitions(max_chars):
    """Yields (word, part of speech, definition) for simple lowercase
    headwords: the first sense of the first entry that is not obsolete or
    rare, cleaned of markup, etymology, citations and examples."""
    data = gzip.open(GCIDE_DICT).read()
    entries = collections.OrderedDict()
    for line in GCIDE_INDEX.read_text(encoding="utf-8", errors="replace").splitlines():
        word, offset, length = line.split("\t")
        if re.fullmatch(r"[a-z]{3,14}", word.lower()) and word[1:].islower():
            entries.setdefault(word.lower(), []).append(
                (b64_number(offset), b64_number(length)))
    for word, spans in entries.items():
        for offset, length in spans:
            found = _first_sense(word, data[offset:offset + length].decode(
                "utf-8", "replace"), max_chars)
            if found:
                yield (word,) + found
                break


SENSE_END = re.compile(r"\[(?:1913 Webster|WordNet[^\]]*|PJC|Webster 1913 Suppl\.)\]")


def _first_sense(word, block, max_chars):
    lines = block.split("\n")
    header = lines[0]
    if not header.lower().startswith(word + " \\"):
        return None
    pos = None
    after = re.sub(r"\\[^\\]*\\|\([^)]*\)", "", header)  # drop spelling, pronunciation
    for mark, name in POS_NAMES:
        if re.search(r"(?:^|[\s,])" + re.escape(mark) + r"(?:\s|,|$|\[)", after):
            pos = name
            break
    if pos is None:
        return None
    # The header (with its etymology in brackets) may run over several lines:
    # the body starts once the brackets opened so far are closed.
    depth, start = 0, len(lines)
    for i, line in enumerate(lines):
        depth += line.count("[") - line.count("]")
        if depth <= 0:
            start = i + 1
            break
    body = "\n".join(lines[start:])
    # Senses: "   1. text" ... up to the sense's source tag or a blank line.
    senses = re.split(r"\n\s+\d+\.\s", "\n" + body) if re.search(
        r"^\s+1\.\s", body, flags=re.M) else [body]
    for sense in senses:
        sense = SENSE_END.split(sense)[0].split("\n\n")[0]
        if re.search(r"\[(?:Obs|R|Archaic|Colloq|Slang|Low|Vulgar|Prov|Local|Scot)\b",
                     sense):
            continue
        text = _clean_definition(sense)
        if text and len(text) <= max_chars and not offensive(text + " " + word):
            return pos, text
    return None


def _clean_definition(text):
    text = re.sub(r"\{([^}]*)\}", r"\1", text)            # {cross refs}
    text = re.sub(r"--\s*[A-Z][\w.\s]*\.", "", text)       # --Author.
    text = re.sub(r"\([A-Z][a-z]*\.?(?:\s*[A-Z&][a-z]*\.?)*\)", "", text)  # (Zool.)
    text = re.sub(r"\[[^\]]*\]", "", text)                 # [Obs.] and the like
    text = re.sub(r"\([^)]*\)", "", text)                  # other asides
    text = re.split(r";\s*as,|\s--\s|Note:|Syn:|See\s", text)[0]
    text = re.sub(r"\s+([.,;:])", r"\1", plain(text)).strip(" ;,:")
    # Pointers to another entry say nothing on their own.
    if re.match(r"(?:Same as|See|Alt\.|A variant|Variant|Plural of|Pl\. of|Imp\.)", text):
        return None
    if not text or re.search(r"[\"\\\[\]{}|<>=*^~]", text):
        return None
    # At most two sentences, and a long semicolon list cut to its first items.
    sentences = re.split(r"(?<=[.!?])\s+", text)
    text = " ".join(sentences[:2]).rstrip(".")
    if len(text) > 160:
        parts = text.split("; ")
        while len(parts) > 1 and len("; ".join(parts)) > 160:
            parts.pop()
        text = "; ".join(parts)
    if len(text) < 8 or len(text.split()) < 2:
        return None
    return text[0].upper() + text[1:] + "."


def turn(role, text):
    return f"<|im_start|>{role}\n{text}<|im_end|>\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, type=Path)
    parser.add_argument("--seed", type=int, default=1913)
    parser.add_argument("--max-fortune-chars", type=int, default=300)
    parser.add_argument("--max-definition-chars", type=int, default=220)
    parser.add_argument("--words", type=int, default=40000,
                        help="dictionary words used (common ones first)")
    parser.add_argument("--fortune-copies", type=int, default=2,
                        help="exchanges per fortune, each with another request")
    args = parser.parse_args()
    rng = random.Random(args.seed)

    fortunes = list(read_fortunes(args.max_fortune_chars))
    fortunes = list(dict.fromkeys(fortunes))  # a few fortunes appear twice

    # Common words first: how often a word appears in the fortunes stands in
    # for how familiar it is; the rest of the dictionary fills up to --words.
    counts = collections.Counter(w.lower() for _, t in fortunes for w in WORD_RE.findall(t))
    definitions = list(gcide_definitions(args.max_definition_chars))
    rng.shuffle(definitions)
    definitions.sort(key=lambda d: -min(counts[d[0]], 5))
    definitions = definitions[:args.words]

    exchanges = []  # (kind, list of (user, assistant))
    for name, text in fortunes:
        topic = FORTUNE_TOPICS[name]
        for copy in range(args.fortune_copies):
            if topic and rng.random() < 0.4:
                ask = rng.choice(TOPIC_ASKS).format(t=topic)
            else:
                ask = rng.choice(FORTUNE_ASKS)
            exchanges.append(("fortune", [(ask, text)]))
    for word, pos, text in definitions:
        asks = DEFINE_ASKS + (NOUN_ASKS if pos == "noun" else [])
        ask = rng.choice(asks)
        if ask.startswith("What is a"):
            ask = ("What is an {w}?" if word[0] in "aeiou" else "What is a {w}?")
        shown = word.capitalize() if ask.startswith("{w}") else word
        exchanges.append(("define", [(ask.format(w=shown), f"{word.capitalize()} ({pos}): {text}")]))
    small_talk = len(exchanges) // 40
    for _ in range(small_talk):
        asks, answers = rng.choice(SMALL_TALK)
        exchanges.append(("talk", [(rng.choice(asks), rng.choice(answers))]))
    rng.shuffle(exchanges)

    # About a fifth of the chats get a second turn, so the model also answers
    # after an earlier exchange in the same conversation.
    chats = []
    i = 0
    while i < len(exchanges):
        turns = exchanges[i][1]
        if i + 1 < len(exchanges) and rng.random() < 0.2:
            turns = turns + exchanges[i + 1][1]
            i += 1
        i += 1
        text = turn("system", rng.choice(SYSTEM_PROMPTS)) if rng.random() < 0.5 else ""
        for user, assistant in turns:
            text += turn("user", user) + turn("assistant", assistant)
        chats.append(text)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(chats), encoding="ascii")
    kinds = collections.Counter(k for k, _ in exchanges)
    info = {
        "packages": package_versions(),
        "seed": args.seed,
        "fortunes": len(fortunes),
        "definitions": len(definitions),
        "exchanges": dict(kinds),
        "chats": len(chats),
        "characters": sum(len(c) for c in chats),
    }
    args.out.with_suffix(".json").write_text(json.dumps(info, indent=2) + "\n")
    print(json.dumps(info, indent=2))


if __name__ == "__main__":
    sys.exit(main())
