// An image answered by a Mistral Small 3 model through `quire-cli serve` and
// OpenAI's official Node client: a Mistral3ForConditionalGeneration
// directory with a small Pixtral tower (made here by `quire-cli make-model`)
// and a tokenizer laid out as Mistral Small 3.1's (NeMo's Tekken tokenizer
// with control tokens 10 to 19 named as Mistral Small 3.1 names them,
// [IMG] 10, [IMG_BREAK] 12, [IMG_END] 13, and a template in its layout,
// tests/data/mistral-small-3-chat-template.jinja) gets a PNG as a data: URL
// and answers; the same request again finds the image's rows in the cache;
// a different image in its place is found only up to <s>[INST]. The same
// model with its tower's image_size raised to 560 pixels (Pixtral's weights
// do not depend on it) and a context of 256 tokens refuses a 560 x 560
// picture, whose 20 rows of 20 [IMG] alone exceed the context, with a 400
// that says how many of the prompt's tokens the image takes. Exits 1 on the
// first failure.
//   node openai_mistral3_image_check.mjs QUIRE_CLI NEMO_TOKENIZER_DIR CHAT_TEMPLATE WORK_DIR
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

import { checkSupport } from './openai_check_support.mjs';
import { png } from './png_image.mjs';

const [cli, nemoDir, chatTemplate, workDir] = process.argv.slice(2);
if (!cli || !nemoDir || !chatTemplate || !workDir) {
  console.error('usage: node openai_mistral3_image_check.mjs QUIRE_CLI NEMO_TOKENIZER_DIR ' +
    'CHAT_TEMPLATE WORK_DIR');
  process.exit(2);
}

// Mistral Small 3.1's names of the control tokens NeMo's file names otherwise.
const CONTROLS = {
  10: '[IMG]', 11: '<pad>', 12: '[IMG_BREAK]', 13: '[IMG_END]', 14: '[PREFIX]',
  15: '[MIDDLE]', 16: '[SUFFIX]', 17: '[SYSTEM_PROMPT]', 18: '[/SYSTEM_PROMPT]',
  19: '[TOOL_CONTENT]',
};

function writeTokenizer(dir) {
  mkdirSync(dir, { recursive: true });
  const tokenizer = JSON.parse(readFileSync(path.join(nemoDir, 'tokenizer.json'), 'utf8'));
  const config = JSON.parse(readFileSync(path.join(nemoDir, 'tokenizer_config.json'), 'utf8'));
  for (const [id, content] of Object.entries(CONTROLS)) {
    const token = tokenizer.added_tokens.find((t) => t.id === Number(id));
    delete tokenizer.model.vocab[token.content];
    token.content = content;
    tokenizer.model.vocab[content] = Number(id);
    config.added_tokens_decoder[id].content = content;
  }
  delete config.chat_template;
  writeFileSync(path.join(dir, 'tokenizer.json'), JSON.stringify(tokenizer));
  writeFileSync(path.join(dir, 'tokenizer_config.json'), JSON.stringify(config));
  copyFileSync(chatTemplate, path.join(dir, 'chat_template.jinja'));
}

const work = mkdtempSync(path.join(workDir, 'mistral3-image-'));
const tokenizerDir = path.join(work, 'tokenizer');
writeTokenizer(tokenizerDir);
const modelDir = path.join(work, 'mistral3-vision');
const made = spawnSync(cli, [
  'make-model', modelDir, '--arch', 'mistral', '--multimodal', '--format', 'fp16',
  '--tokenizer-from', tokenizerDir, '--layers', '2', '--hidden', '64', '--heads', '2',
  '--kv-heads', '1', '--intermediate', '128', '--seed', '6',
], { encoding: 'utf8' });
if (made.status !== 0) {
  console.error(`make-model failed:\n${made.stderr}`);
  process.exit(1);
}

// The same weights read as a tower that takes images up to 560 x 560.
const wideDir = path.join(work, 'mistral3-wide');
mkdirSync(wideDir);
for (const file of ['model.safetensors', 'tokenizer.json', 'tokenizer_config.json',
  'chat_template.jinja', 'generation_config.json', 'processor_config.json']) {
  copyFileSync(path.join(modelDir, file), path.join(wideDir, file));
}
const wideConfig = JSON.parse(readFileSync(path.join(modelDir, 'config.json'), 'utf8'));
wideConfig.vision_config.image_size = 560;
writeFileSync(path.join(wideDir, 'config.json'), JSON.stringify(wideConfig, null, 2));
const widePre = JSON.parse(readFileSync(path.join(modelDir, 'preprocessor_config.json'), 'utf8'));
widePre.size.longest_edge = 560;
writeFileSync(path.join(wideDir, 'preprocessor_config.json'), JSON.stringify(widePre, null, 2));

const { serve, stop, client, watchdog, failWithLogs, expectApiError } =
  checkSupport(cli, modelDir);

// 50 x 40 pixels: rounded up to 56 x 56 by the processor, two rows of two [IMG].
const picture = png(50, 40, (x, y) => [x * 5, y * 6, x > 20 && y > 16 ? 250 : 30]);
const other = png(50, 40, (x, y) => [250 - x * 5, 40, y * 6]);
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

  // Another image of the same size in its place: only <s> and [INST] are found.
  const different = await openai.chat.completions.create(ask(other));
  assert.equal(different.usage.prompt_tokens, first.usage.prompt_tokens);
  assert.equal(different.usage.prompt_tokens_details.cached_tokens, 2);

  assert.equal(await stop(server), 0);

  // An image that needs more positions than the context: 400 [IMG] (and 20
  // breaks) against 256 tokens.
  const wide = await serve(['--model-name', 'vision', '--context', '256'], wideDir);
  const large = png(560, 560, (x, y) => [x % 256, y % 256, 90]);
  const refused = await expectApiError(
    client(wide).chat.completions.create({
      model: 'vision',
      messages: [{ role: 'user', content: [
        { type: 'image_url', image_url: { url: `data:image/png;base64,${large}` } },
        { type: 'text', text: 'What is it?' },
      ] }],
      max_tokens: 2,
    }), 400, { param: 'messages', code: 'context_length_exceeded' });
  assert.match(refused.error.message,
    /^This model's maximum context length is 256 tokens\. However, you requested \d+ tokens /);
  assert.match(refused.error.message, / The images in the messages take 400 of the prompt's tokens\.$/);
  assert.equal(await stop(wide), 0);
  rmSync(work, { recursive: true, force: true });
  console.log('openai_mistral3_image_check: every check passed');
}

const timer = watchdog('openai_mistral3_image_check', 240);
main()
  .then(() => clearTimeout(timer))
  .catch(failWithLogs);
