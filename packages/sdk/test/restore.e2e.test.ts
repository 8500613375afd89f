import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { DaemonClient, DaemonSessionClient, type DaemonEvent } from '../src/index.js';
import { startSluice, type SluiceProcess } from '../../daemon/test/helpers/sluice-process.js';
import { text } from './helpers/script-server.js';

// PROTOCOL §4 load/resume: a session made by one daemon lifetime is restored by the next.
let dataDir: string;
let workspace: string;
let daemon: SluiceProcess | undefined;
const args = (): string[] => ['--data-dir', dataDir, '--workspace', workspace, '--drain-timeout-ms', '0'];

beforeAll(() => {
  dataDir = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-sdk-data-')));
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-sdk-ws-')));
});

afterAll(async () => {
  await daemon?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workspace, { recursive: true, force: true });
});

test('§4 resumeSession and loadSession restore a session after a restart; DaemonSessionClient prompts on it', async () => {
  daemon = await startSluice(args());
  const before = new DaemonClient({ baseUrl: daemon.url });
  const created = await DaemonSessionClient.createOrAttach(before, { sessionScope: 'thread' });
  await expect(created.prompt(text('remember me'))).resolves.toMatchObject({ stopReason: 'end_turn' });
  const oldEpoch = (await before.promptNonBlocking(created.sessionId, text('again'))) as {
    eventEpoch: string;
  };
  await expect.poll(async () => (await before.sessionStatus(created.sessionId)).hasActivePrompt).toBe(false);
  await daemon.stop();

  daemon = await startSluice(args());
  const client = new DaemonClient({ baseUrl: daemon.url });
  await expect(client.sessionStatus(created.sessionId)).rejects.toMatchObject({ status: 404 });
  const resumed = await DaemonSessionClient.resume(client, created.sessionId);
  expect(resumed.sessionId).toBe(created.sessionId);
  expect(resumed.clientId).toEqual(expect.any(String));
  expect(resumed.lastEventId).toEqual(expect.any(Number));
  expect(resumed.eventEpoch).toEqual(expect.any(String));
  expect(resumed.eventEpoch).not.toBe(oldEpoch.eventEpoch);
  await expect(resumed.prompt(text('after the restart'))).resolves.toMatchObject({ stopReason: 'end_turn' });

  const loaded = await DaemonSessionClient.load(client, created.sessionId);
  expect(loaded.lastEventId).toBe(0);
  const stop = new AbortController();
  const replayed: DaemonEvent[] = [];
  for await (const event of loaded.events({ signal: stop.signal })) {
    replayed.push(event);
    if (event.type === 'replay_complete') break;
  }
  expect(replayed.some((e) => e.type === 'turn_complete')).toBe(true);
  expect(loaded.lastEventId).toBe(replayed.filter((e) => e.id !== undefined).at(-1)!.id);
  await resumed.close();
});
