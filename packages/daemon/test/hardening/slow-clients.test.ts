import { connect, type Socket } from 'node:net';
import { afterEach, expect, test } from 'vitest';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

// Issue 19 item 4: a client that sends headers and part of a body must not hold a connection
// for ever (3,000 such connections stayed open 150 s+), and the number of open connections is
// capped; well-behaved clients keep being served.

let sluice: InProcessDaemon | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.destroy();
  await sluice?.stop();
  sluice = undefined;
});

/** A raw connection to the daemon; resolves once connected. */
function open(url: string): Promise<Socket> {
  const { port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), '127.0.0.1', () => resolve(socket));
    socket.on('error', reject);
    sockets.push(socket);
  });
}

/** What the server sent before it closed the connection. */
function closed(socket: Socket): Promise<string> {
  let received = '';
  socket.setEncoding('utf8').on('data', (chunk: string) => (received += chunk));
  return new Promise((resolve) => socket.once('close', () => resolve(received)));
}

test('a request whose body stops arriving is answered 408 and its connection closed', async () => {
  sluice = await startInProcess({}, {}, { requestTimeoutMs: 200 });
  const { port } = new URL(sluice.url);
  const slow = await open(sluice.url);
  const ended = closed(slow);
  slow.write(
    `POST /session HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"cwd":"/`,
  );
  expect(await ended).toMatch(/^HTTP\/1\.1 408 /);
  // Others are served meanwhile and after.
  const health = await fetch(`${sluice.url}/health`);
  expect(health.status).toBe(200);
});

test('connections beyond the cap are closed at once; the ones inside it are served', async () => {
  sluice = await startInProcess({}, {}, { maxConnections: 3 });
  const held = await Promise.all([open(sluice.url), open(sluice.url), open(sluice.url)]);
  const extra = await open(sluice.url);
  expect(await closed(extra)).toBe('');
  const { port } = new URL(sluice.url);
  const answer = closed(held[0]!);
  held[0]!.end(`GET /health HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
  expect(await answer).toMatch(/^HTTP\/1\.1 200 /);
});

test('an event stream outlives the request timeout: it bounds requests, not responses', async () => {
  sluice = await startInProcess({}, {}, { requestTimeoutMs: 100 });
  const created = await fetch(`${sluice.url}/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: '{}',
  });
  const { sessionId } = (await created.json()) as { sessionId: string };
  const controller = new AbortController();
  const events = await fetch(`${sluice.url}/session/${sessionId}/events`, { signal: controller.signal });
  expect(events.status).toBe(200);
  const reader = events.body!.getReader();
  // Five request timeouts pass with the stream open.
  await new Promise((resolve) => setTimeout(resolve, 500));
  const sent = await fetch(`${sluice.url}/session/${sessionId}/prompt`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ prompt: [{ type: 'text', text: 'still there?' }] }),
  });
  expect(sent.status).toBe(202);
  try {
    expect(await readUntil(reader, 'turn_complete')).toContain('event: turn_complete');
  } finally {
    controller.abort();
  }
});

/** Reads the stream until its text contains `needle`; throws when the stream ends first. */
async function readUntil(reader: ReadableStreamDefaultReader<Uint8Array>, needle: string): Promise<string> {
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(needle)) {
    const { done, value } = await reader.read();
    if (done) throw new Error(`the event stream ended before "${needle}"; it sent:\n${text}`);
    text += decoder.decode(value, { stream: true });
  }
  return text;
}
