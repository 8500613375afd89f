import { mkdtempSync, readFileSync, existsSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'vitest';
import type { DaemonConfig } from '../../src/config.js';
import type { DaemonParts } from '../../src/daemon.js';
import { api, openEvents, textPrompt, type EventStream, type SseFrame } from '../helpers/http-client.js';
import { startInProcess, type InProcessDaemon } from '../helpers/in-process-daemon.js';

/** The ACP test agent (written with the ACP SDK's agent side), run as a real child process. */
export const TEST_AGENT = resolve(dirname(fileURLToPath(import.meta.url)), 'fixtures/test-acp-agent.mjs');

/** `--agent name=…` for the test agent with its flags. */
export function testAgent(name: string, ...flags: string[]): { name: string; command: string[] } {
  return { name, command: [process.execPath, TEST_AGENT, ...flags] };
}

/** A daemon in this process whose sessions run on test agents, and the agents' request log. */
export interface AgentDaemon extends InProcessDaemon {
  readonly workspace: string;
  readonly logFile: string;
  /** What reached the agents: one entry per request or notification received. */
  log(): Array<{ pid: number; method: string; params: Record<string, unknown> }>;
}

/** Starts a daemon with `agents` built by `make(logFlag)`; the workspace is a fresh temp dir. */
export async function startAgentDaemon(
  make: (logFlag: string) => DaemonConfig['agents'],
  config: DaemonConfig = {},
  parts: DaemonParts = {},
): Promise<AgentDaemon> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-agents-')));
  const logFile = join(mkdtempSync(join(tmpdir(), 'sluice-agent-log-')), 'agent.log');
  let url = '';
  const daemon = await startInProcess(
    // These tests were written for one session per process, the default before issue 27: pinned.
    { workspace, agents: make(`--log=${logFile}`), agentSessionsPerProcess: 1, ...config },
    { gatewayUrl: () => `${url}/v1`, ...parts },
  );
  url = daemon.url;
  return {
    ...daemon,
    workspace,
    logFile,
    log: () =>
      existsSync(logFile)
        ? readFileSync(logFile, 'utf8')
            .trim()
            .split('\n')
            .map(
              (line) => JSON.parse(line) as { pid: number; method: string; params: Record<string, unknown> },
            )
        : [],
  };
}

export const isTerminal = (f: SseFrame): boolean => f.event === 'turn_complete' || f.event === 'turn_error';

/** Creates a thread session (expecting 200) and opens its event stream. */
export async function openSession(
  base: string,
  body: Record<string, unknown> = {},
): Promise<{ sessionId: string; stream: EventStream }> {
  const res = await api(base, 'POST', '/session', { body: { sessionScope: 'thread', ...body } });
  expect(res.status, res.text).toBe(200);
  return { sessionId: res.body.sessionId, stream: await openEvents(base, res.body.sessionId) };
}

/** Sends a prompt (expecting 202) and returns its id. */
export async function sendPrompt(base: string, sessionId: string, text: string): Promise<string> {
  const res = await api(base, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) });
  expect(res.status, res.text).toBe(202);
  return res.body.promptId;
}

/** The terminal frame of `promptId`. */
export function terminalOf(stream: EventStream, promptId: string, timeoutMs = 15_000): Promise<SseFrame> {
  return stream.waitFor((f) => isTerminal(f) && f.data.promptId === promptId, timeoutMs);
}

/** The text of the `agent_message_chunk` updates of `promptId`, joined. */
export function textOf(stream: EventStream, promptId: string): string {
  return stream.frames
    .filter(
      (f) =>
        f.event === 'session_update' &&
        f.data.promptId === promptId &&
        f.data.data.update.sessionUpdate === 'agent_message_chunk',
    )
    .map((f) => String(f.data.data.update.content?.text ?? ''))
    .join('');
}

export { until } from '../helpers/until.js';

/** Runs a prompt to its end and returns its terminal frame and its text. */
export async function promptAndWait(
  base: string,
  session: { sessionId: string; stream: EventStream },
  text: string,
): Promise<{ promptId: string; done: SseFrame; text: string }> {
  const promptId = await sendPrompt(base, session.sessionId, text);
  const done = await terminalOf(session.stream, promptId);
  return { promptId, done, text: textOf(session.stream, promptId) };
}
