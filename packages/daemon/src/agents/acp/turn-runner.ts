import type { Clock, TimerHandle } from '@sluice/runtime';
import type { AgentTurn, TurnResult } from '../../sessions/index.js';
import { rpcErrorText, type AgentProcess } from './agent-process.js';
import { AgentTurnFailedError, AgentUnresponsiveError } from './errors.js';
import { RpcError } from './json-rpc-channel.js';
import type { GatewayCredentials, ProcessPool } from './process-pool.js';
import { replayBlock, type LinkedTurn, type SessionLink } from './session-link.js';
import { TurnWatchdog } from './turn-watchdog.js';

/** What a {@link TurnRunner} needs. */
export interface TurnRunnerParts {
  readonly pool: ProcessPool;
  readonly clock: Clock;
  readonly cancelGraceMs: number;
  readonly credentials: GatewayCredentials | undefined;
  /** A turn with neither agent output nor a model call this long ends `agent_unresponsive`; 0 = never. */
  readonly turnIdleTimeoutMs: number;
  /** True while a model call of the session runs (activity of its turn). */
  readonly modelCallRunning: (sessionId: string) => boolean;
}

/**
 * Runs one turn of an open session: `session/prompt` with the prompt's blocks (led by the
 * history when the agent session is new but the conversation is not). The turn's abort sends
 * `session/cancel` and allows `cancelGraceMs` for the prompt's answer; past it the process is
 * killed as unresponsive. A turn idle for `turnIdleTimeoutMs` (no output, no model call) is
 * cancelled the same way and ends `agent_unresponsive`. The answer's `stopReason` ends the
 * turn, with the streamed text as the assistant's message.
 */
export class TurnRunner {
  constructor(private readonly parts: TurnRunnerParts) {}

  async run(link: SessionLink, turn: AgentTurn): Promise<TurnResult> {
    const proc = link.process!;
    if (proc.dead !== undefined) throw proc.dead;
    const agentSessionId = link.agentSessionId!;
    const replay = link.replayPending ? replayBlock(turn.conversation) : undefined;
    link.replayPending = false;
    const idle = new AbortController();
    const { clock, turnIdleTimeoutMs, modelCallRunning } = this.parts;
    const watchdog = new TurnWatchdog(
      clock,
      turnIdleTimeoutMs,
      () => modelCallRunning(turn.sessionId),
      () => idle.abort(),
    );
    const linked = this.linkedTurn(turn, watchdog);
    link.turn = linked;
    this.parts.pool.turnStarted(proc);
    this.parts.credentials?.beginTurn(turn.sessionId, turn.promptId, turn.signal, turn.budgetId, link.model);
    let abandon: (answer: { stopReason: string }) => void = () => {};
    const abandoned = new Promise<{ stopReason: string }>((resolve) => (abandon = resolve));
    const stopCancel = this.onAbort(proc, agentSessionId, AbortSignal.any([turn.signal, idle.signal]), () =>
      abandon({ stopReason: 'cancelled' }),
    );
    try {
      const prompt = proc.channel.request('session/prompt', {
        sessionId: agentSessionId,
        prompt: replay === undefined ? turn.prompt : [replay, ...turn.prompt],
      });
      prompt.catch(() => {}); // an abandoned prompt's late failure is nobody's
      const answer = (await Promise.race([prompt, abandoned])) as { stopReason?: unknown } | null;
      if (watchdog.fired) throw this.idleError(proc);
      const stopReason = typeof answer?.stopReason === 'string' ? answer.stopReason : 'end_turn';
      return { stopReason, messages: [{ role: 'assistant', content: linked.text }] };
    } catch (error) {
      if (watchdog.fired) throw this.idleError(proc);
      if (error instanceof RpcError)
        throw new AgentTurnFailedError(proc.name, rpcErrorText(error), error.rpcCode);
      throw error;
    } finally {
      watchdog.stop();
      stopCancel();
      if (link.turn === linked) link.turn = undefined;
      this.parts.credentials?.endTurn(turn.sessionId, turn.promptId);
      this.parts.pool.turnEnded(proc);
    }
  }

  /** The turn as the session's link sees it: its output and permission questions feed `watchdog`. */
  private linkedTurn(turn: AgentTurn, watchdog: TurnWatchdog): LinkedTurn {
    const ask = turn.requestPermission;
    return {
      promptId: turn.promptId,
      emit: (update) => {
        watchdog.touch();
        turn.emit(update);
      },
      ...(ask === undefined
        ? {}
        : {
            requestPermission: async (request) => {
              const resume = watchdog.pause();
              try {
                return await ask(request);
              } finally {
                resume();
              }
            },
          }),
      text: '',
    };
  }

  private idleError(proc: AgentProcess): AgentUnresponsiveError {
    return new AgentUnresponsiveError(
      proc.name,
      this.parts.turnIdleTimeoutMs,
      'its turn with output or a model call',
    );
  }

  /**
   * On abort: `session/cancel`, then the grace bound. Past it a process of this session alone is
   * killed as unresponsive; one shared with other sessions is not (issue 27: one session's cancel
   * never disturbs another's turn): the turn is abandoned, and the liveness probe still ends a
   * process that stopped answering. Returns what undoes both.
   */
  private onAbort(
    proc: AgentProcess,
    agentSessionId: string,
    signal: AbortSignal,
    abandon: () => void,
  ): () => void {
    let grace: TimerHandle | undefined;
    const { clock, cancelGraceMs } = this.parts;
    const cancel = (): void => {
      proc.channel.notify('session/cancel', { sessionId: agentSessionId });
      grace = clock.setTimer(() => {
        if (proc.sessions.size > 1) abandon();
        else proc.kill(new AgentUnresponsiveError(proc.name, cancelGraceMs, 'session/cancel'));
      }, cancelGraceMs);
    };
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
    return () => {
      signal.removeEventListener('abort', cancel);
      if (grace !== undefined) clock.clearTimer(grace);
    };
  }
}
