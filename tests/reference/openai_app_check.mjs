// OpenAI's official Node client against the server inside the desktop
// application (Settings → Server), which the app test has started: the model
// list, a two-turn conversation streamed as a chat client streams it, whose
// second turn finds the first turn's prompt and reply in the cache, and a
// whole (non-streamed) reply equal to the streamed one. Prints the figures as
// one JSON line for the test to check; exits 1 on the first failure.
//   node openai_app_check.mjs BASE_URL MODEL_ID
import assert from 'node:assert/strict';
import OpenAI from 'openai';

const [baseURL, modelId] = process.argv.slice(2);
if (!baseURL || !modelId) {
  console.error('usage: node openai_app_check.mjs BASE_URL MODEL_ID');
  process.exit(2);
}

const openai = new OpenAI({ baseURL, apiKey: 'none', maxRetries: 0, timeout: 120_000 });

// One streamed turn: its text, finish reason and usage.
async function streamTurn(messages) {
  const stream = await openai.chat.completions.create({
    model: modelId,
    messages,
    temperature: 0,
    max_tokens: 12,
    stream: true,
    stream_options: { include_usage: true },
  });
  let text = '';
  let finish = null;
  let usage = null;
  for await (const chunk of stream) {
    assert.equal(chunk.object, 'chat.completion.chunk');
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    text += choice.delta?.content ?? '';
    if (choice.finish_reason) finish = choice.finish_reason;
  }
  assert.ok(usage, 'no usage chunk although include_usage was asked for');
  assert.ok(['stop', 'length'].includes(finish), `finish_reason ${finish}`);
  return { text, usage };
}

async function main() {
  const models = await openai.models.list();
  assert.ok(
    models.data.some((m) => m.id === modelId),
    `the model list ${JSON.stringify(models.data.map((m) => m.id))} lacks ${modelId}`,
  );

  const question = { role: 'user', content: 'Where does the word quire come from?' };
  const turn1 = await streamTurn([question]);
  assert.ok(turn1.usage.completion_tokens > 0);
  const history = [question, { role: 'assistant', content: turn1.text }];
  const turn2 = await streamTurn([...history, { role: 'user', content: 'And then?' }]);
  const cached = turn2.usage.prompt_tokens_details.cached_tokens;
  assert.ok(
    cached >= turn1.usage.prompt_tokens,
    `turn 2 found ${cached} of its ${turn2.usage.prompt_tokens} prompt tokens cached; ` +
      `turn 1 had ${turn1.usage.prompt_tokens}`,
  );

  // The same second turn, whole: the same greedy text.
  const whole = await openai.chat.completions.create({
    model: modelId,
    messages: [...history, { role: 'user', content: 'And then?' }],
    temperature: 0,
    max_tokens: 12,
  });
  assert.equal(whole.object, 'chat.completion');
  assert.equal(whole.choices[0].message.content, turn2.text);

  console.log(
    JSON.stringify({
      turn1_prompt_tokens: turn1.usage.prompt_tokens,
      turn1_completion_tokens: turn1.usage.completion_tokens,
      turn2_prompt_tokens: turn2.usage.prompt_tokens,
      turn2_cached_tokens: cached,
      whole_cached_tokens: whole.usage.prompt_tokens_details.cached_tokens,
    }),
  );
}

main().catch((error) => {
  console.error(error?.stack ?? String(error));
  process.exit(1);
});
