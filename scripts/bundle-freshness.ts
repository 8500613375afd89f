// The e2e project's global setup: the e2e tests run the build output (the bundled daemon, and
// a few dist/ modules), not the sources, so after an edit `npx vitest` would test the previous
// build and pass or fail for reasons the sources no longer hold. This refuses to start them
// when the bundle is missing or older than a file the build reads. `npm run build` rewrites the
// whole bundle after compiling every package, so a bundle newer than every source means dist/
// is current too.
import { readdirSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** What the e2e tests run: the launcher and the bundle it loads, both rewritten by every build. */
export const BUNDLE_FILES = [
  'packages/daemon/dist/bundle/sluice.js',
  'packages/daemon/dist/bundle/sluice.cjs',
  'packages/daemon/dist/web/app.js',
];

/** What the build reads: every package's sources, the web client's and the bundling scripts. */
export function buildInputs(root: string): string[] {
  const packages = join(root, 'packages');
  return [
    ...readdirSync(packages).map((name) => join(packages, name, 'src')),
    join(root, 'packages/daemon/web'),
    join(root, 'scripts/bundle-daemon.js'),
    join(root, 'scripts/bundle-web.js'),
  ];
}

/** A file and when it was last modified. */
interface Stamp {
  path: string;
  mtimeMs: number;
}

/** Source files only: an editor's swap, lock or backup file next to them is not something the build reads. */
const SOURCE_FILE = /^[^.#].*\.(?:[cm]?[jt]sx?|json|css)$/;

/** The most recently modified source file under `paths` (directories are walked), if any. */
function newestSource(paths: readonly string[]): Stamp | undefined {
  let newest: Stamp | undefined;
  const visit = (path: string): void => {
    const stats = statSync(path, { throwIfNoEntry: false });
    if (stats?.isDirectory()) {
      for (const name of readdirSync(path)) visit(join(path, name));
    } else if (
      stats?.isFile() &&
      SOURCE_FILE.test(basename(path)) &&
      stats.mtimeMs > (newest?.mtimeMs ?? -Infinity)
    ) {
      newest = { path, mtimeMs: stats.mtimeMs };
    }
  };
  for (const path of paths) visit(path);
  return newest;
}

/**
 * Why the e2e tests must not run on `bundle` (paths relative to `root`): it is missing, or a
 * file under `sources` changed after it was written. `undefined` when the bundle is current.
 */
export function staleBundleReason(
  root: string,
  bundle: readonly string[],
  sources: readonly string[],
): string | undefined {
  const name = (path: string): string => relative(root, resolve(root, path));
  let oldest: Stamp | undefined;
  for (const path of bundle) {
    const stats = statSync(resolve(root, path), { throwIfNoEntry: false });
    if (stats === undefined)
      return `e2e tests run the bundle ${name(path)}; it is missing — run \`npm run build\``;
    if (stats.mtimeMs < (oldest?.mtimeMs ?? Infinity)) oldest = { path, mtimeMs: stats.mtimeMs };
  }
  const newest = newestSource(sources.map((path) => resolve(root, path)));
  if (oldest === undefined || newest === undefined || newest.mtimeMs <= oldest.mtimeMs) return undefined;
  return `e2e tests run the bundle ${name(oldest.path)}; it is older than ${name(newest.path)} — run \`npm run build\``;
}

/** Vitest global setup of the e2e project. */
export function setup(): void {
  const reason = staleBundleReason(ROOT, BUNDLE_FILES, buildInputs(ROOT));
  if (reason !== undefined) throw new Error(reason);
}
