// The daemon end to end: the compiled `sluice serve` as a child process on loopback, each figure
// next to a baseline measured in the same run — the `503 prompt_queue_full` path under
// autocannon next to a bare `node:http` server answering the same bytes; prompt throughput and
// latency over 50 sessions next to `/health` round trips of the same client; RSS idle and per
// idle session next to a bare server's; start-to-first-answer next to a bare server's.
// Every child is killed and every temporary directory removed before the section returns.
import autocannon from 'autocannon';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  childEnv,
  children,
  cleanUp,
  listeningUrl,
  spawnNode,
  spawnSluice,
  stopChild,
  tempDir,
} from './children.js';
import { fmt, medianBy, met, table } from './lib.js';
import { benchRefusalCost } from './refusal-cost.js';

/** The `sluice` command as users run it (its `#!` line sets the V8 flags). */
const MAIN = fileURLToPath(new URL('../packages/daemon/bin/sluice.js', import.meta.url));
const PROMPT_BODY = JSON.stringify({ prompt: [{ type: 'text', text: 'ping' }] });
const JSON_HEADERS = { 'content-type': 'application/json' };
const CONNECTIONS = 50;
const SESSIONS = 50;
const IDLE_SESSIONS = 1_000;
const TARGET_503_RATIO = 0.6;
/** The 503 path with metrics on keeps at least this share of its rate with `--no-metrics`. */
const TARGET_METRICS_RATIO = 0.95;
const TARGET_IDLE_MB = 80;
const TARGET_SESSION_KB = 50;
const TARGET_START_MS = 300;

/**
 * A bare `node:http` server: reads the request body, then answers `STATUS`, `HEADERS` and
 * `BODY` from the environment; prints the same listening line as the daemon.
 */
const BARE_SERVER = `
const http = require('node:http');
const body = process.env.BODY ?? '{}';
const status = Number(process.env.STATUS ?? 200);
const headers = JSON.parse(process.env.HEADERS ?? '{}');
http
  .createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(status, headers);
      res.end(body);
    });
  })
  .listen(Number(process.env.PORT ?? 0), '127.0.0.1', function () {
    process.stdout.write('sluice listening on http://127.0.0.1:' + this.address().port + '\\n');
  });
`;

/** `sluice serve` on a free loopback port with a fresh data dir and workspace. */
async function startDaemon(args = []) {
  const dir = tempDir('sluice-bench-daemon-');
  const child = spawnSluice([
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
    ...args,
  ]);
  return { child, url: await listeningUrl(child) };
}

async function startBare(env = {}) {
  const child = spawnNode(['-e', BARE_SERVER], childEnv(env));
  return { child, url: await listeningUrl(child) };
}

function rssKiB(pid) {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!match) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]);
}

/** CPU time (user + system, all threads) the process has used so far, in ms (10 ms ticks). */
function cpuMs(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

async function freePort() {
  const server = net.createServer();
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

// ---------------------------------------------------------------- a small HTTP client

/** One request; resolves `{ status, headers, body }` (body as a string). */
function request(url, { method = 'GET', body, agent, headers = {}, timeoutMs = 30_000 } = {}) {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method, agent, headers: body === undefined ? headers : { ...JSON_HEADERS, ...headers } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body: text }));
        res.on('error', reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on('error', reject);
    req.end(body);
  });
}

async function json(url, options) {
  const res = await request(url, options);
  if (res.status >= 300) throw new Error(`${options?.method ?? 'GET'} ${url}: ${res.status} ${res.body}`);
  return JSON.parse(res.body);
}

function createSession(url, agent) {
  return json(`${url}/session`, { method: 'POST', body: '{"sessionScope":"thread"}', agent });
}

