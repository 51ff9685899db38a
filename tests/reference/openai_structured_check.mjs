// Structured output through `quire-cli serve`, checked with OpenAI's
// official Node client on a small random model: response_format json_schema
// and json_object, whole and streamed, and chat.completions.parse / stream
// with a zod schema (openai/helpers/zod). Random weights say nothing useful,
// yet every reply must be JSON that ajv finds valid against its schema,
// because the grammar forces it. Schemas the grammar cannot enforce are
// refused with a 400 that names the keyword. Exits 1 on the first failure.
//   node openai_structured_check.mjs QUIRE_CLI
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { zodResponseFormat } from 'openai/helpers/zod';
import { z } from 'zod';

import { checkSupport } from './openai_check_support.mjs';

const [cli] = process.argv.slice(2);
if (!cli) {
  console.error('usage: node openai_structured_check.mjs QUIRE_CLI');
  process.exit(2);
}

const root = mkdtempSync(path.join(tmpdir(), 'quire-structured-'));
const modelDir = path.join(root, 'model');
execFileSync(cli, ['make-model', modelDir, '--like', 'gemma-2-9b-it', '--seed', '9'], {
  stdio: 'ignore',
});
const { started, serve, stop, client, expectApiError } = checkSupport(cli, modelDir);

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv);
function assertValid(schema, text, where) {
  const { $schema, ...plain } = schema;  // zod's draft-07 tag; ajv here reads 2020-12
  const validate = ajv.compile(plain);
  let value;
  try {
    value = JSON.parse(text);
  } catch (error) {
    assert.fail(`${where}: not JSON (${error.message}): ${text}`);
  }
  assert.ok(validate(value), `${where}: ${ajv.errorsText(validate.errors)}: ${text}`);
  return value;
}

// Bounded, so that random weights finish each reply well within max_tokens.
const schemas = {
  person: {
    type: 'object',
    properties: {
      name: { type: 'string', maxLength: 12 },
      age: { type: 'integer', minimum: 0, maximum: 120 },
      tags: { type: 'array', items: { enum: ['red', 'green', 'blue'] }, maxItems: 3 },
    },
    required: ['name', 'age', 'tags'],
    additionalProperties: false,
  },
  shape: {
    type: 'object',
    properties: {
      kind: { enum: ['circle', 'square'] },
      size: { anyOf: [{ type: 'null' }, { type: 'integer', minimum: 1, maximum: 99 }] },
      code: { type: 'string', pattern: '^[A-Z]{2}-[0-9]{1,3}$' },
    },
    required: ['kind', 'size', 'code'],
    additionalProperties: false,
  },
  list: { type: 'array', items: { type: 'boolean' }, minItems: 1, maxItems: 5 },
};

const ask = (extra) => ({
  model: 'random',
  messages: [{ role: 'user', content: 'Answer in JSON.' }],
  max_tokens: 300,
  ...extra,
});
const jsonSchema = (name, schema) => ({
  type: 'json_schema',
  json_schema: { name, schema, strict: true },
});

async function streamedText(openai, body) {
  let text = '';
  let finish = null;
  for await (const chunk of await openai.chat.completions.create({ ...body, stream: true })) {
    text += chunk.choices[0]?.delta?.content ?? '';
    finish = chunk.choices[0]?.finish_reason ?? finish;
  }
  return { text, finish };
}

async function checkSchemas(server) {
  const openai = client(server);
  const replies = new Set();
  for (const [name, schema] of Object.entries(schemas)) {
    for (const [index, sampling] of [{ temperature: 0 }, { temperature: 1.5, seed: 1 }, { temperature: 1.5, seed: 2 }].entries()) {
      const body = ask({ ...sampling, response_format: jsonSchema(name, schema) });
      const whole = await openai.chat.completions.create(body);
      assert.equal(whole.choices[0].finish_reason, 'stop', `${name}: ${whole.choices[0].message.content}`);
      assertValid(schema, whole.choices[0].message.content, `${name} ${index} whole`);
      replies.add(whole.choices[0].message.content);

      const streamed = await streamedText(openai, body);
      assert.equal(streamed.finish, 'stop');
      assertValid(schema, streamed.text, `${name} ${index} streamed`);
    }
  }
  // The weights still choose: replies differ between schemas and seeds.
  assert.ok(replies.size >= 6, `only ${replies.size} distinct replies`);

  // Several choices, each valid.
  const many = await openai.chat.completions.create(
    ask({ temperature: 1.5, seed: 5, n: 3, response_format: jsonSchema('person', schemas.person) }),
  );
  assert.equal(many.choices.length, 3);
  for (const choice of many.choices) assertValid(schemas.person, choice.message.content, 'n=3');
}

