// End-to-end check of `quire-cli serve` with OpenAI's official Node client:
// starts servers on free loopback ports over a model directory and checks
// replies, streaming, the prefix cache, stop strings, seeds, concurrency,
// several choices (n), cancellation and every kind of refusal. Exits 1 on the first failure.
//   node openai_client_check.mjs QUIRE_CLI MODEL_DIR
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

import { checkSupport } from './openai_check_support.mjs';

const [cli, modelDir] = process.argv.slice(2);
if (!cli || !modelDir) {
  console.error('usage: node openai_client_check.mjs QUIRE_CLI MODEL_DIR');
  process.exit(2);
}

const {
  serve,
  stop,
  client,
  expectApiError,
  rawPost,
  assertErrorObject,
  stats,
  waitFor,
  eosIds,
  watchdog,
  failWithLogs,
} = checkSupport(cli, modelDir);

const system = { role: 'system', content: 'Be brief.' };
const greedy = (content, extra = {}) => ({
  model: 'demo',
  messages: [system, { role: 'user', content }],
  temperature: 0,
  max_tokens: 24,
  ...extra,
});

async function checkReplies(server) {
  const openai = client(server);
  const models = await openai.models.list();
  assert.deepEqual(models.data.map((m) => m.id), ['demo']);

  // Non-streamed and streamed replies of one greedy request are the same.
  const whole = await openai.chat.completions.create(greedy('Tell me a fortune.'));
  assert.equal(whole.object, 'chat.completion');
  assert.match(whole.id, /^chatcmpl-/);
  assert.equal(whole.model, 'demo');
  assert.equal(whole.choices.length, 1);
  const reply = whole.choices[0].message.content;
  assert.equal(whole.choices[0].message.role, 'assistant');
  assert.equal(typeof reply, 'string');
  assert.ok(reply.length > 0, 'an empty reply');
  assert.ok(['stop', 'length'].includes(whole.choices[0].finish_reason));
  const usage = whole.usage;
  assert.equal(usage.total_tokens, usage.prompt_tokens + usage.completion_tokens);
  assert.ok(usage.completion_tokens > 0 && usage.completion_tokens <= 24);
  assert.equal(typeof usage.prompt_tokens_details.cached_tokens, 'number');

  const stream = await openai.chat.completions.create({
    ...greedy('Tell me a fortune.'),
    stream: true,
    stream_options: { include_usage: true },
  });
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  assert.equal(chunks[0].choices[0].delta.role, 'assistant');
  assert.equal(chunks[0].object, 'chat.completion.chunk');
  assert.ok(chunks.every((c) => c.id === chunks[0].id));
  const streamed = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
  assert.equal(streamed, reply);
  const finish = chunks.at(-2);
  assert.equal(finish.choices[0].finish_reason, whole.choices[0].finish_reason);
  const last = chunks.at(-1);
  assert.deepEqual(last.choices, []);
  assert.equal(last.usage.completion_tokens, usage.completion_tokens);
  assert.equal(last.usage.prompt_tokens, usage.prompt_tokens);
  // The same prompt again: the cache holds all of it but the last token.
  assert.ok(last.usage.prompt_tokens_details.cached_tokens >= usage.prompt_tokens - 1);

  // The second turn of a conversation reuses the first turn's pages: its
  // prompt and the reply the cache kept when the first turn ended.
  const question = 'What does "quire" mean?';
  const turn1 = await openai.chat.completions.create(greedy(question));
  const turn2 = await openai.chat.completions.create({
    model: 'demo',
    messages: [
      system,
      { role: 'user', content: question },
      { role: 'assistant', content: turn1.choices[0].message.content },
      { role: 'user', content: 'And another one?' },
    ],
    temperature: 0,
    max_tokens: 8,
  });
  assert.ok(turn2.usage.prompt_tokens > turn1.usage.prompt_tokens + turn1.usage.completion_tokens - 1);
  assert.ok(
    turn2.usage.prompt_tokens_details.cached_tokens >= turn1.usage.prompt_tokens,
    `turn 2 found ${turn2.usage.prompt_tokens_details.cached_tokens} of its ${turn2.usage.prompt_tokens} ` +
      `prompt tokens cached; turn 1 had ${turn1.usage.prompt_tokens}`,
  );

  // A stop string ends the reply before it, with finish_reason "stop".
  if (reply.length >= 8) {
    const at = Math.floor(reply.length / 2);
    const stopText = reply.slice(at, at + 3);
    const stopped = await openai.chat.completions.create({
      ...greedy('Tell me a fortune.'),
      stop: [stopText, 'never appears'],
    });
    assert.equal(stopped.choices[0].message.content, reply.slice(0, reply.indexOf(stopText)));
    assert.equal(stopped.choices[0].finish_reason, 'stop');
  }

  // max_tokens ends the reply with finish_reason "length".
  const short = await openai.chat.completions.create({ ...greedy('Tell me a fortune.'), max_tokens: 2 });
  assert.equal(short.usage.completion_tokens, 2);
  assert.equal(short.choices[0].finish_reason, 'length');

  // A seed repeats a sampled reply. The prompt is cached first so that both
  // replies start from the same cache state: a prompt computed whole and one
  // whose last token alone is computed give logits that differ in the last
  // bits, enough to move a draw at temperature 1.
  const sampled = { ...greedy('Tell me a story.'), temperature: 1, top_p: 0.95, seed: 1234 };
  await openai.chat.completions.create({ ...sampled, max_tokens: 1 });
  const a = await openai.chat.completions.create(sampled);
  const b = await openai.chat.completions.create(sampled);
  assert.equal(a.usage.prompt_tokens_details.cached_tokens, b.usage.prompt_tokens_details.cached_tokens);
  assert.equal(a.choices[0].message.content, b.choices[0].message.content);
  assert.equal(a.usage.completion_tokens, b.usage.completion_tokens);

  // /v1/completions, whole and streamed.
  const completion = await openai.completions.create({
    model: 'demo',
    prompt: 'Once upon a time',
    temperature: 0,
    max_tokens: 12,
  });
  assert.equal(completion.object, 'text_completion');
  const pieces = [];
  for await (const chunk of await openai.completions.create({
    model: 'demo',
    prompt: 'Once upon a time',
    temperature: 0,
    max_tokens: 12,
    stream: true,
  })) {
    pieces.push(chunk.choices[0]?.text ?? '');
  }
  assert.equal(pieces.join(''), completion.choices[0].text);
  return reply;
}