/** Subscribes to a session's SSE stream (live only); calls `onEvent(type, envelope)` per frame. */
function openEvents(url, sessionId, onEvent) {
  return new Promise((resolve, reject) => {
    const req = http.get(
      `${url}/session/${sessionId}/events`,
      { agent: false, headers: { accept: 'text/event-stream' } },
      (res) => {
        if (res.statusCode !== 200) {
          res.resume();
          reject(new Error(`events of ${sessionId}: ${res.statusCode}`));
          return;
        }
        res.on('error', () => {});
        res.setEncoding('utf8');
        let buffer = '';
        res.on('data', (chunk) => {
          buffer += chunk;
          let end;
          while ((end = buffer.indexOf('\n\n')) !== -1) {
            const frame = buffer.slice(0, end);
            buffer = buffer.slice(end + 2);
            let type;
            let data;
            for (const line of frame.split('\n')) {
              if (line.startsWith('event: ')) type = line.slice(7);
              else if (line.startsWith('data: ')) data = line.slice(6);
            }
            if (type !== undefined && data !== undefined) onEvent(type, JSON.parse(data));
          }
        });
        resolve({ close: () => req.destroy() });
      },
    );
    req.on('error', reject);
  });
}

function percentile(sorted, p) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} timed out after ${ms} ms`)), ms);
    }),
  ]).finally(() => clearTimeout(timer));
}

// ---------------------------------------------------------------- 1. 503 prompt_queue_full

function cannon(options) {
  return new Promise((resolve, reject) => {
    autocannon(options, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

/** A session of `daemon` holding 5 prompts that never finish, and the refusal of a 6th. */
async function fullSession(daemon, agent) {
  const { sessionId } = await createSession(daemon.url, agent);
  const promptUrl = `${daemon.url}/session/${sessionId}/prompt`;
  for (let i = 0; i < 5; i++) await json(promptUrl, { method: 'POST', body: PROMPT_BODY, agent });
  const refused = await request(promptUrl, { method: 'POST', body: PROMPT_BODY, agent });
  if (refused.status !== 503 || JSON.parse(refused.body).code !== 'prompt_queue_full')
    throw new Error(`the 6th prompt was not refused: ${refused.status} ${refused.body}`);
  return { sessionId, promptUrl, refused };
}

async function bench503({ quick }) {
  const seconds = quick ? 2 : 4;
  const warmSeconds = quick ? 1 : 3;
  const rounds = quick ? 2 : 6;
  const neverAnswers = ['--echo-delay-ms', String(2 ** 31 - 1)];
  const daemon = await startDaemon(neverAnswers);
  // The same daemon without its metrics (`--no-metrics`): what counting the refusals costs.
  const unmetered = await startDaemon([...neverAnswers, '--no-metrics']);
  const agent = new http.Agent({ keepAlive: true });
  try {
    const { sessionId, promptUrl, refused } = await fullSession(daemon, agent);
    const plain = await fullSession(unmetered, agent);
    const bare = await startBare({
      STATUS: '503',
      BODY: refused.body,
      HEADERS: JSON.stringify({
        'retry-after': refused.headers['retry-after'],
        'content-type': refused.headers['content-type'],
        'content-length': String(Buffer.byteLength(refused.body)),
      }),
    });
    const subjects = [
      {
        name: 'bare node:http (same 503 bytes)',
        url: `${bare.url}/session/${sessionId}/prompt`,
        body: refused.body,
        pid: bare.child.pid,
        runs: [],
        cpu: 0,
      },
      {
        name: 'sluice serve (queue full)',
        url: promptUrl,
        body: refused.body,
        pid: daemon.child.pid,
        runs: [],
        cpu: 0,
      },
      {
        name: 'sluice serve --no-metrics (queue full)',
        url: plain.promptUrl,
        body: plain.refused.body,
        pid: unmetered.child.pid,
        runs: [],
        cpu: 0,
      },
    ];
    const options = (subject, duration) => ({
      url: subject.url,
      connections: CONNECTIONS,
      duration,
      method: 'POST',
      headers: JSON_HEADERS,
      body: PROMPT_BODY,
      expectBody: subject.body,
    });
    for (const subject of subjects) await cannon(options(subject, warmSeconds));
    // The two daemons swap places every round, so that neither always runs right after the bare server.
    const [bareSubject, metered, unmeteredSubject] = subjects;
    for (let round = 0; round < rounds; round++)
      for (const subject of round % 2 === 0
        ? [bareSubject, metered, unmeteredSubject]
        : [bareSubject, unmeteredSubject, metered]) {
        const cpuBefore = cpuMs(subject.pid);
        subject.runs.push(await cannon(options(subject, seconds)));
        subject.cpu += cpuMs(subject.pid) - cpuBefore;
      }
    const pending = await json(`${daemon.url}/session/${sessionId}/pending-prompts`, { agent });
    const metrics = await request(`${daemon.url}/metrics`, { agent });
    const counted = /^sluice_prompts_refused_total\{code="prompt_queue_full"\} (\d+)$/m.exec(metrics.body);
    await stopChild(bare.child);
    const results = subjects.map(({ name, runs, cpu }) => {
      const requests = runs.reduce((sum, r) => sum + r.requests.total, 0);
      const duration = runs.reduce((sum, r) => sum + r.duration, 0);
      const statuses = {};
      for (const r of runs)
        for (const [code, { count }] of Object.entries(r.statusCodeStats ?? {}))
          statuses[code] = (statuses[code] ?? 0) + Number(count);
      return {
        name,
        rate: requests / duration,
        requests,
        cpuUsPerRequest: (cpu * 1000) / requests,
        p50Ms: medianBy(runs.map((r) => r.latency.p50)),
        p99Ms: Math.max(...runs.map((r) => r.latency.p99)),
        errors: runs.reduce((sum, r) => sum + r.errors, 0),
        mismatches: runs.reduce((sum, r) => sum + r.mismatches, 0),
        statuses,
      };
    });
    // Metrics on against off, round by round: the two ran one after the other, so each pair saw
    // about the same machine; the median pair is steadier than the ratio of the totals.
    const rate = (run) => run.requests.total / run.duration;
    const pairedMetricsRatio = medianBy(
      subjects[1].runs.map((run, round) => rate(run) / rate(subjects[2].runs[round])),
    );
    return {
      seconds,
      warmSeconds,
      rounds,
      results,
      pairedMetricsRatio,
      bodyBytes: Buffer.byteLength(refused.body),
      pendingAfter: pending.pendingPrompts.length,
      refusalsCounted: counted === null ? undefined : Number(counted[1]),
      refusalCost: benchRefusalCost({ quick }),
    };
  } finally {
    agent.destroy();
    await stopChild(daemon.child);
    await stopChild(unmetered.child);
  }
}

// ---------------------------------------------------------------- 2. end-to-end prompts

async function closedLoopFor(ms, workers, call) {
  const samples = [];
  const endAt = performance.now() + ms;
  await Promise.all(
    Array.from({ length: workers }, async () => {
      while (performance.now() < endAt) {
        const t0 = performance.now();
        await call();
        samples.push(performance.now() - t0);
      }
    }),
  );
  return samples;
}

async function benchPrompts({ quick }) {
  const warmMs = quick ? 1_000 : 3_000;
  const measureMs = quick ? 2_000 : 8_000;
  const daemon = await startDaemon([
    '--echo-delay-ms',
    '0',
    '--max-sessions-per-workspace',
    String(SESSIONS),
    '--model-max-queued',
    String(SESSIONS),
  ]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: SESSIONS * 2 });
  const streams = [];
  try {
    // Baseline: the same client's round trip to /health on the same daemon, same concurrency.
    await closedLoopFor(warmMs, SESSIONS, () => json(`${daemon.url}/health`, { agent }));
    const healthStart = performance.now();
    const healthCpu = cpuMs(daemon.child.pid);
    const health = (
      await closedLoopFor(measureMs / 2, SESSIONS, () => json(`${daemon.url}/health`, { agent }))
    ).sort((a, b) => a - b);
    const healthCpuMs = cpuMs(daemon.child.pid) - healthCpu;
    const healthRate = health.length / ((performance.now() - healthStart) / 1000);

    const waiters = new Map();
    const early = new Map();
    const onEvent = (type, envelope) => {
      if (type !== 'turn_complete' && type !== 'turn_error') return;
      const promptId = envelope.data?.promptId ?? envelope.promptId;
      const end = { type, code: envelope.data?.code, at: performance.now() };
      const waiter = waiters.get(promptId);
      if (waiter) {
        waiters.delete(promptId);
        waiter(end);
      } else early.set(promptId, end);
    };
    const terminalOf = (promptId) => {
      const end = early.get(promptId);
      if (end) {
        early.delete(promptId);
        return Promise.resolve(end);
      }
      return withTimeout(
        new Promise((resolve) => waiters.set(promptId, resolve)),
        30_000,
        `prompt ${promptId}`,
      );
    };
    const sessions = [];
    for (let i = 0; i < SESSIONS; i++) {
      const { sessionId } = await createSession(daemon.url, agent);
      streams.push(await openEvents(daemon.url, sessionId, onEvent));
      sessions.push(sessionId);
    }

    const measureFrom = performance.now() + warmMs;
    const endAt = measureFrom + measureMs;
    // CPU of the daemon (all its threads) over the window, read by timers at its two ends.
    const cpuAt = [NaN, NaN];
    const cpuTimers = [warmMs, warmMs + measureMs].map((ms, i) =>
      setTimeout(() => (cpuAt[i] = cpuMs(daemon.child.pid)), ms),
    );
    const latencies = [];
    const errors = {};
    let refused = 0;
    let ended = 0;
    await Promise.all(
      sessions.map(async (sessionId) => {
        const url = `${daemon.url}/session/${sessionId}/prompt`;
        while (performance.now() < endAt) {
          const t0 = performance.now();
          const res = await request(url, { method: 'POST', body: PROMPT_BODY, agent });
          if (res.status !== 202) {
            refused++;
            await sleep(5);
            continue;
          }
          const end = await terminalOf(JSON.parse(res.body).promptId);
          if (end.at < measureFrom || end.at > endAt) continue;
          ended++;
          if (end.type !== 'turn_complete')
            errors[end.code ?? 'unknown'] = (errors[end.code ?? 'unknown'] ?? 0) + 1;
          if (t0 >= measureFrom) latencies.push(end.at - t0);
        }
      }),
    );
    cpuTimers.forEach(clearTimeout);
    latencies.sort((a, b) => a - b);
    return {
      warmMs,
      measureMs,
      prompts: {
        rate: ended / (measureMs / 1000),
        ended,
        p50Ms: percentile(latencies, 50),
        p99Ms: percentile(latencies, 99),
        errors,
        refused,
        cpuMsPerOp: (cpuAt[1] - cpuAt[0]) / ended,
      },
      health: {
        rate: healthRate,
        p50Ms: percentile(health, 50),
        p99Ms: percentile(health, 99),
        cpuMsPerOp: healthCpuMs / health.length,
      },
    };
  } finally {
    for (const stream of streams) stream.close();
    agent.destroy();
    await stopChild(daemon.child);
  }
}

// ---------------------------------------------------------------- 3. RSS

async function benchMemory() {
  const settle = () => sleep(1_000);
  const bare = await startBare();
  await request(`${bare.url}/`, { agent: false });
  await settle();
  const bareKiB = rssKiB(bare.child.pid);
  await stopChild(bare.child);

  const daemon = await startDaemon([
    '--max-sessions',
    String(IDLE_SESSIONS),
    '--max-sessions-per-workspace',
    String(IDLE_SESSIONS),
  ]);
  const agent = new http.Agent({ keepAlive: true });
  try {
    await json(`${daemon.url}/capabilities`, { agent });
    await json(`${daemon.url}/health`, { agent });
    await settle();
    const idleKiB = rssKiB(daemon.child.pid);
    let created = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (created < IDLE_SESSIONS) {
          created++;
          await createSession(daemon.url, agent);
        }
      }),
    );
    await json(`${daemon.url}/health`, { agent });
    await settle();
    const loadedKiB = rssKiB(daemon.child.pid);
    return { bareKiB, idleKiB, loadedKiB, perSessionKiB: (loadedKiB - idleKiB) / IDLE_SESSIONS };
  } finally {
    agent.destroy();
    await stopChild(daemon.child);
  }
}

// ---------------------------------------------------------------- 4. start-up

/** 200 from `GET http://127.0.0.1:<port><pathname>` on a fresh connection; false if refused. */
function answers(port, pathname) {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathname, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200));
    });
    req.on('error', () => resolve(false));
  });
}

