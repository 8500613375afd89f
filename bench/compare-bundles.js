// `node bench/compare-bundles.js <dir> <dir> ...`: an A/B of daemon bundles built from different
// commits (copies of packages/daemon/dist/bundle, each a directory under packages/daemon/dist/ so
// that better-sqlite3 resolves), measured in the same run, taking turns: the server CPU per
// `503 prompt_queue_full` refusal under load, and the CPU a start uses to its first
// `/capabilities` (code caches warm). For a change on a hot path, where the machine's noise is
// larger than the difference between two separate `npm run bench` runs. `ROUNDS`, `SECONDS`.
import autocannon from 'autocannon';
import http from 'node:http';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanUp, listeningUrl, spawnNode, stopChild, tempDir } from './children.js';
import { fmt, table } from './lib.js';

const DIST = fileURLToPath(new URL('../packages/daemon/dist/', import.meta.url));
const bundles = process.argv.slice(2);
const rounds = Number(process.env.ROUNDS ?? 3);
const seconds = Number(process.env.SECONDS ?? 4);
const STARTS = 3;
const BODY = JSON.stringify({ prompt: [{ type: 'text', text: 'ping' }] });
const HEADERS = { 'content-type': 'application/json' };

if (bundles.length < 2) throw new Error('usage: node bench/compare-bundles.js <bundle dir> <bundle dir> ...');

function cpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function freePort() {
  return new Promise((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function request(url, method = 'GET', body = undefined) {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: HEADERS, agent: false }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

const cannon = (options) =>
  new Promise((resolve, reject) =>
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result))),
  );

function serve(bundle, port, args = []) {
  const dir = tempDir('sluice-compare-');
  const main = path.join(DIST, bundle, 'sluice.js');
  return spawnNode([
    main,
    'serve',
    '--port',
    String(port),
    '--data-dir',
    path.join(dir, 'data'),
    '--workspace',
    dir,
    '--drain-timeout-ms',
    '0',
    ...args,
  ]);
}

/** Server CPU and requests of `seconds` of refusals, after a second of warm-up. */
async function refusals(bundle) {
  const child = serve(bundle, 0, ['--echo-delay-ms', String(2 ** 31 - 1)]);
  const base = await listeningUrl(child);
  const { sessionId } = JSON.parse((await request(`${base}/session`, 'POST', '{}')).body);
  const url = `${base}/session/${sessionId}/prompt`;
  for (let i = 0; i < 5; i++) await request(url, 'POST', BODY);
  const load = { url, method: 'POST', body: BODY, headers: HEADERS, connections: 50 };
  await cannon({ ...load, duration: 1 });
  const before = cpuMs(child.pid);
  const result = await cannon({ ...load, duration: seconds });
  const cpu = cpuMs(child.pid) - before;
  if (result.non2xx !== result.requests.total) throw new Error(`${bundle}: not every answer was a refusal`);
  await stopChild(child);
  return { cpu, requests: result.requests.total };
}

/** CPU a start used by the time `/capabilities` first answers. */
async function startCpu(bundle) {
  const port = await freePort();
  const child = serve(bundle, port);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${bundle} exited: ${child.stderrTail()}`);
    const answered = await request(`http://127.0.0.1:${port}/capabilities`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (answered) break;
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
  const cpu = cpuMs(child.pid);
  await stopChild(child);
  return cpu;
}

const results = new Map(bundles.map((bundle) => [bundle, { cpu: 0, requests: 0, starts: [] }]));
try {
  // One start each writes the code caches the measured starts use.
  for (const bundle of bundles) {
    const child = serve(bundle, 0);
    await listeningUrl(child);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await stopChild(child);
  }
  for (let round = 0; round < rounds; round++)
    for (const bundle of round % 2 === 0 ? bundles : [...bundles].reverse()) {
      const result = results.get(bundle);
      const { cpu, requests } = await refusals(bundle);
      result.cpu += cpu;
      result.requests += requests;
      for (let i = 0; i < STARTS; i++) result.starts.push(await startCpu(bundle));
    }
} finally {
  await cleanUp();
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const first = results.get(bundles[0]);
console.log(
  table(
    [
      'bundle',
      'server CPU / 503',
      `vs ${bundles[0]}`,
      'refusals',
      `start CPU (median of ${rounds * STARTS})`,
    ],
    bundles.map((bundle) => {
      const r = results.get(bundle);
      const perRequest = (1000 * r.cpu) / r.requests;
      return [
        bundle,
        `${fmt(perRequest, 1)} µs`,
        `${fmt(perRequest / ((1000 * first.cpu) / first.requests), 3)}×`,
        fmt(r.requests),
        `${median(r.starts)} ms`,
      ];
    }),
  ),
);
