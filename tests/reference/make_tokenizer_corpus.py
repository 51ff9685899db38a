#!/usr/bin/env python3
"""Writes tests/data/tokenizer_corpus.json: strings that stress a tokenizer.

Each group below aims at one way tokenizers differ: pre-tokenizer regexes
(contractions, digits, whitespace runs, letters of many scripts), Unicode
normalization (NFC against NFD), byte fallback (emoji, rare characters),
added and special tokens glued to words, and the edges (empty text, one
space, very long words). Running the script again gives the same file.

    python3 tests/reference/make_tokenizer_corpus.py [OUTPUT]
"""

import json
import pathlib
import sys
import unicodedata

PROSE = [
    "The quick brown fox jumps over the lazy dog.",
    "Hello world",
    "Hello, world!",
    "hello world",
    "HELLO WORLD",
    "Hello World, this is a test of the tokenizer.",
    "A paged KV cache keeps every conversation, so a new turn only computes the new tokens.",
    "It was the best of times, it was the worst of times, it was the age of wisdom, "
    "it was the age of foolishness, it was the epoch of belief, it was the epoch of incredulity.",
    "Call me Ishmael. Some years ago - never mind how long precisely - having little or no money "
    "in my purse, and nothing particular to interest me on shore, I thought I would sail about a "
    "little and see the watery part of the world.",
    "In the beginning the Universe was created. This has made a lot of people very angry and been "
    "widely regarded as a bad move.",
    "Mr. and Mrs. Dursley, of number four, Privet Drive, were proud to say that they were perfectly "
    "normal, thank you very much.",
    "The meeting is at 3:30 p.m. on Tuesday (not Wednesday!).",
    "She said, \"Let's go.\" He replied: 'Fine.'",
    "e.g. i.e. etc. vs. Dr. St. Jr. U.S.A. U.K.",
    "Supercalifragilisticexpialidocious is a word; so is antidisestablishmentarianism.",
    "camelCaseIdentifier snake_case_identifier SCREAMING_SNAKE kebab-case-word PascalCase",
    "The GPU has 24 GiB of VRAM; the model needs 16.5 GiB at 4.0 bits per weight.",
    "Question: what is 2 + 2? Answer: 4.",
    "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut "
    "labore et dolore magna aliqua.",
    "Once upon a time\nthere was a tokenizer\nthat split lines.",
    "First paragraph.\n\nSecond paragraph.\n\n\nThird, after two blank lines.",
    "Dear Sir or Madam,\n\nI am writing to complain about the noise.\n\nYours faithfully,\nA. Reader",
    "tl;dr: it works.",
    "ALL CAPS SENTENCE WITH SOME WORDS IN IT.",
    "mIxEd CaSe WoRdS aRe HaRd",
    "Title Case For Every Word Here",
]

CONTRACTIONS = [
    "I'm here. I'M HERE. i'm here.",
    "they're they'Re THEY'RE They'RE",
    "don't DON'T Don't don'T",
    "we've WE'VE We'Ve",
    "you'll YOU'LL You'Ll",
    "he'd HE'D He'D",
    "it's IT'S It'S it’s",
    "can't won't shouldn't wouldn't couldn't",
    "'s 't 're 've 'm 'll 'd",
    "the dog's bone, the dogs' bones",
    "rock 'n' roll",
    "'quoted' \"double\" `backtick` ‘curly’ “curly”",
    "O'Brien O'NEIL d'Artagnan l'homme",
    "y'all'd've",
]