/** `{ ms, cpuMs }` from `spawn` until `pathname` answers 200 (polled every 2 ms). */
async function startToFirstAnswer(args, env, pathname, lingerMs = 0) {
  const port = await freePort();
  const t0 = performance.now();
  const child =
    args(port)[0] === MAIN
      ? spawnSluice(args(port), env(port), 'ignore')
      : spawnNode(args(port), env(port), 'ignore');
  try {
    for (;;) {
      if (await answers(port, pathname)) {
        const result = { ms: performance.now() - t0, cpuMs: cpuMs(child.pid) };
        await sleep(lingerMs);
        return result;
      }
      if (child.exitCode !== null) throw new Error(`exited with ${child.exitCode}\n${child.stderrTail()}`);
      if (performance.now() - t0 > 15_000) throw new Error(`no answer within 15 s\n${child.stderrTail()}`);
      await sleep(2);
    }
  } finally {
    await stopChild(child);
  }
}

/** Milliseconds from `spawn` of `node -e 0` to its exit: Node's own floor. */
async function nodeFloor() {
  const t0 = performance.now();
  const child = spawnNode(
    [
      '-e',
      'process.on("exit", () => process.stdout.write(String(process.cpuUsage().user + process.cpuUsage().system)))',
    ],
    childEnv(),
    'pipe',
  );
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk) => (out += chunk));
  await child.exited;
  return { ms: performance.now() - t0, cpuMs: Number(out) / 1000 };
}

