import * as z from 'zod/mini';
import type { FastifyReply } from 'fastify';
import { defineRoute, type Route } from '../route.js';

/** The page module: Swagger UI's files and the page, loaded by the first request. */
const page = () => import('../api-docs-page.js');

const text = (description: string, contentType: string, example: string) => ({
  description,
  schema: z.string(),
  contentType,
  example,
});

/** `reply` with the headers every part of the page is sent with. */
function sent(reply: FastifyReply, contentType: string, cache: string, body: string | Buffer): FastifyReply {
  return reply
    .header('Cache-Control', cache)
    .header('X-Content-Type-Options', 'nosniff')
    .type(contentType)
    .send(body);
}

const docsPage = defineRoute(
  {
    method: 'GET',
    path: '/docs',
    tag: 'discovery',
    summary: 'This API as a browsable reference (Swagger UI)',
    description:
      'An HTML page that draws `GET /openapi.json` with Swagger UI. Every file it loads comes from this daemon (no CDN, no validator), so it works offline; behind the same gates as `/openapi.json`.',
    responses: {
      200: text('The page.', 'text/html', '<!doctype html><html lang="en">…<div id="swagger-ui"></div>…'),
    },
  },
  {
    handler: () => async (_request, reply) => {
      const { API_DOCS_HTML, API_DOCS_CSP } = await page();
      reply.header('Content-Security-Policy', API_DOCS_CSP);
      return sent(reply, 'text/html; charset=utf-8', 'no-store', API_DOCS_HTML);
    },
  },
);

const startScript = defineRoute(
  {
    method: 'GET',
    path: '/docs/start.js',
    tag: 'discovery',
    summary: 'The script that starts Swagger UI on `/docs`',
    description: 'Points Swagger UI at `openapi.json` next to the page, with operation ids shown.',
    rateLimit: 'exempt',
    responses: {
      200: text('The script.', 'text/javascript', "window.addEventListener('load', function () {…});"),
    },
  },
  {
    handler: () => async (_request, reply) =>
      sent(reply, 'text/javascript; charset=utf-8', 'no-cache', (await page()).API_DOCS_SCRIPT),
  },
);

/** A file of the `swagger-ui-dist` package, served as it is. */
function swaggerUiRoute(name: 'swagger-ui-bundle.js' | 'swagger-ui.css', what: string): Route {
  return defineRoute(
    {
      method: 'GET',
      path: `/docs/${name}`,
      tag: 'discovery',
      summary: `Swagger UI's ${what}, for \`/docs\``,
      description: `The \`${name}\` of the \`swagger-ui-dist\` package the daemon was built with, served from the daemon so \`/docs\` needs no network.`,
      rateLimit: 'exempt',
      responses: {
        200: name.endsWith('.css')
          ? text(`The ${what}.`, 'text/css', '.swagger-ui{…}')
          : text(
              `The ${what}.`,
              'text/javascript',
              '/*! For license information please see swagger-ui-bundle.js.LICENSE.txt */…',
            ),
      },
    },
    {
      handler: () => async (_request, reply) => {
        const { SWAGGER_UI_FILES, swaggerUiFile } = await page();
        return sent(reply, SWAGGER_UI_FILES[name], 'public, max-age=3600', swaggerUiFile(name));
      },
    },
  );
}

/**
 * `GET /docs`, the API reference for people, and the three files it loads: Swagger UI's script
 * and stylesheet (http/api-docs-page.ts) and the script that starts it on `/openapi.json`.
 */
export const API_DOCS_ROUTES: readonly Route[] = [
  docsPage,
  startScript,
  swaggerUiRoute('swagger-ui-bundle.js', 'script'),
  swaggerUiRoute('swagger-ui.css', 'stylesheet'),
];
