import { EVENT_EPOCH_HEADER, EVENT_TYPES, SSE_STREAM_ID_HEADER, type EventEnvelope } from '@sluice/protocol';
import { anySignal, sleep, timeoutController } from './abort.js';
import { jitteredBackoff } from './backoff.js';
import { DaemonHttpError, DaemonProtocolError } from './errors.js';
import { errorFrom, discard, sessionPath, type HttpCore } from './http.js';
import { nonNegativeInteger, positiveNumber, timerMs } from './validate.js';
import { readEventStream } from './sse.js';

/** One event of a session's stream (PROTOCOL §6). */
export type DaemonEvent = EventEnvelope;

/** How a broken event stream is re-opened: jittered exponential backoff, bounded attempts. */
export interface ReconnectOptions {
  /** Consecutive re-opens without receiving an event before giving up; `0` disables. Default 5. */
  maxAttempts?: number;
  /** First backoff ceiling in ms; default 250. */
  baseMs?: number;
  /** Largest backoff between attempts in ms (a server's `Retry-After` comes on top); default 5 000. */
  capMs?: number;
  /**
   * A connection silent this long (not even the daemon's 15 s heartbeat) counts as dropped and
   * is re-opened; default 45 000, `0` disables.
   */
  idleTimeoutMs?: number;
}

/** Reconnect settings with every field set. */
export type ReconnectSettings = Required<ReconnectOptions>;

/** Validates reconnect options over `base`. */
export function reconnectSettings(
  options: ReconnectOptions | boolean | undefined,
  base: ReconnectSettings,
): ReconnectSettings {
  if (options === undefined || options === true) return base;
  if (options === false) return { ...base, maxAttempts: 0 };
  return {
    maxAttempts: nonNegativeInteger('reconnect.maxAttempts', options.maxAttempts ?? base.maxAttempts),
    baseMs: positiveNumber('reconnect.baseMs', options.baseMs ?? base.baseMs),
    capMs: positiveNumber('reconnect.capMs', options.capMs ?? base.capMs),
    idleTimeoutMs: timerMs('reconnect.idleTimeoutMs', options.idleTimeoutMs ?? base.idleTimeoutMs),
  };
}

/** Options of `subscribeEvents` (names as in the reference client). */
export interface SubscribeOptions {
  /** Resume after this event id (`Last-Event-ID`); omitted = live events only. */
  lastEventId?: number;
  /** Epoch of the bus that produced `lastEventId`; a different epoch makes the daemon resync. */
  epoch?: string;
  /** Called with the bus epoch whenever a connection reports a new one. */
  onEpoch?: (epoch: string) => void;
  /** Ends the iteration quietly. */
  signal?: AbortSignal;
  /** Per-subscriber queue bound requested from the daemon, in [16, 2048]. */
  maxQueued?: number;
  /** Client identity sent with the subscription. */
  clientId?: string;
  /** Called after each accepted connection (re-opens included) with its stream id. */
  onSseStreamAccepted?: (streamId: string | undefined) => void;
  /** Re-open a dropped stream from the last seen id; `false` disables. Default: the client's setting. */
  reconnect?: boolean | ReconnectOptions;
}

/** A reverse proxy's answers while the daemon behind it is unreachable. */
const GATEWAY_STATUSES = new Set([502, 504]);

function retryAfterOf(error: unknown): number {
  return error instanceof DaemonHttpError && error.retryAfterMs !== undefined ? error.retryAfterMs : 0;
}

/** A failure that re-opening cannot mend: an unreadable answer, or a refusal that is not transient. */
function isFinal(error: unknown): boolean {
  if (error instanceof DaemonProtocolError) return true;
  // re-opening is idempotent: besides 429/503, a proxy's 502/504 (upstream briefly away) is
  // as transient as the refused connection a direct client would see
  return error instanceof DaemonHttpError && !error.retryable && !GATEWAY_STATUSES.has(error.status);
}

/** Where the next connection resumes: the last event id seen and the bus epoch learned. */
interface StreamPosition {
  cursor: number | undefined;
  epoch: string | undefined;
}

