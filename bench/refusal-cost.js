// What the daemon's metrics add to a refused prompt, in process: the session bridge's admission
// refusing a full session's prompt (what `503 prompt_queue_full` runs besides HTTP), with the
// metrics' tap told of each refusal against the same bridge without one. Alternating rounds,
// the median of each; the HTTP comparison in daemon.js bounds the whole path, this isolates
// the part metrics change.
import { DaemonTap } from '../packages/daemon/dist/observe/index.js';
import { SessionBridge } from '../packages/daemon/dist/sessions/index.js';
import { medianBy } from './lib.js';

const PROMPT = [{ type: 'text', text: 'ping' }];

/** A refusal of a full session's prompt, as the HTTP route asks for it. */
function refuser(tap) {
  const bridge = new SessionBridge({
    agent: { runTurn: () => new Promise(() => {}) }, // never finishes: the session stays full
    workspaces: ['/'],
    ...(tap === undefined ? {} : { admissions: tap.prompts, events: tap.prompts }),
  });
  const { sessionId } = bridge.createSession({ scope: 'thread', cwd: '/' });
  for (let i = 0; i < 5; i++) bridge.trySendPrompt(sessionId, PROMPT).done.catch(() => {});
  const options = { clientId: undefined, deadlineMs: undefined, idempotency: undefined };
  return () => bridge.trySendPrompt(sessionId, PROMPT, options);
}

/** ns per refusal with and without the tap; `counted` is what the tap counted. */
export function benchRefusalCost({ quick = false } = {}) {
  const calls = quick ? 200_000 : 1_000_000;
  const rounds = quick ? 3 : 7;
  const tap = new DaemonTap();
  const subjects = [
    { name: 'without metrics', refuse: refuser(undefined), samples: [] },
    { name: 'with metrics', refuse: refuser(tap), samples: [] },
  ];
  for (let round = 0; round <= rounds; round++)
    for (const subject of round % 2 === 0 ? subjects : [...subjects].reverse()) {
      const refuse = subject.refuse;
      const started = performance.now();
      for (let i = 0; i < calls; i++) refuse();
      // Round 0 warms up.
      if (round > 0) subject.samples.push(((performance.now() - started) * 1e6) / calls);
    }
  const [plain, metered] = subjects.map((s) => medianBy(s.samples));
  return { calls, rounds, plainNs: plain, meteredNs: metered, counted: tap.prompts.refusals.total() };
}
