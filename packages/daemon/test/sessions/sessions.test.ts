import { describe, expect, test } from 'vitest';
import {
  InvalidClientIdError,
  InvalidCwdError,
  InvalidSessionCursorError,
  InvalidSessionIdError,
  InvalidSessionScopeError,
  MemorySessionStore,
  SessionBridge,
  SessionLimitExceededError,
  SessionNotFoundError,
  SessionWorkspaceConflictError,
  WorkspaceMismatchError,
  type SessionScope,
  type SessionSummaryPage,
} from '../../src/sessions/index.js';
import { EPOCH, FakeClock, GatedStore, RecordingSink, flush, openSession, setup, text } from './helpers.js';

describe('createSession', () => {
  test('single scope coalesces onto one default session per workspace, with a new client id each time', () => {
    const { bridge } = setup();
    const first = bridge.createSession({ cwd: '/work' });
    const again = bridge.createSession({ cwd: '/work/' });
    const other = bridge.createSession({ cwd: '/elsewhere' });
    expect(first).toEqual({
      sessionId: 'id-1',
      workspaceCwd: '/work',
      attached: false,
      clientId: 'id-2',
      createdAt: EPOCH,
    });
    expect(again).toMatchObject({ sessionId: first.sessionId, attached: true });
    expect(again.clientId).not.toBe(first.clientId);
    expect(other.sessionId).not.toBe(first.sessionId);
    expect(bridge.status(first.sessionId).clientCount).toBe(2);
  });

  test('thread scope always creates, and never becomes the default', () => {
    const { bridge } = setup();
    const thread = bridge.createSession({ cwd: '/work', scope: 'thread' });
    const single = bridge.createSession({ cwd: '/work' });
    const thread2 = bridge.createSession({ cwd: '/work', scope: 'thread', clientId: 'mine' });
    expect(new Set([thread.sessionId, single.sessionId, thread2.sessionId]).size).toBe(3);
    expect(thread2.clientId).toBe('mine');
  });

  test('a caller-chosen UUID creates a thread session with that id, and attaches when it is live', () => {
    const { bridge } = setup();
    const id = '0190a3f2-7b8c-7d9e-8f01-23456789abcd';
    const created = bridge.createSession({ cwd: '/work', sessionId: id });
    expect(created).toMatchObject({ sessionId: id, attached: false });
    expect(bridge.createSession({ cwd: '/work', sessionId: id })).toMatchObject({
      sessionId: id,
      attached: true,
    });
    expect(bridge.createSession({ cwd: '/work' }).sessionId).not.toBe(id);
    expect(() => bridge.createSession({ cwd: '/work', sessionId: 'not-a-uuid' })).toThrow(
      InvalidSessionIdError,
    );
    expect(() => bridge.createSession({ cwd: '/other', sessionId: id })).toThrow(WorkspaceMismatchError);
  });

  test('cwd must be absolute and inside a served workspace; scope and client id are validated', () => {
    const { bridge } = setup({ workspaces: ['/srv/repo', '/srv/repo/nested'] });
    expect(() => bridge.createSession({ cwd: 'relative' })).toThrow(InvalidCwdError);
    expect(() => bridge.createSession({ cwd: '/srv/other' })).toThrow(
      expect.objectContaining({ code: 'workspace_mismatch' }),
    );
    expect(() => bridge.createSession({ cwd: '/srv/repository' })).toThrow(WorkspaceMismatchError);
    expect(() => bridge.createSession({ cwd: '/srv/repo', scope: 'global' as SessionScope })).toThrow(
      InvalidSessionScopeError,
    );
    expect(() => bridge.createSession({ cwd: '/srv/repo', clientId: 'no spaces' })).toThrow(
      InvalidClientIdError,
    );
    expect(bridge.createSession({ cwd: '/srv/repo/src' }).workspaceCwd).toBe('/srv/repo');
    expect(bridge.createSession({ cwd: '/srv/repo/nested/a' }).workspaceCwd).toBe('/srv/repo/nested');
    expect(bridge.createSession().workspaceCwd).toBe('/srv/repo');
  });

  test('the session caps throw session_limit_exceeded; attaches are free and closing gives room back', async () => {
    const { bridge } = setup({ maxSessionsPerWorkspace: 2, maxSessions: 3 });
    const single = bridge.createSession({ cwd: '/a' });
    bridge.createSession({ cwd: '/a', scope: 'thread' });
    let caught: unknown;
    try {
      bridge.createSession({ cwd: '/a', scope: 'thread' });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SessionLimitExceededError);
    expect(caught).toMatchObject({
      code: 'session_limit_exceeded',
      limit: 2,
      scope: 'workspace',
      retryable: true,
    });
    expect(bridge.createSession({ cwd: '/a' }).attached).toBe(true);
    bridge.createSession({ cwd: '/b' });
    expect(() => bridge.createSession({ cwd: '/c' })).toThrow(
      expect.objectContaining({ limit: 3, scope: 'daemon' }),
    );
    expect(() => bridge.branchSession(single.sessionId)).toThrow(SessionLimitExceededError);
    await bridge.closeSession(single.sessionId);
    expect(() => bridge.createSession({ cwd: '/c' })).not.toThrow();
  });

  test('queued branches hold their future session against the cap', async () => {
    const store = new GatedStore();
    const { bridge } = setup({ store, maxSessions: 3 });
    const sid = openSession(bridge);
    const first = bridge.branchSession(sid); // runs now; holds the runner while it saves
    const second = bridge.branchSession(sid); // queued: reserves the third slot
    expect(bridge.sessionCount).toBe(2);
    expect(() => bridge.createSession({ cwd: '/x' })).toThrow(SessionLimitExceededError);
    await store.drain();
    await Promise.all([first, second]);
    expect(bridge.sessionCount).toBe(3);
  });
});

