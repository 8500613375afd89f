// Bundles the compiled daemon CLI (`packages/daemon/dist/cli/main.js`, built by `tsc -b`) into
// `packages/daemon/dist/bundle/sluice.cjs` (plus lazily loaded chunks), and puts the launcher
// `sluice.js` next to it, which `npm start` and the `sluice` bin run. Why: resolving and loading
// ~300 separate modules is a third of the daemon's start-up on a small machine, and parsing and
// compiling the bundle most of the rest; CommonJS is what can be compiled through V8 code
// caches on Node 20 (docs/decisions/009). better-sqlite3 stays external (a native addon); the
// journal's writer thread is a separate entry file and is copied next to the bundle.
import { chmodSync, copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = resolve(root, 'packages/daemon/dist/bundle');

rmSync(outDir, { recursive: true, force: true });
mkdirSync(outDir, { recursive: true });
await build({
  input: resolve(root, 'packages/daemon/dist/cli/main.js'),
  platform: 'node',
  // better-sqlite3 is a native addon. fastify's JSON-schema compilers and its inject() client
  // are required lazily and never on our paths (the server disables schema compilation); left
  // out of the bundle, ~1 MB less to parse on every start, still resolvable if ever needed.
  external: [
    /^better-sqlite3(\/|$)/,
    /^@fastify\/ajv-compiler(\/|$)/,
    /^@fastify\/fast-json-stringify-compiler(\/|$)/,
    /^light-my-request(\/|$)/,
  ],
  logLevel: 'warn',
  // The lazy logger imports pino dynamically so that a start need not evaluate it; fastify
  // requires it too, so it cannot get a chunk of its own, which this check would warn about.
  checks: { ineffectiveDynamicImport: false },
  output: {
    dir: outDir,
    format: 'cjs',
    entryFileNames: 'sluice.cjs',
    chunkFileNames: '[name].cjs',
    // Identifiers are kept so that stack traces in the logs stay readable.
    minify: { compress: true, mangle: false, codegen: { removeWhitespace: true } },
    sourcemap: true,
  },
});
copyFileSync(
  resolve(root, 'packages/runtime/dist/journal/sqlite-journal-worker.js'),
  resolve(outDir, 'sqlite-journal-worker.js'),
);
for (const file of ['launch.js', 'code-cache.js']) {
  copyFileSync(
    resolve(root, 'packages/daemon/dist/cli', file),
    resolve(outDir, file === 'launch.js' ? 'sluice.js' : file),
  );
}
chmodSync(resolve(outDir, 'sluice.js'), 0o755);
// `/docs` serves Swagger UI's script and stylesheet from the daemon (http/api-docs-page.ts): the
// files of the pinned swagger-ui-dist go next to the bundle, which the package ships.
const swaggerUi = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
mkdirSync(resolve(outDir, 'api-docs'));
for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css', 'LICENSE', 'NOTICE'])
  copyFileSync(resolve(swaggerUi, file), resolve(outDir, 'api-docs', file));
