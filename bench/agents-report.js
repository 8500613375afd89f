// The section `bench/agents.js` writes to BENCHMARKS.md: the rows of issue 27's table, medians
// and spreads over the rounds, ratios Sluice ÷ `qwen serve`, and the issue's targets.
import { fmt, medianBy, met, table } from './lib.js';

/** The rows of the issue's table; a `target` is the most (`higher`: the least) Sluice ÷ reference allowed. */
function metrics(size) {
  const mib = (kib) => kib / 1024;
  return [
    {
      label: `memory of the process tree (RSS), ${size.sessions} live sessions`,
      unit: ' MiB',
      of: (r) => turnFigure(r, mib(r.full?.rssKiB)),
      target: 0.75,
    },
    {
      label: 'memory per added session (RSS)',
      unit: ' MiB',
      digits: 1,
      of: (r) => turnFigure(r, mib(r.perSessionKiB)),
    },
    {
      label: `turns/s (${size.sessions} sessions × ${size.prompts} prompts at once)`,
      digits: 1,
      of: (r) => turnFigure(r, r.turnsPerSecond),
      target: 1,
      higher: true,
    },
    {
      label: 'p95 turn latency (POST → terminal event)',
      unit: ' ms',
      of: (r) => turnFigure(r, r.p95Ms),
      target: 1,
    },
    {
      label: 'CPU of the process tree per turn',
      unit: ' ms',
      digits: 1,
      of: (r) => turnFigure(r, r.cpuMsPerTurn),
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
      of: (r) => turnFigure(r, r.full?.pssKiB / 1024),
    },
    {
      label: `memory of the process tree (RSS), ${size.sessions} live sessions, 10 s after the turns`,
      unit: ' MiB',
      of: (r) => turnFigure(r, r.rest?.rssKiB / 1024),
    },
    {
      label: `memory of the daemon's own process (RSS; its agents not included), ${size.sessions} live sessions`,
      unit: ' MiB',
      of: (r) => turnFigure(r, r.full?.rootRssKiB / 1024),
    },
    {
      label: `processes in the tree, ${size.sessions} live sessions`,
      of: (r) => turnFigure(r, r.full?.processes),
    },
    {
      label: "CPU of the daemon's own process per turn (its agents not included)",
      unit: ' ms',
      digits: 1,
      of: (r) => turnFigure(r, r.daemonCpuMsPerTurn),
    },
    { label: 'start: spawn → listening line', unit: ' s', digits: 2, of: (r) => r.startMs / 1000 },
    { label: 'model calls per turn', digits: 2, of: (r) => turnFigure(r, r.callsPerTurn) },
    {
      label: "model calls' mean wait for a slot (Sluice's `sluice_model_queue_wait_seconds`)",
      unit: ' ms',
      of: (r) => turnFigure(r, r.slotWaitMs),
      optional: true,
    },
    {
      label: "model calls' mean time holding a slot: request recorded (`sluice_model_recording_seconds`)",
      unit: ' ms',
      digits: 1,
      of: (r) => turnFigure(r, r.recordingMs),
      optional: true,
    },
    {
      label: "model calls' mean time holding a slot: in the provider (`sluice_model_execution_seconds`)",
      unit: ' ms',
      of: (r) => turnFigure(r, r.executionMs),
      optional: true,
    },
    {
      label: 'request body per model call, as the model received it',
      unit: ' KiB',
      digits: 1,
      of: (r) => turnFigure(r, r.requestKiBPerCall),
    },
    { label: 'turns that ended in `turn_error` (each round)', of: (r) => r.failedTurns, plain: true },
    { label: 'processes of the tree left after SIGTERM (each round)', of: (r) => r.leftOver, plain: true },
  ];
}

/**
 * A figure of a round's turns or taken after them, or none when some turns ended in
 * `turn_error`: such a round measured a failure (an agent lost with its sessions), not the cost
 * of turns or of live sessions; it is listed under the failures instead.
 */
const turnFigure = (round, value) => (round.failedTurns === 0 ? value : undefined);

/** `metric`'s figure of `round`, or `undefined` when the round did not get that far. */
function figure(metric, round) {
  const value = round === undefined ? undefined : metric.of(round);
  return Number.isFinite(value) ? value : undefined;
}

/** `min–max` of `values` with `unit` once, or nothing for a single value. */
export function spread(values, digits, unit = '') {
  if (values.length < 2) return '';
  return `${fmt(Math.min(...values), digits)}–${fmt(Math.max(...values), digits)}${unit}`;
}

/** Sluice ÷ reference of the medians, and of each round in which both ran. */
export function ratios(metric, reference, rounds) {
  const of = (list) => list.map((round) => figure(metric, round)).filter((v) => v !== undefined);
  const median = (list) => medianBy(of(list));
  const perRound = rounds.flatMap((round, i) => {
    const [value, base] = [figure(metric, round), figure(metric, reference[i])];
    return value === undefined || base === undefined ? [] : [value / base];
  });
  return { ratio: median(rounds) / median(reference), perRound };
}

/** Whether `ratio` meets `metric`'s target (a missing figure never does). */
export function meets(metric, ratio) {
  if (!Number.isFinite(ratio)) return false;
  return metric.higher ? ratio >= metric.target : ratio <= metric.target;
}

/**
 * One table cell: the median with its spread; for Sluice also the ratio (bold when its target is
 * missed) and the spread of the per-round ratios. A `plain` count lists every round's instead.
 */
