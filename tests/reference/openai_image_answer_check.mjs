// An image answered through `quire-cli serve` by OpenAI's official Node
// client: a Gemma 3 directory with a small vision tower and Gemma 3's real
// tokenizer and chat template (made here by `quire-cli make-model`) gets a
// PNG as a data: URL in an image_url part and answers; the same request
// again finds the image's positions in the cache (usage.prompt_tokens_details
// .cached_tokens covers the page that holds them); a different image in the
// same place does not; a file that is not the image its header claims is a
// 400 naming the part. Exits 1 on the first failure.
//   node openai_image_answer_check.mjs QUIRE_CLI GEMMA3_TOKENIZER_DIR WORK_DIR
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';

import { checkSupport } from './openai_check_support.mjs';
import { png } from './png_image.mjs';

const [cli, tokenizerDir, workDir] = process.argv.slice(2);
if (!cli || !tokenizerDir || !workDir) {
  console.error('usage: node openai_image_answer_check.mjs QUIRE_CLI GEMMA3_TOKENIZER_DIR WORK_DIR');
  process.exit(2);
}

const work = mkdtempSync(path.join(workDir, 'image-answer-'));
const modelDir = path.join(work, 'gemma3-vision');
const made = spawnSync(cli, [
  'make-model', modelDir, '--arch', 'gemma3', '--multimodal', '--format', 'fp16',
  '--tokenizer-from', tokenizerDir, '--layers', '2', '--hidden', '64', '--heads', '2',
  '--kv-heads', '1', '--intermediate', '128', '--seed', '5',
], { encoding: 'utf8' });
if (made.status !== 0) {
  console.error(`make-model failed:\n${made.stderr}`);
  process.exit(1);
}

const { serve, stop, client, watchdog, failWithLogs } = checkSupport(cli, modelDir);

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

  // Another image in its place: only what precedes the image is found
  // (<bos><start_of_turn>user, the processor's "\n\n" and <start_of_image>).
  const different = await openai.chat.completions.create(ask(other));
  assert.equal(different.usage.prompt_tokens, first.usage.prompt_tokens);
  assert.equal(different.usage.prompt_tokens_details.cached_tokens, 5);

  // A PNG signature followed by nothing a decoder can read.
  const broken = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3, 4]).toString('base64');
  try {
    await openai.chat.completions.create(ask(broken));
    assert.fail('a broken image was answered');
  } catch (error) {
    assert.ok(error instanceof OpenAI.BadRequestError, `not a BadRequestError: ${error}`);
    assert.equal(error.param, 'messages');
    assert.match(error.error.message, /^The image in messages\[0\]\.content\[0\] cannot be read: /);
  }

  assert.equal(await stop(server), 0);
  rmSync(work, { recursive: true, force: true });
  console.log('openai_image_answer_check: every check passed');
}

const timer = watchdog('openai_image_answer_check', 240);
main()
  .then(() => clearTimeout(timer))
  .catch(failWithLogs);
