// Real agents, side by side (issue 27 item 9): the reference daemon `qwen serve` and
// `sluice serve --agent "<qwen --acp>"` (default flags, and with `--agent-sessions-per-process 16`)
// run the same qwen-code `--acp` from the install the real-agent tests use, with the same scratch
// HOME settings, against the same fake OpenAI-compatible model on loopback, driven by the official
// `@qwen-code/sdk` DaemonClient. Each round starts every subject fresh, one after the other, so a
// change in the machine's load falls on all of them alike. Ratios are Sluice ÷ `qwen serve`.
//
// Size (environment): BENCH_AGENTS_SESSIONS (default 16), BENCH_AGENTS_PROMPTS (prompts sent to
// each session at once, default 5), BENCH_AGENTS_BURST (sessions created at once, default 12),
// BENCH_AGENTS_ROUNDS (default 3); `--quick`: 4 sessions, 2 prompts, 2 at once, 1 round.
// BENCH_AGENTS_SLUICE_ARGS adds flags to every Sluice subject (e.g. "--agent-max-processes 20").
import { execFileSync } from 'node:child_process';
import { cleanUp } from './children.js';
import { fmt, medianBy, met, table } from './lib.js';
import { measureRound } from './agents-round.js';
import { loadQwenAgentScript, startModel, subjects } from './agents-subjects.js';

const DEFAULT_SIZE = { sessions: 16, prompts: 5, burst: 12, rounds: 3 };
const QUICK_SIZE = { sessions: 4, prompts: 2, burst: 2, rounds: 1 };
/** The warm-up start of every subject (disk caches, Sluice's V8 code cache; not with `--quick`); its figures are dropped. */
const WARM_UP = { sessions: 2, prompts: 1, burst: 0 };
/** Both daemons admit this many outstanding prompts per session by default. */
const MAX_PROMPTS = 5;

/** The bench's size: the environment's, else the defaults (`quick`: the small ones); checked. */
export function benchSize({ quick = false } = {}, env = process.env) {
  const size = { ...(quick ? QUICK_SIZE : DEFAULT_SIZE) };
  for (const key of Object.keys(size)) {
    const name = `BENCH_AGENTS_${key.toUpperCase()}`;
    if (env[name] === undefined) continue;
    size[key] = Number(env[name]);
    if (!Number.isInteger(size[key]) || size[key] < 1)
      throw new Error(`${name} must be a positive integer, not ${JSON.stringify(env[name])}`);
  }
  if (size.sessions < 3) throw new Error(`BENCH_AGENTS_SESSIONS must be at least 3, not ${size.sessions}`);
  if (size.prompts > MAX_PROMPTS)
    throw new Error(
      `BENCH_AGENTS_PROMPTS must be at most ${MAX_PROMPTS} (the daemons' queue), not ${size.prompts}`,
    );
  if (size.burst > size.sessions - 2)
    throw new Error(
      `BENCH_AGENTS_BURST must be at most BENCH_AGENTS_SESSIONS - 2 (${size.sessions - 2}), not ${size.burst}`,
    );
  return size;
}

export async function benchAgents({ quick = false } = {}) {
  const size = benchSize({ quick });
  const sluiceArgs = (process.env.BENCH_AGENTS_SLUICE_ARGS ?? '').split(/\s+/).filter(Boolean);
  const qwen = await loadQwenAgentScript();
  const install = await qwen.installQwenAgent();
  const model = await startModel();
  const list = subjects(install, sluiceArgs);
  try {
    for (const subject of quick ? [] : list) {
      console.error(`agents: warm-up start of ${subject.name} …`);
      await measureRound(subject, qwen, model, WARM_UP);
    }
    const rounds = list.map(() => []);
    for (let round = 0; round < size.rounds; round++) {
      // Each round starts with the next subject, so no subject always runs first or last.
      for (let k = 0; k < list.length; k++) {
        const i = (round + k) % list.length;
        console.error(`agents: round ${round + 1}/${size.rounds}, ${list[i].name} …`);
        rounds[i][round] = await measureRound(list[i], qwen, model, size);
        if (rounds[i][round].error) console.error(`agents:   failed: ${rounds[i][round].error}`);
      }
    }
    const versions = {
      qwen: qwen.QWEN_CODE_VERSION,
      node22: execFileSync(install.node, ['--version'], { encoding: 'utf8' }).trim(),
    };
    const answer = await model.stats();
    return { markdown: render({ list, rounds, size, sluiceArgs, versions, answer, quick }), rounds };
  } finally {
    await cleanUp();
  }
}

