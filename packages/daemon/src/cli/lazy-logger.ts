import type { Logger, pino as Pino } from 'pino';
import { jsonLine } from './json-line.js';

import { LOG_LEVELS } from '../defaults.js';

export { LOG_LEVELS };

type Method = 'debug' | 'info' | 'warn' | 'error';

interface Pending {
  method: Method;
  /** Written whatever the level (see {@link LazyLogger.always}). */
  force: boolean;
  time: number;
  fields: Record<string, unknown> | undefined;
  message: string;
}

/** Options of {@link LazyLogger}. */
export interface LazyLoggerOptions {
  /** A pino level name; anything else is a `RangeError` naming `setting`. */
  level: string;
  /** The `name` every line carries. */
  name: string;
  /** What the level came from, for the error message. */
  setting: string;
  /** The file descriptor lines go to; default 2 (stderr). */
  fd?: number;
  /** Loads pino; default `import('pino')`. Tests make it fail. */
  loadPino?: () => Promise<{ pino: typeof Pino }>;
}

/**
 * The daemon's log: JSON lines on stderr (pino's, in its format) written by pino, which is loaded (`import()`) on the
 * first line the level lets through rather than at start-up — at `warn` a healthy daemon logs
 * nothing and never loads it. Lines logged while pino loads are written once it has, in order
 * and with the time they were logged; {@link flush} waits for that.
 */
export class LazyLogger {
  private readonly threshold: number;
  private pino: Logger | undefined;
  private loading: Promise<void> | undefined;
  private readonly pending: Pending[] = [];
  /** The time of the line being written, for pino's `timestamp`; `undefined` = now. */
  private stamp: number | undefined;
  /** pino could not be loaded: lines are dropped (that was said once on stderr), never kept. */
  private unavailable = false;

  constructor(private readonly options: LazyLoggerOptions) {
    const threshold = LOG_LEVELS[options.level];
    if (threshold === undefined)
      throw new RangeError(
        `${options.setting} must be one of ${Object.keys(LOG_LEVELS).join(', ')}, got ${JSON.stringify(options.level)}`,
      );
    this.threshold = threshold;
  }

  debug(fields: Record<string, unknown>, message: string): void {
    this.log('debug', fields, message);
  }

  info(message: string): void;
  info(fields: Record<string, unknown>, message: string): void;
  info(fieldsOrMessage: Record<string, unknown> | string, message?: string): void {
    if (typeof fieldsOrMessage === 'string') this.log('info', undefined, fieldsOrMessage);
    else this.log('info', fieldsOrMessage, message ?? '');
  }

  warn(fields: Record<string, unknown>, message: string): void {
    this.log('warn', fields, message);
  }

  error(fields: Record<string, unknown>, message: string): void {
    this.log('error', fields, message);
  }

  /**
   * A line the operator must read whatever the level, at `warn` or `error`: the bearer token
   * generated for them, why the daemon refuses to start or stops. Still one JSON line.
   */
  always(method: 'warn' | 'error', fields: Record<string, unknown>, message: string): void {
    this.log(method, fields, message, true);
  }

  /** Whether lines at `level` are written (`debug` decides whether requests are logged). */
  enabled(level: Method): boolean {
    return LOG_LEVELS[level]! >= this.threshold;
  }

  /**
   * Resolves once every line logged so far has been handed to pino, whose stream writes it out
   * asynchronously (as `pino.destination` does; pino flushes it when the process exits).
   */
  async flush(): Promise<void> {
    await this.loading;
  }

  /** Lines waiting for pino to load. */
  get buffered(): number {
    return this.pending.length;
  }

  private log(
    method: Method,
    fields: Record<string, unknown> | undefined,
    message: string,
    force = false,
  ): void {
    if ((!force && LOG_LEVELS[method]! < this.threshold) || this.unavailable) return;
    if (this.pino !== undefined && this.pending.length === 0)
      return write(this.pino, method, fields, message, force);
    this.pending.push({ method, force, time: Date.now(), fields, message });
    this.loading ??= this.load().catch((error: unknown) => {
      this.unavailable = true;
      process.stderr.write(
        jsonLine(
          'error',
          this.options.name,
          `the logger could not be loaded, ${this.pending.length} line(s) and later ones dropped: ${String(error)}`,
        ),
      );
      this.pending.length = 0;
    });
  }

  private async load(): Promise<void> {
    const { pino } = await (this.options.loadPino ?? (() => import('pino')))();
    const logger = pino(
      {
        level: this.options.level,
        base: { name: this.options.name },
        timestamp: () => `,"time":${this.stamp ?? Date.now()}`,
      },
      pino.destination(this.options.fd ?? 2),
    );
    for (const line of this.pending) {
      this.stamp = line.time;
      write(logger, line.method, line.fields, line.message, line.force);
    }
    this.stamp = undefined;
    this.pending.length = 0;
    this.pino = logger;
  }
}

function write(
  parent: Logger,
  method: Method,
  fields: Record<string, unknown> | undefined,
  message: string,
  force: boolean,
): void {
  // A forced line goes through a child at its own level: pino lets a child log below its parent.
  const logger = force && !parent.isLevelEnabled(method) ? parent.child({}, { level: method }) : parent;
  if (fields === undefined) logger[method](message);
  else logger[method](fields, message);
}
