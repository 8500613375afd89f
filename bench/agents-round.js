// One round of `bench/agents.js` for one subject: a fresh daemon, driven by the official
// `@qwen-code/sdk` DaemonClient as a client application would, measured from its first session to
// its last turn. The daemon and its process tree are measured from /proc, the model's calls at the
// fake model. Every wait is bounded: a daemon that stops answering fails the round, it never hangs it.
import { DaemonClient } from '@qwen-code/sdk/daemon';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSubject } from './agents-subjects.js';
import { ownCpuMs, treeCpuMs, treeMemory } from './proc-tree.js';

/** Any one request, session create or turn may take this long before the round fails. */
const WAIT_MS = 300_000;
/** Memory is read this long after the last answer, once the daemon's work has settled. */
const SETTLE_MS = 1_000;
/**
 * Memory is read again this long after the last answer: past V8's memory reducer (it starts 8 s
 * after the allocation rate drops), what 16 sessions at rest hold rather than the turns' residue.
 */
const REST_MS = 10_000;
const PROMPT = 'Say that the change is done.';
const text = (value) => ({ prompt: [{ type: 'text', text: value }] });

/** The value at rank `p` % of `values` (nearest rank: the smallest value with p % at or below it). */
export function percentile(values, p) {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Starts `subject`, measures it at `size` (`{ sessions, burst, prompts }`) and stops it. Returns
 * the round's figures; when the daemon failed the round, those measured up to the failure and
 * its `error`. `leftOver` counts the processes of its tree that outlived its SIGTERM either way.
 */
export async function measureRound(subject, qwen, model, size) {
  const daemon = await startSubject(subject, qwen, model.url);
  const figures = { startMs: daemon.startMs };
  try {
    await measure(daemon, model, size, figures);
  } catch (error) {
    figures.error = error instanceof Error ? error.message : String(error);
  }
  if (figures.error !== undefined || figures.failedTurns > 0)
    console.error(
      `agents:   ${subject.name}: ${figures.error ?? figures.turnError}\n${daemon.child.stderrTail()}`,
    );
  figures.leftOver = await daemon.stop();
  return figures;
}

/** Measures a started daemon, adding each figure to `figures` as soon as it is known. */
async function measure(daemon, model, size, figures) {
  const client = new DaemonClient({ baseUrl: daemon.url, fetchTimeoutMs: WAIT_MS });
  const pid = daemon.child.pid;
  const create = async () =>
    (await client.createOrAttachSession({ workspaceCwd: daemon.workspace, sessionScope: 'thread' }))
      .sessionId;
  const createAndPrompt = async () => {
    const started = performance.now();
    const sessionId = await create();
    const result = await client.prompt(sessionId, text(PROMPT), AbortSignal.timeout(WAIT_MS));
    if (result.stopReason !== 'end_turn') throw new Error(`a first prompt ended ${JSON.stringify(result)}`);
    return { sessionId, ms: performance.now() - started };
  };
  const first = await createAndPrompt();
  figures.firstMs = first.ms;
  const second = await createAndPrompt();
  figures.secondMs = second.ms;
  await sleep(SETTLE_MS);
  figures.two = treeMemory(pid);

  const burstStarted = performance.now();
  const burst = await Promise.all(Array.from({ length: size.burst }, create));
  figures.burstMs = performance.now() - burstStarted;
  const rest = [];
  while (2 + burst.length + rest.length < size.sessions) rest.push(await create());
  const sessions = [first.sessionId, second.sessionId, ...burst, ...rest];

  const phasesBefore = await modelPhases(daemon.url);
  Object.assign(figures, await turnLoad(client, sessions, size.prompts, pid, model));
  Object.assign(figures, phaseMeans(phasesBefore, await modelPhases(daemon.url)));
  await sleep(SETTLE_MS);
  figures.full = treeMemory(pid);
  figures.perSessionKiB = (figures.full.rssKiB - figures.two.rssKiB) / (sessions.length - 2);
  await sleep(REST_MS - SETTLE_MS);
  figures.rest = treeMemory(pid);
}

/** The phases of a Sluice model call its `/metrics` times: figure name → histogram. */
const PHASES = {
  slotWaitMs: 'sluice_model_queue_wait_seconds',
  recordingMs: 'sluice_model_recording_seconds',
  executionMs: 'sluice_model_execution_seconds',
};

/**
 * The time Sluice's finished model calls spent in each phase so far, from its `/metrics` (every
 * model's series summed); undefined for a daemon without those metrics.
 */
async function modelPhases(url) {
  const response = await fetch(`${url}/metrics`).catch(() => undefined);
  if (response?.ok !== true) return undefined;
  const text = await response.text();
  const sum = (name) =>
    [...text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'gm'))].reduce(
      (total, match) => total + Number(match[1]),
      0,
    );
  if (!text.includes(`${PHASES.slotWaitMs}_count`)) return undefined;
  return Object.fromEntries(
    Object.entries(PHASES).map(([figure, name]) => [
      figure,
      { seconds: sum(`${name}_sum`), calls: sum(`${name}_count`) },
    ]),
  );
}

