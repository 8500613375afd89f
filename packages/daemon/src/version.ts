import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** The package.json of this package: one folder up from `src/` or tsc's `dist/`, two from `dist/bundle/`. */
function ownPackage(): { name?: unknown; version?: unknown } {
  for (const path of ['../package.json', '../../package.json']) {
    let text: string;
    try {
      text = readFileSync(new URL(path, import.meta.url), 'utf8');
    } catch {
      continue;
    }
    const json = JSON.parse(text) as { name?: unknown; version?: unknown };
    if (json.name === '@sluice/daemon') return json;
  }
  throw new Error(`no package.json of @sluice/daemon above ${import.meta.url}`);
}

/**
 * The daemon's version, from `packages/daemon/package.json`. Read on first use (`--version`,
 * `GET /openapi.json`), so a start reads no file for it.
 */
export function daemonVersion(): string {
  if (cached === undefined) {
    const { version } = ownPackage();
    if (typeof version !== 'string') throw new Error('packages/daemon/package.json names no version');
    cached = version;
  }
  return cached;
}
