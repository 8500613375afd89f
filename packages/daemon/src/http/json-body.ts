import type { FastifyInstance } from 'fastify';
import { parseJsonBody } from '../wire/index.js';

/** Replaces fastify's JSON parser: malformed → 400, forbidden keys dropped, empty → undefined. */
export function registerJsonBody(app: FastifyInstance): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (error) {
      done(error as Error, undefined);
    }
  });
}
