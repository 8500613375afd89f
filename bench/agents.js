// Real agents, side by side (issue 27 item 9): the reference daemon `qwen serve` and
// `sluice serve --agent "<qwen --acp>"` (default flags, and with `--model-max-concurrency 16`)
// run the same qwen-code `--acp` from the install the real-agent tests use, with the same scratch
// HOME settings, against the same fake OpenAI-compatible model on loopback, driven by the official
// `@qwen-code/sdk` DaemonClient. Each round starts every subject fresh, one after the other, so a
// change in the machine's load falls on all of them alike. Ratios are Sluice ÷ `qwen serve`.
//
// Size (environment): BENCH_AGENTS_SESSIONS (default 16), BENCH_AGENTS_PROMPTS (prompts sent to
// each session at once, default 5), BENCH_AGENTS_BURST (sessions created at once, default 12),
// BENCH_AGENTS_ROUNDS (default 3); `--quick`: 4 sessions, 2 prompts, 2 at once, 1 round.
// BENCH_AGENTS_SLUICE_ARGS adds flags to every Sluice subject (e.g. "--agent-max-processes 20"),
// BENCH_AGENTS_SLUICE_ENV variables to its environment and its agents' (e.g. "QWEN_CODE_NO_RELAUNCH=true").
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cleanUp } from './children.js';
import { render } from './agents-report.js';
import { measureRound } from './agents-round.js';
import { loadQwenAgentScript, startModel, subjects } from './agents-subjects.js';

const DEFAULT_SIZE = { sessions: 16, prompts: 5, burst: 12, rounds: 3 };
const QUICK_SIZE = { sessions: 4, prompts: 2, burst: 2, rounds: 1 };
/** The warm-up start of every subject (disk caches, Sluice's V8 code cache; not with `--quick`); its figures are dropped. */
const WARM_UP = { sessions: 2, prompts: 1, burst: 0 };
/** Both daemons admit this many outstanding prompts per session by default. */
const MAX_PROMPTS = 5;

/** Keeps every round's raw figures in bench/results/ (not committed), to check a section against. */
function saveRounds(data) {
  const dir = new URL('./results/', import.meta.url);
  fs.mkdirSync(dir, { recursive: true });
  const file = new URL(`agents-${new Date().toISOString().replace(/[:.]/g, '-')}.json`, dir);
  fs.writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  console.error(`agents: every round's figures in ${fileURLToPath(file)}`);
}

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
  const words = (name) => (process.env[name] ?? '').split(/\s+/).filter(Boolean);
  const sluice = {
    args: words('BENCH_AGENTS_SLUICE_ARGS'),
    env: Object.fromEntries(words('BENCH_AGENTS_SLUICE_ENV').map((pair) => pair.split(/=(.*)/s, 2))),
  };
  const qwen = await loadQwenAgentScript();
  const install = await qwen.installQwenAgent();
  const model = await startModel();
  const list = subjects(install, sluice);
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
    saveRounds({ list, rounds, size, sluice, answer });
    return { markdown: render({ list, rounds, size, sluice, versions, answer, quick }), rounds };
  } finally {
    await cleanUp();
  }
}
