import type { TimerHandle } from '@sluice/runtime';
import type { QueueNode } from '@sluice/runtime/queue';
import type { ContentBlock, StopReason } from './agent.js';

/** What the caller of `sendPrompt` eventually gets: how the turn ended. */
export interface PromptResult {
  promptId: string;
  stopReason: StopReason | (string & {});
}

/** A promise with its settle functions. Its rejection is pre-handled: never unhandled. */
export interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: unknown): void;
}

export function createDeferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => {});
  return { promise, resolve, reject };
}

/** How a prompt ends: exactly one of these becomes its terminal event. */
export type PromptOutcome =
  | { kind: 'complete'; stopReason: string }
  | {
      kind: 'error';
      error: unknown;
      message: string;
      code?: string;
      errorKind?: string;
      /** When the failure says how long to wait (an upstream's `Retry-After`). */
      retryAfterMs?: number;
      /** Whether sending the prompt again may succeed (the error's own `retryable`). */
      retryable?: boolean;
    };

/**
 * Lifecycle of an admitted prompt: `queued` → `running` → (`finishing`, while a decided
 * terminal event waits for `terminalEventDelayMs`) → `settled`. It may also go from
 * `queued` straight to `settled` (removed, deadline, close).
 */
export type PromptPhase = 'queued' | 'running' | 'finishing' | 'settled';

/** One admitted prompt; lives in the session's FIFO until it runs. */
export interface PromptTicket {
  readonly kind: 'prompt';
  readonly promptId: string;
  readonly prompt: readonly ContentBlock[];
  readonly text: string;
  /** Wall-clock epoch ms of admission (`queuedAt` on the wire). */
  readonly queuedAt: number;
  /** Monotonic clock time of admission; deadlines and the terminal delay count from it. */
  readonly admittedAt: number;
  readonly clientId: string | undefined;
  /** True when the prompt had to wait in the FIFO: it gets the `pending_prompt_*` events. */
  readonly queuedBehind: boolean;
  /** Effective deadline in ms from admission, if any. */
  readonly deadlineMs: number | undefined;
  /** The durable task budget its model calls are charged to, if any. */
  readonly budgetId: string | undefined;
  readonly deferred: Deferred<PromptResult>;
  phase: PromptPhase;
  node: QueueNode<QueueItem> | undefined;
  controller: AbortController | undefined;
  /** The prompt's one timer: its deadline, later possibly its terminal delay. */
  timer: TimerHandle | undefined;
  cancelRequested: boolean;
  /** True once the agent's `runTurn` promise settled (or the prompt never ran). */
  agentDone: boolean;
  /** True when this turn changed the conversation and the session should be saved. */
  dirty: boolean;
  pendingOutcome: PromptOutcome | undefined;
  /** Detaches the caller's abort signal listener; called when the prompt settles. */
  detachSignal: (() => void) | undefined;
}

/**
 * A branch request waiting in (or running at the head of) the session's FIFO. The runner
 * knows nothing of branching: it starts the ticket when its turn comes, or abandons it when
 * the session closes first.
 */
export interface BranchTicket {
  readonly kind: 'branch';
  node: QueueNode<QueueItem> | undefined;
  /** Opens the branch; the runner waits for the promise, or goes on at once on `undefined`. */
  start(): Promise<void> | undefined;
  /** The session closed before the branch started: reject it and release what it held. */
  abandon(error: unknown): void;
}

/** What `branchSession` resolves to (PROTOCOL §7, less the event-bus fields). */
export interface BranchedSession {
  sessionId: string;
  workspaceCwd: string;
  attached: false;
  clientId: string;
  createdAt: number;
  displayName: string;
  forkedFrom: { sessionId: string };
}

export type QueueItem = PromptTicket | BranchTicket;

/** One entry of `GET /session/:id/pending-prompts`. */
export interface PendingPromptInfo {
  promptId: string;
  text: string;
  queuedAt: number;
  state: 'running' | 'queued';
  originatorClientId?: string;
}

/** A prompt ticket as `GET /session/:id/pending-prompts` lists it. */
export function describeTicket(ticket: PromptTicket, state: 'running' | 'queued'): PendingPromptInfo {
  const info: PendingPromptInfo = {
    promptId: ticket.promptId,
    text: ticket.text,
    queuedAt: ticket.queuedAt,
    state,
  };
  if (ticket.clientId !== undefined) info.originatorClientId = ticket.clientId;
  return info;
}
