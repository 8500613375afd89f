// The model gateway: `/v1/chat/completions` of the compiled `sluice serve --provider openai`
// (a child process) next to calling the same upstream directly, side by side in one run. The
// upstream is a minimal fast OpenAI-compatible server in a child process of its own. Reports the
// latency the gateway adds per non-streamed call (p50, p99) and per streamed chunk, and the
// throughput ratio at concurrency 4. Every child is killed and every temporary directory removed.
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, children, listeningUrl, spawnNode, spawnSluice } from './children.js';
import { closedLoop, fmt, medianBy, met, roundRobin, table } from './lib.js';

/** The `sluice` command as users run it (its `#!` line sets the V8 flags). */
const MAIN = fileURLToPath(new URL('../packages/daemon/bin/sluice.js', import.meta.url));
const MODEL = 'bench-model';
const CHUNKS = 32;
const TARGET_ADDED_P50_MS = 1;
const TARGET_THROUGHPUT_RATIO = 0.8;
const BODY = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'ping' }] });
/** A model that takes SLOW_MS to answer: the upstream, not the machine, bounds the throughput. */
const SLOW_MS = 20;
const SLOW_BODY = JSON.stringify({ model: 'bench-slow', messages: [{ role: 'user', content: 'ping' }] });
const STREAM_BODY = JSON.stringify({
  model: MODEL,
  messages: [{ role: 'user', content: 'ping' }],
  stream: true,
});

/** A minimal OpenAI-compatible upstream: a fixed completion, or a stream of CHUNKS words. */
const UPSTREAM = `
const http = require('node:http');
const chunks = Number(process.env.CHUNKS);
const head = { id: 'chatcmpl-bench', created: 1, model: '${MODEL}' };
const completion = JSON.stringify({ ...head, object: 'chat.completion',
  choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
const frame = (choices, extra = {}) =>
  'data: ' + JSON.stringify({ ...head, object: 'chat.completion.chunk', choices, ...extra }) + '\\n\\n';
let stream = frame([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]);
for (let i = 0; i < chunks; i++) stream += frame([{ index: 0, delta: { content: 'word ' }, finish_reason: null }]);
stream += frame([{ index: 0, delta: {}, finish_reason: 'stop' }]);
stream += frame([], { usage: { prompt_tokens: 1, completion_tokens: chunks, total_tokens: chunks + 1 } });
stream += 'data: [DONE]\\n\\n';
const frames = stream.split(/(?<=\\n\\n)/);
http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    if (body.includes('"bench-slow"')) {
      return setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(completion);
      }, Number(process.env.SLOW_MS));
    }
    if (!body.includes('"stream":true')) {
      res.writeHead(200, { 'content-type': 'application/json' });
      return res.end(completion);
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const f of frames) res.write(f);
    res.end();
  });
}).listen(0, '127.0.0.1', function () {
  process.stdout.write('upstream listening on http://127.0.0.1:' + this.address().port + '\\n');
});
`;

/** One POST; resolves with the response body once it ended (a stream: its last frame). */
function post(url, body, agent) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', authorization: 'Bearer k' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (text += c));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(text) : reject(new Error(`${url}: ${res.statusCode} ${text}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** `calls` sequential calls; their latencies in ms. */
async function latencies(url, body, calls, agent) {
  const out = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await post(url, body, agent);
    out.push(performance.now() - start);
  }
  return out;
}

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