async function checkConcurrency(server) {
  const openai = client(server);
  const prompts = Array.from({ length: 8 }, (_, i) => `Question ${i + 1}: what is a ${['cat', 'quire', 'page', 'cache', 'word', 'ship', 'tree', 'song'][i]}?`);
  // Each alone, twice: the first computes most of its prompt, the second
  // finds all of it but the last token in the cache, as the eight below do.
  // A token's products round alike whatever else runs in its step, but not
  // whether it comes in a prompt chunk or alone over a cached prefix, so the
  // second round is the reference.
  let alone = [];
  for (let round = 0; round < 2; round++) {
    alone = [];
    for (const prompt of prompts) {
      alone.push((await openai.chat.completions.create(greedy(prompt))).choices[0].message.content);
    }
  }
  // Eight at once, half streamed: each gets exactly what it got alone.
  const together = await Promise.all(
    prompts.map(async (prompt, i) => {
      if (i % 2 === 0) {
        return (await openai.chat.completions.create(greedy(prompt))).choices[0].message.content;
      }
      let text = '';
      for await (const chunk of await openai.chat.completions.create({ ...greedy(prompt), stream: true })) {
        text += chunk.choices[0]?.delta?.content ?? '';
      }
      return text;
    }),
  );
  assert.deepEqual(together, alone);
}