async function benchStartup({ quick }) {
  const rounds = quick ? 3 : 9;
  const dir = tempDir('sluice-bench-start-');
  let n = 0;
  const sluiceStart = (env, lingerMs) =>
    startToFirstAnswer(
      (port) => [
        MAIN,
        'serve',
        '--port',
        String(port),
        '--data-dir',
        path.join(dir, `data-${n++}`),
        '--workspace',
        dir,
      ],
      () => env,
      '/capabilities',
      lingerMs,
    );
  const subjects = [
    {
      name: '`node -e 0` (spawn to exit)',
      measure: nodeFloor,
      samples: [],
    },
    {
      name: 'bare `node:http` server → first `200`',
      measure: () =>
        startToFirstAnswer(
          () => ['-e', BARE_SERVER],
          (port) => childEnv({ PORT: String(port) }),
          '/',
        ),
      samples: [],
    },
    {
      name: '`sluice serve` → first `/capabilities`',
      // Its warm-up start stays up long enough to leave its code cache, as any earlier start does.
      measure: (lingerMs) => sluiceStart(childEnv(), lingerMs),
      samples: [],
    },
    {
      name: '`sluice serve` without code cache (`SLUICE_CODE_CACHE=0`, as the first start after a build)',
      measure: () => sluiceStart(childEnv({ SLUICE_CODE_CACHE: '0' })),
      samples: [],
    },
  ];
  for (const subject of subjects) await subject.measure(2_000);
  for (let round = 0; round < rounds; round++)
    for (const subject of subjects) subject.samples.push(await subject.measure());
  return {
    rounds,
    results: subjects.map(({ name, samples }) => ({
      name,
      medianMs: medianBy(samples.map((s) => s.ms)),
      minMs: Math.min(...samples.map((s) => s.ms)),
      maxMs: Math.max(...samples.map((s) => s.ms)),
      medianCpuMs: medianBy(samples.map((s) => s.cpuMs)),
    })),
  };
}

