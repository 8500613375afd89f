import { jsonNumberLength } from '../scheduler/request-size.js';

/** The effective options of a call as counted against `maxRequestBytes` (SCH-17). */
export interface CountedOptions {
  timeoutMs: number;
  provider: string;
  model: string;
  kind: 'complete' | 'stream';
  correlation: { taskId: string; sessionId?: string; turnId?: string; fallbackOf?: string };
}

/** Builds the counted options; absent correlation members are left out, as JSON would. */
export function countedOptions(
  timeoutMs: number,
  provider: string,
  model: string,
  kind: 'complete' | 'stream',
  taskId: string,
  sessionId: string | undefined,
  turnId: string | undefined,
  fallbackOf?: string,
): CountedOptions {
  const correlation: CountedOptions['correlation'] = { taskId };
  if (sessionId !== undefined) correlation.sessionId = sessionId;
  if (turnId !== undefined) correlation.turnId = turnId;
  if (fallbackOf !== undefined) correlation.fallbackOf = fallbackOf;
  return { timeoutMs, provider, model, kind, correlation };
}

/**
 * The exact UTF-8 length of `JSON.stringify(countedOptions(...))`, by arithmetic over its fixed
 * members from the JSON byte lengths of its strings (which callers cache) — the options are
 * counted on every admission, so they skip both the object and the generic walk.
 */
export function countedOptionsBytes(
  timeoutMs: number,
  providerBytes: number,
  modelBytes: number,
  kindBytes: number,
  taskIdBytes: number,
  sessionIdBytes: number | undefined,
  turnIdBytes: number | undefined,
  fallbackOfBytes?: number,
): number {
  let bytes =
    13 + // {"timeoutMs":
    jsonNumberLength(timeoutMs) +
    12 + // ,"provider":
    providerBytes +
    9 + // ,"model":
    modelBytes +
    8 + // ,"kind":
    kindBytes +
    15 + // ,"correlation":
    10 + // {"taskId":
    taskIdBytes +
    2; // }}
  if (sessionIdBytes !== undefined) bytes += 13 + sessionIdBytes;
  if (turnIdBytes !== undefined) bytes += 10 + turnIdBytes;
  if (fallbackOfBytes !== undefined) bytes += 14 + fallbackOfBytes; // ,"fallbackOf":
  return bytes;
}
