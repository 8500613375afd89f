import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

// The web client's files (docs/web.md), built by `scripts/bundle-web.js` into
// `packages/daemon/dist/web/`: read from disk once, on the first request, and kept in memory.

/** Content types of the files the build writes. */
const TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
  svg: 'image/svg+xml',
  json: 'application/json; charset=utf-8',
};

/** One file of the web client. */
export interface WebAsset {
  readonly body: Buffer;
  readonly type: string;
}

/**
 * Where the build put the web client: `dist/web/` is one folder up from tsc's `dist/http/` and
 * from the bundle's `dist/bundle/`, and `../../dist/web/` from `src/http/` (tests on sources).
 */
function webFolder(): string | undefined {
  for (const path of ['../web/', '../../dist/web/']) {
    const folder = fileURLToPath(new URL(path, import.meta.url));
    if (existsSync(`${folder}app.js`)) return folder;
  }
  return undefined;
}

/** The web client's files by name; only what the build wrote is served, nothing else on disk. */
export class WebAssets {
  private files: Map<string, WebAsset> | undefined;

  /** The file `name` (`app.js`), or undefined when the build wrote none by that name. */
  get(name: string): WebAsset | undefined {
    return this.load().get(name);
  }

  private load(): Map<string, WebAsset> {
    if (this.files !== undefined) return this.files;
    const folder = webFolder();
    if (folder === undefined)
      throw new Error('The web client is not built (no dist/web/app.js): run `npm run build`');
    const files = new Map<string, WebAsset>();
    for (const name of readdirSync(folder)) {
      const type = TYPES[name.slice(name.lastIndexOf('.') + 1)];
      if (type !== undefined) files.set(name, { body: readFileSync(`${folder}${name}`), type });
    }
    this.files = files;
    return files;
  }
}