/** The mean of each phase over the calls that finished between two readings of {@link modelPhases}. */
function phaseMeans(before, after) {
  if (before === undefined || after === undefined) return {};
  const means = {};
  for (const figure of Object.keys(PHASES)) {
    const calls = after[figure].calls - before[figure].calls;
    if (calls > 0) means[figure] = (1000 * (after[figure].seconds - before[figure].seconds)) / calls;
  }
  return means;
}

/**
 * Every session gets `prompts` prompts at once (the daemon runs a session's prompts one after
 * the other, all sessions at the same time). A turn's latency runs from its POST to its terminal
 * event on the session's stream; the CPU is that of the daemon's whole process tree over the load
 * (and, apart, of the daemon's own process: the share its agents do not spend).
 */
async function turnLoad(client, sessions, prompts, pid, model) {
  const before = await model.stats();
  const cpuBefore = treeCpuMs(pid);
  const daemonCpuBefore = ownCpuMs(pid);
  const started = performance.now();
  const results = await Promise.all(sessions.map((sessionId) => sessionTurns(client, sessionId, prompts)));
  const wallMs = performance.now() - started;
  const cpuMs = treeCpuMs(pid) - cpuBefore;
  const daemonCpuMs = ownCpuMs(pid) - daemonCpuBefore;
  const after = await model.stats();
  const calls = after.calls - before.calls;
  const turns = sessions.length * prompts;
  const failedTurns = results.reduce((sum, result) => sum + result.failed, 0);
  return {
    turnsPerSecond: (turns - failedTurns) / (wallMs / 1000),
    p95Ms: percentile(
      results.flatMap((result) => result.latencies),
      95,
    ),
    cpuMsPerTurn: cpuMs / turns,
    daemonCpuMsPerTurn: daemonCpuMs / turns,
    callsPerTurn: calls / turns,
    requestKiBPerCall: (after.requestBytes - before.requestBytes) / 1024 / calls,
    failedTurns,
    ...(failedTurns > 0 ? { turnError: results.find((result) => result.firstError)?.firstError } : {}),
  };
}

/** Posts a session's prompts, then reads its stream until each has its terminal event. */
async function sessionTurns(client, sessionId, prompts) {
  const postedAt = new Map();
  let from;
  for (let i = 1; i <= prompts; i++) {
    const at = performance.now();
    const accepted = await client.promptNonBlocking(sessionId, text(`${PROMPT} (${i})`));
    if (accepted.promptId === undefined) throw new Error(`prompt ${i} of ${sessionId} was not accepted`);
    postedAt.set(accepted.promptId, at);
    from ??= accepted.lastEventId;
  }
  const latencies = [];
  let failed = 0;
  let firstError;
  const signal = AbortSignal.timeout(WAIT_MS);
  try {
    for await (const event of client.subscribeEvents(sessionId, { lastEventId: from, signal })) {
      if (event.type !== 'turn_complete' && event.type !== 'turn_error') continue;
      const promptId = event.promptId ?? event.data?.promptId;
      const at = postedAt.get(promptId);
      if (at === undefined) continue;
      postedAt.delete(promptId);
      latencies.push(performance.now() - at);
      if (event.type === 'turn_error') {
        failed++;
        firstError ??= JSON.stringify(event.data).slice(0, 300);
      }
      if (latencies.length === prompts) break;
    }
  } catch (error) {
    if (!signal.aborted) throw error;
  }
  if (latencies.length < prompts)
    throw new Error(
      `${prompts - latencies.length} of ${prompts} turns of a session did not end within ${WAIT_MS} ms`,
    );
  return { latencies, failed, firstError };
}