export async function benchGateway({ quick = false } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sluice-bench-gateway-'));
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  try {
    const upstream = spawnNode(
      ['-e', UPSTREAM],
      childEnv({ CHUNKS: String(CHUNKS), SLOW_MS: String(SLOW_MS) }),
    );
    const upstreamUrl = await listeningUrl(upstream);
    const daemon = spawnSluice([
      MAIN,
      'serve',
      '--port',
      '0',
      '--data-dir',
      path.join(dir, 'data'),
      '--workspace',
      dir,
      '--drain-timeout-ms',
      '0',
      '--provider',
      'openai',
      '--base-url',
      `${upstreamUrl}/v1`,
      '--model',
      MODEL,
    ]);
    const daemonUrl = await listeningUrl(daemon);
    const subjects = [
      { name: 'direct', url: `${upstreamUrl}/v1/chat/completions` },
      { name: 'gateway', url: `${daemonUrl}/v1/chat/completions` },
    ];
    // A relayed stream ends like the upstream's: check once that every chunk came through.
    const relayed = await post(subjects[1].url, STREAM_BODY, agent);
    const frames = relayed.split('\n\n').filter(Boolean).length;
    if (frames < CHUNKS + 2) throw new Error(`the gateway relayed ${frames} frames of ${CHUNKS + 4}`);

    const rounds = quick ? 2 : 5;
    const perRound = quick ? 100 : 400;
    const merge = (runs) => runs.flat();
    const [plainDirect, plainGateway] = (
      await roundRobin(rounds, subjects, (s) => latencies(s.url, BODY, perRound, agent))
    ).map(merge);
    const [streamDirect, streamGateway] = (
      await roundRobin(rounds, subjects, (s) => latencies(s.url, STREAM_BODY, perRound / 4, agent))
    ).map(merge);
    const total = quick ? 1_000 : 4_000;
    const [tDirect, tGateway] = (
      await roundRobin(rounds, subjects, (s) => closedLoop(total, 4, () => post(s.url, BODY, agent)))
    ).map((runs) => medianBy(runs));
    const slowTotal = quick ? 100 : 400;
    const [sDirect, sGateway] = (
      await roundRobin(rounds, subjects, (s) => closedLoop(slowTotal, 4, () => post(s.url, SLOW_BODY, agent)))
    ).map((runs) => medianBy(runs));

    const added50 = pct(plainGateway, 50) - pct(plainDirect, 50);
    const added99 = pct(plainGateway, 99) - pct(plainDirect, 99);
    const perChunk50 = (pct(streamGateway, 50) - pct(streamDirect, 50)) / CHUNKS;
    const ratio = tGateway / tDirect;
    const ms = (v) => fmt(v, 3);
    const markdown = [
      `One upstream (a minimal OpenAI-compatible server, child process); \`sluice serve --provider openai\``,
      `(child process, SQLite journal) in front of it. ${rounds} rounds after a warm-up, subjects in turn.`,
      `Non-streamed: ${rounds * perRound} sequential calls each; streamed: ${(rounds * perRound) / 4} calls of`,
      `${CHUNKS} content chunks each; throughput: ${total} calls at concurrency 4, median of ${rounds}`,
      `(and ${slowTotal} calls to a model that answers after ${SLOW_MS} ms, where the upstream bounds the rate).`,
      '',
      table(
        ['', 'direct', 'through the gateway', 'added', 'target'],
        [
          [
            'non-streamed call p50 (ms)',
            ms(pct(plainDirect, 50)),
            ms(pct(plainGateway, 50)),
            ms(added50),
            `≤ ${TARGET_ADDED_P50_MS} ms: ${met(added50 <= TARGET_ADDED_P50_MS)}`,
          ],
          [
            'non-streamed call p99 (ms)',
            ms(pct(plainDirect, 99)),
            ms(pct(plainGateway, 99)),
            ms(added99),
            '',
          ],
          [
            `streamed call p50 (ms, ${CHUNKS} chunks)`,
            ms(pct(streamDirect, 50)),
            ms(pct(streamGateway, 50)),
            `${ms(perChunk50)} per chunk`,
            '',
          ],
          [
            'throughput at concurrency 4 (calls/s)',
            fmt(tDirect),
            fmt(tGateway),
            `${fmt(ratio, 2)}×`,
            `≥ ${TARGET_THROUGHPUT_RATIO}×: ${met(ratio >= TARGET_THROUGHPUT_RATIO)}`,
          ],
          [
            `throughput at concurrency 4, model answering in ${SLOW_MS} ms (calls/s)`,
            fmt(sDirect, 1),
            fmt(sGateway, 1),
            `${fmt(sGateway / sDirect, 2)}×`,
            '',
          ],
        ],
      ),
    ].join('\n');
    return { markdown };
  } finally {
    agent.destroy();
    for (const child of children) child.kill('SIGKILL');
    await Promise.all([...children].map((child) => child.exited));
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
