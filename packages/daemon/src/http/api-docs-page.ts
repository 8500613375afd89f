import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * `/docs`: Swagger UI (the `swagger-ui-dist` package) drawing `/openapi.json`, every file served
 * by the daemon itself, so the page works offline and sends nothing past the daemon. The bundle
 * build copies the package's files to `dist/bundle/api-docs/` (scripts/bundle-daemon.js); from
 * the compiled sources they are read from the installed package. Loaded by the first request.
 */

/** The Swagger UI files the page loads, by the name they are served at under `/docs/`. */
export const SWAGGER_UI_FILES = {
  'swagger-ui-bundle.js': 'text/javascript; charset=utf-8',
  'swagger-ui.css': 'text/css; charset=utf-8',
} as const;
export type SwaggerUiFile = keyof typeof SWAGGER_UI_FILES;

/**
 * Starts Swagger UI on the document. Paths are relative to `/docs`, so the page also works behind
 * a proxy that mounts the daemon under a prefix. No validator (it would send the document to
 * swagger.io); operation ids shown, so each operation can be found by the id clients use.
 */
export const API_DOCS_SCRIPT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: 'openapi.json',
    dom_id: '#swagger-ui',
    validatorUrl: null,
    displayOperationId: true,
    deepLinking: true,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
  });
});
`;

/** The page: Swagger UI's stylesheet and scripts, all from this daemon. */
export const API_DOCS_HTML = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Sluice API reference</title><link rel="icon" href="data:,">
<link rel="stylesheet" href="docs/swagger-ui.css">
</head><body><div id="swagger-ui"></div>
<script src="docs/swagger-ui-bundle.js"></script>
<script src="docs/start.js"></script>
</body></html>
`;

/**
 * The page's Content-Security-Policy: scripts and styles from the daemon only (Swagger UI sets
 * `style` attributes, hence `'unsafe-inline'` for styles), its icons as `data:` images, and
 * requests ("try it out") to the daemon only.
 */
export const API_DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Where the Swagger UI files are: next to the bundle, or in the installed package. */
function filesDirectory(): string {
  const bundled = join(dirname(fileURLToPath(import.meta.url)), 'api-docs');
  if (existsSync(bundled)) return bundled;
  return dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
}

const read = new Map<SwaggerUiFile, Buffer>();

/** The bytes of a Swagger UI file, read once. */
export function swaggerUiFile(name: SwaggerUiFile): Buffer {
  let bytes = read.get(name);
  if (bytes === undefined) {
    bytes = readFileSync(join(filesDirectory(), name));
    read.set(name, bytes);
  }
  return bytes;
}
