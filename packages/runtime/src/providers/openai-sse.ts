import type http from 'node:http';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { ProviderError } from '../errors.js';
import { detail, type JsonPoster } from './openai-http.js';

/**
 * The JSON chunks of an OpenAI-compatible event stream, read as the `openai` SDK reads them:
 * every event's data is one chunk, `[DONE]` ends the answer (whatever follows is ignored), a
 * chunk carrying `error` is the upstream's failure, data that is not JSON is a malformed answer
 * (a `SyntaxError`). Unlike the SDK, nothing of the data is ever logged. A connection lost
 * while reading is a {@link ProviderError}; when `signal` stopped the call, its own error.
 */
export async function* eventStreamChunks(
  response: http.IncomingMessage,
  poster: JsonPoster,
  endpoint: string,
  signal: AbortSignal,
): AsyncGenerator<unknown> {
  const events: EventSourceMessage[] = [];
  const parser = createParser({ onEvent: (event) => events.push(event) });
  response.setEncoding('utf8');
  const reader = response[Symbol.asyncIterator]() as AsyncIterator<string>;
  let done = false;
  try {
    for (;;) {
      let next: IteratorResult<string>;
      try {
        next = await reader.next();
      } catch (error) {
        throw signal.aborted ? error : poster.lost(error as Error);
      }
      if (next.done) break;
      parser.feed(next.value);
      for (const event of events.splice(0)) {
        if (done) continue;
        if (event.data.startsWith('[DONE]')) {
          done = true;
          continue;
        }
        yield chunkOf(event.data, endpoint);
      }
    }
    if (!response.complete && !done) throw poster.lost(undefined);
  } finally {
    await reader.return?.();
  }
}

/** One event's data as a chunk; an `error` member is the upstream's failure, reported as the SDK does. */
function chunkOf(data: string, endpoint: string): unknown {
  const chunk = JSON.parse(data) as { error?: { code?: unknown; type?: unknown } } | null;
  if (chunk !== null && typeof chunk === 'object' && chunk.error) {
    const named = chunk.error;
    throw new ProviderError(`${endpoint} reported an error${detail(named.code ?? named.type)}`, false);
  }
  return chunk;
}
