// Writes docs/reference/errors.md from the error catalogue of the built protocol package
// (`npm run docs:errors` builds first). packages/protocol/test/error-reference.test.ts checks it.
import { writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { renderErrorReference } from '../packages/protocol/dist/index.js';

const target = resolve(dirname(fileURLToPath(import.meta.url)), '../docs/reference/errors.md');
writeFileSync(target, renderErrorReference());
console.log(`wrote ${target}`);