export function cell(metric, reference, rounds) {
  const values = rounds.map((round) => figure(metric, round)).filter((v) => v !== undefined);
  if (values.length === 0) return metric.optional ? '—' : 'failed';
  if (metric.plain) return values.map((v) => fmt(v)).join(', ');
  const median = `${fmt(medianBy(values), metric.digits ?? 0)}${metric.unit ?? ''}`;
  const range = spread(values, metric.digits ?? 0, metric.unit);
  // A figure only Sluice has (`optional`) is shown without a ratio.
  const hasBase = reference?.some((round) => figure(metric, round) !== undefined) === true;
  if (!hasBase) return `${median}${range ? ` (${range})` : ''}`;
  const { ratio, perRound } = ratios(metric, reference, rounds);
  const x = `${fmt(ratio, 2)}×`;
  const shown = metric.target !== undefined && !meets(metric, ratio) ? `**${x}**` : x;
  const ratioRange = spread(perRound, 2, '×');
  return `${median} (${shown}${ratioRange ? `; ${ratioRange}` : ''})`;
}

/** The section's Markdown from every subject's rounds (`rounds[i]`: `list[i]`'s, one per round). */
export function render({ list, rounds, size, sluice, versions, answer, quick }) {
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
    rounds[i].flatMap((round, n) => [
      ...(round.error ? [`- ${subject.name}, round ${n + 1}: ${round.error}`] : []),
      ...(round.turnError
        ? [
            `- ${subject.name}, round ${n + 1}: ${round.failedTurns} turns ended in \`turn_error\`; the first: \`${round.turnError}\``,
          ]
        : []),
    ]),
  );
  return [
    ...describe({ size, sluice, versions, answer, quick }),
    table(header, metrics(size).map(row)),
    '',
    table(['diagnostic', ...list.map((s) => s.name)], diagnostics(size).map(row)),
    '',
    `Targets (issue 27, Sluice ÷ \`qwen serve\`, default flags but \`--agent\`):`,
    '',
    table(['row', 'target', ...list.slice(1).map((s) => s.name)], targets),
    ...(failures.length > 0
      ? [
          '',
          'Failures (a failed round keeps the figures it measured before; a cell without any is `failed`):',
          '',
          ...failures,
        ]
      : []),
  ].join('\n');
}

/** What was run and how it was measured, in the section's words. */
function describe({ size, sluice, versions, answer, quick }) {
  const extraArgs = sluice.args.length > 0 ? ` and \`${sluice.args.join(' ')}\`` : '';
  const extraEnv = Object.entries(sluice.env).map((pair) => pair.join('='));
  const env = extraEnv.length > 0 ? ` (its environment adds \`${extraEnv.join(' ')}\`)` : '';
  // Both daemons start qwen with QWEN_CODE_NO_RELAUNCH (Sluice: AGENT_ENV_DEFAULTS), so each
  // agent is one process; the diagnostic row of processes shows it.
  const relaunch =
    ' Both daemons start their qwen agents with `QWEN_CODE_NO_RELAUNCH` set, so each agent is one process (without it qwen-code relaunches itself in a child with a larger heap).';
  return [
    `qwen-code ${versions.qwen} \`--acp\` (on Node ${versions.node22}, the install of the real-agent tests, \`scripts/qwen-agent.ts\`) under the reference daemon \`qwen serve\` of the same install, and under the built \`sluice serve --agent "<that qwen --acp>"\` (Node ${process.version}) with default flags but \`--provider openai --model … --base-url <the fake model>\`${extraArgs}${env}; a third column adds \`--model-max-concurrency 16\` (the model slots' default is 4, docs/spec.md SCH-3; \`qwen serve\` sends every call to the model at once, docs/decisions/043). Both daemons listen on a free loopback port without a token; each start gets a fresh scratch HOME (\`createQwenHome\`: OpenAI auth, telemetry and background model calls off) and a fresh workspace. \`qwen serve\`'s agent calls the fake model directly, Sluice's through Sluice's model gateway. The model (\`bench/agents-model.js\`, a child process) streams a ${answer.words}-word answer, ${answer.firstTokenMs} ms to the first word and ${answer.chunkMs} ms between words. The client is \`@qwen-code/sdk\` \`DaemonClient\` in the bench process.${relaunch}`,
    '',
    `A round starts a subject, waits for its listening line, then: creates a session and runs a first prompt (\`prompt()\`), the same for a second session; reads the tree's memory (after 1 s); creates ${size.burst} sessions at once, then more up to ${size.sessions}; sends every session ${size.prompts} prompts at once (\`promptNonBlocking\`, terminal events read from each session's stream) and measures turns/s, the p95 latency from POST to terminal event and the CPU (user + system of every process of the daemon's tree, \`/proc/<pid>/stat\`, exited children included; apart, of the daemon's own process); reads the memory again after 1 s (the target's reading) and after 10 s (a diagnostic: past V8's memory reducer, 16 sessions at rest) and stops the daemon (SIGTERM). Memory is the sum of VmRSS over the daemon's process tree; per added session = (memory with ${size.sessions} − with 2) ÷ ${size.sessions - 2}. ${size.rounds} round(s)${quick ? '' : ' after a warm-up start of each subject'}; each round begins with the next subject in turn. Cells: median (min–max over the rounds); for Sluice, the ratio of the medians to \`qwen serve\`'s and the range of the per-round ratios, in bold when it misses its target.`,
    '',
  ];
}
