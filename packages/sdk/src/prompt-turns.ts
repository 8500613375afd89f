import type { PromptAccepted, PromptResult } from '@sluice/protocol';
import { abortReason } from './abort.js';
import { DEFAULT_FETCH_TIMEOUT_MS, MAX_TIMER_MS } from './defaults.js';
import { DaemonPromptLostError, DaemonStreamEndedError, isDaemonTurnError } from './errors.js';
import type { DaemonEvent, SubscribeOptions } from './events.js';
import { pendingPromptPath, type HttpCore } from './http.js';
import { postPrompt, type Admission, type PromptRequest } from './prompt-post.js';
import { EpochResetWatch, matchTurnEvent } from './turn.js';

/** Opens a session's event stream with resume and reconnect. */
export type Subscribe = (sessionId: string, options: SubscribeOptions) => AsyncGenerator<DaemonEvent>;

/**
 * An admitted prompt's life on the daemon: its POST, the wait for its terminal event, and
 * taking it back when the caller leaves, so an abort never leaves an orphan turn running.
 */
export class PromptTurns {
  constructor(
    private readonly core: HttpCore,
    private readonly fetchTimeoutMs: number,
    private readonly subscribe: Subscribe,
  ) {}

  /** Posts the prompt; a caller abort rejects at once and takes back what the POST admitted. */
  admit(
    sessionId: string,
    request: PromptRequest,
    signal: AbortSignal | undefined,
    clientId: string | undefined,
  ): Promise<Admission> {
    const background = new AbortController();
    const post = postPrompt(this.core, sessionId, request, clientId, background.signal);
    if (signal === undefined) return post;
    return new Promise<Admission>((resolve, reject) => {
      const onAbort = (): void => {
        reject(abortReason(signal));
        const limit = setTimeout(
          () => background.abort(),
          Math.min(this.fetchTimeoutMs || DEFAULT_FETCH_TIMEOUT_MS, MAX_TIMER_MS),
        );
        post
          .then(
            (admission) =>
              'accepted' in admission
                ? this.takeBack(sessionId, admission.accepted.promptId, clientId)
                : undefined,
            () => undefined,
          )
          .finally(() => clearTimeout(limit));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      post.then(
        (admission) => {
          signal.removeEventListener('abort', onAbort);
          resolve(admission);
        },
        (error: unknown) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  /** Waits on the stream, replayed from the `202`'s cursor, for the prompt's terminal event. */
  async awaitTurn(
    sessionId: string,
    accepted: PromptAccepted,
    signal: AbortSignal | undefined,
    clientId: string | undefined,
  ): Promise<PromptResult> {
    const reset = new EpochResetWatch();
    const stream = this.subscribe(sessionId, {
      lastEventId: accepted.lastEventId,
      ...(accepted.eventEpoch === undefined ? {} : { epoch: accepted.eventEpoch }),
      ...(signal === undefined ? {} : { signal }),
      ...(clientId === undefined ? {} : { clientId }),
    });
    try {
      for await (const event of stream) {
        const result = matchTurnEvent(event, accepted.promptId);
        if (result !== undefined) return result;
        if (reset.replayEnded(event)) throw new DaemonPromptLostError(sessionId, accepted.promptId);
      }
    } catch (error) {
      // the daemon accepted the prompt: a retryable failure of the *stream* (429, 503) must not
      // invite the caller to post the prompt again — its outcome is unknown, not refused
      if (!isDaemonTurnError(error) && (error as { retryable?: unknown } | null)?.retryable === true)
        throw new DaemonStreamEndedError(sessionId, accepted.promptId, { cause: error });
      throw error;
    }
    if (signal?.aborted) {
      await this.takeBack(sessionId, accepted.promptId, clientId);
      throw abortReason(signal);
    }
    throw new DaemonStreamEndedError(sessionId, accepted.promptId);
  }

  /** Best effort: removes (queued) or aborts (running) an abandoned prompt on the daemon. */
  async takeBack(sessionId: string, promptId: string, clientId: string | undefined): Promise<void> {
    await this.core.json('DELETE', pendingPromptPath(sessionId, promptId), { clientId }).catch(() => {});
  }
}
