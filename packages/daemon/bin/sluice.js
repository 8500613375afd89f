#!/usr/bin/env -S MALLOC_ARENA_MAX=2 node --max-semi-space-size=2
// The first line caps V8's young generation at 2 MiB a semi-space (Node's default grows to
// 16 MiB): a daemon's garbage is small and short-lived, and the larger nursery cost 10-30 MiB
// of RSS for no measurable CPU. It also caps glibc's malloc at 2 arenas: the journal's writer
// thread, the thread pool (deflate, files) and V8's own threads each took an arena of their own
// for the large buffers of agents' requests and frames, ~35 MiB of RSS (docs/decisions/030).
// Both are read only at start, so they are on the command line; `npm start`, `npx sluice`, an
// installed `sluice` and the bench run this file. Agents inherit the variable.
// The `sluice` bin. npm links a workspace's bins at `npm ci`, before `npm run build` writes the
// bundle, and skips a bin whose file is missing then; this file is checked in so that the link
// exists and `npx sluice` runs the bundle's launcher once it is built.
const launcher = new URL('../dist/bundle/sluice.js', import.meta.url);
try {
  await import(launcher.href);
} catch (error) {
  if (error?.code !== 'ERR_MODULE_NOT_FOUND' || !String(error.message).includes(launcher.pathname))
    throw error;
  process.stderr.write('sluice: the daemon is not built yet; run `npm run build` first\n');
  process.exitCode = 1;
}