// n replies to one prompt: n choices, each the lone reply with seed + its
// index, the prompt computed once, whole and streamed.
async function checkChoices(server) {
  const openai = client(server);

  // A prompt the cache has not seen: the three replies compute it once.
  const before = await stats(server);
  const fresh = await openai.chat.completions.create({
    ...greedy('Name three colours of the sea.'),
    temperature: 1,
    n: 3,
  });
  const after = await stats(server);
  assert.deepEqual(fresh.choices.map((c) => c.index), [0, 1, 2]);
  const computed = after.cache.computed_tokens - before.cache.computed_tokens;
  const { prompt_tokens, prompt_tokens_details } = fresh.usage;
  assert.equal(computed, prompt_tokens - prompt_tokens_details.cached_tokens, 'prompt tokens computed');
  assert.equal(after.cache.branches - before.cache.branches, 2);

  // With a seed, choice i is the lone reply with seed + i. The prompt is
  // cached first, as in the seed check of checkReplies, so that every reply
  // starts from the same cache state.
  const sampled = { ...greedy('Tell me a story about a ship.'), temperature: 1, top_p: 0.95, seed: 4321 };
  await openai.chat.completions.create({ ...sampled, max_tokens: 1 });
  const three = await openai.chat.completions.create({ ...sampled, n: 3 });
  assert.equal(three.choices.length, 3);
  let completionTokens = 0;
  let promptTokens = 0;
  for (let i = 0; i < 3; ++i) {
    const choice = three.choices[i];
    assert.equal(choice.index, i);
    assert.equal(choice.message.role, 'assistant');
    assert.ok(['stop', 'length'].includes(choice.finish_reason));
    const alone = await openai.chat.completions.create({ ...sampled, seed: 4321 + i });
    assert.equal(alone.usage.prompt_tokens_details.cached_tokens, three.usage.prompt_tokens_details.cached_tokens);
    assert.equal(choice.message.content, alone.choices[0].message.content, `choice ${i}`);
    assert.equal(choice.finish_reason, alone.choices[0].finish_reason);
    completionTokens += alone.usage.completion_tokens;
    promptTokens = alone.usage.prompt_tokens;
  }
  assert.ok(new Set(three.choices.map((c) => c.message.content)).size > 1, 'three equal replies');
  // The prompt counts once, the replies add up.
  assert.equal(three.usage.prompt_tokens, promptTokens);
  assert.equal(three.usage.completion_tokens, completionTokens);
  assert.equal(three.usage.total_tokens, three.usage.prompt_tokens + completionTokens);

  // Streamed with n: 2: each choice opens with the role, carries its index,
  // finishes once; the texts reassembled by index are the whole replies.
  const two = await openai.chat.completions.create({ ...sampled, n: 2 });
  const stream = await openai.chat.completions.create({
    ...sampled,
    n: 2,
    stream: true,
    stream_options: { include_usage: true },
  });
  const texts = ['', ''];
  const roles = [0, 0];
  const finishes = [null, null];
  const chunks = [];
  for await (const chunk of stream) chunks.push(chunk);
  for (const chunk of chunks.slice(0, -1)) {
    assert.equal(chunk.choices.length, 1);
    const { index, delta, finish_reason } = chunk.choices[0];
    assert.ok(index === 0 || index === 1, `index ${index}`);
    assert.equal(finishes[index], null, `choice ${index} went on after it finished`);
    if (delta.role) roles[index] += 1;
    texts[index] += delta.content ?? '';
    finishes[index] = finish_reason;
  }
  assert.deepEqual(roles, [1, 1]);
  assert.deepEqual(texts, two.choices.map((c) => c.message.content));
  assert.deepEqual(finishes, two.choices.map((c) => c.finish_reason));
  const usage = chunks.at(-1);
  assert.deepEqual(usage.choices, []);
  assert.equal(usage.usage.prompt_tokens, two.usage.prompt_tokens);
  assert.equal(usage.usage.completion_tokens, two.usage.completion_tokens);

  // /v1/completions, greedy: n equal replies, whole and streamed.
  const request = { model: 'demo', prompt: 'Once upon a time', temperature: 0, max_tokens: 12 };
  const one = await openai.completions.create(request);
  const both = await openai.completions.create({ ...request, n: 2 });
  assert.deepEqual(both.choices.map((c) => [c.index, c.text]), [[0, one.choices[0].text], [1, one.choices[0].text]]);
  assert.equal(both.usage.completion_tokens, 2 * one.usage.completion_tokens);
  assert.equal(both.usage.prompt_tokens, one.usage.prompt_tokens);
  const pieces = ['', ''];
  for await (const chunk of await openai.completions.create({ ...request, n: 2, stream: true })) {
    for (const choice of chunk.choices) pieces[choice.index] += choice.text;
  }
  assert.deepEqual(pieces, [one.choices[0].text, one.choices[0].text]);
}

