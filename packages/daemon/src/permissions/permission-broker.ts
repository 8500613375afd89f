import { randomUUID } from 'node:crypto';
import { MAX_TIMER_MS, systemClock, type Clock, type TimerHandle } from '@sluice/runtime';
import { DEFAULT_PERMISSION_RESPONSE_TIMEOUT_MS } from '../defaults.js';
import type {
  PermissionOption,
  PermissionOutcome,
  PermissionRequest,
  SessionEvent,
  SessionEventSink,
} from '../sessions/index.js';
import {
  InvalidOptionIdError,
  PermissionLimitExceededError,
  PermissionRequestNotFoundError,
} from './errors.js';
import { parsePermissionOutcome, timeoutChoice, validatePermissionRequest } from './validation.js';
import { integerInRange } from '../validate.js';

export { DEFAULT_PERMISSION_RESPONSE_TIMEOUT_MS };
/** Default of `maxOpenPerSession`. */
export const DEFAULT_MAX_OPEN_PERMISSIONS_PER_SESSION = 16;
/** Default of `maxResolvedRemembered`: resolved ids kept to answer late votes. */
export const DEFAULT_MAX_RESOLVED_PERMISSIONS = 512;

/** Event types the broker publishes on the session's stream (PROTOCOL §6, §7). */
export const PERMISSION_EVENT = {
  request: 'permission_request',
  resolved: 'permission_resolved',
  alreadyResolved: 'permission_already_resolved',
} as const;

/** Why a request was resolved; carried as `reason` by `permission_resolved`. */
export type PermissionResolution = 'vote' | 'timeout' | 'turn_aborted';

/** Configuration of a {@link PermissionBroker}; validated at construction. */
export interface PermissionBrokerOptions {
  /** Where `permission_*` events go: the same sink the session bridge publishes to. */
  events: SessionEventSink;
  /** Unanswered requests pick a reject option after this many ms; `0` = wait until the turn ends. Default 300000. */
  responseTimeoutMs?: number;
  /** Open requests per session; more are refused with `permission_limit_exceeded`. Default 16. */
  maxOpenPerSession?: number;
  /** Resolved request ids remembered for `permission_already_resolved`. Default 512. */
  maxResolvedRemembered?: number;
  clock?: Clock;
  newId?: () => string;
}

/** Per-request context the caller (the agent decorator) supplies. */
export interface PermissionAskContext {
  /** The turn's signal: aborting it resolves the request as `cancelled`. */
  signal?: AbortSignal;
  /** Stamped on the events so clients can tie the request to its prompt. */
  promptId?: string;
}

/** Who votes, for the broker's checks and the `permission_resolved` event. */
export interface PermissionVoteContext {
  /** The session route's `:id`; a request of another session is "not found". */
  sessionId?: string;
  /** The voter's `X-Qwen-Client-Id`, reported as `voterClientId`. */
  clientId?: string;
}

/** An open request, as `GET /session/:id/status` lists it. */
export interface OpenPermissionInfo {
  requestId: string;
  sessionId: string;
  promptId?: string;
  toolCall: Readonly<Record<string, unknown>>;
  options: readonly PermissionOption[];
}

interface OpenRequest extends OpenPermissionInfo {
  resolve(outcome: PermissionOutcome): void;
  timer: TimerHandle | undefined;
  detach: (() => void) | undefined;
}

interface ResolvedRecord {
  sessionId: string;
  outcome: PermissionOutcome;
}

/**
 * The daemon's permission broker (PROTOCOL §7, policy "first-responder"): an agent asks during
 * a turn, the request is published as `permission_request` on the session's stream, and the
 * first valid vote — over REST or ACP — resolves it (`permission_resolved`). Unanswered
 * requests pick a reject option after `responseTimeoutMs`; a turn abort (cancel, deadline,
 * close) resolves its open requests as `cancelled`. Everything it holds is bounded: open
 * requests per session, and the record of resolved ids used to answer late votes.
 */
