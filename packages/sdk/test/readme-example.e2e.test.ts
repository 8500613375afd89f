import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, test, vi } from 'vitest';
import { startSluice, type SluiceProcess } from '../../daemon/test/helpers/sluice-process.js';
import { startCountingProxy, type CountingProxy } from './helpers/counting-proxy.js';

// The SDK example of docs/clients.md ("The TypeScript SDK"), run as written against a real daemon: once as it
// goes, once with every prompt refused the way a full daemon refuses it (BP-8), so that its
// DaemonPendingPromptLimitError branch runs too.
const HERE = dirname(fileURLToPath(import.meta.url));
const generated: string[] = [];
let daemon: SluiceProcess;
let full: CountingProxy;

beforeAll(async () => {
  daemon = await startSluice();
  // the example's session is new, so no real daemon is full on its first prompt: this proxy
  // answers prompts with the daemon's 503 (a Retry-After above the example's capMs, so
  // withRetry gives up at once instead of waiting) and forwards everything else
  full = await startCountingProxy(daemon.url, (req, res) => {
    const match = /^\/session\/([^/]+)\/prompt$/.exec(req.url ?? '');
    if (req.method !== 'POST' || !match) return false;
    const sessionId = decodeURIComponent(match[1]!);
    res.writeHead(503, { 'Content-Type': 'application/json', 'Retry-After': '60' });
    res.end(
      JSON.stringify({
        error: `Prompt queue full for session "${sessionId}" (5/5 pending)`,
        code: 'prompt_queue_full',
        sessionId,
        limit: 5,
        pendingCount: 5,
      }),
    );
    return true;
  });
});
afterAll(async () => {
  for (const file of generated) rmSync(file, { force: true });
  await full?.close();
  await daemon?.stop();
});

/** The SDK's example in the docs (docs/clients.md, "The TypeScript SDK"; the README links it). */
function readmeExample(): string {
  const page = readFileSync(join(HERE, '../../../docs/clients.md'), 'utf8');
  const section = page.slice(page.indexOf('## The TypeScript SDK'));
  const match = /```ts\n([\s\S]*?)```/.exec(section);
  if (!match) throw new Error('docs/clients.md has no TypeScript SDK example');
  return match[1]!;
}

/** Runs the example against `baseUrl` and returns what it printed (stdout and stderr). */
async function runExample(name: string, baseUrl: string): Promise<string> {
  const file = join(HERE, `.readme-example.${name}.generated.ts`);
  generated.push(file);
  const source = readmeExample().replace("'http://127.0.0.1:4170'", JSON.stringify(baseUrl));
  writeFileSync(file, `${source}\nexport {};\n`);
  const out: string[] = [];
  const record = (...parts: unknown[]): void => void out.push(parts.map(String).join(' '));
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

test('the README example creates a session, streams a turn and closes it', async () => {
  const out = await runExample('ok', daemon.url);
  expect(out).toContain('turn ended: end_turn');
  expect(out.length).toBeGreaterThan('turn ended: end_turn'.length);
});

test('BP-8/BP-12 the README example handles DaemonPendingPromptLimitError from a full daemon and still closes its session', async () => {
  const out = await runExample('full', full.url);
  expect(out).toContain('session full: 5/5 (local: false)');
  expect(out).not.toContain('turn ended');
  const created = full.answered.find((line) => /^POST \/session 200$/.test(line));
  expect(created).toBeDefined();
  expect(full.seen.filter((line) => /^POST \/session\/[^/]+\/prompt$/.test(line))).toHaveLength(1);
  expect(full.seen.some((line) => /^DELETE \/session\/[^/]+$/.test(line))).toBe(true);
});