/** Opens one connection of the stream and returns its SSE body; a refusal or a non-SSE answer throws. */
async function openStream(
  core: HttpCore,
  connectTimeoutMs: number,
  path: string,
  position: StreamPosition,
  options: SubscribeOptions,
  connection: AbortSignal,
): Promise<ReadableStream<Uint8Array>> {
  const headers: Record<string, string> = { Accept: 'text/event-stream' };
  if (position.cursor !== undefined) {
    headers['Last-Event-ID'] = String(position.cursor);
    if (position.epoch !== undefined) headers[EVENT_EPOCH_HEADER] = position.epoch;
  }
  const connect = timeoutController(connectTimeoutMs);
  let response: Response;
  try {
    response = await core.send('GET', path, {
      clientId: options.clientId,
      headers,
      timeout: false,
      signal: anySignal([options.signal, connection, connect.signal]),
    });
  } finally {
    connect.clear();
  }
  if (!response.ok) throw await errorFrom(response, 'GET /session/:id/events');
  const type = response.headers.get('Content-Type') ?? '';
  if (!type.toLowerCase().includes('text/event-stream') || response.body === null) {
    await discard(response);
    throw new DaemonProtocolError(`GET /session/:id/events: expected text/event-stream, got "${type}"`);
  }
  const seenEpoch = response.headers.get(EVENT_EPOCH_HEADER);
  if (seenEpoch !== null && seenEpoch !== '' && seenEpoch !== position.epoch) {
    position.epoch = seenEpoch;
    options.onEpoch?.(seenEpoch);
  }
  options.onSseStreamAccepted?.(response.headers.get(SSE_STREAM_ID_HEADER) ?? undefined);
  return response.body;
}

/**
 * The session's events as an async iterator that re-opens a dropped connection from the last
 * seen id, after a jittered backoff on top of any `Retry-After`. Ends after `session_closed`,
 * on `signal`, or when the attempts are spent; an error that re-opening cannot mend is thrown.
 */
export async function* subscribeEvents(
  core: HttpCore,
  connectTimeoutMs: number,
  defaults: ReconnectSettings,
  sessionId: string,
  options: SubscribeOptions = {},
): AsyncGenerator<DaemonEvent> {
  const reconnect = reconnectSettings(options.reconnect, defaults);
  const signal = options.signal;
  const position: StreamPosition = { cursor: options.lastEventId, epoch: options.epoch };
  const query =
    options.maxQueued === undefined ? '' : `?maxQueued=${encodeURIComponent(String(options.maxQueued))}`;
  const path = sessionPath(sessionId, `/events${query}`);
  let failures = 0;
  for (;;) {
    if (signal?.aborted) return;
    let lastError: unknown;
    let progressed = false;
    const connection = new AbortController();
    try {
      const body = await openStream(core, connectTimeoutMs, path, position, options, connection.signal);
      for await (const event of readEventStream(body, undefined, reconnect.idleTimeoutMs)) {
        if (event.id !== undefined) {
          // only bus events count as progress: a stream that keeps closing after its
          // synthetic replay_complete must spend attempts, not loop at the first backoff
          progressed = true;
          position.cursor = event.id;
        }
        yield event;
        if (event.type === EVENT_TYPES.sessionClosed) return;
      }
    } catch (error) {
      if (signal?.aborted) return;
      if (isFinal(error)) throw error;
      lastError = error;
    } finally {
      connection.abort();
    }
    if (progressed) failures = 0;
    if (failures >= reconnect.maxAttempts) {
      if (lastError !== undefined) throw lastError;
      return;
    }
    // the server's Retry-After is a floor; the jitter comes on top so streams refused together
    // (a 429 subscriber_limit_exceeded, a 503) do not all come back at the same instant
    const delay = retryAfterOf(lastError) + jitteredBackoff(failures, reconnect);
    failures++;
    try {
      await sleep(delay, signal);
    } catch {
      return;
    }
  }
}