// ---------------------------------------------------------------- the section

/** Returns the markdown section and the raw figures. */
export async function benchDaemon({ quick = false, parts = ['503', 'prompts', 'memory', 'startup'] } = {}) {
  const onExit = () => {
    for (const child of children) child.kill('SIGKILL');
  };
  process.once('exit', onExit);
  try {
    const queueFull = parts.includes('503') ? await bench503({ quick }) : undefined;
    const prompts = parts.includes('prompts') ? await benchPrompts({ quick }) : undefined;
    const memory = parts.includes('memory') ? await benchMemory() : undefined;
    const startup = parts.includes('startup') ? await benchStartup({ quick }) : undefined;
    const results = { queueFull, prompts, memory, startup };
    return { markdown: render(results), results };
  } finally {
    await cleanUp();
    process.off('exit', onExit);
  }
}

function render({ queueFull, prompts, memory, startup }) {
  const parts = [
    [
      `The compiled \`sluice serve\` as a child process on loopback (\`SLUICE_LOG_LEVEL=warn\`, fresh data directory, ` +
        `\`--drain-timeout-ms 0\`); the load generator runs in the bench process, every server in a child of its own.`,
    ].join('\n'),
  ];
  if (queueFull) parts.push(render503(queueFull));
  if (prompts) parts.push(renderPrompts(prompts));
  if (memory) parts.push(renderMemory(memory));
  if (startup) parts.push(renderStartup(startup));
  return parts.join('\n\n');
}

