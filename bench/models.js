// Two models, each its own slots (issue 29): while a slow model is saturated with calls, how long
// does a call to the other model take? The compiled `sluice serve` (a child process) with a
// catalogue of two models, `slow` and `fast`, next to the same daemon where `fast` is an alias of
// `slow` — one model, one scheduler, the slots shared — as the baseline. One upstream (a child
// process) answers a message saying "take your time" after SLOW_MS and any other at once. Every child is
// killed and every temporary directory removed.
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { childEnv, children, cleanUp, listeningUrl, spawnNode, tempDir } from './children.js';
import { fmt, met, table } from './lib.js';

const MAIN = fileURLToPath(new URL('../packages/daemon/dist/bundle/sluice.js', import.meta.url));
const SLOW_MS = 200;
const SLOTS = 2;
/** Callers keeping the slow model busy: its slots taken and calls queued behind them. */
const SLOW_CALLERS = 8;
/** A saturated slow model may add this much to a fast call's median at most. */
const TARGET_ADDED_MS = 5;

const UPSTREAM = `
const http = require('node:http');
const completion = JSON.stringify({ id: 'chatcmpl-bench', object: 'chat.completion', created: 1, model: 'm',
  choices: [{ index: 0, message: { role: 'assistant', content: 'pong' }, finish_reason: 'stop', logprobs: null }],
  usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 } });
http.createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c) => (body += c));
  req.on('end', () => {
    const answer = () => { res.writeHead(200, { 'content-type': 'application/json' }); res.end(completion); };
    if (body.includes('take your time')) setTimeout(answer, Number(process.env.SLOW_MS)); else answer();
  });
}).listen(0, '127.0.0.1', function () {
  process.stdout.write('upstream listening on http://127.0.0.1:' + this.address().port + '\\n');
});
`;

const body = (model, content) => JSON.stringify({ model, messages: [{ role: 'user', content }] });

function post(url, text, agent) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        let out = '';
        res.setEncoding('utf8');
        res.on('data', (c) => (out += c));
        res.on('end', () =>
          res.statusCode === 200 ? resolve(out) : reject(new Error(`${res.statusCode} ${out}`)),
        );
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

/** The compiled daemon serving `models` against `upstreamUrl`; resolves with its `/v1` URL. */
async function daemon(dir, name, models) {
  const child = spawnNode([
    MAIN,
    'serve',
    '--port',
    '0',
    '--data-dir',
    path.join(dir, name),
    '--workspace',
    dir,
    '--drain-timeout-ms',
    '0',
    '--models',
    JSON.stringify(models),
  ]);
  return `${await listeningUrl(child)}/v1/chat/completions`;
}

/** `calls` sequential fast calls' latencies in ms, with `load` slow callers running meanwhile. */
async function fastLatencies(url, calls, load, agent) {
  let stop = false;
  const callers = Array.from({ length: load }, async () => {
    while (!stop) await post(url, body('slow', 'take your time'), agent);
  });
  // Let the slow callers take the slots and fill the queue first.
  if (load > 0) await new Promise((resolve) => setTimeout(resolve, SLOW_MS / 2));
  const out = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await post(url, body('fast', 'now'), agent);
    out.push(performance.now() - start);
  }
  stop = true;
  await Promise.all(callers);
  return out;
}

const pct = (values, p) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
};

export async function benchModels({ quick = false } = {}) {
  const dir = tempDir('sluice-bench-models-');
  const agent = new http.Agent({ keepAlive: true, maxSockets: SLOW_CALLERS + 4 });
  try {
    const upstream = spawnNode(['-e', UPSTREAM], childEnv({ SLOW_MS: String(SLOW_MS) }));
    const baseUrl = `${await listeningUrl(upstream)}/v1`;
    const limits = { maxConcurrency: SLOTS, maxQueued: 64 };
    const model = (name, extra = {}) => ({
      name,
      provider: 'openai',
      model: name,
      baseUrl,
      ...limits,
      ...extra,
    });
    const subjects = [
      { name: 'two models, own slots', url: await daemon(dir, 'own', [model('slow'), model('fast')]) },
      {
        name: 'one model, shared slots',
        url: await daemon(dir, 'shared', [model('slow', { aliases: ['fast'] })]),
      },
    ];
    const calls = quick ? 10 : 40;
    const results = [];
    for (const subject of subjects) {
      await fastLatencies(subject.url, 3, 0, agent); // warm-up
      const idle = await fastLatencies(subject.url, calls, 0, agent);
      const busy = await fastLatencies(subject.url, calls, SLOW_CALLERS, agent);
      results.push({ idle, busy });
    }
    const [own, shared] = results;
    const added = pct(own.busy, 50) - pct(own.idle, 50);
    const ms = (v) => fmt(v, 1);
    const markdown = [
      `The compiled \`sluice serve\` with two \`openai\` models of ${SLOTS} slots and 64 queue places each, \`slow\``,
      `and \`fast\`, on one upstream (child process) that answers \`slow\`'s calls after ${SLOW_MS} ms and \`fast\`'s at`,
      `once; the baseline is the same daemon with \`fast\` an alias of \`slow\` (one model: its slots shared).`,
      `${calls} sequential \`fast\` calls with the slow model idle, then while ${SLOW_CALLERS} callers keep it saturated`,
      `(${SLOTS} executing, the rest queued). Command: \`npm run build && node bench/run.js --only=models\`.`,
      '',
      table(
        ['`fast` call latency (ms)', 'two models, own slots', 'one model, shared slots', 'target'],
        [
          ['p50, slow model idle', ms(pct(own.idle, 50)), ms(pct(shared.idle, 50)), ''],
          [
            'p50, slow model saturated',
            ms(pct(own.busy, 50)),
            ms(pct(shared.busy, 50)),
            `own slots add ≤ ${TARGET_ADDED_MS} ms: ${met(added <= TARGET_ADDED_MS)} (${ms(added)})`,
          ],
          ['p99, slow model saturated', ms(pct(own.busy, 99)), ms(pct(shared.busy, 99)), ''],
        ],
      ),
    ].join('\n');
    return { markdown };
  } finally {
    agent.destroy();
    for (const child of children) child.kill('SIGKILL');
    await Promise.all([...children].map((child) => child.exited));
    await cleanUp();
  }
}