describe('clients', () => {
  test('heartbeat refreshes lastSeenAt; unknown clients are invalid_client_id', () => {
    const { bridge, clock } = setup();
    const sid = openSession(bridge, 'laptop');
    clock.advance(1_000);
    expect(bridge.heartbeat(sid, 'laptop')).toEqual({
      sessionId: sid,
      clientId: 'laptop',
      lastSeenAt: EPOCH + 1_000,
    });
    expect(bridge.heartbeat(sid)).toEqual({ sessionId: sid, lastSeenAt: EPOCH + 1_000 });
    expect(() => bridge.heartbeat(sid, 'phone')).toThrow(InvalidClientIdError);
    expect(() => bridge.heartbeat(sid, 'phone')).toThrow(
      expect.objectContaining({ sessionId: sid, clientId: 'phone' }),
    );
    expect(() => bridge.heartbeat('missing', 'laptop')).toThrow(SessionNotFoundError);
  });

  test('attach registers a client, detach removes it', () => {
    const { bridge } = setup();
    const sid = openSession(bridge, 'one');
    expect(bridge.attachClient(sid, 'two')).toMatchObject({
      sessionId: sid,
      attached: true,
      clientId: 'two',
    });
    expect(bridge.attachClient(sid).clientId).toMatch(/^id-/);
    expect(bridge.status(sid).clientCount).toBe(3);
    bridge.detachClient(sid, 'one');
    expect(bridge.hasClient(sid, 'one')).toBe(false);
    expect(() => bridge.detachClient(sid, 'one')).toThrow(InvalidClientIdError);
    expect(bridge.status(sid).clientCount).toBe(2);
  });

  test('clients are bounded: the least recently seen one is evicted', () => {
    const { bridge } = setup({ maxClientsPerSession: 2 });
    const sid = openSession(bridge, 'a');
    bridge.attachClient(sid, 'b');
    bridge.heartbeat(sid, 'a'); // b is now the stalest
    bridge.attachClient(sid, 'c');
    expect([bridge.hasClient(sid, 'a'), bridge.hasClient(sid, 'b'), bridge.hasClient(sid, 'c')]).toEqual([
      true,
      false,
      true,
    ]);
  });
});