const statusList = (s) =>
  Object.entries(s)
    .map(([code, count]) => `${code}: ${fmt(count)}`)
    .join(', ');

function render503(queueFull) {
  const [bare, ours, unmetered] = queueFull.results;
  const ratio503 = ours.rate / bare.rate;
  const metricsRatio = queueFull.pairedMetricsRatio;
  return [
    `**\`503 prompt_queue_full\` under load.** A session holds 5 prompts that never finish (\`--echo-delay-ms ${2 ** 31 - 1}\`); ` +
      `autocannon 8 with ${CONNECTIONS} keep-alive connections then POSTs the same prompt for ` +
      `${queueFull.rounds} × ${queueFull.seconds} s per subject (alternating, the two daemons in turn first, after ${queueFull.warmSeconds} s of warm-up each). The baseline ` +
      `is a bare \`node:http\` server that reads the body and answers the very same status, headers and ` +
      `${fmt(queueFull.bodyBytes)}-byte body. Every response's body is ` +
      `checked against the daemon's refusal (mismatches).`,
    '',
    table(
      [
        'subject',
        'requests/s',
        'server CPU / request',
        'latency p50',
        'latency p99',
        'status codes',
        'mismatches',
        'errors',
      ],
      queueFull.results.map((r) => [
        r.name,
        fmt(r.rate),
        `${fmt(r.cpuUsPerRequest)} µs`,
        `${fmt(r.p50Ms)} ms`,
        `${fmt(r.p99Ms)} ms`,
        statusList(r.statuses),
        fmt(r.mismatches),
        fmt(r.errors),
      ]),
    ),
    '',
    `Target: ≥ ${TARGET_503_RATIO} of the bare server's requests/s — **${fmt(ratio503, 2)}**, ` +
      `${met(ratio503 >= TARGET_503_RATIO)}; by CPU per request (user + system time of the server process over ` +
      `the runs, \`/proc/<pid>/stat\`; less sensitive to what else the machine runs) the daemon does ` +
      `**${fmt(bare.cpuUsPerRequest / ours.cpuUsPerRequest, 2)}** of the bare server's work rate. After the load the ` +
      `session still holds ${queueFull.pendingAfter} pending prompts (nothing was admitted). The load generator ` +
      `shares the machine's cores with the server, so the bare figure is bounded by autocannon as much as by the server.`,
    '',
    `Metrics (\`/metrics\`, on by default) against the same daemon with \`--no-metrics\`: **${fmt(metricsRatio, 3)}** of its ` +
      `requests/s, the median of the ${queueFull.rounds} rounds' ratios (the two run one after the other in each round; ` +
      `the ratio of the totals: ${fmt(ours.rate / unmetered.rate, 3)}); target ≥ ${TARGET_METRICS_RATIO}: ` +
      `${met(metricsRatio >= TARGET_METRICS_RATIO)}. By CPU per request ` +
      `**${fmt(unmetered.cpuUsPerRequest / ours.cpuUsPerRequest, 3)}**. Its scrape afterwards counted ` +
      `${queueFull.refusalsCounted === undefined ? 'no' : fmt(queueFull.refusalsCounted)} \`prompt_queue_full\` refusals. ` +
      `In process (bench/refusal-cost.js: the session bridge refusing a full session's prompt, ` +
      `${fmt(queueFull.refusalCost.calls)} calls, median of ${queueFull.refusalCost.rounds} alternating rounds), a refusal ` +
      `takes ${fmt(queueFull.refusalCost.plainNs)} ns without metrics and ${fmt(queueFull.refusalCost.meteredNs)} ns with ` +
      `them: **${fmt((queueFull.refusalCost.meteredNs - queueFull.refusalCost.plainNs) / 1000, 2)} µs** added, ` +
      `${fmt(((queueFull.refusalCost.meteredNs - queueFull.refusalCost.plainNs) / 1000 / unmetered.cpuUsPerRequest) * 100, 1)} % ` +
      `of the ${fmt(unmetered.cpuUsPerRequest)} µs of server CPU a refusal costs over HTTP.`,
  ].join('\n');
}

