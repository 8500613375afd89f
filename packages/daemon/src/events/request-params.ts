import { InvalidLastEventIdError, InvalidMaxQueuedError } from './errors.js';
import { MAX_MAX_QUEUED, MIN_MAX_QUEUED } from './event-bus.js';

/** `Last-Event-ID` as a number (absent or blank → `undefined`); else `invalid_last_event_id`. */
export function parseLastEventId(raw: string | string[] | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const text = Array.isArray(raw) ? raw.join(',') : raw.trim();
  if (text === '') return undefined;
  const value = /^\d+$/.test(text) ? Number(text) : NaN;
  if (!Number.isSafeInteger(value)) throw new InvalidLastEventIdError(text);
  return value;
}

/** `?maxQueued=` as a number (absent → `undefined`); range checked by the bus. */
export function parseMaxQueued(raw: string | undefined): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^\d+$/.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(value)) throw new InvalidMaxQueuedError(raw, MIN_MAX_QUEUED, MAX_MAX_QUEUED);
  return value;
}