NUMBERS = [
    "0",
    "1",
    "12",
    "123",
    "1234",
    "12345",
    "123456789",
    "12345678901234567890123456789012345678901234567890",
    "3.14159265358979323846",
    "-0.5e-10",
    "1,000,000",
    "1.000.000,50",
    "$1,234.56 and €99,99 and ¥10000 and £7",
    "2026-11-25T12:00:00Z",
    "192.168.0.1:8080",
    "0x7fffffff 0b1010 0o755",
    "v1.2.3-rc.4+build.5",
    "Call 555-0123 or +1 (555) 012-3456.",
    "100% 50/50 3/4 1e9 2^32",
    "١٢٣٤٥ ۱۲۳ १२३ ๑๒๓ 一二三 ①②③ Ⅻ",
    "the year 1999, the year 2000, the year 20000",
    "x1 x12 x123 x1234 abc123def",
]

CODE = [
    "#include <vector>\n\nint main() {\n    std::vector<int> v{1, 2, 3};\n    return v.size();\n}\n",
    "template <typename T>\nauto add(T a, T b) -> T { return a + b; }",
    "for (std::size_t i = 0; i < n; ++i) { sum += a[i] * b[i]; }",
    "if (x != nullptr && x->next) x = x->next; // advance",
    "std::unique_ptr<Foo> foo = std::make_unique<Foo>(/*size=*/42);",
    "def fib(n):\n    if n < 2:\n        return n\n    return fib(n - 1) + fib(n - 2)\n",
    "class Greeter:\n    def __init__(self, name: str) -> None:\n        self.name = name\n\n"
    "    def greet(self):\n        print(f\"Hello, {self.name}!\")\n",
    "import numpy as np\nx = np.arange(10).reshape(2, 5)\nprint(x.T @ x)",
    "\tindented with a tab\n\t\ttwo tabs\n    four spaces\n        eight spaces",
    '{"name": "Quire", "version": "0.1.0", "tags": ["llm", "chat"], "nested": {"a": null, "b": true}}',
    '{\n  "model_type": "llama",\n  "hidden_size": 4096,\n  "rope_theta": 500000.0\n}',
    "[1,2,3,[4,5,[6]]]",
    "#!/usr/bin/env bash\nset -euo pipefail\nfor f in *.txt; do\n  wc -l \"$f\"\ndone | sort -n\n",
    "cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release && ninja -C build -j2",
    "ls -la | grep '^d' | awk '{print $9}' > dirs.txt 2>&1",
    "SELECT id, name FROM users WHERE age >= 18 ORDER BY name ASC LIMIT 10;",
    "<html><body><p class=\"x\">Hi &amp; bye</p></body></html>",
    "const f = (a, b) => a ?? b; let x = `template ${f(1, 2)}`;",
    "fn main() { let v: Vec<u8> = vec![0; 16]; println!(\"{:?}\", v); }",
    "a==b a!=b a<=b a>=b a&&b a||b a<<b a>>b a->b a::b a**b a//b",
    "x+=1;y-=2;z*=3;w/=4;",
    "/* block comment */ // line comment # hash comment -- sql comment",
    "regex: ^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+)@[a-z]+\\.[a-z]{2,}$",
    "path/to/some/file.cpp:123:45: error: expected ';' before '}' token",
    "C:\\Users\\name\\Documents\\file.txt",
    "    return;\n}\n\n\n",
    "\"\"\"Docstring with \"quotes\" inside.\"\"\"",
    "key=value; other_key = other value ;; trailing",
]

WHITESPACE = [
    " ",
    "  ",
    "   ",
    "    ",
    "\t",
    "\n",
    "\n\n",
    "\r\n",
    "\r\n\r\n",
    "\r",
    " \n \n ",
    "\t\t\t",
    " leading space",
    "trailing space ",
    "  two leading and two trailing  ",
    "many          consecutive          spaces",
    " " * 64,
    "word" + " " * 17 + "word",
    "line one\r\nline two\r\nline three",
    "mixed \t tabs \t and \t spaces",
    "a\nb\nc\n",
    "\n\nstarts with newlines",
    "ends with newlines\n\n\n",
    "space before newline \nand after\n next",
    "\u00a0",
    "non\u00a0breaking\u00a0spaces",
    "ideographic\u3000space",
    "em\u2003space and thin\u2009space and narrow\u202fno-break",
    "\u000b\u000c vertical tab and form feed",
    "zero\u200bwidth\u200bspace",
    "zero\u200cwidth\u200dnon-joiner and joiner",
    "word\u2060joiner",
    "\ufeffbyte order mark at start",
    "soft\u00adhyphen",
    "line\u2028separator and paragraph\u2029separator",
    "\u0085next line control",
]

