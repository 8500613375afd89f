import { existsSync, mkdtempSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { get as httpGet } from 'node:http';
import { fileURLToPath } from 'node:url';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

/** The hostile ACP agent (raw JSON-RPC: spawns process trees, floods, reads FIFOs, goes silent). */
export const HOSTILE_AGENT = resolve(
  dirname(fileURLToPath(import.meta.url)),
  'fixtures/hostile-acp-agent.mjs',
);

/** `--agent` value running the hostile agent with `flags`. */
export function hostileAgentSpec(...flags: string[]): string {
  return [`"${process.execPath}"`, `"${HOSTILE_AGENT}"`, ...flags].join(' ');
}

/** `sluice serve` (the built bundle) on the hostile agent, in a fresh workspace. */
export async function startHostileSluice(
  args: string[] = [],
  agentFlags: string[] = [],
): Promise<SluiceProcess & { workspace: string }> {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-hostile-')));
  const sluice = await startSluice([
    '--workspace',
    workspace,
    '--agent',
    hostileAgentSpec(...agentFlags),
    ...args,
  ]);
  return Object.assign(sluice, { workspace });
}

/** True while `pid` runs (a zombie waiting to be reaped does not run). */
export function running(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return false;
  try {
    const text = readFileSync(stat, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2, text.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** `promise`, or a failure naming `what` after `ms`: a test that waits fails rather than hangs. */
export function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms);
    }),
  ]);
}

/**
 * Subscribes to the session's events, reading them as fast as they come but keeping none
 * (a subscriber that stores hundreds of MiB would be the slow client), and resolves with the
 * first terminal event's name (`end`, handed over once the subscription is open).
 */
export function turnEnd(base: string, sessionId: string): Promise<{ end: Promise<string> }> {
  return new Promise((opened, failed) => {
    const req = httpGet(`${base}/session/${sessionId}/events`, (res) => {
      let carry = Buffer.alloc(0);
      opened({
        end: new Promise<string>((resolve) => {
          res.on('data', (chunk: Buffer) => {
            // The marker may straddle two chunks: the last bytes of the previous one lead.
            const text = Buffer.concat([carry, chunk]);
            carry = text.subarray(-64);
            for (const event of ['turn_complete', 'turn_error'])
              if (text.includes(`event: ${event}\n`)) {
                resolve(event);
                req.destroy();
              }
          });
          res.on('close', () => resolve('stream ended'));
        }),
      });
    });
    req.on('error', failed);
  });
}
