// The SDK's `prepack` (docs/decisions/041): makes `packages/sdk/dist` installable on its own.
// `@sluice/protocol` is a workspace package, published nowhere, and npm does not bundle a
// workspace link; so its compiled files (JavaScript and declarations) are copied into
// `dist/protocol/` and the SDK's own files import them by relative path. Idempotent: run twice,
// it rewrites nothing the second time. The workspace keeps working on the rewritten files.
import { cpSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const sdkDist = resolve(root, 'packages/sdk/dist');
const vendored = resolve(sdkDist, 'protocol');
const PROTOCOL_SPECIFIER = /(['"])@sluice\/protocol\1/g;

rmSync(vendored, { recursive: true, force: true });
cpSync(resolve(root, 'packages/protocol/dist'), vendored, {
  recursive: true,
  // Source maps point at sources the tarball does not hold.
  filter: (source) => !source.endsWith('.map') && !source.endsWith('.tsbuildinfo'),
});
let rewritten = 0;
for (const name of readdirSync(sdkDist)) {
  if (!name.endsWith('.js') && !name.endsWith('.d.ts')) continue;
  const file = resolve(sdkDist, name);
  const text = readFileSync(file, 'utf8');
  const next = text.replace(PROTOCOL_SPECIFIER, '$1./protocol/index.js$1');
  if (next === text) continue;
  writeFileSync(file, next);
  rewritten++;
}
console.log(`pack-sdk: @sluice/protocol vendored into dist/protocol, ${rewritten} files rewritten`);