// A model whose replies take seconds, for the checks that need one still
// running while they make requests: the demo model's 256 positions decode
// in well under a tenth of a second (200 tokens in 60 ms on a 2-thread
// machine), which a loaded machine's client round trips can outlast. A
// wider random model with the demo's tokenizer and 4,096 tokens of context
// takes seconds for 4,000 tokens. Made once, removed at exit.
let longModelDir = null;
function longModel() {
  if (!longModelDir) {
    longModelDir = mkdtempSync(path.join(tmpdir(), 'quire-long-'));
    process.on('exit', () => rmSync(longModelDir, { recursive: true, force: true }));
    execFileSync(cli, [
      'make-model', longModelDir, '--tokenizer-from', modelDir, '--format', 'exl2:4.0',
      '--vocab', '4096', '--hidden', '512', '--layers', '8', '--heads', '8', '--kv-heads', '4',
      '--intermediate', '1536', '--max-position-embeddings', '4096',
    ]);
  }
  return longModelDir;
}
const kLongReply = 4000;

async function checkAbort() {
  const server = await serve(['--model-name', 'demo', '--parallel', '8'], longModel());
  const openai = client(server);
  const before = await stats(server);
  assert.equal(before.running, 0);
  const controller = new AbortController();
  // The reply must outlast the client's two chunks and its look at the
  // statistics, so no end id may end it.
  const banned = Object.fromEntries(eosIds().map((id) => [id, -100]));
  const stream = await openai.chat.completions.create(
    {
      ...greedy('Tell me a long story.'),
      max_tokens: kLongReply,
      stream: true,
      logit_bias: banned,
    },
    { signal: controller.signal },
  );
  // The client's iterator ends quietly when its own signal aborts it.
  let seen = 0;
  for await (const chunk of stream) {
    if (chunk.choices[0]?.delta?.content) seen += 1;
    if (seen === 2) {
      const during = await stats(server);
      assert.equal(during.running, 1);
      assert.ok(during.cache.referenced_pages > 0);
      controller.abort();
    }
  }
  assert.ok(controller.signal.aborted, 'the stream ended before the client aborted it');
  // The job is cancelled and its pages are released (kept as cached pages).
  await waitFor(async () => {
    const after = await stats(server);
    return after.running === 0 && after.waiting === 0 && after.cache.referenced_pages === 0 && after.cache.sequences === 0;
  }, 'the aborted job to release its pages');
  const after = await stats(server);
  assert.equal(after.cache.free_pages + after.cache.cached_pages, after.cache.total_pages);

  // A client that leaves a stream of n replies ends all of them. Greedy and
  // with the prompt above, which is known to run long: sampled replies may
  // stop early at one of the chat template's stops (which the banned end ids
  // do not cover), before a client on a loaded machine has read both.
  const both = new AbortController();
  const pair = await openai.chat.completions.create(
    {
      ...greedy('Tell me a long story.'),
      max_tokens: kLongReply / 2,
      n: 2,
      stream: true,
      logit_bias: banned,
    },
    { signal: both.signal },
  );
  // Chunks the client had already read may still come after the abort.
  const indices = new Set();
  for await (const chunk of pair) {
    if (chunk.choices[0]?.delta?.content) indices.add(chunk.choices[0].index);
    if (indices.size === 2 && !both.signal.aborted) {
      const during = await stats(server);
      assert.equal(during.running, 2);
      both.abort();
    }
  }
  assert.ok(both.signal.aborted, 'the stream of two replies ended before the client aborted it');
  await waitFor(async () => {
    const now = await stats(server);
    return now.running === 0 && now.waiting === 0 && now.cache.referenced_pages === 0 && now.cache.sequences === 0;
  }, 'both replies of the aborted stream to release their pages');
  assert.equal(await stop(server), 0);
  // The aborted streams: the server saw the client leave.
  assert.match(server.log, /POST \/v1\/chat\/completions 200 client left \d+ ms/);
}

