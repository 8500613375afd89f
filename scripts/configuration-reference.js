// Writes docs/reference/configuration.md from the settings table of the built daemon
// (`npm run docs:configuration` builds first). packages/daemon/test/settings checks it is current.
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configurationReference } from '../packages/daemon/dist/settings/reference.js';

const target = join(dirname(fileURLToPath(import.meta.url)), '../docs/reference/configuration.md');
mkdirSync(dirname(target), { recursive: true });
writeFileSync(target, configurationReference());
process.stdout.write(`wrote ${target}\n`);
