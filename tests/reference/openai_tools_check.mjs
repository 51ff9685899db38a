// Tool calls through `quire-cli serve`, checked with OpenAI's official Node
// client on small random models that carry real tokenizers and chat
// templates: Qwen3's (tools in the system message, <tool_call>), Llama 3.2's
// (tools in the first user message, {"name", "parameters"}), Mistral Nemo's
// ([TOOL_CALLS], ids of 9 characters) and gpt-oss's (Harmony channels).
// Random weights would never call a tool on their own; tool_choice
// "required" or a named function makes the grammar force one, so every call
// must name a tool the request offered and carry arguments that ajv finds
// valid against that tool's schema. Then the loop goes on: the calls and
// their results go back through the template and the model answers.
// Exits 1 on the first failure.
//   node openai_tools_check.mjs QUIRE_CLI
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Ajv2020 from 'ajv/dist/2020.js';
import { zodFunction } from 'openai/helpers/zod';
import { z } from 'zod';

import { checkSupport } from './openai_check_support.mjs';

const [cli] = process.argv.slice(2);
if (!cli) {
  console.error('usage: node openai_tools_check.mjs QUIRE_CLI');
  process.exit(2);
}

const here = path.dirname(fileURLToPath(import.meta.url));
const packages = path.join(here, 'node_modules', '@lenml');
const root = mkdtempSync(path.join(tmpdir(), 'quire-tools-'));

// gpt-oss's tokenizer package ships no template: the published one lies in
// tests/data/templates.
const gptOssTokenizer = path.join(root, 'gpt-oss-tokenizer');
mkdirSync(gptOssTokenizer);
for (const file of ['tokenizer.json', 'tokenizer_config.json']) {
  copyFileSync(path.join(packages, 'tokenizer-gptoss', 'models', file), path.join(gptOssTokenizer, file));
}
copyFileSync(path.join(here, '..', 'data', 'templates', 'gpt-oss-120b.jinja'),
  path.join(gptOssTokenizer, 'chat_template.jinja'));

const families = [
  { name: 'qwen3', like: 'qwen2.5-1.5b-instruct', arch: 'qwen3', tokenizer: path.join(packages, 'tokenizer-qwen3', 'models') },
  { name: 'llama3.2', like: 'llama-3.2-3b-instruct', tokenizer: path.join(packages, 'tokenizer-llama3_2', 'models') },
  { name: 'mistral-nemo', like: 'mistral-nemo-instruct-2407', tokenizer: path.join(packages, 'tokenizer-mistral_nemo', 'models'), ids: /^[A-Za-z0-9]{9}$/ },
  { name: 'gpt-oss', like: 'qwen2.5-1.5b-instruct', tokenizer: gptOssTokenizer },
];

const ajv = new Ajv2020({ allErrors: true, strict: true });

// Bounded strings and numbers, so that random weights finish each call well
// within max_tokens.
const weather = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'The weather in a city now',
    parameters: {
      type: 'object',
      properties: {
        city: { type: 'string', maxLength: 12 },
        unit: { enum: ['celsius', 'fahrenheit'] },
      },
      required: ['city', 'unit'],
      additionalProperties: false,
    },
    strict: true,
  },
};
const time = {
  type: 'function',
  function: {
    name: 'get_time',
    description: 'The time in a time zone',
    parameters: {
      type: 'object',
      properties: { zone: { type: 'string', maxLength: 8 }, seconds: { type: 'boolean' } },
      required: ['zone', 'seconds'],
      additionalProperties: false,
    },
    strict: true,
  },
};
const tools = [weather, time];
const schemaOf = Object.fromEntries(tools.map((tool) => [tool.function.name, tool.function.parameters]));

function checkCall(call, family, where) {
  assert.equal(call.type, 'function', `${where}: type`);
  assert.ok(call.id, `${where}: no id`);
  if (family.ids) assert.match(call.id, family.ids, `${where}: id`);
  const schema = schemaOf[call.function.name];
  assert.ok(schema, `${where}: a call of ${call.function.name}, which was not offered`);
  const validate = ajv.compile(schema);
  let args;
  try {
    args = JSON.parse(call.function.arguments);
  } catch (error) {
    assert.fail(`${where}: arguments are not JSON (${error.message}): ${call.function.arguments}`);
  }
  assert.ok(validate(args), `${where}: ${ajv.errorsText(validate.errors)}: ${call.function.arguments}`);
  return args;
}

