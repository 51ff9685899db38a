// Qwen2.5-VL answers an image through `quire-cli serve` and OpenAI's
// official Node client: a Qwen2.5-VL directory with a small vision tower,
// Qwen's real tokenizer and Qwen2.5-VL's chat format (made here by
// `quire-cli make-model --arch qwen2_5_vl --tokenizer-from`) gets a PNG as
// a data: URL in an image_url part and answers; the same request again
// finds the image's positions in the cache (usage.prompt_tokens_details
// .cached_tokens covers the page that holds them) and answers the same; a
// different image in the same place finds only the text before it. Exits 1
// on the first failure.
//   node openai_qwen_image_check.mjs QUIRE_CLI QWEN_TOKENIZER_DIR WORK_DIR
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';

import { checkSupport } from './openai_check_support.mjs';
import { png } from './png_image.mjs';

const [cli, tokenizerDir, workDir] = process.argv.slice(2);
if (!cli || !tokenizerDir || !workDir) {
  console.error('usage: node openai_qwen_image_check.mjs QUIRE_CLI QWEN_TOKENIZER_DIR WORK_DIR');
  process.exit(2);
}

const work = mkdtempSync(path.join(workDir, 'qwen-image-'));
const modelDir = path.join(work, 'qwen25vl-vision');
const made = spawnSync(cli, [
  'make-model', modelDir, '--arch', 'qwen2_5_vl', '--format', 'fp16',
  '--tokenizer-from', tokenizerDir, '--layers', '2', '--hidden', '64', '--heads', '2',
  '--kv-heads', '1', '--intermediate', '128', '--seed', '6',
], { encoding: 'utf8' });
if (made.status !== 0) {
  console.error(`make-model failed:\n${made.stderr}`);
  process.exit(1);
}

const { serve, stop, client, watchdog, failWithLogs } = checkSupport(cli, modelDir);

// 24 x 20 pixels, resized by the processor to 84 x 56: 6 merged tokens.
const picture = png(24, 20, (x, y) => [x * 10, y * 12, x > 8 && y > 6 ? 250 : 30]);
const other = png(24, 20, (x, y) => [250 - x * 10, 40, y * 12]);
// Long enough that the image lies in the prompt's first full page (256 tokens).
const question = 'Describe this picture in detail, and say what each part of it shows. '.repeat(30);

const ask = (image) => ({
  model: 'vision',
  messages: [
    {
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: `data:image/png;base64,${image}` } },
        { type: 'text', text: question },
      ],
    },
  ],
  temperature: 0,
  max_tokens: 3,
});

async function main() {
  const server = await serve(['--model-name', 'vision']);
  const openai = client(server);

  const first = await openai.chat.completions.create(ask(picture));
  assert.equal(first.object, 'chat.completion');
  assert.equal(first.choices[0].message.role, 'assistant');
  assert.equal(first.usage.completion_tokens, 3);
  assert.ok(first.usage.prompt_tokens > 256, `prompt of ${first.usage.prompt_tokens} tokens`);
  assert.equal(first.usage.prompt_tokens_details.cached_tokens, 0);

  const again = await openai.chat.completions.create(ask(picture));
  assert.equal(again.choices[0].message.content, first.choices[0].message.content);
  assert.ok(again.usage.prompt_tokens_details.cached_tokens >= 256,
    `cached ${again.usage.prompt_tokens_details.cached_tokens} tokens`);

  // Another image in its place: only what precedes the image is found,
  // <|im_start|>system, "\n", "You are a helpful assistant." (6 tokens),
  // <|im_end|>, "\n", <|im_start|>user, "\n" and <|vision_start|>.
  const different = await openai.chat.completions.create(ask(other));
  assert.equal(different.usage.prompt_tokens, first.usage.prompt_tokens);
  assert.equal(different.usage.prompt_tokens_details.cached_tokens, 15);

  assert.equal(await stop(server), 0);
  rmSync(work, { recursive: true, force: true });
  console.log('openai_qwen_image_check: every check passed');
}

const timer = watchdog('openai_qwen_image_check', 240);
main()
  .then(() => clearTimeout(timer))
  .catch(failWithLogs);