async function checkRefusals(server, reply) {
  const openai = client(server);
  for (const n of [0, -1, 1.5, 17]) {
    await expectApiError(
      openai.chat.completions.create({ ...greedy('Hi'), n }),
      400,
      { param: 'n', type: 'invalid_request_error', message: /\bn must be an integer/ },
    );
  }
  await expectApiError(
    openai.completions.create({ model: 'demo', prompt: 'Hi', n: 99 }),
    400,
    { param: 'n', message: /\bn must be an integer from 1 to 16; it is 99\.$/ },
  );
  await expectApiError(
    openai.chat.completions.create({ ...greedy('Hi'), temperature: 'hot' }),
    400,
    { param: 'temperature', message: /temperature must be a number, not a string/ },
  );
  await expectApiError(
    openai.chat.completions.create({ ...greedy('Hi'), model: 'gpt-4o' }),
    404,
    { code: 'model_not_found', param: 'model' },
  );
  await expectApiError(
    openai.chat.completions.create(greedy('word '.repeat(400))),
    400,
    { code: 'context_length_exceeded', message: /maximum context length is \d+ tokens\. However, you requested \d+ tokens/ },
  );
  await expectApiError(
    openai.chat.completions.create({ ...greedy('Hi'), max_tokens: 100000 }),
    400,
    { code: 'context_length_exceeded' },
  );

  const badJson = await rawPost(server, '/v1/chat/completions', '{"messages": [');
  assert.equal(badJson.status, 400);
  assertErrorObject(badJson.body);
  assert.match(badJson.body.error.message, /^The request body is not valid JSON/);

  const missing = await rawPost(server, '/v1/chat/completions', '{"model": "demo"}');
  assert.equal(missing.status, 400);
  assert.equal(missing.body.error.param, 'messages');

  const big = await rawPost(
    server,
    '/v1/chat/completions',
    JSON.stringify({ messages: [{ role: 'user', content: 'x'.repeat(10 * 1024 * 1024) }] }),
  );
  assert.equal(big.status, 413);
  assertErrorObject(big.body);
  assert.equal(big.body.error.code, 'request_too_large');

  const invalid = await rawPost(
    server,
    '/v1/chat/completions',
    Buffer.concat([
      Buffer.from('{"messages": [{"role": "user", "content": "'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}]}'),
    ]),
  );
  assert.equal(invalid.status, 400);
  assertErrorObject(invalid.body);
  assert.match(invalid.body.error.message, /not valid UTF-8/);

  const wrongMethod = await fetch(`${server.url}/v1/chat/completions`);
  assert.equal(wrongMethod.status, 405);
  assertErrorObject(await wrongMethod.json());
  const unknownPath = await fetch(`${server.url}/v1/engines`);
  assert.equal(unknownPath.status, 404);
  assertErrorObject(await unknownPath.json());
  assert.equal(unknownPath.headers.get('access-control-allow-origin'), null);

  // Still answering, and the same as before.
  const after = await openai.chat.completions.create(greedy('Tell me a fortune.'));
  assert.equal(after.choices[0].message.content, reply);
}

