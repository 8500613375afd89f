import type { Clock, TimerHandle } from '@sluice/runtime';
import type { AgentTurn, TurnResult } from '../../sessions/index.js';
import { rpcErrorText, type AgentProcess } from './agent-process.js';
import { AgentTurnFailedError, AgentUnresponsiveError } from './errors.js';
import { RpcError } from './json-rpc-channel.js';
import type { GatewayCredentials, ProcessPool } from './process-pool.js';
import { replayBlock, type LinkedTurn, type SessionLink } from './session-link.js';

/** What a {@link TurnRunner} needs. */
export interface TurnRunnerParts {
  readonly pool: ProcessPool;
  readonly clock: Clock;
  readonly cancelGraceMs: number;
  readonly credentials: GatewayCredentials | undefined;
}

/**
 * Runs one turn of an open session: `session/prompt` with the prompt's blocks (led by the
 * history when the agent session is new but the conversation is not). The turn's abort sends
 * `session/cancel` and allows `cancelGraceMs` for the prompt's answer; past it the process is
 * killed as unresponsive. The answer's `stopReason` ends the turn, with the streamed text as
 * the assistant's message.
 */
export class TurnRunner {
  constructor(private readonly parts: TurnRunnerParts) {}

  async run(link: SessionLink, turn: AgentTurn): Promise<TurnResult> {
    const proc = link.process!;
    if (proc.dead !== undefined) throw proc.dead;
    const agentSessionId = link.agentSessionId!;
    const replay = link.replayPending ? replayBlock(turn.conversation) : undefined;
    link.replayPending = false;
    const linked: LinkedTurn = {
      promptId: turn.promptId,
      emit: (update) => turn.emit(update),
      ...(turn.requestPermission === undefined
        ? {}
        : { requestPermission: (request) => turn.requestPermission!(request) }),
      text: '',
    };
    link.turn = linked;
    this.parts.pool.turnStarted(proc);
    this.parts.credentials?.beginTurn(turn.sessionId, turn.promptId, turn.signal, turn.budgetId);
    let abandon: (answer: { stopReason: string }) => void = () => {};
    const abandoned = new Promise<{ stopReason: string }>((resolve) => (abandon = resolve));
    const stopCancel = this.onAbort(proc, agentSessionId, turn.signal, () =>
      abandon({ stopReason: 'cancelled' }),
    );
    try {
      const prompt = proc.channel.request('session/prompt', {
        sessionId: agentSessionId,
        prompt: replay === undefined ? turn.prompt : [replay, ...turn.prompt],
      });
      prompt.catch(() => {}); // an abandoned prompt's late failure is nobody's
      const answer = (await Promise.race([prompt, abandoned])) as { stopReason?: unknown } | null;
      const stopReason = typeof answer?.stopReason === 'string' ? answer.stopReason : 'end_turn';
      return { stopReason, messages: [{ role: 'assistant', content: linked.text }] };
    } catch (error) {
      if (error instanceof RpcError)
        throw new AgentTurnFailedError(proc.name, rpcErrorText(error), error.rpcCode);
      throw error;
    } finally {
      stopCancel();
      if (link.turn === linked) link.turn = undefined;
      this.parts.credentials?.endTurn(turn.sessionId, turn.promptId);
      this.parts.pool.turnEnded(proc);
    }
  }

  /**
   * On abort: `session/cancel`, then the grace bound. Past it a process of this session alone is
   * killed as unresponsive; one shared with other sessions is not (issue 27: one session's cancel
   * never disturbs another's turn): the turn is abandoned as cancelled, and the liveness probe
   * still ends a process that stopped answering. Returns what undoes both.
   */
  private onAbort(
    proc: AgentProcess,
    agentSessionId: string,
    signal: AbortSignal,
    abandon: () => void,
  ): () => void {
    let grace: TimerHandle | undefined;
    const { clock, cancelGraceMs } = this.parts;
    const pastGrace = (): void => {
      if (proc.sessions.size > 1) abandon();
      else proc.kill(new AgentUnresponsiveError(proc.name, cancelGraceMs, 'session/cancel'));
    };
    const cancel = (): void => {
      proc.channel.notify('session/cancel', { sessionId: agentSessionId });
      grace = clock.setTimer(pastGrace, cancelGraceMs);
    };
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
    return () => {
      signal.removeEventListener('abort', cancel);
      if (grace !== undefined) clock.clearTimer(grace);
    };
  }
}