EMOJI = [
    "😀",
    "😀😃😄😁",
    "I love pizza 🍕 and sushi 🍣!",
    "👍👍🏻👍🏼👍🏽👍🏾👍🏿",
    "👨‍👩‍👧‍👦 family",
    "👩🏽‍💻 technologist",
    "🏳️‍🌈 🏴‍☠️",
    "🇫🇷🇩🇪🇯🇵🇺🇸🇧🇷",
    "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Scotland",
    "❤️ ❤ ♥️",
    "1️⃣ 2️⃣ #️⃣ *️⃣",
    "emoji at end 🎉",
    "🎉emoji at start",
    "glued😀between😀words",
    "🤖🤖🤖🤖🤖🤖🤖🤖🤖🤖",
    "🫠 🫶 🪿 🫎",
]

SCRIPTS = [
    "你好",
    "你好，世界！",
    "我爱自然语言处理。今天天气很好。",
    "中文English混合text",
    "日本語のテキストです。",
    "ひらがな カタカナ 漢字",
    "こんにちは、元気ですか？",
    "ｶﾀｶﾅ halfwidth katakana",
    "한국어 텍스트입니다.",
    "안녕하세요, 세계!",
    "مرحبا بالعالم",
    "اللغة العربية جميلة.",
    "עברית: שלום עולם",
    "नमस्ते दुनिया",
    "हिन्दी भाषा",
    "สวัสดีชาวโลก",
    "ภาษาไทยไม่มีช่องว่างระหว่างคำ",
    "Привет, мир!",
    "Съешь же ещё этих мягких французских булок, да выпей чаю.",
    "Γειά σου Κόσμε",
    "Ξεσκεπάζω την ψυχοφθόρα βδελυγμία.",
    "Բարեւ աշխարհ",
    "გამარჯობა სამყარო",
    "ሰላም ልዑል",
    "வணக்கம் உலகம்",
    "ওহে বিশ্ব",
    "Xin chào thế giới",
    "Tiếng Việt có nhiều dấu: ắ ằ ẳ ẵ ặ",
    "Türkçe: İstanbul, ılık, ĞÜŞÖÇ",
    "Polski: zażółć gęślą jaźń",
    "Čeština: příliš žluťoučký kůň",
    "Deutsch: Größe, Straße, Übermaß, ẞ",
    "Français : « guillemets » et l’apostrophe",
    "Español: ¿Dónde está la biblioteca? ¡Allí!",
    "Português: ação, coração, não",
    "Íslenska: Þetta er ð og æ",
    "Ελληνικά και English και Русский together",
    "𝕄𝕒𝕥𝕙 𝔽𝕣𝕒𝕜𝕥𝕦𝕣 𝒮𝒸𝓇𝒾𝓅𝓉",
    "𠀀𠀁 rare CJK extension B",
    "ᚠᚢᚦᚨᚱᚲ runes",
    "𓀀𓀁 hieroglyphs",
]

MATH_AND_SYMBOLS = [
    "∀x ∈ ℝ: x² ≥ 0",
    "∑_{i=1}^{n} i = n(n+1)/2",
    "E = mc²; a² + b² = c²",
    "∫₀^∞ e^{-x²} dx = √π / 2",
    "α β γ δ ε θ λ μ π σ φ ω Ω",
    "≤ ≥ ≠ ≈ ≡ ∞ ∂ ∇ ⊂ ⊃ ∪ ∩ ∧ ∨ ¬ → ← ↔ ⇒",
    "½ ¼ ¾ ⅓ ⅔ ‰ ° ± × ÷",
    "© ® ™ § ¶ † ‡ • … – — ‐",
    "→→→ ←←← ★★★ ☆☆☆ ✓✗",
    "$\\frac{a}{b} + \\sqrt{x}$",
    "H₂O CO₂ x⁰ x¹ x²",
    "fi ﬁ ﬀ ﬃ ligatures",
    "Ａｂｃ fullwidth ＡＢＣ １２３",
    "™®©℗℠",
]