async function checkApiKey() {
  const server = await serve(['--model-name', 'demo', '--api-key', 'sekrit']);
  await expectApiError(
    client(server, { apiKey: 'wrong' }).chat.completions.create(greedy('Hi')),
    401,
    { code: 'invalid_api_key' },
  );
  const bare = await rawPost(server, '/v1/chat/completions', JSON.stringify(greedy('Hi')));
  assert.equal(bare.status, 401);
  assertErrorObject(bare.body);
  const ok = await client(server, { apiKey: 'sekrit' }).chat.completions.create(greedy('Hi'));
  assert.ok(ok.choices[0].message.content.length > 0);
  assert.equal((await fetch(`${server.url}/health`)).status, 200);
  assert.equal(await stop(server), 0);
}

async function checkBusy() {
  // Two replies at most: one running, one waiting; the replies run long
  // (longModel).
  const server = await serve(['--model-name', 'demo', '--parallel', '1', '--max-queue', '1'],
    longModel());
  const openai = client(server);
  // More choices than the server ever holds: refused, naming n.
  await expectApiError(openai.chat.completions.create({ ...greedy('Hi'), n: 3 }), 400, {
    param: 'n',
    message: /\bn is 3, but this server runs and queues at most 2 replies at once/,
  });
  const controller = new AbortController();
  const long = () =>
    openai.chat.completions.create(
      {
        ...greedy('Tell me a long story.'),
        max_tokens: kLongReply,
        stream: true,
        logit_bias: Object.fromEntries(eosIds().map((id) => [id, -100])),
      },
      { signal: controller.signal },
    );
  const first = (await long())[Symbol.asyncIterator]();
  await first.next();
  // One place is free, and n: 2 needs two: refused whole.
  await expectApiError(openai.chat.completions.create({ ...greedy('Hi'), n: 2 }), 503, { code: 'server_busy' });
  const second = (await long())[Symbol.asyncIterator]();
  await second.next();
  await expectApiError(openai.chat.completions.create(greedy('Hi')), 503, { code: 'server_busy' });
  controller.abort();
  await first.next().catch(() => {});
  await second.next().catch(() => {});
  // The job ends when it neither runs nor waits: a job the generator holds
  // back (for cache pages, say) still fills the queue.
  await waitFor(async () => {
    const now = await stats(server);
    return now.running === 0 && now.waiting === 0;
  }, 'the busy job to end');
  const ok = await openai.chat.completions.create(greedy('Hi'));
  assert.ok(ok.choices[0].message.content.length > 0);
  assert.equal(await stop(server), 0);
}

async function checkExposure() {
  const child = spawn(cli, ['serve', modelDir, '--host', '0.0.0.0', '--port', '0'], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let log = '';
  child.stderr.on('data', (data) => (log += data));
  const code = await new Promise((resolve) => child.on('exit', resolve));
  assert.equal(code, 2);
  assert.match(log, /--host 0\.0\.0\.0 lets other machines reach the server, and without --api-key/);
}

// After two minutes without a result, say so, show the servers' logs and stop.
const timer = watchdog('openai_client_check', 120);

async function main() {
  // Cache room for every reply at once: under page pressure a waiting reply
  // can lose its cached prompt and compute it again in a chunk, which rounds
  // otherwise than the token-by-token path checkConcurrency compares with.
  const server = await serve(['--model-name', 'demo', '--parallel', '8', '--context', '4096']);
  const reply = await checkReplies(server);
  await checkConcurrency(server);
  await checkChoices(server);
  await checkAbort();
  await checkRefusals(server, reply);
  assert.equal(await stop(server), 0);
  assert.match(server.log, /POST \/v1\/chat\/completions 200 \d+\+\d+ tokens \(\d+ cached\) \d+ ms/);
  await checkApiKey();
  await checkBusy();
  await checkExposure();
  console.log('openai_client_check: every check passed');
  clearTimeout(timer);
}

main().catch(failWithLogs);
