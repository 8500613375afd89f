import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test } from 'vitest';
import { REGENERATE_ROUTE_REFERENCE, renderRouteReference } from '../../src/http/openapi/route-reference.js';
import { ROUTES } from '../../src/http/routes/index.js';

const REFERENCE = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../docs/reference/http-api.md');

test('docs/reference/http-api.md is the route list as it is now', () => {
  const checkedIn = readFileSync(REFERENCE, 'utf8');
  expect(
    checkedIn === renderRouteReference(ROUTES),
    `docs/reference/http-api.md is stale: run \`${REGENERATE_ROUTE_REFERENCE}\` and commit it`,
  ).toBe(true);
});

test('the route reference names every route of the list once', () => {
  const text = renderRouteReference(ROUTES);
  for (const route of ROUTES)
    expect(text.split(`| \`${route.method} ${route.path}\` |`).length - 1, route.path).toBe(1);
});
