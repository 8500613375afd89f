import { afterAll, beforeAll, expect, test } from 'vitest';
import { DaemonClient, type DaemonEvent } from '../src/index.js';
import { startInProcess, type InProcessDaemon } from '../../daemon/test/helpers/in-process-daemon.js';
import { startCountingProxy, type CountingProxy } from './helpers/counting-proxy.js';
import { text } from './helpers/script-server.js';

// The daemon sends `X-Accel-Buffering: no` for reverse proxies such as nginx. When the upstream
// is briefly unreachable (restart, accept backlog) such a proxy answers 502 Bad Gateway /
// 504 Gateway Timeout. Re-opening an event stream is idempotent (GET with Last-Event-ID), and a
// direct ECONNREFUSED *is* re-opened — through a proxy the stream must not die on the first 502.
let daemon: InProcessDaemon;
let proxy: CountingProxy;
let failNextEvents = 0;

beforeAll(async () => {
  daemon = await startInProcess();
  proxy = await startCountingProxy(daemon.url, (req, res) => {
    if (req.method !== 'GET' || !/\/events/.test(req.url ?? '') || failNextEvents === 0) return false;
    failNextEvents--;
    res.writeHead(502, { 'Content-Type': 'text/html' });
    res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
    return true;
  });
});
afterAll(async () => {
  await proxy?.close();
  await daemon?.stop();
});

test('an event stream behind a reverse proxy re-opens after a transient 502, like after a refused connection', async () => {
  const client = new DaemonClient({ baseUrl: proxy.url, reconnect: { baseMs: 1, capMs: 5 } });
  const { sessionId } = await client.createOrAttachSession({ sessionScope: 'thread' });
  await client.prompt(sessionId, text('one'));
  failNextEvents = 1;
  const stop = new AbortController();
  const seen: DaemonEvent[] = [];
  for await (const event of client.subscribeEvents(sessionId, { lastEventId: 0, signal: stop.signal })) {
    seen.push(event);
    if (event.type === 'replay_complete') break;
  }
  expect(seen.some((e) => e.type === 'turn_complete')).toBe(true);
});
