// Bundles the compiled daemon CLI (`packages/daemon/dist/cli/main.js`, built by `tsc -b`) into
// one file, `packages/daemon/dist/bundle/sluice.js`, which `npm start` and the `sluice` bin run.
// Why: resolving and loading ~300 separate modules is a third of the daemon's start-up on a
// small machine (docs/decisions/009). better-sqlite3 stays external (a native addon); the
// journal's writer thread is a separate entry file and is copied next to the bundle.
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
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
  output: {
    dir: outDir,
    format: 'esm',
    entryFileNames: 'sluice.js',
    chunkFileNames: '[name].js',
    // Identifiers are kept so that stack traces in the logs stay readable.
    minify: { compress: true, mangle: false, codegen: { removeWhitespace: true } },
    sourcemap: true,
  },
});
copyFileSync(
  resolve(root, 'packages/runtime/dist/journal/sqlite-journal-worker.js'),
  resolve(outDir, 'sqlite-journal-worker.js'),
);