describe('status and listing', () => {
  test('status reports the summary fields of PROTOCOL §4', async () => {
    const { bridge, agent, clock } = setup();
    const sid = openSession(bridge, 'c1');
    expect(bridge.status(sid)).toEqual({
      sessionId: sid,
      workspaceCwd: '/work',
      cwd: '/work',
      createdAt: EPOCH,
      updatedAt: EPOCH,
      clientCount: 1,
      hasActivePrompt: false,
      pendingPromptCount: 0,
      isWaitingForPermission: false,
      pendingInteractionCount: 0,
      pendingInteractions: [],
    });
    clock.advance(50);
    bridge.sendPrompt(sid, text('x'));
    bridge.sendPrompt(sid, text('y'));
    await flush();
    expect(bridge.status(sid)).toMatchObject({
      hasActivePrompt: true,
      pendingPromptCount: 2,
      updatedAt: EPOCH + 50,
    });
    agent.current(sid).succeed();
    await flush();
    agent.current(sid).succeed();
    await flush();
    expect(bridge.status(sid)).toMatchObject({ hasActivePrompt: false, pendingPromptCount: 0 });
    expect(bridge.pendingPromptTotal).toBe(0);
  });

  test('listSessions returns open sessions, optionally of one workspace', () => {
    const { bridge } = setup();
    const a = bridge.createSession({ cwd: '/a' });
    const b = bridge.createSession({ cwd: '/b' });
    expect(bridge.listSessions().map((summary) => summary.sessionId)).toEqual([a.sessionId, b.sessionId]);
    expect(bridge.listSessions('/b/').map((summary) => summary.sessionId)).toEqual([b.sessionId]);
  });
});

