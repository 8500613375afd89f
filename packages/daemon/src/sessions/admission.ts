import type { Clock } from '@sluice/runtime';
import { promptText, type ContentBlock } from './agent.js';
import { assertClientIdFormat } from './clients.js';
import {
  DaemonDrainingError,
  IdempotencyKeyReusedError,
  InvalidDeadlineError,
  InvalidPromptError,
  PromptAbortedError,
  type PromptQueueFullError,
} from './errors.js';
import { createDeferred, type PromptResult, type PromptTicket } from './queue-items.js';
import type { StreamPosition } from './session-buses.js';
import type { Session } from './session.js';
import type { PromptLedger } from './prompt-ledger.js';

/** Per-request options of `sendPrompt`. */
export interface SendPromptOptions {
  /** Aborted before admission → rejected; aborted later → the prompt is removed or cancelled. */
  signal?: AbortSignal;
  /** The sender; must be registered on the session. Stamped as `originatorClientId`. */
  clientId?: string;
  /** Per-request deadline in ms; the effective one is the minimum with `promptDeadlineMs`. */
  deadlineMs?: number;
  /**
   * The request's `Idempotency-Key` and a fingerprint of what it asks: a retry with the same
   * key and fingerprint gets the first admission back and admits nothing; the same key with
   * another fingerprint is refused (`IdempotencyKeyReusedError`, 422).
   */
  idempotency?: { key: string; fingerprint: string };
  /** The durable task budget the prompt's model calls are charged to (issue 21); checked by the caller. */
  budgetId?: string;
}

/** A prompt the bridge admitted, and where its events begin on the session's stream. */
export interface PromptAdmission extends StreamPosition {
  readonly promptId: string;
  /** True when it had to wait in the FIFO (it then gets the `pending_prompt_*` events). */
  readonly queued: boolean;
  /**
   * Settles when the terminal event is published: resolves for `turn_complete`, rejects with
   * the cause for `turn_error`. Its rejection is pre-handled, so ignoring it is safe.
   */
  readonly done: Promise<PromptResult>;
  /**
   * Settles once the acceptance is durable (the admission ledger committed it), so that a
   * `202` survives `kill -9`; `undefined` when the store keeps no ledger. Never rejects.
   */
  readonly recorded: Promise<void> | undefined;
  /** True when this answers a retry: the `Idempotency-Key` was seen, nothing was admitted now. */
  readonly replayed: boolean;
}

/** What admission reads: the limits, time, ids, the sessions and their streams. */
export interface AdmissionContext {
  readonly maxPending: number;
  readonly promptDeadlineMs: number | undefined;
  readonly clock: Clock;
  readonly wallNow: () => number;
  readonly newId: () => string;
  /** The open session, or `SessionNotFoundError` / `SessionClosingError`. */
  openSession(sessionId: string): Session;
  /** True while the daemon drains: nothing new is admitted. */
  isDraining(): boolean;
  /** Where the session's stream stands before the prompt's first event. */
  position(sessionId: string): StreamPosition;
  /** Where accepted prompts are recorded durably. */
  readonly ledger: PromptLedger;
}

/**
 * Per-session prompt admission (SPEC BP-1…BP-8), synchronous: it throws a typed error or
 * accepts before returning, and never awaits before deciding (BP-6).
 */
export class PromptAdmitter {
  constructor(private readonly context: AdmissionContext) {}

  /**
   * Admits a prompt, or returns the refusal of a full queue (every other refusal throws):
   * argument checks, then 1. the session, 2. draining, 3. the sender, 4. an aborted `signal`
   * (before the counter moves), 5. the limit, 6. count and append to the session's FIFO.
   */
  admit(
    sessionId: string,
    prompt: readonly ContentBlock[],
    options: SendPromptOptions,
  ): PromptAdmission | PromptQueueFullError {
    assertPrompt(prompt);
    const deadlineMs = this.effectiveDeadline(options.deadlineMs);
    if (options.clientId !== undefined) assertClientIdFormat(options.clientId);
    const context = this.context;
    const session = context.openSession(sessionId);
    if (context.isDraining()) throw new DaemonDrainingError();
    if (options.clientId !== undefined) session.touchClient(options.clientId);
    const signal = options.signal;
    if (signal?.aborted) throw new PromptAbortedError(sessionId, signal.reason);
    const runner = session.runner;
    const idempotency = options.idempotency;
    if (idempotency !== undefined) {
      const first = session.idempotencyKeys.lookup(idempotency.key, idempotency.fingerprint);
      if (first === 'mismatch') throw new IdempotencyKeyReusedError(sessionId);
      if (first !== undefined) return { ...first, replayed: true, recorded: undefined };
    }
    if (runner.pendingPromptCount >= context.maxPending) return runner.refusal(context.maxPending);

    const position = context.position(sessionId);
    const ticket: PromptTicket = {
      kind: 'prompt',
      promptId: context.newId(),
      prompt: prompt.slice(),
      text: promptText(prompt),
      queuedAt: context.wallNow(),
      admittedAt: context.clock.now(),
      clientId: options.clientId,
      queuedBehind: runner.isBusy,
      deadlineMs,
      budgetId: options.budgetId,
      deferred: createDeferred<PromptResult>(),
      phase: 'queued',
      node: undefined,
      controller: undefined,
      timer: undefined,
      cancelRequested: false,
      agentDone: false,
      dirty: false,
      pendingOutcome: undefined,
      detachSignal: undefined,
    };
    session.updatedAt = ticket.queuedAt;
    const recorded = context.ledger.accept({
      sessionId,
      promptId: ticket.promptId,
      acceptedAt: ticket.queuedAt,
    });
    runner.enqueuePrompt(ticket, signal);
    const admission = {
      promptId: ticket.promptId,
      queued: ticket.queuedBehind,
      done: ticket.deferred.promise,
      lastEventId: position.lastEventId,
      eventEpoch: position.eventEpoch,
    };
    if (idempotency !== undefined)
      session.idempotencyKeys.remember(idempotency.key, idempotency.fingerprint, admission);
    return { ...admission, replayed: false, recorded };
  }

  private effectiveDeadline(requested: unknown): number | undefined {
    const { promptDeadlineMs, clock } = this.context;
    if (requested === undefined) return promptDeadlineMs;
    if (
      typeof requested !== 'number' ||
      !Number.isInteger(requested) ||
      requested < 1 ||
      requested > clock.maxTimerMs
    )
      throw new InvalidDeadlineError(requested, clock.maxTimerMs);
    return promptDeadlineMs === undefined ? requested : Math.min(requested, promptDeadlineMs);
  }
}

function assertPrompt(prompt: unknown): asserts prompt is readonly ContentBlock[] {
  if (!Array.isArray(prompt)) throw new InvalidPromptError(`got ${typeof prompt}`);
  if (prompt.length === 0) throw new InvalidPromptError('got an empty array');
  prompt.forEach((block: unknown, index) => {
    if (typeof block !== 'object' || block === null || typeof (block as { type?: unknown }).type !== 'string')
      throw new InvalidPromptError(`block ${index} is not an object with a string "type"`);
  });
}