export class PermissionBroker {
  readonly responseTimeoutMs: number;
  readonly maxOpenPerSession: number;
  readonly maxResolvedRemembered: number;
  private readonly sink: SessionEventSink;
  private readonly clock: Clock;
  private readonly newId: () => string;
  private readonly open = new Map<string, OpenRequest>();
  private readonly openCount = new Map<string, number>();
  /** Insertion-ordered, so the oldest entry is the first key: O(1) trimming. */
  private readonly resolved = new Map<string, ResolvedRecord>();

  constructor(options: PermissionBrokerOptions) {
    this.sink = options.events;
    this.clock = options.clock ?? systemClock;
    this.newId = options.newId ?? randomUUID;
    this.responseTimeoutMs = integerInRange(
      'permissionResponseTimeoutMs',
      options.responseTimeoutMs ?? DEFAULT_PERMISSION_RESPONSE_TIMEOUT_MS,
      0,
      Math.min(this.clock.maxTimerMs, MAX_TIMER_MS),
    );
    this.maxOpenPerSession = integerInRange(
      'maxOpenPermissionsPerSession',
      options.maxOpenPerSession ?? DEFAULT_MAX_OPEN_PERMISSIONS_PER_SESSION,
      1,
      1_000_000,
    );
    this.maxResolvedRemembered = integerInRange(
      'maxResolvedPermissions',
      options.maxResolvedRemembered ?? DEFAULT_MAX_RESOLVED_PERMISSIONS,
      0,
      1_000_000,
    );
  }

  /** Open requests over all sessions. */
  get openCountTotal(): number {
    return this.open.size;
  }

  /** Whether `requestId` is open (not yet resolved). */
  isOpen(requestId: string): boolean {
    return this.open.has(requestId);
  }

  /** The session an open request belongs to. */
  sessionOf(requestId: string): string | undefined {
    return this.open.get(requestId)?.sessionId;
  }

  /** The session's open requests, oldest first. */
  openFor(sessionId: string): OpenPermissionInfo[] {
    const result: OpenPermissionInfo[] = [];
    for (const request of this.open.values())
      if (request.sessionId === sessionId) {
        const { requestId, promptId, toolCall, options } = request;
        result.push({
          requestId,
          sessionId,
          toolCall,
          options,
          ...(promptId === undefined ? {} : { promptId }),
        });
      }
    return result;
  }

  /**
   * Publishes a `permission_request` and resolves with its outcome. Throws (synchronously)
   * `InvalidPermissionRequestError` or `PermissionLimitExceededError`; nothing is published then.
   * An already aborted signal resolves `cancelled` without publishing.
   */
  request(
    sessionId: string,
    request: PermissionRequest,
    context: PermissionAskContext = {},
  ): Promise<PermissionOutcome> {
    const options = validatePermissionRequest(request);
    const { signal, promptId } = context;
    if (signal?.aborted) return Promise.resolve({ outcome: 'cancelled' });
    const count = this.openCount.get(sessionId) ?? 0;
    if (count >= this.maxOpenPerSession)
      throw new PermissionLimitExceededError(sessionId, this.maxOpenPerSession);

    const requestId = this.newId();
    const toolCall = { ...request.toolCall };
    let resolvePromise!: (outcome: PermissionOutcome) => void;
    const promise = new Promise<PermissionOutcome>((resolve) => (resolvePromise = resolve));
    const entry: OpenRequest = {
      requestId,
      sessionId,
      toolCall,
      options,
      ...(promptId === undefined ? {} : { promptId }),
      resolve: resolvePromise,
      timer: undefined,
      detach: undefined,
    };
    this.open.set(requestId, entry);
    this.openCount.set(sessionId, count + 1);
    this.publish(entry, PERMISSION_EVENT.request, { requestId, sessionId, toolCall, options });
    const fallback = timeoutChoice(options);
    if (this.responseTimeoutMs > 0 && fallback !== undefined)
      entry.timer = this.clock.setTimer(() => {
        entry.timer = undefined;
        this.settle(entry, { outcome: 'selected', optionId: fallback.optionId }, 'timeout', undefined);
      }, this.responseTimeoutMs);
    if (signal !== undefined) {
      const onAbort = (): void => this.settle(entry, { outcome: 'cancelled' }, 'turn_aborted', undefined);
      signal.addEventListener('abort', onAbort, { once: true });
      entry.detach = () => signal.removeEventListener('abort', onAbort);
    }
    return promise;
  }

