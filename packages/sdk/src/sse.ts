import { createParser, type EventSourceMessage, type ParseError } from 'eventsource-parser';
import type { EventEnvelope } from '@sluice/protocol';
import { DEFAULT_MAX_SSE_BUFFER } from './defaults.js';
import { DaemonProtocolError } from './errors.js';

/**
 * Reads one event's `data:` JSON into an envelope; `undefined` (dropped) for anything that is
 * not `{v: 1, type: string}` or has an id that is not a positive safe integer (PROTOCOL §6).
 */
export function parseEnvelope(data: string): EventEnvelope | undefined {
  let value: unknown;
  try {
    value = JSON.parse(data);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const envelope = value as Partial<EventEnvelope>;
  if (envelope.v !== 1 || typeof envelope.type !== 'string') return undefined;
  if (envelope.id !== undefined && (!Number.isSafeInteger(envelope.id) || envelope.id < 1)) return undefined;
  return envelope as EventEnvelope;
}

/**
 * Yields the envelopes of an SSE body as they arrive, reading only while the consumer pulls;
 * with `idleTimeoutMs` (> 0) a read that gets no bytes for that long throws a `TimeoutError`.
 */
export async function* readEventStream(
  body: ReadableStream<Uint8Array>,
  maxBufferSize: number = DEFAULT_MAX_SSE_BUFFER,
  idleTimeoutMs = 0,
): AsyncGenerator<EventEnvelope> {
  const reader = body.getReader();
  const read = idleTimeoutMs > 0 ? () => readWithin(reader, idleTimeoutMs) : () => reader.read();
  const decoder = new TextDecoder();
  let batch: EventEnvelope[] = [];
  let failure: ParseError | undefined;
  const parser = createParser({
    maxBufferSize,
    onEvent(message: EventSourceMessage) {
      const envelope = parseEnvelope(message.data);
      if (envelope !== undefined) batch.push(envelope);
    },
    onError(error: ParseError) {
      if (error.type === 'max-buffer-size-exceeded') failure = error;
    },
  });
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await read();
      if (done) {
        finished = true;
        parser.feed(decoder.decode());
      } else {
        parser.feed(decoder.decode(value, { stream: true }));
      }
      if (failure !== undefined)
        throw new DaemonProtocolError(`SSE frame larger than ${maxBufferSize} characters`, {
          cause: failure,
        });
      const ready = batch;
      batch = [];
      for (const envelope of ready) yield envelope;
      if (finished) return;
    }
  } finally {
    if (!finished) await reader.cancel().catch(() => {});
    reader.releaseLock();
  }
}

/** `reader.read()`, or a `TimeoutError` when it brings nothing within `ms`. */
async function readWithin(
  reader: ReadableStreamDefaultReader<Uint8Array>,
  ms: number,
): ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const silent = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new DOMException(`the event stream sent nothing for ${ms} ms`, 'TimeoutError')),
      ms,
    );
  });
  try {
    return await Promise.race([reader.read(), silent]);
  } finally {
    clearTimeout(timer);
  }
}
