import type { Agent } from '../sessions/index.js';
import type { PermissionBroker } from './permission-broker.js';

/**
 * Gives every turn of `agent` a `requestPermission` bound to its session, prompt and abort
 * signal, so that agents ask the daemon's broker without knowing about it. A request still open
 * when the turn ends (the agent gave up on it, or failed) is resolved `cancelled` then: nobody
 * waits for its answer any more, and it must not hold the session's open-request slots.
 */
export function withPermissions(agent: Agent, broker: PermissionBroker): Agent {
  return {
    runTurn: async (turn) => {
      const turnEnded = new AbortController();
      const signal = AbortSignal.any([turn.signal, turnEnded.signal]);
      try {
        return await agent.runTurn({
          ...turn,
          requestPermission: (request) =>
            broker.request(turn.sessionId, request, { signal, promptId: turn.promptId }),
        });
      } finally {
        turnEnded.abort();
      }
    },
    sessionClosed: (sessionId) => agent.sessionClosed?.(sessionId),
    ...(agent.openSession === undefined ? {} : { openSession: (start) => agent.openSession!(start) }),
    ...(agent.attach === undefined ? {} : { attach: (host) => agent.attach!(host) }),
  };
}
