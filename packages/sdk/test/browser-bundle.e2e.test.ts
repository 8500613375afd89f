import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { rolldown } from 'rolldown';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type * as Sdk from '../src/index.js';
import { startSluice, type SluiceProcess } from '../../daemon/test/helpers/sluice-process.js';

// The SDK must run in browsers (ARCHITECTURE: "fetch + SSE only, runs in Node and browsers").
// Three layers: its tsconfig (`lib: DOM`, `types: []`, `noUncheckedSideEffectImports`) makes
// `tsc -b packages/sdk` fail on a Node-only import in its own sources; the bundle below is
// what a browser app gets, dependencies included (@sluice/protocol, eventsource-parser), built
// for `platform: 'browser'`; and that bundle then runs in a realm that has the web platform's
// globals and none of Node's, against the real daemon.
const HERE = dirname(fileURLToPath(import.meta.url));
const SRC = join(HERE, '../src');
const ALLOWED = new Set(['@sluice/protocol', 'eventsource-parser']);

let daemon: SluiceProcess;
beforeAll(async () => {
  daemon = await startSluice();
});
afterAll(() => daemon?.stop());

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

/** Web platform globals only: no process, Buffer, require, module, global, setImmediate. */
function browserRealm(): vm.Context {
  return vm.createContext({
    fetch,
    Headers,
    Request,
    Response,
    AbortController,
    AbortSignal,
    DOMException,
    Event,
    EventTarget,
    ReadableStream,
    TextDecoder,
    TextEncoder,
    URL,
    URLSearchParams,
    setTimeout,
    clearTimeout,
    queueMicrotask,
    console,
  });
}

test('the SDK bundles for platform browser with every import resolved, and runs without Node globals against the daemon', async () => {
  const { code, logs } = await bundleForBrowser();
  // a Node built-in is "unresolved" for a browser target (rolldown then leaves it external)
  expect(logs).toEqual([]);
  expect(code).not.toMatch(/\brequire\(|["']node:/);

  const realm = browserRealm();
  vm.runInContext(code, realm, { filename: 'sluice-sdk.browser.js' });
  const sdk = (realm as { SluiceSdk: typeof Sdk }).SluiceSdk;
  const client = new sdk.DaemonClient({ baseUrl: daemon.url, maxPendingPromptsPerSession: 1 });
  await expect(client.health()).resolves.toEqual({ status: 'ok' });
  const session = await client.createOrAttachSession({ sessionScope: 'thread' });
  // a 202, then the turn's end read from the SSE stream through fetch + eventsource-parser
  const result = await client.prompt(session.sessionId, { prompt: [{ type: 'text', text: 'hi' }] });
  expect(result.stopReason).toBe('end_turn');
  const running = client.prompt(session.sessionId, { prompt: [{ type: 'text', text: 'one' }] });
  const refused: unknown = await client
    .prompt(session.sessionId, { prompt: [{ type: 'text', text: 'two' }] })
    .catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(sdk.DaemonPendingPromptLimitError);
  expect(refused).toMatchObject({ local: true, limit: 1, pendingCount: 1 });
  await running;
  expect(client.pendingPromptCount(session.sessionId)).toBe(0);
  await client.closeSession(session.sessionId);
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