/** The rows of the issue's table; a `target` is the most (`higher`: the least) Sluice ÷ reference allowed. */
function metrics(size) {
  const mib = (kib) => kib / 1024;
  return [
    {
      label: `memory of the process tree (RSS), ${size.sessions} live sessions`,
      unit: ' MiB',
      of: (r) => mib(r.full.rssKiB),
      target: 0.75,
    },
    { label: 'memory per added session (RSS)', unit: ' MiB', digits: 1, of: (r) => mib(r.perSessionKiB) },
    {
      label: `turns/s (${size.sessions} sessions × ${size.prompts} prompts at once)`,
      digits: 1,
      of: (r) => r.turnsPerSecond,
      target: 1,
      higher: true,
    },
    { label: 'p95 turn latency (POST → terminal event)', unit: ' ms', of: (r) => r.p95Ms, target: 1 },
    {
      label: 'CPU of the process tree per turn',
      unit: ' ms',
      digits: 1,
      of: (r) => r.cpuMsPerTurn,
      target: 1,
    },
    {
      label: 'first session after start: create + first prompt',
      unit: ' s',
      digits: 2,
      of: (r) => r.firstMs / 1000,
      target: 1,
    },
    {
      label: 'second session: create + first prompt',
      unit: ' s',
      digits: 2,
      of: (r) => r.secondMs / 1000,
      target: 1,
    },
    {
      label: `${size.burst} sessions created at once (wall)`,
      unit: ' s',
      digits: 2,
      of: (r) => r.burstMs / 1000,
      target: 0.8,
    },
  ];
}

/** Figures shown beside the table's rows, without targets. */
function diagnostics(size) {
  return [
    {
      label: `memory of the process tree (PSS), ${size.sessions} live sessions`,
      unit: ' MiB',
      of: (r) => r.full.pssKiB / 1024,
    },
    { label: `processes in the tree, ${size.sessions} live sessions`, of: (r) => r.full.processes },
    { label: 'start: spawn → listening line', unit: ' s', digits: 2, of: (r) => r.startMs / 1000 },
    { label: 'model calls per turn', digits: 2, of: (r) => r.callsPerTurn },
    { label: 'turns that ended in `turn_error`', of: (r) => r.failedTurns, plain: true },
    { label: 'processes of the tree left after SIGTERM', of: (r) => r.leftOver, plain: true },
  ];
}

const ok = (round) => round !== undefined && round.error === undefined;

/** `min–max` of `values`, or nothing for a single value. */
export function spread(values, format) {
  if (values.length < 2) return '';
  return `${format(Math.min(...values))}–${format(Math.max(...values))}`;
}

/** Sluice ÷ reference of the medians, and of each round in which both ran. */
export function ratios(metric, reference, rounds) {
  const of = (list) => list.filter(ok).map(metric.of);
  const median = (list) => medianBy(of(list));
  const perRound = rounds.flatMap((round, i) =>
    ok(round) && ok(reference[i]) ? [metric.of(round) / metric.of(reference[i])] : [],
  );
  return { ratio: median(rounds) / median(reference), perRound };
}

/** Whether `ratio` meets `metric`'s target (a missing figure never does). */
export function meets(metric, ratio) {
  if (!Number.isFinite(ratio)) return false;
  return metric.higher ? ratio >= metric.target : ratio <= metric.target;
}

/** One table cell: the median with its spread; for Sluice also the ratio (bold when its target is missed). */
export function cell(metric, reference, rounds) {
  const values = rounds.filter(ok).map(metric.of);
  if (values.length === 0) return 'failed';
  const value = (v) => `${fmt(v, metric.digits ?? 0)}${metric.unit ?? ''}`;
  const range = spread(values, value);
  if (reference === undefined || metric.plain)
    return `${value(medianBy(values))}${range ? ` (${range})` : ''}`;
  const { ratio, perRound } = ratios(metric, reference, rounds);
  const x = (v) => `${fmt(v, 2)}×`;
  const shown = metric.target !== undefined && !meets(metric, ratio) ? `**${x(ratio)}**` : x(ratio);
  const ratioRange = spread(perRound, x);
  return `${value(medianBy(values))} (${shown}${ratioRange ? `; ${ratioRange}` : ''})`;
}

