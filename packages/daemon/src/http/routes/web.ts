import * as z from 'zod/mini';
import { WEB_DOOR } from '../browser-sign-in.js';
import { defineRoute, type Route } from '../route.js';
import { ErrorBody } from '../schemas/common-schemas.js';
import { WebAssets } from '../web-assets.js';

// The web client for people (docs/web.md, docs/decisions/040): the page at `/` and its files,
// built by `scripts/bundle-web.js` and served from this daemon only (no CDN, works offline).

/** Where the page's files are served. */
export const WEB_ASSETS_PATH = '/web/assets';

/** The page: a shell that loads the bundled app; no inline script or style. */
const PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Sluice</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${WEB_ASSETS_PATH}/app.css"><script type="module" src="${WEB_ASSETS_PATH}/app.js"></script></head>
<body><div id="app"><p>Loading Sluice…</p></div><noscript>Sluice's web client needs JavaScript.</noscript></body></html>
`;

/**
 * The page's Content-Security-Policy: scripts and styles from this daemon's files only (no
 * inline code, no eval), requests to this daemon only, nothing framed or framing.
 */
export const WEB_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

const text = (description: string, contentType: string) => ({ description, schema: z.string(), contentType });

const page = defineRoute(
  {
    method: 'GET',
    path: WEB_DOOR.page,
    tag: 'operations',
    summary: 'The web client: talk to agents in a browser',
    description: `With a token, a browser without the cookie \`${WEB_DOOR.cookie}\` gets \`401\` and a form that POSTs the token to \`${WEB_DOOR.signIn}\`; the cookie then opens the API to the page (a change only with this daemon's Origin). \`?token=\` is refused: \`400 token_in_url\`.`,
    web: true,
    responses: {
      200: { ...text('The page.', 'text/html'), example: '<!doctype html><html lang="en">…</html>' },
      401: text('A sign-in form, when a token is needed.', 'text/html'),
    },
  },
  {
    handler: () => (_request, reply) =>
      reply
        .header('Content-Security-Policy', WEB_CSP)
        .header('Cache-Control', 'no-store')
        .header('X-Content-Type-Options', 'nosniff')
        .header('Referrer-Policy', 'no-referrer')
        .type('text/html; charset=utf-8')
        .send(PAGE),
  },
);

const asset = defineRoute<{ file: string }>(
  {
    method: 'GET',
    path: `${WEB_ASSETS_PATH}/:file`,
    tag: 'operations',
    summary: "One of the web client's files (script, styles)",
    description:
      'The files the page loads, built into the daemon package by `npm run build` (no CDN); `404` for any other name.',
    params: z.object({ file: z.string() }),
    web: true,
    responses: {
      200: { ...text('The file.', 'text/javascript'), example: '(()=>{…})();' },
      404: { description: 'No such file of the web client.', schema: ErrorBody },
    },
  },
  {
    handler: () => {
      const assets = new WebAssets();
      return (request, reply) => {
        const file = assets.get(request.params.file);
        if (file === undefined)
          return reply.code(404).send({ error: 'No such file of the web client; reload the page' });
        return reply
          .header('Cache-Control', 'no-cache')
          .header('X-Content-Type-Options', 'nosniff')
          .type(file.type)
          .send(file.body);
      };
    },
  },
);

/** `GET /` (the web client's page) and `GET /web/assets/:file` (its files). */
export const WEB_ROUTES: readonly Route[] = [page, asset];
