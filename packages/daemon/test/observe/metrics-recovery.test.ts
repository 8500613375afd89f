import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteJournal } from '@sluice/runtime';
import { afterEach, expect, test } from 'vitest';
import { createDaemon, type Daemon } from '../../src/daemon.js';
import { buildServer } from '../../src/http/server.js';
import { DaemonTap } from '../../src/observe/index.js';
import { Scrape } from '../helpers/prometheus-text.js';

// Issue 19 item 7 seen by an operator: the calls start-up reconciliation settled as `interrupted`.

const dirs: string[] = [];
const daemons: Daemon[] = [];
afterEach(async () => {
  await Promise.allSettled(daemons.splice(0).map((daemon) => daemon.close()));
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function scrape(daemon: Daemon): Promise<Scrape> {
  const app = buildServer(daemon, { hostname: '127.0.0.1' });
  try {
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    return new Scrape(await (await fetch(`http://127.0.0.1:${port}/metrics`)).text());
  } finally {
    await app.close();
  }
}

test('sluice_journal_interrupted_calls is the count Daemon.recover() found, -1 before it ran', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'sluice-recovered-'));
  dirs.push(dir);
  // What a killed daemon leaves: two requests without a result.
  const killed = new SqliteJournal({ path: join(dir, 'journal.db') });
  for (const callId of ['call-1', 'call-2'])
    await killed.append({
      version: 1,
      type: 'model_request',
      callId,
      taskId: 'task-1',
      at: '2026-01-01T00:00:00.000Z',
      request: { messages: [{ role: 'user', content: 'hello' }] },
      options: { timeoutMs: 10_000, provider: 'echo', model: 'echo-1', kind: 'stream' },
    });
  await killed.close();

  const daemon = createDaemon({ dataDir: dir, workspace: dir, drainTimeoutMs: 0 }, { tap: new DaemonTap() });
  daemons.push(daemon);
  expect((await scrape(daemon)).value('sluice_journal_interrupted_calls')).toBe(-1);
  expect(await daemon.recover()).toEqual({ interruptedCalls: 2 });
  expect((await scrape(daemon)).value('sluice_journal_interrupted_calls')).toBe(2);
});