function render({ list, rounds, size, sluiceArgs, versions, answer, quick }) {
  const [reference, ...sluices] = rounds;
  const header = [`${size.sessions} sessions × ${size.prompts} prompts at once`, ...list.map((s) => s.name)];
  const row = (metric) => [
    metric.label,
    cell(metric, undefined, reference),
    ...sluices.map((r) => cell(metric, reference, r)),
  ];
  const targets = metrics(size)
    .filter((metric) => metric.target !== undefined)
    .map((metric) => [
      metric.label,
      `${metric.higher ? '≥' : '≤'} ${fmt(metric.target, 2)}×`,
      ...sluices.map((r) => {
        const { ratio } = ratios(metric, reference, r);
        return `${Number.isFinite(ratio) ? `${fmt(ratio, 2)}×` : 'failed'} — ${met(meets(metric, ratio))}`;
      }),
    ]);
  const failures = list.flatMap((subject, i) =>
    rounds[i].flatMap((round, n) => (ok(round) ? [] : [`- ${subject.name}, round ${n + 1}: ${round.error}`])),
  );
  return [
    `qwen-code ${versions.qwen} \`--acp\` (on Node ${versions.node22}, the install of the real-agent tests, \`scripts/qwen-agent.ts\`) under the reference daemon \`qwen serve\` of the same install, and under the built \`sluice serve --agent "<that qwen --acp>"\` (Node ${process.version}) with default flags but \`--provider openai --model … --base-url <the fake model>\`${sluiceArgs.length > 0 ? ` and \`${sluiceArgs.join(' ')}\`` : ''}; a third column adds \`--agent-sessions-per-process 16\`. Both daemons on a free loopback port without a token, each start with a fresh scratch HOME (\`createQwenHome\`: OpenAI auth, telemetry and background model calls off) and a fresh workspace; \`qwen serve\`'s agent calls the fake model directly, Sluice's through Sluice's model gateway. The model (\`bench/agents-model.js\`, a child process) streams a ${answer.words}-word answer, ${answer.firstTokenMs} ms to the first word and ${answer.chunkMs} ms between words. The client is \`@qwen-code/sdk\` \`DaemonClient\` in the bench process.`,
    '',
    `A round starts a subject, waits for its listening line, then: creates a session and runs a first prompt (\`prompt()\`), the same for a second session; reads the tree's memory (after 1 s); creates ${size.burst} sessions at once, then more up to ${size.sessions}; sends every session ${size.prompts} prompts at once (\`promptNonBlocking\`, terminal events read from each session's stream) and measures turns/s, the p95 latency from POST to terminal event and the CPU (user + system of every process of the daemon's tree, \`/proc/<pid>/stat\`, exited children included); reads the memory again after 1 s and stops the daemon (SIGTERM). Memory is the sum of VmRSS over the daemon's process tree; per added session = (memory with ${size.sessions} − with 2) ÷ ${size.sessions - 2}. ${size.rounds} round(s)${quick ? '' : ' after a warm-up start of each subject'}; each round begins with the next subject in turn. Cells: median (min–max over the rounds); for Sluice, the ratio of the medians to \`qwen serve\`'s and the range of the per-round ratios, in bold when it misses its target.`,
    '',
    table(header, metrics(size).map(row)),
    '',
    table(['diagnostic', ...list.map((s) => s.name)], diagnostics(size).map(row)),
    '',
    `Targets (issue 27, Sluice ÷ \`qwen serve\`, default flags but \`--agent\`):`,
    '',
    table(['row', 'target', ...list.slice(1).map((s) => s.name)], targets),
    ...(failures.length > 0 ? ['', 'Rounds that failed (left out of the figures):', '', ...failures] : []),
  ].join('\n');
}
