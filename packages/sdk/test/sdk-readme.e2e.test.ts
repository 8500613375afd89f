import { format } from 'node:util';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { startSluice, type SluiceProcess } from '../../daemon/test/helpers/sluice-process.js';
import { GeneratedModules, readmeBlock } from './helpers/readme-blocks.js';

// The examples of packages/sdk/README.md run as written against real daemons: one whose echo
// model answers at once, one that takes five seconds, so that a second prompt is still queued
// when the example lists the pending prompts.
const generated = new GeneratedModules();
let fast: SluiceProcess;
let slow: SluiceProcess;

beforeAll(async () => {
  [fast, slow] = await Promise.all([
    startSluice(),
    startSluice(['--echo-delay-ms', '5000', '--drain-timeout-ms', '0']),
  ]);
});
afterAll(async () => {
  generated.cleanUp();
  await Promise.all([fast?.stop(), slow?.stop()]);
});

/** Runs the README block under `heading` against `baseUrl`; returns what it printed. */
async function runExample(heading: string, baseUrl: string): Promise<string> {
  const source = readmeBlock(heading).source.replaceAll("'http://127.0.0.1:4170'", JSON.stringify(baseUrl));
  const file = generated.write(heading.toLowerCase().replace(/\W+/g, '-'), source);
  const out: string[] = [];
  const record = (...parts: unknown[]): void => void out.push(format(...parts) + '\n');
  const spies = [
    vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.push(String(chunk)), true)),
    vi.spyOn(console, 'log').mockImplementation(record),
    vi.spyOn(console, 'error').mockImplementation(record),
  ];
  try {
    await import(/* @vite-ignore */ file);
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
  return out.join('');
}

describe('the SDK README examples, run against a daemon', () => {
  test('Quick start: a session, one prompt, its stop reason', async () => {
    expect(await runExample('Quick start', fast.url)).toBe('turn ended: end_turn\n');
  });

  test('Streaming a turn: the agent text arrives on the event loop', async () => {
    const out = await runExample('Streaming a turn', fast.url);
    expect(out).toContain('Tell me a story');
    expect(out.trimEnd().endsWith('end_turn')).toBe(true);
  });

  test('BP-12 Backpressure: eight prompts on a limit of five all end, the last three after a local refusal and a retry', async () => {
    const out = await runExample('Backpressure: the reservation and its errors', fast.url);
    expect(out.trim().split('\n')).toEqual(Array(8).fill('end_turn'));
  });

  test('Errors: a prompt with a deadline that is met prints nothing', async () => {
    expect(await runExample('Errors', fast.url)).toBe('');
  });

  test('Queued prompts: a queued prompt is removed, the running one cancelled, an aborted one taken back', async () => {
    const out = await runExample('Queued prompts, cancel, abort', slow.url);
    expect(out).toMatch(/ running\n[\s\S]* queued\n/);
    expect(out).toContain('{ removed: true }');
    expect(out).toContain('user gave up');
  });

  test('After a restart: resume the newest stored session and prompt it', async () => {
    expect(await runExample('After a restart: load or resume', fast.url)).toBe('end_turn\n');
  });
});
