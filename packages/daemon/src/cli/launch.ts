#!/usr/bin/env node
// The bundle's launcher, which the `sluice` bin (packages/daemon/bin/sluice.js, with the V8 flags
// the command runs with) imports: runs the CommonJS bundle next to this file through V8
// code caches (./code-cache.js), which saves most of the parsing and compiling of every start
// after the first (docs/decisions/009). `SLUICE_CODE_CACHE=0` runs it without them.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installCodeCache } from './code-cache.js';

const here = dirname(fileURLToPath(import.meta.url));
// Next to the bundle: whoever can write there can change the bundle itself, so the cache adds
// no one who can change the code that runs.
if (process.env.SLUICE_CODE_CACHE !== '0')
  installCodeCache({ dir: here, cacheDir: join(here, '.code-cache') });
createRequire(import.meta.url)('./sluice.cjs');