  /**
   * One vote: the body's `outcome` is checked first (`invalid_permission_outcome`), then the
   * request (`permission_request_not_found`, and a `permission_already_resolved` event when it
   * was resolved before), then the option (`invalid_option_id`). The first valid vote wins.
   */
  vote(requestId: string, rawOutcome: unknown, context: PermissionVoteContext = {}): PermissionOutcome {
    const outcome = parsePermissionOutcome(rawOutcome);
    const entry = this.open.get(requestId);
    if (entry === undefined || (context.sessionId !== undefined && entry.sessionId !== context.sessionId)) {
      const record = this.resolved.get(requestId);
      if (record !== undefined && (context.sessionId === undefined || record.sessionId === context.sessionId))
        this.emit(record.sessionId, {
          type: PERMISSION_EVENT.alreadyResolved,
          data: { requestId, sessionId: record.sessionId, outcome: record.outcome },
          ...(context.clientId === undefined ? {} : { originatorClientId: context.clientId }),
        });
      throw new PermissionRequestNotFoundError(requestId);
    }
    if (
      outcome.outcome === 'selected' &&
      !entry.options.some((option) => option.optionId === outcome.optionId)
    )
      throw new InvalidOptionIdError(requestId, outcome.optionId);
    this.settle(entry, outcome, 'vote', context.clientId);
    return outcome;
  }

  private settle(
    entry: OpenRequest,
    outcome: PermissionOutcome,
    reason: PermissionResolution,
    voterClientId: string | undefined,
  ): void {
    const { requestId, sessionId } = entry;
    if (this.open.get(requestId) !== entry) return;
    this.open.delete(requestId);
    const remaining = (this.openCount.get(sessionId) ?? 1) - 1;
    if (remaining > 0) this.openCount.set(sessionId, remaining);
    else this.openCount.delete(sessionId);
    if (entry.timer !== undefined) this.clock.clearTimer(entry.timer);
    entry.timer = undefined;
    entry.detach?.();
    entry.detach = undefined;
    this.remember(requestId, { sessionId, outcome });
    const data: Record<string, unknown> = { requestId, sessionId, outcome, reason };
    if (voterClientId !== undefined) data['voterClientId'] = voterClientId;
    this.publish(entry, PERMISSION_EVENT.resolved, data, voterClientId);
    entry.resolve(outcome);
  }

  private remember(requestId: string, record: ResolvedRecord): void {
    if (this.maxResolvedRemembered === 0) return;
    this.resolved.set(requestId, record);
    if (this.resolved.size > this.maxResolvedRemembered) {
      const oldest = this.resolved.keys().next();
      if (!oldest.done) this.resolved.delete(oldest.value);
    }
  }

  private publish(
    entry: OpenRequest,
    type: string,
    data: Record<string, unknown>,
    originatorClientId?: string,
  ): void {
    this.emit(entry.sessionId, {
      type,
      data,
      ...(entry.promptId === undefined ? {} : { promptId: entry.promptId }),
      ...(originatorClientId === undefined ? {} : { originatorClientId }),
    });
  }

  private emit(sessionId: string, event: SessionEvent): void {
    this.sink.publish(sessionId, event);
  }
}

/** The `pendingInteractions` fields of a session summary, with the broker's open requests filled in. */
export function withOpenPermissions<T extends { sessionId: string }>(
  summary: T,
  broker: PermissionBroker,
): T & { isWaitingForPermission: boolean; pendingInteractionCount: number; pendingInteractions: unknown[] } {
  const open = broker.openFor(summary.sessionId);
  return {
    ...summary,
    isWaitingForPermission: open.length > 0,
    pendingInteractionCount: open.length,
    pendingInteractions: open.map((request) => ({ kind: 'permission', ...request })),
  };
}
