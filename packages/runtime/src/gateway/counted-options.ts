import { jsonNumberLength, jsonStringBytes } from '../scheduler/request-size.js';

/** The effective options of a call as counted against `maxRequestBytes` (SCH-17). */
export interface CountedOptions {
  timeoutMs: number;
  provider: string;
  model: string;
  kind: 'complete' | 'stream';
  correlation: { taskId: string; sessionId?: string; turnId?: string };
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
): CountedOptions {
  const correlation: CountedOptions['correlation'] = { taskId };
  if (sessionId !== undefined) correlation.sessionId = sessionId;
  if (turnId !== undefined) correlation.turnId = turnId;
  return { timeoutMs, provider, model, kind, correlation };
}

/**
 * The exact UTF-8 length of `JSON.stringify(options)`, by arithmetic over the fixed shape —
 * the options are counted on every admission, so they skip the generic walk.
 */
export function countedOptionsBytes(options: CountedOptions): number {
  const { correlation } = options;
  let bytes =
    13 + // {"timeoutMs":
    jsonNumberLength(options.timeoutMs) +
    12 + // ,"provider":
    jsonStringBytes(options.provider, Infinity) +
    9 + // ,"model":
    jsonStringBytes(options.model, Infinity) +
    8 + // ,"kind":
    jsonStringBytes(options.kind, Infinity) +
    15 + // ,"correlation":
    10 + // {"taskId":
    jsonStringBytes(correlation.taskId, Infinity) +
    2; // }}
  if (correlation.sessionId !== undefined) bytes += 13 + jsonStringBytes(correlation.sessionId, Infinity);
  if (correlation.turnId !== undefined) bytes += 10 + jsonStringBytes(correlation.turnId, Infinity);
  return bytes;
}