describe('§4 the workspace listing', () => {
  /** Every page of the listing, `size` at a time. */
  async function allPages(bridge: SessionBridge, cwd: string, size: number): Promise<SessionSummaryPage[]> {
    const pages: SessionSummaryPage[] = [];
    let cursor: string | undefined;
    do {
      const page = await bridge.listWorkspaceSessions(cwd, {
        size,
        ...(cursor === undefined ? {} : { cursor }),
      });
      expect(page.sessions.length).toBeLessThanOrEqual(size);
      pages.push(page);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return pages;
  }
  const ids = (pages: SessionSummaryPage[]): string[] =>
    pages.flatMap((page) => page.sessions.map((summary) => summary.sessionId));

  test('§4 after a restart the listing holds the stored sessions, so a client can find what to load', async () => {
    const store = new MemorySessionStore();
    const first = setup({ store, workspaces: ['/work'] });
    const a = openSession(first.bridge);
    first.clock.advance(10);
    const b = openSession(first.bridge);
    first.bridge.createSession({ cwd: '/work/sub', scope: 'thread' });
    await flush();
    const second = setup({ store, workspaces: ['/work'] });
    const listed = await second.bridge.listWorkspaceSessions('/work');
    // newest first; nothing live yet: nobody attached, nothing pending
    expect(listed.sessions.map((summary) => summary.sessionId)).toEqual(['id-5', b, a]);
    expect(listed.nextCursor).toBeUndefined();
    expect(listed.sessions.find((summary) => summary.sessionId === a)).toEqual({
      sessionId: a,
      workspaceCwd: '/work',
      cwd: '/work',
      createdAt: EPOCH,
      updatedAt: EPOCH,
      clientCount: 0,
      hasActivePrompt: false,
      pendingPromptCount: 0,
      isWaitingForPermission: false,
      pendingInteractionCount: 0,
      pendingInteractions: [],
    });
    // once loaded it is listed once, with its live summary
    await second.bridge.restoreSession(a, { clientId: 'back' });
    second.bridge.sendPrompt(a, text('busy'), { clientId: 'back' });
    const merged = await second.bridge.listWorkspaceSessions('/work');
    expect(merged.sessions.filter((summary) => summary.sessionId === a)).toMatchObject([
      { clientCount: 1, hasActivePrompt: true, pendingPromptCount: 1 },
    ]);
    expect(merged.sessions).toHaveLength(3);
  });

  test('§4 pages are bounded by size and ordered newest first by createdAt, then sessionId', async () => {
    const store = new MemorySessionStore();
    const { bridge, clock } = setup({ store, workspaces: ['/work'] });
    const created: Array<{ sessionId: string; createdAt: number }> = [];
    for (let index = 0; index < 7; index++) {
      const handle = bridge.createSession({ cwd: '/work', scope: 'thread' });
      created.push(handle);
      if (index % 2 === 1) clock.advance(5); // ties on createdAt as well as distinct times
    }
    await flush();
    await bridge.closeSession(created[0]!.sessionId); // stored, no longer live: still listed
    const expected = [...created]
      .sort((x, y) => y.createdAt - x.createdAt || (x.sessionId < y.sessionId ? 1 : -1))
      .map((handle) => handle.sessionId);
    for (const size of [1, 2, 3, 7, 20]) expect(ids(await allPages(bridge, '/work', size))).toEqual(expected);
    expect((await bridge.listWorkspaceSessions('/work')).sessions).toHaveLength(7);
  });

  test('§4 paging is stable: sessions opened, closed or busy during a traversal are neither repeated nor skipped', async () => {
    const store = new MemorySessionStore();
    const { bridge, clock, agent } = setup({ store, workspaces: ['/work'] });
    const before: string[] = [];
    for (let index = 0; index < 6; index++) {
      before.push(openSession(bridge));
      clock.advance(1);
    }
    await flush();
    const seen: string[] = [];
    let page = await bridge.listWorkspaceSessions('/work', { size: 2 });
    seen.push(...page.sessions.map((summary) => summary.sessionId));
    // meanwhile: a new session, a turn on an old one (updatedAt moves), one closed, one live only
    openSession(bridge);
    bridge.sendPrompt(before[0]!, text('activity'));
    await flush();
    agent.current(before[0]!).succeed();
    await bridge.closeSession(before[2]!);
    await flush();
    while (page.nextCursor !== undefined) {
      page = await bridge.listWorkspaceSessions('/work', { size: 2, cursor: page.nextCursor });
      seen.push(...page.sessions.map((summary) => summary.sessionId));
    }
    expect(seen).toEqual([...before].reverse());
  });

  test('§4 live sessions are listed whether or not the store holds them (not yet saved, or evicted)', async () => {
    const gated = new GatedStore();
    const unsaved = setup({ store: gated, workspaces: ['/work'] });
    const sid = openSession(unsaved.bridge);
    expect(gated.saved).toHaveLength(0);
    const listed = await unsaved.bridge.listWorkspaceSessions('/work');
    expect(listed.sessions.map((summary) => summary.sessionId)).toEqual([sid]);

    const tiny = new MemorySessionStore(1);
    const evicting = setup({ store: tiny, workspaces: ['/work'] });
    const older = openSession(evicting.bridge);
    evicting.clock.advance(1);
    const newer = openSession(evicting.bridge);
    await flush();
    expect(await tiny.load(older)).toBeUndefined();
    const both = await evicting.bridge.listWorkspaceSessions('/work', { size: 1 });
    expect(both.sessions.map((summary) => summary.sessionId)).toEqual([newer]);
    const rest = await evicting.bridge.listWorkspaceSessions('/work', { size: 1, cursor: both.nextCursor! });
    expect(rest).toEqual({ sessions: [expect.objectContaining({ sessionId: older, clientCount: 1 })] });
  });

  test('§4 a path outside the served workspaces is workspace_mismatch; a bad cursor invalid_cursor; a bad size a RangeError', async () => {
    const { bridge } = setup({ store: new MemorySessionStore(), workspaces: ['/work'] });
    openSession(bridge);
    await expect(bridge.listWorkspaceSessions('/elsewhere')).rejects.toBeInstanceOf(WorkspaceMismatchError);
    await expect(bridge.listWorkspaceSessions('relative')).rejects.toBeInstanceOf(InvalidCwdError);
    await expect(bridge.listWorkspaceSessions('/work', { cursor: 'nope' })).rejects.toBeInstanceOf(
      InvalidSessionCursorError,
    );
    await expect(bridge.listWorkspaceSessions('/work', { size: 1001 })).rejects.toThrow(
      'size must be an integer in [1, 1000], got 1001',
    );
    // a subdirectory lists its workspace
    expect((await bridge.listWorkspaceSessions('/work/sub/')).sessions).toHaveLength(1);
  });
});

describe('§4 load and resume check the body cwd', () => {
  test('§4 a cwd that is not an absolute path is invalid_cwd; outside every workspace workspace_mismatch; nothing opens', async () => {
    const store = new MemorySessionStore();
    const first = setup({ store, workspaces: ['/work'] });
    const sid = openSession(first.bridge);
    await flush();
    const second = setup({ store, workspaces: ['/work'] });
    for (const cwd of ['relative', 5, null, ''])
      await expect(second.bridge.restoreSession(sid, { mode: 'load', cwd })).rejects.toBeInstanceOf(
        InvalidCwdError,
      );
    await expect(second.bridge.restoreSession(sid, { cwd: '/elsewhere' })).rejects.toBeInstanceOf(
      WorkspaceMismatchError,
    );
    expect(second.bridge.sessionCount).toBe(0);
    // its own workspace, or a directory inside it, restores it
    await expect(second.bridge.restoreSession(sid, { cwd: '/work/sub' })).resolves.toMatchObject({
      sessionId: sid,
      workspaceCwd: '/work',
      attached: false,
    });
    await expect(second.bridge.restoreSession(sid, { cwd: '/work' })).resolves.toMatchObject({
      attached: true,
    });
  });

  test('§4 a session live in another served workspace is session_workspace_conflict; one stored there is not found here', async () => {
    const store = new MemorySessionStore();
    const workspaces = ['/work', '/other'];
    const first = setup({ store, workspaces });
    const sid = openSession(first.bridge);
    await flush();
    const conflict = first.bridge.restoreSession(sid, { cwd: '/other' });
    await expect(conflict).rejects.toBeInstanceOf(SessionWorkspaceConflictError);
    await expect(conflict).rejects.toMatchObject({
      code: 'session_workspace_conflict',
      sessionId: sid,
      workspaceCwd: '/other',
      liveWorkspaceCwd: '/work',
    });
    const second = setup({ store, workspaces });
    await expect(second.bridge.restoreSession(sid, { cwd: '/other' })).rejects.toBeInstanceOf(
      SessionNotFoundError,
    );
    expect(second.bridge.sessionCount).toBe(0);
    await expect(second.bridge.restoreSession(sid)).resolves.toMatchObject({ workspaceCwd: '/work' });
  });

  test('§4 concurrent restores naming different workspaces: the matching one opens it, the other is refused', async () => {
    const store = new MemorySessionStore();
    const workspaces = ['/work', '/other'];
    const first = setup({ store, workspaces });
    const sid = openSession(first.bridge);
    await flush();
    const second = setup({ store, workspaces });
    const [wrong, right] = await Promise.allSettled([
      second.bridge.restoreSession(sid, { cwd: '/other' }),
      second.bridge.restoreSession(sid, { cwd: '/work' }),
    ]);
    expect(right).toMatchObject({ status: 'fulfilled', value: { sessionId: sid } });
    expect(wrong).toMatchObject({ status: 'rejected', reason: { code: 'session_not_found' } });
    expect(second.bridge.sessionCount).toBe(1);
  });
});

describe('persistence', () => {
  test('sessions are saved on open and after each turn, and restored after a restart', async () => {
    const store = new MemorySessionStore();
    const first = setup({ store });
    const sid = openSession(first.bridge);
    first.bridge.sendPrompt(sid, text('remember me'));
    await flush();
    first.agent.current(sid).succeed('remembered');
    await flush();
    expect((await store.load(sid))?.conversation).toEqual([
      { role: 'user', content: 'remember me' },
      { role: 'assistant', content: 'remembered' },
    ]);

    const second = setup({ store });
    await expect(second.bridge.restoreSession('missing')).rejects.toBeInstanceOf(SessionNotFoundError);
    const restored = await second.bridge.restoreSession(sid, { mode: 'load', clientId: 'back' });
    expect(restored).toMatchObject({
      sessionId: sid,
      workspaceCwd: '/work',
      attached: false,
      clientId: 'back',
    });
    expect(second.bridge.conversation(sid)).toHaveLength(2);
    expect(second.sink.ofType('session_update').map((event) => event.data['update'])).toEqual([
      { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: 'remember me' } },
      { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'remembered' } },
    ]);
    const resumed = await second.bridge.restoreSession(sid);
    expect(resumed).toMatchObject({ sessionId: sid, attached: true });
    expect(resumed.clientId).not.toBe('back');
    second.bridge.sendPrompt(sid, text('and now?'));
    await flush();
    expect(second.agent.current(sid).turn.conversation).toHaveLength(2);
  });

  test('concurrent restores of one session load it once', async () => {
    const store = new MemorySessionStore();
    const first = setup({ store });
    const sid = openSession(first.bridge);
    await flush();
    const second = setup({ store });
    const [a, b] = await Promise.all([second.bridge.restoreSession(sid), second.bridge.restoreSession(sid)]);
    expect(a.sessionId).toBe(b.sessionId);
    expect(second.bridge.sessionCount).toBe(1);
  });

  test('a failing save publishes session_recording_degraded and the prompts go on', async () => {
    const store = new GatedStore();
    const errors: string[] = [];
    const { bridge, agent, sink } = setup({ store, onError: (_error, context) => errors.push(context) });
    const sid = openSession(bridge);
    await store.drain();
    bridge.sendPrompt(sid, text('a'));
    const next = bridge.sendPrompt(sid, text('b'));
    await flush();
    store.failNext = true;
    agent.current(sid).succeed();
    await flush();
    expect(sink.ofType('session_recording_degraded')).toMatchObject([
      { sessionId: sid, data: { sessionId: sid, reason: 'write_failed' } },
    ]);
    expect(errors).toEqual([`store.save ${sid}`]);
    expect(agent.current(sid).promptId).toBe(next.promptId);
  });

  test('MemorySessionStore is bounded and keeps copies', async () => {
    const store = new MemorySessionStore(2);
    const record = (id: string) => ({
      sessionId: id,
      workspaceCwd: '/w',
      cwd: '/w',
      scope: 'thread' as const,
      createdAt: 1,
      updatedAt: 1,
      conversation: [{ role: 'user' as const, content: id }],
    });
    const a = record('a');
    await store.save(a);
    a.conversation.push({ role: 'user', content: 'mutated' });
    await store.save(record('b'));
    await store.save(record('c'));
    expect(store.size).toBe(2);
    expect(await store.load('a')).toBeUndefined();
    expect((await store.load('b'))?.conversation).toHaveLength(1);
    expect(() => new MemorySessionStore(0)).toThrow('maxRecords must be a positive integer, got 0');
  });
});

