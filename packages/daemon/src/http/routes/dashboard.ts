import type { OutgoingHttpHeaders } from 'node:http';
import * as z from 'zod/mini';
import { DashboardFeed, type DashboardSnapshot } from '../../observe/index.js';
import { writeSse, type SseSource } from '../../wire/index.js';
import { badInput } from '../openapi/route-doc.js';
import { defineRoute, present, type Route } from '../route.js';

/**
 * A viewer's stream: only the newest snapshot waits to be written, so a slow browser skips
 * snapshots instead of queueing them.
 */
class LatestSnapshot implements SseSource {
  private frame: string | undefined;
  private waiter: ((frame: string | undefined) => void) | undefined;
  private closed = false;
  unsubscribe: () => void = () => {};

  readonly push = (snapshot: DashboardSnapshot): void => {
    const frame = `event: snapshot\ndata: ${JSON.stringify(snapshot)}\n\n`;
    const waiter = this.waiter;
    this.waiter = undefined;
    if (waiter !== undefined) waiter(frame);
    else this.frame = frame;
  };

  tryNext(): string | undefined {
    const frame = this.frame;
    this.frame = undefined;
    return frame;
  }

  next(): Promise<string | undefined> {
    const frame = this.tryNext();
    if (frame !== undefined || this.closed) return Promise.resolve(frame);
    return new Promise((resolve) => (this.waiter = resolve));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.unsubscribe();
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.(undefined);
  }
}

const text = (description: string, contentType: string) => ({
  description,
  schema: z.string(),
  contentType,
});

const page = defineRoute(
  {
    method: 'GET',
    path: '/dashboard',
    tag: 'operations',
    summary: 'The live dashboard page',
    description:
      'With a token, a browser without the cookie `sluice_dashboard` gets `401` and a form that POSTs the token to `/dashboard/sign-in` (an EventSource cannot send a bearer header). A token in the URL (`?token=`) is refused: `400 token_in_url`.',
    metrics: true,
    responses: {
      200: { ...text('The page.', 'text/html'), example: '<!doctype html><html lang="en">…</html>' },
      400: badInput(['token_in_url']),
      401: text('A sign-in form, when a token is needed.', 'text/html'),
    },
  },
  {
    handler: () => async (_request, reply) => {
      const { DASHBOARD_HTML, DASHBOARD_CSP } = await import('../../observe/dashboard-page.js');
      return reply
        .header('Content-Security-Policy', DASHBOARD_CSP)
        .header('Cache-Control', 'no-store')
        .header('X-Content-Type-Options', 'nosniff')
        .type('text/html; charset=utf-8')
        .send(DASHBOARD_HTML);
    },
  },
);

const stream = defineRoute(
  {
    method: 'GET',
    path: '/dashboard/stream',
    tag: 'operations',
    summary: "The dashboard's feed: one snapshot a second",
    description:
      'Takes the cookie `sluice_dashboard` (see `POST /dashboard/sign-in`) or the bearer header; `?token=` is refused (`400 token_in_url`).',
    metrics: true,
    rateLimit: 'exempt',
    responses: {
      200: {
        ...text('Server-sent events, one snapshot each.', 'text/event-stream'),
        example: 'event: snapshot\ndata: {"at":1796313547000,"sessions":[],…}\n\n',
      },
      400: badInput(['token_in_url']),
    },
  },
  {
    handler: ({ observed, heartbeatMs }) => {
      const feed = new DashboardFeed(present(observed, 'the daemon tap'));
      return (request, reply) => {
        const viewer = new LatestSnapshot();
        // A full feed throws `dashboard_viewer_limit` (429, Retry-After 5) before the reply is ours.
        viewer.unsubscribe = feed.subscribe(viewer.push);
        reply.hijack();
        writeSse(request.raw, reply.raw, viewer, {
          heartbeatMs,
          headers: reply.getHeaders() as OutgoingHttpHeaders,
        });
        return reply;
      };
    },
  },
);

/**
 * `GET /dashboard` (the page) and `GET /dashboard/stream` (its snapshots, one a second, as SSE
 * `snapshot` events), behind the same gates as the API (http/browser-sign-in.ts for browsers,
 * routes/sign-in.ts for their sign-in).
 */
export const DASHBOARD_ROUTES: readonly Route[] = [page, stream];
