import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { Script } from 'node:vm';

/** What a {@link installCodeCache} did so far, for tests and diagnostics. */
export interface CodeCacheStats {
  /** Files compiled from a cache V8 accepted. */
  accepted: number;
  /** Files compiled from source: no cache yet, or one V8 refused. */
  compiled: number;
  /** Cache files written. */
  written: number;
}

/** Options of {@link installCodeCache}. */
export interface CodeCacheOptions {
  /** The directory whose `.cjs` files are cached; nothing else is touched. */
  dir: string;
  /** Where the caches live; created with mode 0700 when first written. */
  cacheDir: string;
  /** How long after a file's compilation its cache is written (default 1000 ms). */
  writeDelayMs?: number;
}

interface CompilingModule {
  exports: unknown;
  _compile(content: string, filename: string): unknown;
}

const WRAPPER_HEAD = '(function (exports, require, module, __filename, __dirname) { ';
const WRAPPER_TAIL = '\n});';

/**
 * Compiles the CommonJS files of `dir` through V8 code caches kept in `cacheDir`, so that a
 * start skips parsing and compiling what the last start ran (Node 20 has no built-in module
 * compile cache). A cache is taken after the code ran for `writeDelayMs`, so it holds the
 * functions start-up compiled, not just the top level. Caches are keyed by a hash of the
 * source and the Node version, so an edited file never meets a stale one; a cache V8 refuses
 * is replaced. Every failure to read or write a cache only costs the speed-up.
 */
export function installCodeCache(options: CodeCacheOptions): CodeCacheStats {
  const { dir, cacheDir } = options;
  const writeDelayMs = options.writeDelayMs ?? 1_000;
  const stats: CodeCacheStats = { accepted: 0, compiled: 0, written: 0 };
  const toWrite: Array<{ script: Script; file: string }> = [];
  let timer: NodeJS.Timeout | undefined;

  const writeAll = (): void => {
    timer = undefined;
    const scripts = toWrite.splice(0); // written now or never: a script is not kept for a retry
    try {
      mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    } catch {
      return;
    }
    for (const { script, file } of scripts) {
      const temporary = `${file}.${process.pid}.tmp`;
      try {
        writeFileSync(temporary, script.createCachedData(), { mode: 0o600 });
        renameSync(temporary, file); // atomic: concurrent starts never read half a cache
        stats.written++;
        removeOlderCaches(cacheDir, file);
      } catch {
        try {
          unlinkSync(temporary);
        } catch {
          // nothing was written
        }
      }
    }
  };

  const prototype = (Module as unknown as { prototype: CompilingModule }).prototype;
  const original = prototype._compile;
  prototype._compile = function compile(this: CompilingModule, content: string, filename: string): unknown {
    if (dirname(filename) !== dir || !filename.endsWith('.cjs'))
      return original.call(this, content, filename);
    const key = createHash('sha256')
      .update(`${process.version} ${process.arch}\n`)
      .update(content)
      .digest('hex');
    const file = join(cacheDir, `${basename(filename)}-${key.slice(0, 32)}.bin`);
    let cachedData: Buffer | undefined;
    try {
      cachedData = readFileSync(file);
    } catch {
      cachedData = undefined;
    }
    // A hashbang is only valid at the very start of a script: inside the wrapper it becomes a comment.
    const source = content.startsWith('#!') ? `//${content.slice(2)}` : content;
    const script = new Script(WRAPPER_HEAD + source + WRAPPER_TAIL, { filename, cachedData });
    if (cachedData !== undefined && !script.cachedDataRejected) stats.accepted++;
    else {
      stats.compiled++;
      toWrite.push({ script, file });
      if (timer === undefined) {
        timer = setTimeout(writeAll, writeDelayMs);
        timer.unref();
      }
    }
    const wrapper = script.runInThisContext() as (...args: unknown[]) => unknown;
    return wrapper.call(
      this.exports,
      this.exports,
      createRequire(filename),
      this,
      filename,
      dirname(filename),
    );
  };
  return stats;
}

/** Deletes the caches of earlier versions of the file that `current` caches. */
function removeOlderCaches(cacheDir: string, current: string): void {
  const source = CACHE_NAME.exec(basename(current))?.[1];
  for (const name of readdirSync(cacheDir)) {
    if (CACHE_NAME.exec(name)?.[1] !== source || join(cacheDir, name) === current) continue;
    try {
      unlinkSync(join(cacheDir, name));
    } catch {
      // another start removed it
    }
  }
}

/** `<source file name>-<32 hex digits of its key>.bin` */
const CACHE_NAME = /^(.+)-[0-9a-f]{32}\.bin$/;