describe('robustness', () => {
  test('a throwing sink is reported and changes nothing for the bridge', async () => {
    const errors: string[] = [];
    const clock = new FakeClock(0);
    let turns = 0;
    const bridge = new SessionBridge({
      agent: {
        runTurn: async () => {
          turns++;
          return { stopReason: 'end_turn' };
        },
      },
      events: {
        publish: () => {
          throw new Error('bus down');
        },
      },
      clock,
      onError: (_error, context) => errors.push(context),
    });
    const sid = bridge.createSession({ cwd: '/w' }).sessionId;
    const first = bridge.sendPrompt(sid, text('a'));
    const second = bridge.sendPrompt(sid, text('b'));
    await expect(first.done).resolves.toMatchObject({ stopReason: 'end_turn' });
    await expect(second.done).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(turns).toBe(2);
    expect(bridge.pendingPromptCount(sid)).toBe(0);
    expect(errors).toContain('publish turn_complete');
  });

  test('events of one session never reach another', async () => {
    const sink = new RecordingSink();
    const { bridge, agent } = setup({ events: sink });
    const a = openSession(bridge);
    const b = openSession(bridge);
    const onA = bridge.sendPrompt(a, text('for a'));
    await flush();
    agent.current(a).succeed();
    await flush();
    expect(
      sink.events.filter((event) => event.promptId === onA.promptId).every((event) => event.sessionId === a),
    ).toBe(true);
    expect(sink.events.some((event) => event.sessionId === b)).toBe(false);
  });
});
