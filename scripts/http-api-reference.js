// Writes docs/reference/http-api.md from the daemon's one route list (the compiled one: run
// `npm run build` first, which `npm run docs:http-api` does). The test
// packages/daemon/test/http/route-reference.test.ts fails when the checked-in file is stale.
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ROUTES } from '../packages/daemon/dist/http/routes/index.js';
import { renderRouteReference } from '../packages/daemon/dist/http/openapi/route-reference.js';

const target = resolve(dirname(fileURLToPath(import.meta.url)), '../docs/reference/http-api.md');
writeFileSync(target, renderRouteReference(ROUTES));
console.log(`wrote ${target} (${ROUTES.length} routes)`);
