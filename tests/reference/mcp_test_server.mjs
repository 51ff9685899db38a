// An MCP server built on the official TypeScript SDK (@modelcontextprotocol/sdk,
// pinned in package.json), which tests/app/tools runs Quire's MCP client
// against.
//
//   node mcp_test_server.mjs --stdio [--page-size N]
//   node mcp_test_server.mjs --http PORT [--page-size N] [--json]
//
// --stdio serves one client on stdin/stdout (StdioServerTransport).
// --http serves the Streamable HTTP transport (StreamableHTTPServerTransport,
// stateful sessions) at http://127.0.0.1:PORT/mcp with node:http; PORT 0
// picks a free port. Either way the server prints "listening PORT" on stderr
// (stdout is the protocol under --stdio) once it serves.
// --page-size N cuts tools/list into pages of N tools with nextCursor.
// --only NAMES (comma-separated) registers only those tools.
// --json answers each POST with one JSON body rather than an event stream
// (enableJsonResponse). Under --http the server logs on stderr the
// Authorization header of each initialize ("initialize with authorization:
// ...") and each session it ends ("session deleted ID").
//
// Tools:
//   echo {text}            the text back
//   add {a, b}             the sum as text and as structuredContent {sum}
//   sleep {ms}             answers "slept N ms" after ms; a cancelled sleep is
//                          counted and its reason kept (see stats)
//   stats {}               structuredContent {cancelled, lastCancelReason, calls}
//   fail {}                a result with isError true
//   throw {message}        the handler throws (the SDK answers isError true)
//   big {bytes}            a text of that many bytes ("abcd..." repeated)
//   media {}               one content part of each kind: text, image, audio,
//                          resource_link, embedded text and blob resources
//   crash {code}           process.exit(code) in the middle of the call
//   add_tool {name, quiet} registers a tool `name` (which echoes); the SDK
//                          sends notifications/tools/list_changed (over HTTP
//                          in the GET event stream), and unless quiet the
//                          tool sends one more in the call's own stream
//   stderr {text}          writes text to stderr
//   end_session {}         over HTTP, ends the session 50 ms after answering
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { ListToolsRequestSchema, isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';

const args = process.argv.slice(2);
const option = (name) => {
  const at = args.indexOf(name);
  return at >= 0 ? args[at + 1] : undefined;
};
const pageSize = Number(option('--page-size') ?? 0);
const jsonResponses = args.includes('--json');
// --only a,b registers only those tools (the app's tests offer a model a
// single tool whose arguments cannot run on).
const only = option('--only')?.split(',');

// Shared by every session so that a test can ask one session what another saw.
const stats = { cancelled: 0, lastCancelReason: '', calls: 0 };

function makeServer(endSession = () => {}) {
  const server = new McpServer({ name: 'quire-test-server', version: '1.0.0' });
  if (only) {
    const register = server.registerTool.bind(server);
    server.registerTool = (name, ...rest) => (only.includes(name) ? register(name, ...rest) : undefined);
  }
  const text = (t) => ({ content: [{ type: 'text', text: t }] });

  server.registerTool('echo', {
    title: 'Echo',
    description: 'Returns its text',
    inputSchema: { text: z.string() },
    annotations: { readOnlyHint: true },
  }, async ({ text: t }) => { stats.calls++; return text(t); });

  server.registerTool('add', {
    description: 'Adds two numbers',
    inputSchema: { a: z.number(), b: z.number() },
    outputSchema: { sum: z.number() },
  }, async ({ a, b }) => {
    stats.calls++;
    return { content: [{ type: 'text', text: String(a + b) }], structuredContent: { sum: a + b } };
  });

  server.registerTool('sleep', {
    description: 'Sleeps for ms milliseconds',
    inputSchema: { ms: z.number() },
  }, async ({ ms }, extra) => {
    stats.calls++;
    return await new Promise((resolve) => {
      const timer = setTimeout(() => resolve(text(`slept ${ms} ms`)), ms);
      const aborted = () => {
        clearTimeout(timer);
        stats.cancelled++;
        const reason = extra.signal.reason;
        stats.lastCancelReason = reason instanceof Error ? reason.message : String(reason ?? '');
        resolve(text('cancelled'));
      };
      if (extra.signal.aborted) aborted();
      else extra.signal.addEventListener('abort', aborted);
    });
  });

  server.registerTool('stats', {
    description: 'What the server saw',
    inputSchema: {},
    outputSchema: { cancelled: z.number(), lastCancelReason: z.string(), calls: z.number() },
  }, async () => ({ content: [{ type: 'text', text: JSON.stringify(stats) }], structuredContent: { ...stats } }));

  server.registerTool('fail', { description: 'Fails', inputSchema: {} }, async () => {
    stats.calls++;
    return { content: [{ type: 'text', text: 'the tool failed on purpose' }], isError: true };
  });

  server.registerTool('throw', {
    description: 'Throws',
    inputSchema: { message: z.string().optional() },
  }, async ({ message }) => {
    stats.calls++;
    throw new Error(message ?? 'thrown on purpose');
  });

  server.registerTool('big', {
    description: 'A long text',
    inputSchema: { bytes: z.number() },
  }, async ({ bytes }) => {
    stats.calls++;
    const unit = 'abcdefghijklmnopqrstuvwxyz0123456789\n';
    return text(unit.repeat(Math.ceil(bytes / unit.length)).slice(0, bytes));
  });

  server.registerTool('media', { description: 'One part of each kind', inputSchema: {} }, async () => ({
    content: [
      { type: 'text', text: 'parts follow' },
      { type: 'image', data: Buffer.from('not really a png').toString('base64'), mimeType: 'image/png' },
      { type: 'audio', data: Buffer.from('12345678').toString('base64'), mimeType: 'audio/wav' },
      { type: 'resource_link', uri: 'file:///tmp/report.txt', name: 'report.txt', mimeType: 'text/plain' },
      { type: 'resource', resource: { uri: 'file:///tmp/notes.md', mimeType: 'text/markdown', text: 'embedded notes' } },
      { type: 'resource', resource: { uri: 'file:///tmp/blob.bin', mimeType: 'application/octet-stream', blob: Buffer.from('xyz').toString('base64') } },
    ],
  }));

  server.registerTool('crash', {
    description: 'Exits in the middle of the call',
    inputSchema: { code: z.number().optional() },
  }, async ({ code }) => {
    process.stderr.write('crashing on purpose\n');
    process.exit(code ?? 3);
  });

  server.registerTool('stderr', {
    description: 'Writes to stderr',
    inputSchema: { text: z.string() },
  }, async ({ text: t }) => { process.stderr.write(t + '\n'); return text('written'); });

  server.registerTool('add_tool', {
    description: 'Registers a new tool',
    inputSchema: { name: z.string(), quiet: z.boolean().optional() },
  }, async ({ name, quiet }, extra) => {
    server.registerTool(name, { description: `Added at run time`, inputSchema: { text: z.string() } },
      async ({ text: t }) => text(t));
    if (!quiet) await extra.sendNotification({ method: 'notifications/tools/list_changed' });
    return text(`added ${name}`);
  });

  server.registerTool('end_session', {
    description: 'Ends the HTTP session after answering (the next request gets 404)',
    inputSchema: {},
  }, async () => {
    setTimeout(endSession, 50);
    return text('ending the session');
  });

  if (pageSize > 0) {
    const all = server.server._requestHandlers.get('tools/list');
    server.server.removeRequestHandler('tools/list');
    server.server.setRequestHandler(ListToolsRequestSchema, async (request, extra) => {
      const { tools } = await all(request, extra);
      const start = Number(request.params?.cursor ?? 0);
      const page = tools.slice(start, start + pageSize);
      const next = start + pageSize;
      return next < tools.length ? { tools: page, nextCursor: String(next) } : { tools: page };
    });
  }
  return server;
}

if (args.includes('--stdio')) {
  const server = makeServer();
  await server.connect(new StdioServerTransport());
  process.stderr.write('listening stdio\n');
} else if (option('--http') !== undefined) {
  const transports = new Map();
  const readBody = (req) => new Promise((resolve, reject) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
  const httpServer = http.createServer(async (req, res) => {
    try {
      if (!req.url.startsWith('/mcp')) {
        res.writeHead(404).end('not found');
        return;
      }
      const sessionId = req.headers['mcp-session-id'];
      if (req.method === 'POST') {
        const text = await readBody(req);
        let body;
        try {
          body = JSON.parse(text);
        } catch {
          res.writeHead(400, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null }));
          return;
        }
        let transport = sessionId ? transports.get(sessionId) : undefined;
        if (!transport) {
          if (sessionId || !isInitializeRequest(body)) {
            res.writeHead(sessionId ? 404 : 400, { 'content-type': 'application/json' })
              .end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32000, message: 'No valid session' }, id: null }));
            return;
          }
          process.stderr.write(`initialize with authorization: ${req.headers.authorization ?? '(none)'}\n`);
          transport = new StreamableHTTPServerTransport({
            sessionIdGenerator: () => randomUUID(),
            enableJsonResponse: jsonResponses,
            onsessioninitialized: (id) => transports.set(id, transport),
          });
          transport.onclose = () => {
            if (transport.sessionId) transports.delete(transport.sessionId);
          };
          const session = transport;
          await makeServer(() => session.close()).connect(transport);
        }
        await transport.handleRequest(req, res, body);
        return;
      }
      const transport = sessionId ? transports.get(sessionId) : undefined;
      if (!transport) {
        res.writeHead(404).end('no such session');
        return;
      }
      if (req.method === 'DELETE') process.stderr.write(`session deleted ${sessionId}\n`);
      await transport.handleRequest(req, res);
    } catch (error) {
      process.stderr.write(`error: ${error?.stack ?? error}\n`);
      if (!res.headersSent) res.writeHead(500).end();
    }
  });
  httpServer.listen(Number(option('--http')), '127.0.0.1', () => {
    process.stderr.write(`listening ${httpServer.address().port}\n`);
  });
} else {
  process.stderr.write('usage: node mcp_test_server.mjs --stdio | --http PORT [--page-size N]\n');
  process.exit(2);
}
