// `npm run soak`: the compiled daemon under 3x its model capacity for N minutes (not part of CI).
// Every 5 s it prints the daemon's RSS, prompts accepted / refused (503) / ended, what is still
// pending, and /health latency; at the end it checks that every accepted prompt ended exactly
// once. Flags: --minutes=3 --sessions=24 --load=3 (multiple of capacity) --prompt-bytes=4096.
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { setInterval, clearInterval } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { cleanUp, listeningUrl, spawnSluice, stopChild, tempDir } from './children.js';

/** The `sluice` command as users run it (its `#!` line sets the V8 flags). */
const MAIN = fileURLToPath(new URL('../packages/daemon/bin/sluice.js', import.meta.url));
const flag = (name, fallback) => {
  const found = process.argv.find((arg) => arg.startsWith(`--${name}=`));
  return found === undefined ? fallback : Number(found.slice(name.length + 3));
};
const MINUTES = flag('minutes', 3);
const SESSIONS = flag('sessions', 24);
const LOAD = flag('load', 3);
const PROMPT_BYTES = flag('prompt-bytes', 4096);
const ECHO_MS = 50;
const SLOTS = 4;
/** Model calls per second the daemon can serve: its slots over the echo model's latency. */
const CAPACITY = (SLOTS * 1000) / ECHO_MS;

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

function request(base, method, route, body) {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers =
      payload === undefined
        ? {}
        : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) };
    const req = http.request(`${base}${route}`, { method, agent, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: text ? JSON.parse(text) : undefined }));
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Counts each prompt's terminal events from the session's SSE stream. */
function follow(base, sessionId, terminals) {
  const req = http.get(
    `${base}/session/${sessionId}/events?maxQueued=2048`,
    { headers: { accept: 'text/event-stream' } },
    (res) => {
      let buffer = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buffer += chunk;
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const type = /^event: (.*)$/m.exec(frame)?.[1];
          if (type !== 'turn_complete' && type !== 'turn_error') continue;
          const promptId = JSON.parse(/^data: (.*)$/m.exec(frame)[1]).promptId;
          terminals.set(promptId, (terminals.get(promptId) ?? 0) + 1);
        }
      });
    },
  );
  return req;
}

function rssMiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)[1]) / 1024;
}

async function main() {
  const dir = tempDir('sluice-soak-');
  const child = spawnSluice([
    MAIN,
    'serve',
    '--port',
    '0',
    '--data-dir',
    path.join(dir, 'data'),
    '--workspace',
    dir,
    '--echo-delay-ms',
    String(ECHO_MS),
    '--model-max-concurrency',
    String(SLOTS),
    '--model-max-queued',
    '64',
    '--max-sessions',
    String(SESSIONS + 8),
  ]);
  const base = await listeningUrl(child);
  const terminals = new Map();
  const accepted = new Set();
  let refused = 0;
  const sessions = [];
  const streams = [];
  for (let i = 0; i < SESSIONS; i++) {
    const { body } = await request(base, 'POST', '/session', { sessionScope: 'thread' });
    sessions.push(body.sessionId);
    streams.push(follow(base, body.sessionId, terminals));
  }
  const text = 'z'.repeat(PROMPT_BYTES);
  const intervalMs = 1000 / (CAPACITY * LOAD);
  console.log(
    `soak: ${MINUTES} min, ${SESSIONS} sessions, ${(CAPACITY * LOAD).toFixed(0)} prompts/s offered against a capacity of ${CAPACITY}/s, prompts of ${PROMPT_BYTES} bytes`,
  );
  console.log('  time   rss MiB  accepted   refused     ended   pending  health p50 ms');
  const endAt = Date.now() + MINUTES * 60_000;
  let next = 0;
  let sent = 0;
  const healthMs = [];
  const report = setInterval(async () => {
    const started = performance.now();
    await request(base, 'GET', '/health');
    healthMs.push(performance.now() - started);
    const sorted = [...healthMs].sort((a, b) => a - b);
    healthMs.length = 0;
    const ended = [...terminals.values()].reduce((a, b) => a + b, 0);
    const line = [
      ((MINUTES * 60_000 - (endAt - Date.now())) / 1000).toFixed(0).padStart(5) + 's',
      rssMiB(child.pid).toFixed(1).padStart(9),
      String(accepted.size).padStart(9),
      String(refused).padStart(9),
      String(ended).padStart(9),
      String(accepted.size - ended).padStart(9),
      sorted[0].toFixed(2).padStart(14),
    ];
    console.log(line.join(' '));
  }, 5_000);
  const inflight = new Set();
  while (Date.now() < endAt) {
    const sessionId = sessions[sent++ % sessions.length];
    const post = request(base, 'POST', `/session/${sessionId}/prompt`, {
      prompt: [{ type: 'text', text }],
    }).then((res) => {
      if (res.status === 202) accepted.add(res.body.promptId);
      else if (res.status === 503) refused++;
      else throw new Error(`prompt answered ${res.status}: ${JSON.stringify(res.body)}`);
    });
    inflight.add(post);
    post.finally(() => inflight.delete(post));
    next += intervalMs;
    const wait = next - (performance.now() % 1e12);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, Math.min(intervalMs, wait))));
  }
  await Promise.all(inflight);
  // Let every accepted prompt end, then check exactly-once.
  const drainBy = Date.now() + 60_000;
  while ([...accepted].some((id) => !terminals.has(id)) && Date.now() < drainBy)
    await new Promise((r) => setTimeout(r, 200));
  clearInterval(report);
  const missing = [...accepted].filter((id) => !terminals.has(id)).length;
  const twice = [...terminals.values()].filter((n) => n > 1).length;
  console.log(
    `accepted ${accepted.size}, refused ${refused}; without a terminal event: ${missing}; with more than one: ${twice}; RSS at the end ${rssMiB(child.pid).toFixed(1)} MiB`,
  );
  for (const stream of streams) stream.destroy();
  await stopChild(child);
  await cleanUp();
  if (missing > 0 || twice > 0) process.exit(1);
}

await main();