const conversation = () => [
  { role: 'system', content: 'You answer briefly and use tools when they help.' },
  { role: 'user', content: 'What is the weather in Oslo, and what time is it there?' },
];

async function checkFamily(family, seed) {
  const modelDir = path.join(root, family.name);
  const args = ['make-model', modelDir, '--like', family.like, '--tokenizer-from', family.tokenizer,
    '--seed', String(seed)];
  if (family.arch) args.push('--arch', family.arch);
  execFileSync(cli, args, { stdio: 'ignore' });
  const { serve, stop, client } = checkSupport(cli, modelDir);
  const server = await serve([]);
  try {
    const openai = client(server);

    // 1. A required call, whole, then the loop: the call and its result go
    // back, and the model answers (what it says is random; that it answers
    // from a longer prompt is what counts).
    for (let round = 0; round < 3; ++round) {
      const messages = conversation();
      const first = await openai.chat.completions.create({
        model: family.name, messages, tools, tool_choice: 'required', max_tokens: 200, seed: seed * 10 + round,
      });
      const choice = first.choices[0];
      assert.equal(choice.finish_reason, 'tool_calls', `${family.name}: finish_reason`);
      assert.ok(choice.message.tool_calls.length >= 1, `${family.name}: no calls`);
      choice.message.tool_calls.forEach((call, i) => checkCall(call, family, `${family.name} call ${i}`));
      messages.push(choice.message);
      for (const call of choice.message.tool_calls) {
        messages.push({ role: 'tool', tool_call_id: call.id, content: `result of ${call.function.name}: 42` });
      }
      const answer = await openai.chat.completions.create({
        model: family.name, messages, tools, max_tokens: 12, seed: round,
      });
      assert.ok(answer.usage.prompt_tokens > first.usage.prompt_tokens,
        `${family.name}: the answer's prompt holds the call and its result`);
      assert.ok(['stop', 'length', 'tool_calls'].includes(answer.choices[0].finish_reason));
    }

    // 2. A named function, streamed: the client assembles the call from the
    // stream's deltas.
    const stream = openai.chat.completions.stream({
      model: family.name, messages: conversation(), tools, max_tokens: 200, seed,
      tool_choice: { type: 'function', function: { name: 'get_time' } },
    });
    const streamed = await stream.finalChatCompletion();
    assert.equal(streamed.choices[0].finish_reason, 'tool_calls', `${family.name}: streamed finish_reason`);
    const [call] = streamed.choices[0].message.tool_calls;
    assert.equal(call.function.name, 'get_time', `${family.name}: the named function`);
    checkCall(call, family, `${family.name} streamed call`);

    // 3. chat.completions.parse with a zod-defined strict tool.
    const alarm = zodFunction({
      name: 'set_alarm',
      description: 'Sets an alarm',
      parameters: z.object({ hour: z.number().int().min(0).max(23), label: z.string().max(10) }),
    });
    const parsed = await openai.chat.completions.parse({
      model: family.name, messages: [{ role: 'user', content: 'Wake me at seven.' }], tools: [alarm],
      tool_choice: 'required', max_tokens: 200, seed,
    });
    const parsedCall = parsed.choices[0].message.tool_calls[0];
    assert.equal(parsedCall.function.name, 'set_alarm');
    const { hour, label } = parsedCall.function.parsed_arguments;
    assert.ok(Number.isInteger(hour) && hour >= 0 && hour <= 23, `${family.name}: hour ${hour}`);
    assert.ok(typeof label === 'string' && label.length <= 10, `${family.name}: label ${label}`);
    console.log(`${family.name}: tool loop, named streamed call and parse passed`);
  } finally {
    await stop(server);
  }
}

try {
  let seed = 3;
  for (const family of families) await checkFamily(family, seed++);
  console.log('tool calls through the openai client: all passed');
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  rmSync(root, { recursive: true, force: true });
}
