import type { Agent } from '../sessions/agent.js';
import type { PermissionBroker } from './permission-broker.js';

/**
 * Gives every turn of `agent` a `requestPermission` bound to its session, prompt and abort
 * signal, so that agents ask the daemon's broker without knowing about it.
 */
export function withPermissions(agent: Agent, broker: PermissionBroker): Agent {
  return {
    runTurn: (turn) =>
      agent.runTurn({
        ...turn,
        requestPermission: (request) =>
          broker.request(turn.sessionId, request, { signal: turn.signal, promptId: turn.promptId }),
      }),
  };
}
