import { PassThrough } from 'node:stream';
import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { JsonRpcChannel } from '../../src/agents/acp/json-rpc-channel.js';

/** A channel reading `input`; resolves each notification's params as the agent sent them. */
function listen(): { input: PassThrough; received: unknown[] } {
  const input = new PassThrough();
  const received: unknown[] = [];
  new JsonRpcChannel(input, new PassThrough(), {
    onRequest: () => Promise.resolve(null),
    onNotification: (_method, params) => received.push(params),
    onProtocolError: () => {},
  });
  return { input, received };
}

describe("an agent's lines are read as the text it wrote, whatever the script", () => {
  test('text outside ASCII, cut anywhere between chunks, arrives whole and in order', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'binary' }), { minLength: 1, maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 6 }),
        (texts, cuts) => {
          const { input, received } = listen();
          const bytes = Buffer.from(
            texts
              .map((text) => `${JSON.stringify({ jsonrpc: '2.0', method: 'n', params: { text } })}\n`)
              .join(''),
          );
          const points = [...new Set(cuts.map((cut) => cut % (bytes.length + 1)))].sort((a, b) => a - b);
          let from = 0;
          for (const point of [...points, bytes.length]) {
            input.write(bytes.subarray(from, point));
            from = point;
          }
          // Lone surrogates are written by JSON.stringify as escapes: read back as they were.
          expect(received).toEqual(texts.map((text) => ({ text })));
        },
      ),
      { numRuns: 300 },
    );
  });

  test('a banner line and a line that is not JSON are skipped, the next message is read', () => {
    const { input, received } = listen();
    input.write('Starting agent… ✓\n\n{"jsonrpc":"2.0","method":"n","params":{"text":"\\é"}}\n');
    input.write('{"jsonrpc":"2.0","method":"n","params":{"text":"改动 😀"}}\n');
    expect(received).toEqual([{ text: '改动 😀' }]);
  });
});
