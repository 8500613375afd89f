import type { Writable } from 'node:stream';
import type { ErrorReport } from '../error-report.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { DaemonReader, DaemonUnreachableError } from './daemon-reader.js';
import { readStatus, type StatusReport } from './status-report.js';
import { statusText } from './status-table.js';

/** Parsed options of `sluice status`. */
export interface StatusOptions {
  url: string;
  token?: string;
  json?: boolean;
  /** Redraw every this many ms; absent = print once. */
  watch?: number;
  /** Live sessions listed at most. */
  sessions: number;
}

/** Where `sluice status` writes, and whether its output is a terminal it may clear. */
export interface StatusOutput {
  out: Writable;
  err: Writable;
  terminal: boolean;
  /** How a failed read is said on `err`. */
  report: ErrorReport;
}

/** Clears a terminal and puts the cursor top left, so that a `--watch` frame replaces the last. */
const CLEAR_SCREEN = '\x1b[2J\x1b[H';

/** The token to send: `--token`, else `SLUICE_TOKEN`, else `QWEN_SERVER_TOKEN` (as `serve` reads them). */
export function statusToken(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  for (const value of [flag, env['SLUICE_TOKEN'], env['QWEN_SERVER_TOKEN']])
    if (value !== undefined && value.trim().length > 0) return value.trim();
  return undefined;
}

/**
 * Prints the daemon's status once, or with `watch` every `watch` ms until `signal` aborts (a
 * failed read then prints its error and the next frame tries again). Once: returns the exit code,
 * 1 when the daemon could not be read.
 */
export async function runStatus(
  options: StatusOptions,
  env: NodeJS.ProcessEnv,
  output: StatusOutput,
  signal?: AbortSignal,
): Promise<number> {
  const reader = new DaemonReader(options.url, statusToken(options.token, env));
  for (;;) {
    const code = await printFrame(reader, options, output);
    if (options.watch === undefined) return code;
    await sleep(options.watch, undefined, { signal }).catch(() => {});
    if (signal?.aborted) return 0;
  }
}

async function printFrame(
  reader: DaemonReader,
  options: StatusOptions,
  output: StatusOutput,
): Promise<number> {
  try {
    const report = await readStatus(reader, options.sessions, Date.now());
    output.out.write(frame(report, options, output.terminal));
    return 0;
  } catch (error) {
    if (!(error instanceof DaemonUnreachableError)) throw error;
    output.err.write(output.report.line(error.message, 'daemon_unreachable'));
    return 1;
  }
}

/** JSON: one line. Text: on a terminal a `--watch` frame replaces the last; elsewhere frames are separated by a blank line. */
function frame(report: StatusReport, options: StatusOptions, terminal: boolean): string {
  if (options.json) return JSON.stringify(report) + '\n';
  const text = statusText(report, Date.now());
  if (options.watch === undefined) return text;
  return terminal ? CLEAR_SCREEN + text : text + '\n';
}
