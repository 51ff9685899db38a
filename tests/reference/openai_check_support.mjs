// Helpers of openai_client_check.mjs: `quire-cli serve` processes on free
// loopback ports, clients for them, and assertions on the answers.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import OpenAI from 'openai';

export function checkSupport(cli, modelDir) {
  const started = [];

  // Starts `quire-cli serve` (of `dir`, the demo model unless given) and
  // resolves with its base URL once it listens.
  function serve(args, dir = modelDir) {
    const child = spawn(cli, ['serve', dir, '--port', '0', ...args], {
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    started.push(child);
    child.log = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line:\n${child.log}`)), 30000);
      child.stderr.on('data', (data) => {
        child.log += data;
        const match = /on (http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(child.log);
        if (match && !child.url) {
          clearTimeout(timer);
          child.url = match[1];
          resolve(child);
        }
      });
      child.on('exit', (code) => {
        clearTimeout(timer);
        if (!child.url) reject(new Error(`serve exited with ${code}:\n${child.log}`));
      });
    });
  }

  function stop(child) {
    return new Promise((resolve) => {
      if (child.exitCode !== null) return resolve(child.exitCode);
      child.on('exit', (code) => resolve(code));
      child.kill('SIGTERM');
    });
  }

  function client(server, options = {}) {
    return new OpenAI({ baseURL: `${server.url}/v1`, apiKey: 'none', maxRetries: 0, ...options });
  }

  async function expectApiError(promise, status, fields = {}) {
    try {
      await promise;
    } catch (error) {
      assert.equal(error.status, status, `status of ${error.message}`);
      for (const [key, value] of Object.entries(fields)) {
        if (value instanceof RegExp) assert.match(error[key], value);
        else assert.equal(error[key], value, `${key} of ${error.message}`);
      }
      return error;
    }
    assert.fail(`expected HTTP ${status}`);
  }

  async function rawPost(server, route, body, headers = {}) {
    const response = await fetch(`${server.url}${route}`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body,
    });
    return { status: response.status, body: await response.json() };
  }

  function assertErrorObject(body) {
    assert.deepEqual(Object.keys(body), ['error']);
    assert.deepEqual(Object.keys(body.error), ['message', 'type', 'param', 'code']);
    assert.equal(typeof body.error.message, 'string');
    assert.ok(body.error.message.length > 0);
  }

  async function stats(server) {
    const response = await fetch(`${server.url}/v1/quire/stats`);
    assert.equal(response.status, 200);
    return response.json();
  }

  async function waitFor(condition, what) {
    for (let i = 0; i < 200; ++i) {
      if (await condition()) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.fail(`timed out waiting for ${what}`);
  }

  // Every end-of-text id the model stops at (generation_config.json may list
  // several), so that a reply meant to run long cannot end early.
  function eosIds() {
    const read = (name) => {
      try {
        return JSON.parse(readFileSync(path.join(modelDir, name), 'utf8')).eos_token_id;
      } catch {
        return undefined;
      }
    };
    const id = read('generation_config.json') ?? read('config.json');
    if (id === undefined || id === null) return [];
    return Array.isArray(id) ? id : [id];
  }

  // A check that waits forever would leave CI with a timeout and no word of
  // where: after `seconds`, say so, show the servers' logs and stop. Returns
  // the timer, for clearTimeout once the check is done.
  function watchdog(name, seconds) {
    return setTimeout(() => {
      console.error(`${name}: no result after ${seconds} s`);
      for (const child of started) {
        console.error(`--- server log (${child.url}) ---\n${child.log}`);
        child.kill('SIGKILL');
      }
      process.exit(1);
    }, seconds * 1000);
  }

  // A failed check: the error, the logs of the servers still running, which
  // are stopped, and exit status 1.
  function failWithLogs(error) {
    console.error(error);
    for (const child of started) {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        console.error(`--- server log (${child.url}) ---\n${child.log}`);
      }
    }
    process.exit(1);
  }

  return {
    started,
    watchdog,
    failWithLogs,
    serve,
    stop,
    client,
    expectApiError,
    rawPost,
    assertErrorObject,
    stats,
    waitFor,
    eosIds,
  };
}
