// Image content parts sent to `quire-cli serve` by OpenAI's official Node
// client: a model that cannot see images answers an image part with a 400
// that the client raises as openai.BadRequestError, naming the model; a
// network URL, an image in a system message and bad base64 are refused with
// their own messages; and the same conversation without its image is
// answered. Exits 1 on the first failure.
//   node openai_image_check.mjs QUIRE_CLI MODEL_DIR
import assert from 'node:assert/strict';
import OpenAI from 'openai';

import { checkSupport } from './openai_check_support.mjs';

const [cli, modelDir] = process.argv.slice(2);
if (!cli || !modelDir) {
  console.error('usage: node openai_image_check.mjs QUIRE_CLI MODEL_DIR');
  process.exit(2);
}

const { serve, stop, client, watchdog, failWithLogs } = checkSupport(cli, modelDir);

// The first 16 bytes of a PNG file: the server checks the signature and
// keeps the bytes; the model's preprocessing would decode them.
const png = Buffer.from([
  0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
]).toString('base64');

const ask = (content, extra = {}) => ({
  model: 'demo',
  messages: [{ role: 'user', content }],
  temperature: 0,
  max_tokens: 4,
  ...extra,
});

async function expectBadRequest(promise, message) {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OpenAI.BadRequestError, `not a BadRequestError: ${error}`);
    assert.equal(error.status, 400);
    assert.equal(error.type, 'invalid_request_error');
    assert.equal(error.param, 'messages');
    assert.equal(error.error.message, message);
    return;
  }
  assert.fail(`expected a 400 answering "${message}"`);
}

async function main() {
  const server = await serve(['--model-name', 'demo']);
  const openai = client(server);
  const text = { type: 'text', text: 'What is in this picture?' };

  await expectBadRequest(
    openai.chat.completions.create(
      ask([text, { type: 'image_url', image_url: { url: `data:image/png;base64,${png}`, detail: 'low' } }]),
    ),
    "The model 'demo' cannot see images, and messages[0].content[1] is one. Send the request " +
      'without image_url parts.',
  );
  // Streamed, the refusal comes before any chunk.
  await expectBadRequest(
    openai.chat.completions.create(
      ask([{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }, text], {
        stream: true,
      }),
    ),
    "The model 'demo' cannot see images, and messages[0].content[0] is one. Send the request " +
      'without image_url parts.',
  );
  await expectBadRequest(
    openai.chat.completions.create(
      ask([text, { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }]),
    ),
    'messages[0].content[1].image_url.url is an https URL: this server does not fetch images ' +
      'from the network. Send the image inline as data:image/png;base64,... (or jpeg, webp, gif).',
  );
  await expectBadRequest(
    openai.chat.completions.create(
      ask([text, { type: 'image_url', image_url: { url: `data:image/png;base64,${png.slice(0, -2)}` } }]),
    ),
    'messages[0].content[1].image_url.url does not hold valid base64: its length, 22 characters, ' +
      "is not a multiple of four (pad it with '=').",
  );
  await expectBadRequest(
    openai.chat.completions.create({
      model: 'demo',
      messages: [
        // The client's types allow text parts only in a system message; a
        // client without them sends this.
        { role: 'system', content: [{ type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } }] },
        { role: 'user', content: 'Hi' },
      ],
      max_tokens: 4,
    }),
    'messages[0].content[0] is an image in a system message; images go in user messages only.',
  );

  // Without the image the same request is answered.
  const answer = await openai.chat.completions.create(ask([text]));
  assert.equal(answer.object, 'chat.completion');
  assert.equal(answer.choices[0].message.role, 'assistant');

  assert.equal(await stop(server), 0);
  assert.match(server.log, /POST \/v1\/chat\/completions 400 /);
  console.log('openai_image_check: every check passed');
}

const timer = watchdog('openai_image_check', 60);
main()
  .then(() => clearTimeout(timer))
  .catch(failWithLogs);
