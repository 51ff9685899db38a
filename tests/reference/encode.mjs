// Encodes strings with @huggingface/tokenizers, the reference Quire's
// tokenizer.json implementation is compared against.
//
//   node encode.mjs TOKENIZER_JSON TOKENIZER_CONFIG_JSON CORPUS_JSON
//     CORPUS_JSON is a JSON array of strings; prints a JSON array with, per
//     string, {ids, ids_plain, decoded, decoded_skip}: ids with the special
//     tokens the post-processor adds, ids_plain without them, and ids_plain
//     decoded keeping and skipping special tokens.
//   node encode.mjs TOKENIZER_JSON TOKENIZER_CONFIG_JSON --bench TEXT_FILE [--repeat N] [--paragraphs]
//     encodes the whole file N times (after one warm-up pass) and prints
//     {"bytes", "tokens", "seconds", "mb_per_s"}; only encoding is timed.
//     --paragraphs encodes each piece between blank lines ("\n\n") on its
//     own, as quire-cli tokenize-bench --paragraphs does.
import { readFileSync } from "node:fs";
import { Tokenizer } from "@huggingface/tokenizers";

function usage() {
  process.stderr.write(
    "usage: node encode.mjs TOKENIZER_JSON TOKENIZER_CONFIG_JSON CORPUS_JSON\n" +
      "       node encode.mjs TOKENIZER_JSON TOKENIZER_CONFIG_JSON --bench TEXT_FILE [--repeat N] [--paragraphs]\n",
  );
  process.exit(2);
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    process.stderr.write(`encode.mjs: cannot read ${path}: ${error.message}\n`);
    process.exit(1);
  }
}

const args = process.argv.slice(2);
if (args.length < 3) usage();
const [tokenizerPath, configPath, ...rest] = args;
const tokenizer = new Tokenizer(readJson(tokenizerPath), readJson(configPath));

if (rest[0] === "--bench") {
  if (rest.length < 2) usage();
  const text = readFileSync(rest[1], "utf8");
  let repeat = 1;
  let paragraphs = false;
  for (let i = 2; i < rest.length; ++i) {
    if (rest[i] === "--repeat" && i + 1 < rest.length) {
      repeat = Number.parseInt(rest[++i], 10);
      if (!(repeat > 0)) usage();
    } else if (rest[i] === "--paragraphs") {
      paragraphs = true;
    } else {
      usage();
    }
  }
  const pieces = paragraphs ? text.split("\n\n") : [text];
  const encodeAll = () =>
    pieces.reduce((sum, piece) => sum + tokenizer.encode(piece, { add_special_tokens: false }).ids.length, 0);
  encodeAll();
  let tokens = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < repeat; ++i) tokens += encodeAll();
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const bytes = Buffer.byteLength(text, "utf8") * repeat;
  process.stdout.write(
    JSON.stringify({ bytes, tokens, seconds, mb_per_s: bytes / 1e6 / seconds }) + "\n",
  );
} else {
  if (rest.length !== 1) usage();
  const corpus = readJson(rest[0]);
  if (!Array.isArray(corpus) || corpus.some((item) => typeof item !== "string")) {
    process.stderr.write(`encode.mjs: ${rest[0]} must hold a JSON array of strings\n`);
    process.exit(1);
  }
  // The library refuses an empty id list; Hugging Face's tokenizers decodes it to "".
  const decode = (ids, skip) =>
    ids.length === 0 ? "" : tokenizer.decode(ids, { skip_special_tokens: skip });
  const results = corpus.map((text) => {
    const ids = tokenizer.encode(text, { add_special_tokens: true }).ids;
    const idsPlain = tokenizer.encode(text, { add_special_tokens: false }).ids;
    return {
      ids,
      ids_plain: idsPlain,
      decoded: decode(idsPlain, false),
      decoded_skip: decode(idsPlain, true),
    };
  });
  process.stdout.write(JSON.stringify(results) + "\n");
}
