// A misbehaving MCP stdio server for the tests of Quire's MCP client (no
// SDK: it writes what a correct server never would).
//
//   node mcp_garbage_server.mjs MODE
//
// MODE:
//   not-json      answers initialize with a line that is not JSON
//   not-jsonrpc   answers with JSON that is not JSON-RPC 2.0
//   unknown-id    answers initialize with a response to id 999
//   old-version   answers initialize with protocolVersion "2023-01-01"
//   silent        never answers (an initialize timeout)
//   exit          writes to stderr and exits with code 7 at once
//   error         initializes, lists one tool "echo", and answers tools/call
//                 with a JSON-RPC error -32602
//   ping          initializes, lists one tool "echo", and before answering a
//                 tools/call asks the client ping and an unknown method; the
//                 call's text says what the client answered
import readline from 'node:readline';

const mode = process.argv[2];
const send = (message) => process.stdout.write(JSON.stringify(message) + '\n');

if (mode === 'exit') {
  process.stderr.write('garbage server: giving up before anything\n');
  process.exit(7);
}

const initializeResult = (version = '2025-06-18') => ({
  protocolVersion: version,
  capabilities: { tools: {} },
  serverInfo: { name: 'garbage', version: '0' },
});
const tool = { name: 'echo', description: 'echo', inputSchema: { type: 'object' } };
let waiting = null;
const answers = [];

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  if (message.id !== undefined && message.method === undefined) {
    // The client's answer to one of our requests.
    answers.push(message);
    if (answers.length === 2 && waiting) {
      send({ jsonrpc: '2.0', id: waiting, result: { content: [{ type: 'text', text: JSON.stringify(answers) }] } });
    }
    return;
  }
  if (message.method === 'initialize') {
    switch (mode) {
      case 'not-json': process.stdout.write('Hello! I am not JSON at all\n'); return;
      case 'not-jsonrpc': send({ hello: 'world', id: message.id }); return;
      case 'unknown-id': send({ jsonrpc: '2.0', id: 999, result: initializeResult() }); return;
      case 'old-version': send({ jsonrpc: '2.0', id: message.id, result: initializeResult('2023-01-01') }); return;
      case 'silent': return;
      default: send({ jsonrpc: '2.0', id: message.id, result: initializeResult() }); return;
    }
  }
  if (message.method === 'tools/list') {
    send({ jsonrpc: '2.0', id: message.id, result: { tools: [tool] } });
    return;
  }
  if (message.method === 'tools/call') {
    if (mode === 'ping') {
      waiting = message.id;
      send({ jsonrpc: '2.0', id: 'p1', method: 'ping' });
      send({ jsonrpc: '2.0', id: 'p2', method: 'sampling/createMessage', params: {} });
      return;
    }
    send({ jsonrpc: '2.0', id: message.id, error: { code: -32602, message: 'bad arguments, on purpose' } });
  }
});