PUNCTUATION = [
    "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!",
    "????????????",
    "............................................................",
    "------------------------------------------------------------------------",
    "============================================================",
    "************************************",
    "____________________________________",
    "~~~~~~~~~~~~~~~~",
    "#####",
    "'''''''''''",
    '""""""""',
    "...?!?!...",
    "(((nested)))[[[brackets]]]{{{braces}}}",
    "<<<>>>",
    "/////\\\\\\\\\\",
    "@@@@ &&&& %%%% ^^^^ |||| ;;;; ::::",
    ",,,,,,,,,,",
    "!?",
    "--flag -f -- -",
    "a-b a—b a–b",
]

URLS_AND_MARKDOWN = [
    "https://example.com/path/to/page?query=1&other=two#fragment",
    "Visit http://www.example.org, or mailto:someone@example.com.",
    "ftp://files.example.net/pub/file-1.2.3.tar.gz",
    "file:///home/user/models/llama-3-8b/config.json",
    "# Heading 1\n## Heading 2\n### Heading 3",
    "* bullet one\n* bullet two\n  * nested bullet",
    "1. first\n2. second\n3. third",
    "**bold** *italic* ~~struck~~ `code` __under__",
    "[a link](https://example.com) and ![an image](img.png)",
    "```python\nprint('fenced code')\n```",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "> quoted line\n> another quoted line",
    "---\ntitle: front matter\ntags: [x, y]\n---",
    "<details><summary>More</summary>Hidden</details>",
    "@user #hashtag $TICKER",
]

NORMALIZATION_WORDS = [
    "café",
    "naïve",
    "résumé",
    "Ångström",
    "São Paulo",
    "Zürich",
    "crème brûlée",
    "Ñandú",
    "Dvořák",
    "Øresund",
    "Việt Nam",
    "한국어",
    "ﬁancé",
]

COMBINING = [
    "e\u0301",
    "a\u0308o\u0308u\u0308",
    "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f\u0334\u0319\u0324\u031e\u0349\u035a\u032f"
    "\u031e\u0320\u034dA\u036b\u0357\u0334\u0362\u0335\u031c\u0330\u0354L\u0368\u0367\u0369\u0358"
    "\u0320G\u0311\u0357\u030e\u0305\u035b\u0341\u0334\u033b\u0348\u034d\u0354\u0339O\u0302\u030c"
    "\u030c\u0358\u0328\u0335\u0339\u033b\u031d\u0333",
    "\u0301 combining mark with no base",
    "n\u0303 versus \u00f1",
    "\u1e9b\u0323 long s with dots",
    "\u0915\u094d\u0937 Devanagari conjunct",
    "\u05e9\u05c1\u05b8 Hebrew points",
]

