#!/usr/bin/env -S node --max-semi-space-size=2
// The `sluice` command as installed: runs the CommonJS bundle next to this file through V8
// code caches (./code-cache.js), which saves most of the parsing and compiling of every start
// after the first (docs/decisions/009). `SLUICE_CODE_CACHE=0` runs it without them.
// The first line caps V8's young generation at 2 MiB a semi-space (Node's default grows to
// 16 MiB): a daemon's garbage is small and short-lived, and the larger nursery cost 10-30 MiB
// of RSS for no measurable CPU (docs/decisions/030). V8 reads the flag only at start, so it
// must be on the command line; `npm start`, the bin and the bench run this file directly.
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
