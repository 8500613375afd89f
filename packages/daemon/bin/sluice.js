#!/usr/bin/env node
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
