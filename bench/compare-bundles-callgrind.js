// `node bench/compare-bundles-callgrind.js <dir> <dir> ...`: the A/B of bench/compare-bundles.js
// counted in CPU instructions by valgrind's callgrind instead of CPU time, which this shared
// machine's noise moves by ±25 % between rounds. Per bundle (a directory under
// packages/daemon/dist/), two runs of `serve` under callgrind, V8 on one thread, without code
// caches (as the first start after a build): one that starts, answers `/capabilities`, opens a
// session, fills its queue and exits, and one that also answers `N` (default 1,500)
// `503 prompt_queue_full` refusals on one keep-alive connection. The first count is the start-up
// (plus the same few requests and the exit for every bundle); the difference over `N` is the cost
// of a refusal. Each count takes a minute or more.
import { spawn } from 'node:child_process';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanUp, listeningUrl, tempDir } from './children.js';
import { fmt, table } from './lib.js';

const DIST = fileURLToPath(new URL('../packages/daemon/dist/', import.meta.url));
const BODY = JSON.stringify({ prompt: [{ type: 'text', text: 'ping' }] });
const N = Number(process.env.N ?? 1_500);
const bundles = process.argv.slice(2);
if (bundles.length < 2)
  throw new Error('usage: node bench/compare-bundles-callgrind.js <bundle dir> <bundle dir> ...');

function request(agent, url, method = 'GET', body = undefined) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

/** Instructions of one run of `bundle` that answers `refusals` refusals. */
async function count(bundle, refusals) {
  const dir = tempDir('sluice-callgrind-');
  const child = spawn(
    'valgrind',
    [
      '--tool=callgrind',
      '--callgrind-out-file=/dev/null',
      process.execPath,
      '--single-threaded',
      path.join(DIST, bundle, 'sluice.js'),
      'serve',
      '--port',
      '0',
      '--data-dir',
      path.join(dir, 'data'),
      '--workspace',
      dir,
      '--drain-timeout-ms',
      '0',
      '--echo-delay-ms',
      String(2 ** 31 - 1),
    ],
    {
      env: { ...process.env, SLUICE_CODE_CACHE: '0', SLUICE_LOG_LEVEL: 'error' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk) => (stderr += chunk));
  child.stderrTail = () => stderr.slice(-2_000);
  child.exited = new Promise((resolve) => child.once('close', resolve));
  const base = await listeningUrl(child, 600_000);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await request(agent, `${base}/capabilities`);
  const { sessionId } = JSON.parse((await request(agent, `${base}/session`, 'POST', '{}')).body);
  const url = `${base}/session/${sessionId}/prompt`;
  for (let i = 0; i < 5; i++) await request(agent, url, 'POST', BODY);
  for (let i = 0; i < refusals; i++) {
    const refused = await request(agent, url, 'POST', BODY);
    if (refused.status !== 503) throw new Error(`${bundle}: ${refused.status} ${refused.body}`);
  }
  agent.destroy();
  child.kill('SIGTERM');
  await child.exited;
  const match = /Collected : (\d+)/.exec(stderr);
  if (!match) throw new Error(`callgrind printed no count for ${bundle}:\n${stderr.slice(-2_000)}`);
  return Number(match[1]);
}

const rows = [];
try {
  for (const bundle of bundles) {
    const start = await count(bundle, 0);
    rows.push({ bundle, start, refusal: ((await count(bundle, N)) - start) / N });
  }
} finally {
  await cleanUp();
}
const [first] = rows;
console.log(
  table(
    ['bundle', 'start-up (M instructions)', 'vs first', 'per refusal (instructions)', 'vs first'],
    rows.map((row) => [
      row.bundle,
      fmt(row.start / 1e6, 1),
      `${fmt(row.start / first.start, 3)}×`,
      fmt(row.refusal),
      `${fmt(row.refusal / first.refusal, 3)}×`,
    ]),
  ),
);
