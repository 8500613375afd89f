import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import type { DaemonConfig } from '../../src/config.js';
import { createDaemon, type Daemon, type DaemonParts } from '../../src/daemon.js';
import { buildServer, type ServerOptions } from '../../src/http/server.js';
import type { Agent, AgentTurn, PermissionOutcome, TurnResult } from '../../src/sessions/agent.js';

/** A daemon built in this process (so a test can inject an Agent) and served on loopback. */
export interface InProcessDaemon {
  daemon: Daemon;
  app: FastifyInstance;
  url: string;
  stop(): Promise<void>;
}

/** `createDaemon(config, parts)` + `buildServer` + `listen` on 127.0.0.1 with a free port. */
export async function startInProcess(
  config: DaemonConfig = {},
  parts: DaemonParts = {},
  server: Partial<ServerOptions> = {},
): Promise<InProcessDaemon> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sluice-inproc-'));
  const daemon = createDaemon({ dataDir, workspace: dataDir, drainTimeoutMs: 0, ...config }, parts);
  const app = buildServer(daemon, { hostname: '127.0.0.1', ...server });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return {
    daemon,
    app,
    url: `http://127.0.0.1:${port}`,
    stop: async () => {
      await daemon.close();
      app.server.closeAllConnections();
      await app.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** The options every permission test offers. */
export const PERMISSION_OPTIONS = [
  { optionId: 'allow', name: 'Allow', kind: 'allow_once' },
  { optionId: 'deny', name: 'Deny', kind: 'reject_once' },
] as const;

/**
 * A test fixture of the Agent plug-in boundary: every turn asks for permission to run a tool,
 * then streams the outcome it got as one chunk (`selected:<id>` or `cancelled`) and ends.
 */
export class AskingAgent implements Agent {
  readonly outcomes: PermissionOutcome[] = [];

  async runTurn(turn: AgentTurn): Promise<TurnResult> {
    if (turn.requestPermission === undefined) throw new Error('no permission broker');
    const outcome = await turn.requestPermission({
      toolCall: { toolCallId: `call-${turn.promptId}`, title: 'touch file', kind: 'edit' },
      options: [...PERMISSION_OPTIONS],
    });
    this.outcomes.push(outcome);
    const text = outcome.outcome === 'selected' ? `selected:${outcome.optionId}` : 'cancelled';
    turn.emit({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text } });
    return { stopReason: outcome.outcome === 'cancelled' ? 'cancelled' : 'end_turn' };
  }
}