function renderPrompts(prompts) {
  const p = prompts.prompts;
  const h = prompts.health;
  const errorList = Object.entries(p.errors);
  return [
    `**Prompts end to end.** ${SESSIONS} thread sessions, each with its SSE stream open, each running one prompt at a ` +
      `time for ${fmt(prompts.measureMs / 1000)} s (after ${fmt(prompts.warmMs / 1000)} s of warm-up): \`POST /session/:id/prompt\` → its terminal ` +
      `event on the stream; latency = from the POST to the terminal event. Echo model at 0 ms, ` +
      `\`--model-max-queued ${SESSIONS}\` so all ${SESSIONS} model calls fit the runtime's queue. The baseline is the ` +
      `fixed cost of the same flow: the same client's \`GET /health\` round trip on the same daemon with ` +
      `${SESSIONS} outstanding (HTTP, loopback, fastify, the client). The daemon also holds every terminal event ` +
      `at least 10 ms after admission by design (PROTOCOL §5, a known client race), so 10 ms of every prompt is a ` +
      `floor, not work. Daemon CPU = user + system time of the daemon process (all threads) over the window, per ` +
      `operation.`,
    '',
    table(
      ['flow', 'per second', 'daemon CPU / op', 'p50', 'p99'],
      [
        [
          `prompt → terminal event (${SESSIONS} sessions)`,
          fmt(p.rate),
          `${fmt(p.cpuMsPerOp, 2)} ms`,
          `${fmt(p.p50Ms, 1)} ms`,
          `${fmt(p.p99Ms, 1)} ms`,
        ],
        [
          `\`GET /health\` (${SESSIONS} outstanding)`,
          fmt(h.rate),
          `${fmt(h.cpuMsPerOp, 2)} ms`,
          `${fmt(h.p50Ms, 1)} ms`,
          `${fmt(h.p99Ms, 1)} ms`,
        ],
      ],
    ),
    '',
    `Daemon-added latency (prompt − /health − the 10 ms floor): p50 **${fmt(p.p50Ms - h.p50Ms - 10, 1)} ms**, ` +
      `p99 **${fmt(p.p99Ms - h.p99Ms - 10, 1)} ms**. ${fmt(p.ended)} prompts ended in the window` +
      (errorList.length === 0
        ? ', none ended in `turn_error`'
        : `; \`turn_error\`: ${errorList.map(([code, n]) => `${code} × ${fmt(n)}`).join(', ')}`) +
      (p.refused > 0 ? `; ${fmt(p.refused)} POSTs refused.` : '; no POST was refused.'),
  ].join('\n');
}