SPECIAL_TOKEN_STRINGS = [
    "<|eot_id|>",
    "Hello<|eot_id|>world",
    "Hello <|eot_id|> world",
    "<|begin_of_text|><|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>",
    "<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n",
    "text<|im_start|>glued<|im_end|>text",
    "<|endoftext|>",
    "before<|endoftext|>after",
    "<s>",
    "</s>",
    "<s>[INST] Hello [/INST] Hi</s>",
    "word<s>word</s>word",
    " <s> spaced </s> ",
    "[INST]",
    "[INST]no space[/INST]",
    "<start_of_turn>user\nHello<end_of_turn>\n<start_of_turn>model\n",
    "x<start_of_turn>y<end_of_turn>z",
    "<think>",
    "<think>\nreasoning here\n</think>\n\nanswer",
    "<think></think>",
    "text<think>glued</think>text",
    "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>",
    "<|start|>assistant<|channel|>final<|message|>Hi<|end|>",
    "<｜User｜>Hello<｜Assistant｜>Hi<｜end▁of▁sentence｜>",
    "<|eot_id|><|eot_id|><|eot_id|>",
    "<|im_end|><|endoftext|>",
    "<|not_a_real_token|>",
    "<|eot_id",
    "eot_id|>",
    "< |eot_id| >",
    "<unk>",
    "<pad><eos><bos>",
    "<0x0A>",
    "▁ lower one eighth block ▁▁▁",
    "Ġ Ċ byte-level markers",
]

EDGE_CASES = [
    "",
    "a",
    "A",
    ".",
    "'",
    "\"",
    "\\",
    "\u0000 NUL in the middle",
    "\u0001\u0002\u0003\u001f control characters",
    "\u007f DEL",
    "\ufffd replacement character",
    "\U0010ffff last code point",
    "\ue000 private use",
    "a" * 200,
    "b" * 1000,
    "ab" * 150,
    "Pneumonoultramicroscopicsilicovolcanoconiosis" * 5,
    "x" * 199 + " y",
    "你" * 100,
    "😀" * 50,
    "1" * 300,
    " a" * 100,
    "the " * 100,
    ("Repeated sentence for a longer text. " * 40).strip(),
]


def normalization_forms(words):
    forms = []
    for word in words:
        for form in ("NFC", "NFD", "NFKC", "NFKD"):
            text = unicodedata.normalize(form, word)
            if text not in forms:
                forms.append(text)
    return forms


def mixed_documents():
    # Longer texts mixing the groups, as a chat turn mixes them.
    return [
        "User: can you fix this?\n```cpp\nint x = 1;;\n```\nAssistant: Sure! Remove the second ';' 👍",
        "Temperature: 23.5°C (74.3°F) — feels like 25°C. Humidity 60%.",
        "Name: José Müller-Østergaard\nEmail: jose@example.com\nPhone: +45 12 34 56 78",
        "「こんにちは」と彼は言った。He said \"hello\" in Japanese.",
        "Ответ: 42. Answer: 42. 答案：42。",
        "TODO(fix): handle the edge-case where n == 0 && m < 0 ... or not?!",
        "Step 1: mix.\r\nStep 2: bake at 180°C for 25–30 min.\r\nStep 3: enjoy 🍰.",
        "\t\tdef f(x):\n\t\t\treturn x  # tabs then spaces   \n",
    ]


def build_corpus():
    groups = [
        PROSE,
        CONTRACTIONS,
        NUMBERS,
        CODE,
        WHITESPACE,
        EMOJI,
        SCRIPTS,
        MATH_AND_SYMBOLS,
        PUNCTUATION,
        URLS_AND_MARKDOWN,
        normalization_forms(NORMALIZATION_WORDS),
        COMBINING,
        SPECIAL_TOKEN_STRINGS,
        EDGE_CASES,
        mixed_documents(),
    ]
    corpus = []
    for group in groups:
        for text in group:
            if text not in corpus:
                corpus.append(text)
    # Variants that move the same text against word boundaries.
    for text in PROSE[:8] + SCRIPTS[:8] + CONTRACTIONS[:4]:
        for variant in (" " + text, text + " ", text + "\n", "\n" + text, text.upper(), text.lower()):
            if variant not in corpus:
                corpus.append(variant)
    return corpus


def main():
    default = pathlib.Path(__file__).resolve().parents[1] / "data" / "tokenizer_corpus.json"
    output = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else default
    corpus = build_corpus()
    output.write_text(json.dumps(corpus, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    print(f"{output}: {len(corpus)} strings")


if __name__ == "__main__":
    main()
