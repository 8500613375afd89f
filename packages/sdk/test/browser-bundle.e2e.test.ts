import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser } from 'playwright-core';
import { rolldown } from 'rolldown';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type * as Sdk from '../src/index.js';
import { ensureChromium } from '../../daemon/test/helpers/debian-package.js';
import { startSluice, type SluiceProcess } from '../../daemon/test/helpers/sluice-process.js';

// The SDK must run in browsers (ARCHITECTURE: "fetch + SSE only, runs in Node and browsers").
// Three layers: its tsconfig (`lib: DOM`, `types: []`, `noUncheckedSideEffectImports`) makes
// `tsc -b packages/sdk` fail on a Node-only import in its own sources; the bundle below is
// what a browser app gets, dependencies included (@sluice/protocol, eventsource-parser), built
// for `platform: 'browser'`; and that bundle then runs in a page of the real Chromium (Debian's,
// as the dashboard test uses), against the real daemon.
const HERE = dirname(fileURLToPath(import.meta.url));
const SRC = join(HERE, '../src');
const ALLOWED = new Set(['@sluice/protocol', 'eventsource-parser']);

let daemon: SluiceProcess;
let browser: Browser;
beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: await ensureChromium(),
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking'],
  });
  daemon = await startSluice();
}, 20 * 60_000); // the first run installs chromium
afterAll(async () => {
  await browser?.close();
  await daemon?.stop();
});

/** Bundles the SDK's entry for a browser, from source like the rest of the tests; every log is kept. */
async function bundleForBrowser(): Promise<{ code: string; logs: string[] }> {
  const logs: string[] = [];
  const bundle = await rolldown({
    input: join(SRC, 'index.ts'),
    platform: 'browser',
    resolve: { conditionNames: ['source', 'browser', 'import', 'default'] },
    onLog: (level, log) => void logs.push(`${level} ${log.code ?? ''}: ${log.message}`),
  });
  try {
    const { output } = await bundle.generate({ format: 'iife', name: 'SluiceSdk' });
    return { code: output[0].code, logs };
  } finally {
    await bundle.close();
  }
}

/** What the page's script saw, step by step (run in Chromium; returns plain data). */
interface PageRun {
  health: unknown;
  stopReason: string;
  refused: { isLimitError: boolean; local: boolean; limit: number; pendingCount: number };
  pendingAfter: number;
  nodeGlobals: string[];
}

test('the SDK bundles for platform browser with every import resolved, and runs in Chromium against the daemon', async () => {
  const { code, logs } = await bundleForBrowser();
  // a Node built-in is "unresolved" for a browser target (rolldown then leaves it external)
  expect(logs).toEqual([]);
  expect(code).not.toMatch(/\brequire\(|["']node:/);

  // The page is served on the daemon's own origin, so its fetches are same-origin requests to
  // the real daemon (only this one document is answered by the test).
  const page = await browser.newPage();
  const pageUrl = `${daemon.url}/sdk-browser-test.html`;
  await page.route(pageUrl, (route) =>
    route.fulfill({ contentType: 'text/html', body: `<!doctype html><script>${code}</script>` }),
  );
  const failures: string[] = [];
  page.on('pageerror', (error) => failures.push(error.message));
  try {
    await page.goto(pageUrl);
    const run = await page.evaluate(async (baseUrl): Promise<PageRun> => {
      const sdk = (globalThis as unknown as { SluiceSdk: typeof Sdk }).SluiceSdk;
      const client = new sdk.DaemonClient({ baseUrl, maxPendingPromptsPerSession: 1 });
      const health = await client.health();
      const session = await client.createOrAttachSession({ sessionScope: 'thread' });
      // a 202, then the turn's end read from the SSE stream through fetch + eventsource-parser
      const result = await client.prompt(session.sessionId, { prompt: [{ type: 'text', text: 'hi' }] });
      const running = client.prompt(session.sessionId, { prompt: [{ type: 'text', text: 'one' }] });
      const error = (await client
        .prompt(session.sessionId, { prompt: [{ type: 'text', text: 'two' }] })
        .catch((e: unknown) => e)) as { local: boolean; limit: number; pendingCount: number };
      await running;
      const pendingAfter = client.pendingPromptCount(session.sessionId);
      await client.closeSession(session.sessionId);
      const nodeGlobals = ['process', 'Buffer', 'require', 'global', 'setImmediate'].filter(
        (name) => name in globalThis,
      );
      return {
        health,
        stopReason: result.stopReason,
        refused: {
          isLimitError: error instanceof sdk.DaemonPendingPromptLimitError,
          local: error.local,
          limit: error.limit,
          pendingCount: error.pendingCount,
        },
        pendingAfter,
        nodeGlobals,
      };
    }, daemon.url);
    expect(failures).toEqual([]);
    expect(run.nodeGlobals).toEqual([]);
    expect(run.health).toEqual({ status: 'ok' });
    expect(run.stopReason).toBe('end_turn');
    expect(run.refused).toEqual({ isLimitError: true, local: true, limit: 1, pendingCount: 1 });
    expect(run.pendingAfter).toBe(0);
  } finally {
    await page.close();
  }
});

test('SDK sources import only relative files, @sluice/protocol and eventsource-parser', () => {
  const offenders: string[] = [];
  for (const file of readdirSync(SRC)) {
    const source = readFileSync(join(SRC, file), 'utf8');
    for (const match of source.matchAll(/(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      const specifier = match[1]!;
      if (!specifier.startsWith('./') && !ALLOWED.has(specifier)) offenders.push(`${file}: ${specifier}`);
    }
    if (/\bprocess\.|\bBuffer\b|\brequire\(/.test(source)) offenders.push(`${file}: Node global`);
  }
  expect(offenders).toEqual([]);
});

test('the SDK tsconfig is the browser one', () => {
  const config = JSON.parse(readFileSync(join(SRC, '../tsconfig.json'), 'utf8')) as {
    compilerOptions: { lib: string[]; types: string[]; noUncheckedSideEffectImports: boolean };
  };
  expect(config.compilerOptions.types).toEqual([]);
  expect(config.compilerOptions.lib).toContain('DOM');
  expect(config.compilerOptions.noUncheckedSideEffectImports).toBe(true);
});
