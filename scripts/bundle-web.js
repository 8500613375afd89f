// Bundles the web client (packages/daemon/web/, Preact + marked + DOMPurify + highlight.js)
// into packages/daemon/dist/web/app.js, next to its styles app.css, which the daemon serves at `/`
// (docs/web.md). rolldown, the bundler the daemon's bundle already uses, compiles the TSX and
// minifies. The first load must stay within its budget: this fails the build past it.
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'rolldown';

/** The first load (script + styles), gzipped, in bytes (issue 31: ≤ 150 KB). */
export const WEB_BUDGET_GZIP_BYTES = 150 * 1024;

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = resolve(root, 'packages/daemon/dist/web');

/** The gzipped size of every file of the first load. */
export function firstLoadGzipBytes(dir = outDir) {
  return ['app.js', 'app.css'].reduce(
    (sum, name) => sum + gzipSync(readFileSync(resolve(dir, name)), { level: 9 }).length,
    0,
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  rmSync(outDir, { recursive: true, force: true });
  await build({
    input: resolve(root, 'packages/daemon/web/main.tsx'),
    platform: 'browser',
    tsconfig: resolve(root, 'packages/daemon/web/tsconfig.json'),
    logLevel: 'warn',
    transform: { define: { 'process.env.NODE_ENV': '"production"' } },
    output: {
      dir: outDir,
      format: 'esm',
      entryFileNames: 'app.js',
      minify: true,
      codeSplitting: false,
    },
  });
  // The styles are one hand-written file: copied as they are (rolldown bundles no CSS).
  copyFileSync(resolve(root, 'packages/daemon/web/style.css'), resolve(outDir, 'app.css'));
  const size = firstLoadGzipBytes();
  if (size > WEB_BUDGET_GZIP_BYTES) {
    console.error(
      `web client: first load is ${size} bytes gzipped, over its budget of ${WEB_BUDGET_GZIP_BYTES}`,
    );
    process.exit(1);
  }
}
