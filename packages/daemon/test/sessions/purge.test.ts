import { expect, test } from 'vitest';
import { MemorySessionStore, SESSION_EVENT, SessionNotFoundError } from '../../src/sessions/index.js';
import { flush, openSession, setup, text } from './helpers.js';

test('purging a live session ends its prompts, closes it with reason session_purged and deletes it from the store', async () => {
  const store = new MemorySessionStore();
  const { bridge, sink, agent } = setup({ store, workspaces: ['/work'] });
  const sid = openSession(bridge, 'client-1');
  const { promptId } = bridge.sendPrompt(sid, text('secret'));
  await flush();
  expect(agent.running).toHaveLength(1);
  await bridge.purgeSession(sid, 'client-1');
  expect(sink.terminalsOf(promptId).map((event) => event.type)).toHaveLength(1);
  const closed = sink.ofType(SESSION_EVENT.sessionClosed, sid);
  expect(closed.map((event) => [event.data['reason'], event.data['closedBy']])).toEqual([
    ['session_purged', 'client-1'],
  ]);
  expect(await store.load(sid)).toBeUndefined();
  await expect(bridge.restoreSession(sid)).rejects.toThrow(SessionNotFoundError);
  // Nothing of it stays replayable either.
  expect(() => bridge.replayableStream(sid)).toThrow(SessionNotFoundError);
});

test('purging a stored session that is not live deletes it; purging it again is not found', async () => {
  const store = new MemorySessionStore();
  const { bridge } = setup({ store, workspaces: ['/work'] });
  const sid = openSession(bridge);
  await bridge.closeSession(sid);
  await flush();
  expect(await store.load(sid)).toBeDefined();
  await bridge.purgeSession(sid);
  expect(await store.load(sid)).toBeUndefined();
  await expect(bridge.purgeSession(sid)).rejects.toThrow(SessionNotFoundError);
});

test('a session stored for a workspace this daemon does not serve is not found, and stays stored', async () => {
  const store = new MemorySessionStore();
  const { bridge: other } = setup({ store, workspaces: ['/elsewhere'] });
  const sid = other.createSession({ cwd: '/elsewhere', scope: 'thread' }).sessionId;
  await flush();
  const { bridge } = setup({ store, workspaces: ['/work'] });
  await expect(bridge.purgeSession(sid)).rejects.toThrow(SessionNotFoundError);
  expect(await store.load(sid)).toBeDefined();
});
