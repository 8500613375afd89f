import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DaemonClient } from '../src/index.js';
import { startInProcess, type InProcessDaemon } from '../../daemon/test/helpers/in-process-daemon.js';
import { text } from './helpers/script-server.js';

// Issue 19 item 12: the SDK sends every prompt with an Idempotency-Key and, when the connection
// fails before it could read the answer, sends the same request again with the same key. The
// daemon answers the retry with the first 202: the prompt is admitted once.

let daemon: InProcessDaemon;
let proxy: Server;
let proxyUrl: string;
const promptKeys: string[] = [];
let cutNext = true;

beforeAll(async () => {
  daemon = await startInProcess({ echoDelayMs: 60_000 });
  // Forwards to the daemon; the first prompt POST reaches it, and then its answer is lost.
  proxy = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers))
      if (typeof value === 'string' && name !== 'host' && name !== 'connection') headers.set(name, value);
    const isPrompt = req.method === 'POST' && req.url!.endsWith('/prompt');
    if (isPrompt) promptKeys.push(String(req.headers['idempotency-key']));
    const answer = await fetch(daemon.url + req.url, {
      method: req.method,
      headers,
      ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
    });
    const body = Buffer.from(await answer.arrayBuffer());
    if (isPrompt && cutNext) {
      cutNext = false;
      return req.socket.destroy(); // the daemon admitted it; the client never hears
    }
    res.writeHead(answer.status, {
      'content-type': answer.headers.get('content-type') ?? 'application/json',
    });
    res.end(body);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await daemon?.stop();
});

test('a prompt whose 202 was lost is sent again with the same key and admitted once', async () => {
  const client = new DaemonClient({ baseUrl: proxyUrl, reconnect: false });
  const { sessionId } = await client.createOrAttachSession({ sessionScope: 'thread' });
  const accepted = await client.promptNonBlocking(sessionId, text('run me once'));
  expect(promptKeys).toHaveLength(2);
  expect(promptKeys[0]).toMatch(/^[0-9a-f-]{36}$/);
  expect(promptKeys[1]).toBe(promptKeys[0]);
  const { pendingPrompts } = await client.pendingPrompts(sessionId);
  expect(pendingPrompts.map((p) => p.promptId)).toEqual(['promptId' in accepted ? accepted.promptId : '']);
});
