import type { AgentProcess } from './agent-process.js';
import { AgentUnavailableError, AgentUnresponsiveError, ModelNotSwitchableError } from './errors.js';
import { RpcError } from './json-rpc-channel.js';
import type { ProcessPool } from './process-pool.js';
import type { SessionLink } from './session-link.js';
import { HeldUpdates, type Spare } from './spare-sessions.js';

/** The JSON-RPC code of ACP's "authentication required" error. */
const AUTH_REQUIRED = -32000;

/** Resolves when `promise` settles or `signal` aborts, whichever is first; rejects with the promise. */
function untilSettledOrAborted(promise: Promise<void>, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => resolve();
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

/** qwen's `_meta` key: `false` keeps a `session/set_model` from becoming the user's default model. */
const QWEN_PERSIST_DEFAULT = 'qwen.session.modelPersistDefault';

/**
 * Opens sessions in agent processes: `session/new` for a new one; for one whose process
 * ended, `session/load` when the agent advertised `loadSession` (falling back to a new agent
 * session), else a new agent session whose first prompt carries the history.
 */
export class SessionOpener {
  constructor(
    private readonly pool: ProcessPool,
    private readonly startTimeoutMs: number,
    private readonly register: (proc: AgentProcess, link: SessionLink) => void,
  ) {}

  /** Opens a session being created; any failure but a full pool is `agent_unavailable`. */
  async openAtCreate(link: SessionLink): Promise<void> {
    link.opening = this.open(link, true);
    try {
      await link.opening;
    } finally {
      link.opening = undefined;
    }
  }

  /** Makes sure the session is open in a live process, unless `signal` aborts first. */
  async ensureOpen(link: SessionLink, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (link.process?.dead !== undefined) {
        // it died between opening the session and registering it: a re-open, like any death
        link.process = undefined;
        link.reopen = true;
      }
      if (link.process !== undefined) return;
      if (link.opening === undefined) {
        const opening = this.open(link).finally(() => {
          if (link.opening === opening) link.opening = undefined;
        });
        opening.catch(() => {}); // a turn that was aborted meanwhile no longer awaits it
        link.opening = opening;
      }
      await untilSettledOrAborted(link.opening, signal);
    }
  }

  private async open(link: SessionLink, atCreate = false): Promise<void> {
    const proc = await this.pool.acquire(link);
    try {
      const spare = atCreate && !link.reopen ? this.pool.spares.take(proc, link.cwd) : undefined;
      if (spare === undefined) await this.openIn(proc, link, atCreate);
      else await this.adopt(proc, link, spare);
      if (proc.dead !== undefined) throw proc.dead;
      link.process = proc;
      link.reopen = false;
      proc.sessions.add(link.sessionId);
      this.register(proc, link);
    } catch (error) {
      // A process busy with other sessions' work answered too late: this open gives up (504,
      // retryable); the process and its sessions go on. The liveness probe ends a stalled one.
      if (error instanceof AgentUnresponsiveError && !error.stopped && proc.dead === undefined) throw error;
      if (error instanceof ModelNotSwitchableError) throw error;
      throw proc.unavailable(this.reasonOf(proc, error), error);
    } finally {
      this.pool.opened(proc);
    }
  }

  private reasonOf(proc: AgentProcess, error: unknown): string {
    // ACP's "authentication required" (qwen lists authMethods even when configured: not a sign).
    if (error instanceof RpcError && error.rpcCode === AUTH_REQUIRED) return 'it requires authentication';
    if (proc.dead !== undefined) return 'its process ended while opening the session';
    return 'session/new failed';
  }

  /**
   * Takes a spare agent session in place of `session/new`: registered at once, its held updates
   * (and any newer) wait in `link.held` until the session is live; the model switch still runs.
   */
  private async adopt(proc: AgentProcess, link: SessionLink, spare: Spare): Promise<void> {
    link.agentSessionId = spare.agentSessionId;
    link.held = spare.held;
    this.register(proc, link);
    await this.switchModel(proc, link, spare.agentSessionId, spare.answer);
  }

  private async openIn(proc: AgentProcess, link: SessionLink, atCreate = false): Promise<void> {
    const previous = link.agentSessionId;
    if (link.reopen && proc.info?.loadSession === true && previous !== undefined) {
      link.loading = true;
      this.register(proc, link); // the load's replayed updates are routed to it, then dropped
      try {
        const loaded = await proc.bounded(
          proc.channel.request('session/load', { sessionId: previous, cwd: link.cwd, mcpServers: [] }),
          'session/load',
          this.startTimeoutMs,
          true,
        );
        await this.switchModel(proc, link, previous, loaded);
        return;
      } catch (error) {
        if (proc.dead !== undefined || error instanceof AgentUnresponsiveError) throw error;
      } finally {
        link.loading = false;
      }
    }
    const answer = atCreate ? await this.newAtCreate(proc, link) : await this.newSession(proc, link.cwd);
    if (typeof answer?.sessionId !== 'string')
      throw new AgentUnavailableError(proc.name, 'session/new answered without a sessionId', '');
    link.agentSessionId = answer.sessionId;
    if (link.reopen) link.replayPending = true;
    await this.switchModel(proc, link, answer.sessionId, answer);
  }

  private async newSession(proc: AgentProcess, cwd: string): Promise<{ sessionId?: unknown } | null> {
    return (await proc.bounded(
      proc.channel.request('session/new', { cwd, mcpServers: [] }),
      'session/new',
      this.startTimeoutMs,
      true,
    )) as { sessionId?: unknown } | null;
  }

  /**
   * A create's own `session/new`: what the agent sends for the new session before the answer is
   * read (the same chunk) or during the model switch is kept in `link.held`, which the pool
   * publishes, in order, once the session is live — as for an adopted spare.
   */
  private async newAtCreate(proc: AgentProcess, link: SessionLink): Promise<{ sessionId?: unknown } | null> {
    this.pool.spares.beginOpen(proc);
    let answer: { sessionId?: unknown } | null = null;
    try {
      answer = await this.newSession(proc, link.cwd);
    } finally {
      const id = typeof answer?.sessionId === 'string' ? answer.sessionId : undefined;
      const early = this.pool.spares.claim(proc, id);
      if (id !== undefined) {
        link.agentSessionId = id;
        link.held = early ?? new HeldUpdates();
        this.register(proc, link);
      }
    }
    return answer;
  }

  /**
   * Asks the agent for the session's own model with ACP's (unstable) `session/set_model` when
   * its answer to `session/new` or `session/load` offered models; `model_not_switchable` when
   * it offered none. The `_meta` key keeps qwen from saving the choice as the user's default. An
   * agent that answers the switch with an error keeps the session: the gateway sends the
   * session's calls that name the default model to the session's model (docs/decisions/037).
   */
  private async switchModel(
    proc: AgentProcess,
    link: SessionLink,
    agentSessionId: string,
    answer: unknown,
  ): Promise<void> {
    if (link.model === undefined) return;
    const offered = (answer as { models?: { availableModels?: unknown } } | null)?.models?.availableModels;
    if (!Array.isArray(offered)) throw new ModelNotSwitchableError(link.model, proc.name);
    try {
      await proc.bounded(
        proc.channel.request('session/set_model', {
          sessionId: agentSessionId,
          modelId: link.model,
          _meta: { [QWEN_PERSIST_DEFAULT]: false },
        }),
        'session/set_model',
        this.startTimeoutMs,
        true,
      );
    } catch (error) {
      // The agent refused the name (qwen 0.24.4 switches only to models its own settings list):
      // its calls still name its process's model, which the gateway routes to the session's.
      if (!(error instanceof RpcError)) throw error;
    }
  }
}
