import type { FastifyInstance } from 'fastify';
import { parseJsonBytes } from '../wire/index.js';

/**
 * Replaces fastify's JSON parser: malformed → 400, forbidden keys dropped, empty → undefined.
 * The body arrives as bytes, so a text with characters outside ASCII avoids Node's slow decoder
 * (wire/json-text.ts). With `keepSource`, a parsed object keeps its bytes (`jsonSourceOf`).
 */
export function registerJsonBody(app: FastifyInstance, { keepSource = false } = {}): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    try {
      done(null, parseJsonBytes(body as Buffer, { keepSource }));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