async function checkJsonObject(server) {
  const openai = client(server);
  const body = ask({ temperature: 0, max_tokens: 120, response_format: { type: 'json_object' } });
  const whole = await openai.chat.completions.create(body);
  const text = whole.choices[0].message.content;
  assert.ok(text.startsWith('{'), text);
  if (whole.choices[0].finish_reason === 'stop') {
    const value = JSON.parse(text);
    assert.equal(typeof value, 'object');
    assert.ok(value !== null && !Array.isArray(value));
  } else {
    assert.equal(whole.choices[0].finish_reason, 'length');
  }
  const streamed = await streamedText(openai, body);
  assert.ok(streamed.text.startsWith('{'), streamed.text);
}

// What openai-node users write: a zod schema, parse() and stream().
async function checkZod(server) {
  const openai = client(server);
  const Reading = z.object({
    station: z.string().max(10),
    celsius: z.number().int().min(-40).max(50),
    sky: z.enum(['clear', 'cloudy', 'rain']),
    hours: z.array(z.number().int().min(0).max(23)).max(3),
    calibrated: z.boolean(),
    // Written as OpenAPI's "nullable": true on a string, anyOf with null on a number.
    note: z.string().max(8).nullable(),
    gust: z.number().int().min(0).max(99).nullable(),
  });
  const format = zodResponseFormat(Reading, 'reading');
  for (const seed of [1, 2, 3]) {
    const completion = await openai.chat.completions.parse(
      ask({ temperature: 1.5, seed, response_format: format }),
    );
    const message = completion.choices[0].message;
    assert.equal(completion.choices[0].finish_reason, 'stop');
    assert.ok(message.parsed, `nothing parsed from ${message.content}`);
    assert.deepEqual(Reading.parse(message.parsed), message.parsed);
    assertValid(format.json_schema.schema, message.content, `zod parse ${seed}`);

    const stream = openai.chat.completions.stream(ask({ temperature: 1.5, seed, response_format: format }));
    const final = await stream.finalChatCompletion();
    const streamed = final.choices[0].message;
    assert.ok(streamed.parsed, `nothing parsed from the stream: ${streamed.content}`);
    assert.deepEqual(Reading.parse(streamed.parsed), streamed.parsed);
    assertValid(format.json_schema.schema, streamed.content, `zod stream ${seed}`);
  }
}

async function checkRefusals(server) {
  const openai = client(server);
  await expectApiError(
    openai.chat.completions.create(
      ask({ response_format: jsonSchema('set', { type: 'array', uniqueItems: true }) }),
    ),
    400,
    { param: 'response_format', message: /"uniqueItems"/ },
  );
  await expectApiError(
    openai.chat.completions.create(ask({ response_format: { type: 'json_schema' } })),
    400,
    { param: 'response_format' },
  );
  await expectApiError(
    openai.chat.completions.create(ask({ response_format: { type: 'xml' } })),
    400,
    { param: 'response_format' },
  );
  // Tools are not offered yet.
  await expectApiError(
    openai.chat.completions.create(
      ask({ tools: [{ type: 'function', function: { name: 'f', parameters: { type: 'object' } } }] }),
    ),
    400,
    { param: 'tools' },
  );
}

let failed = false;
try {
  const server = await serve(['--model-name', 'random']);
  await checkSchemas(server);
  await checkJsonObject(server);
  await checkZod(server);
  await checkRefusals(server);
  console.log('structured output checks passed');
} catch (error) {
  failed = true;
  console.error(error);
} finally {
  for (const child of started) await stop(child);
  rmSync(root, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