function renderMemory(memory) {
  const mib = (kib) => fmt(kib / 1024, 1);
  return [
    `**Memory.** VmRSS of the child (\`/proc/<pid>/status\`) 1 s after its first answers, then 1 s after ` +
      `${fmt(IDLE_SESSIONS)} thread sessions were created (8 at a time; \`--max-sessions ${IDLE_SESSIONS}\`, ` +
      `\`--max-sessions-per-workspace ${IDLE_SESSIONS}\`).`,
    '',
    table(
      ['subject', 'VmRSS'],
      [
        ['bare `node:http` server, idle', `${mib(memory.bareKiB)} MiB`],
        ['`sluice serve`, idle', `${mib(memory.idleKiB)} MiB`],
        [`\`sluice serve\`, ${fmt(IDLE_SESSIONS)} idle sessions`, `${mib(memory.loadedKiB)} MiB`],
      ],
    ),
    '',
    `Targets: idle ≤ ${TARGET_IDLE_MB} MB — **${mib(memory.idleKiB)} MiB** (${fmt(memory.idleKiB / memory.bareKiB, 1)}× ` +
      `the bare server), ${met(memory.idleKiB / 1024 <= TARGET_IDLE_MB)}; ≤ ${TARGET_SESSION_KB} KB per idle session — ` +
      `**${fmt(memory.perSessionKiB, 1)} KiB**, ${met(memory.perSessionKiB <= TARGET_SESSION_KB)}.`,
  ].join('\n');
}

function renderStartup(startup) {
  const [, bareStart, ourStart, uncachedStart] = startup.results;
  return [
    `**Start-up.** From \`spawn\` to the first \`200\` (a fresh connection every 2 ms on a port chosen beforehand; ` +
      `the daemon with a fresh data directory each time). Median of ${startup.rounds} starts per subject, ` +
      `alternating, after one warm-up start each. CPU used = user + system time of the child (all threads) by then. ` +
      `The installed \`sluice\` compiles its bundle through V8 code caches that a start writes next to the bundle ` +
      `1 s after loading it (docs/decisions/009), so every start but the first after a build reuses them; the ` +
      `last row is that first start.`,
    '',
    table(
      ['subject', 'median', 'min', 'max', 'CPU used (median)'],
      startup.results.map((r) => [
        r.name,
        `${fmt(r.medianMs)} ms`,
        `${fmt(r.minMs)} ms`,
        `${fmt(r.maxMs)} ms`,
        `${fmt(r.medianCpuMs)} ms`,
      ]),
    ),
    '',
    `Target: ≤ ${TARGET_START_MS} ms to the first \`/capabilities\` — **${fmt(ourStart.medianMs)} ms** ` +
      `(${fmt(ourStart.medianMs - bareStart.medianMs)} ms more than the bare server), ` +
      `${met(ourStart.medianMs <= TARGET_START_MS)}; without the code cache **${fmt(uncachedStart.medianMs)} ms**.`,
  ].join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const { markdown } = await benchDaemon({ quick: process.argv.includes('--quick') });
  console.log(markdown);
}
