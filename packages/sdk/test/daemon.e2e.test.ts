import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  DaemonClient,
  DaemonHttpError,
  DaemonPendingPromptLimitError,
  DaemonSessionClient,
  isDaemonTurnError,
  withRetry,
  type DaemonEvent,
} from '../src/index.js';
import { startSluice, type SluiceProcess } from '../../daemon/test/helpers/sluice-process.js';
import {
  AskingAgent,
  startInProcess,
  type InProcessDaemon,
} from '../../daemon/test/helpers/in-process-daemon.js';
import { startCountingProxy, type CountingProxy } from './helpers/counting-proxy.js';
import { text, until } from './helpers/script-server.js';

// The SDK against the real daemon (compiled CLI, loopback): every flow of PROTOCOL §3–§7 the
// daemon implements. Run `npm run build` first (npm test does).
let fast: SluiceProcess;
let slow: SluiceProcess;
let unlimited: SluiceProcess;
let deadline: SluiceProcess;
let secured: SluiceProcess;
let capped: SluiceProcess;
let asking: InProcessDaemon;
let proxy: CountingProxy;

beforeAll(async () => {
  [fast, slow, unlimited, deadline, secured, capped] = await Promise.all([
    startSluice(),
    startSluice(['--echo-delay-ms', '60000', '--drain-timeout-ms', '0']),
    startSluice([
      '--echo-delay-ms',
      '60000',
      '--drain-timeout-ms',
      '0',
      '--max-pending-prompts-per-session',
      '0',
    ]),
    startSluice(['--echo-delay-ms', '60000', '--drain-timeout-ms', '0', '--prompt-deadline-ms', '100']),
    startSluice(['--token', 'sdk-secret', '--require-auth', '--event-ring-size', '6']),
    startSluice(['--max-sessions-per-workspace', '1']),
  ]);
  // the compiled CLI's agents never ask for permission: the daemon built in-process with a test
  // agent that does (every turn asks once, then reports the outcome it got)
  asking = await startInProcess({ permissionResponseTimeoutMs: 0 }, { agent: new AskingAgent() });
  proxy = await startCountingProxy(slow.url);
});

afterAll(async () => {
  await proxy?.close();
  await Promise.all([
    fast?.stop(),
    slow?.stop(),
    unlimited?.stop(),
    deadline?.stop(),
    secured?.stop(),
    capped?.stop(),
    asking?.stop(),
  ]);
});

async function threadSession(client: DaemonClient) {
  return client.createOrAttachSession({ sessionScope: 'thread' });
}

async function collectUntil(
  stream: AsyncGenerator<DaemonEvent>,
  stop: (e: DaemonEvent) => boolean,
): Promise<DaemonEvent[]> {
  const events: DaemonEvent[] = [];
  for await (const event of stream) {
    events.push(event);
    if (stop(event)) break;
  }
  return events;
}

describe('§3 discovery', () => {
  test('§3 health, capabilities and the runtime snapshot', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    await expect(client.health()).resolves.toEqual({ status: 'ok' });
    const caps = await client.capabilities();
    expect(caps).toMatchObject({ v: 1, mode: 'http-bridge', limits: { maxPendingPromptsPerSession: 5 } });
    expect(caps.features).toContain('pending_prompts');
    const snapshot = await client.runtimeSnapshot();
    expect(snapshot).toMatchObject({
      accepting: true,
      inflight: expect.any(Number),
      jobs: expect.any(Array),
    });
  });
});

describe('§4 sessions', () => {
  test('§4 single scope coalesces with a new client id; thread scope always creates; status and listing agree', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const caps = await client.capabilities();
    const first = await client.createOrAttachSession({ workspaceCwd: caps.workspaceCwd! });
    const again = await client.createOrAttachSession({ workspaceCwd: caps.workspaceCwd! });
    expect(again).toMatchObject({ sessionId: first.sessionId, attached: true });
    expect(again.clientId).not.toBe(first.clientId);
    const thread = await threadSession(client);
    expect(thread.sessionId).not.toBe(first.sessionId);
    expect(await client.sessionStatus(thread.sessionId)).toMatchObject({
      sessionId: thread.sessionId,
      hasActivePrompt: false,
    });
    const listed = await client.listWorkspaceSessions(caps.workspaceCwd!, { pageSize: 1 });
    expect(listed.map((s) => s.sessionId)).toEqual(
      expect.arrayContaining([first.sessionId, thread.sessionId]),
    );
    const chosen = randomUUID();
    await expect(client.createOrAttachSession({ sessionId: chosen })).resolves.toMatchObject({
      sessionId: chosen,
      attached: false,
    });
    await expect(client.heartbeat(thread.sessionId, thread.clientId)).resolves.toMatchObject({
      sessionId: thread.sessionId,
      clientId: thread.clientId,
    });
    await client.detachSession(thread.sessionId, thread.clientId);
    await client.closeSession(thread.sessionId);
    await client.closeSession(chosen);
  });

  test('§1/§4 wire errors are DaemonHttpError with the stable code', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    await expect(client.createOrAttachSession({ sessionScope: 'galaxy' as 'thread' })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_session_scope',
    });
    await expect(
      client.createOrAttachSession({ workspaceCwd: '/definitely/not/served' }),
    ).rejects.toMatchObject({
      status: 400,
      code: 'workspace_mismatch',
    });
    const missing: unknown = await client.sessionStatus(randomUUID()).catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(DaemonHttpError);
    expect(missing).toMatchObject({ status: 404, code: 'session_not_found' });
    const session = await threadSession(client);
    await expect(client.cancel(session.sessionId, 'not-registered')).rejects.toMatchObject({
      status: 400,
      code: 'invalid_client_id',
    });
    await client.closeSession(session.sessionId);
  });

  test('§4 the session cap answers 503 session_limit_exceeded: a retryable DaemonHttpError with Retry-After', async () => {
    const client = new DaemonClient({ baseUrl: capped.url });
    const only = await threadSession(client);
    const refused: unknown = await threadSession(client).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DaemonHttpError);
    expect(refused).toMatchObject({
      status: 503,
      code: 'session_limit_exceeded',
      retryable: true,
      retryAfterMs: 5000,
      body: { limit: 1 },
    });
    await client.closeSession(only.sessionId);
  });

  test('§4 closing a session ends its pending prompts with turn_error session_closed and releases their slots', async () => {
    const client = new DaemonClient({ baseUrl: proxy.url });
    const session = await threadSession(client);
    const pending = [
      client.prompt(session.sessionId, text('a')),
      client.prompt(session.sessionId, text('b')),
    ];
    for (const p of pending) p.catch(() => {});
    expect(client.pendingPromptCount(session.sessionId)).toBe(2);
    // both prompts wait on their replay streams (a stream opened after the close gets a 404)
    const subscribed = `GET /session/${session.sessionId}/events 200`;
    await until(() => proxy.answered.filter((line) => line === subscribed).length === 2);
    await client.closeSession(session.sessionId);
    for (const outcome of await Promise.allSettled(pending)) {
      expect(outcome.status).toBe('rejected');
      const reason = (outcome as PromiseRejectedResult).reason as unknown;
      expect(isDaemonTurnError(reason)).toBe(true);
      expect(reason).toMatchObject({ code: 'session_closed' });
    }
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    await expect(client.sessionStatus(session.sessionId)).rejects.toMatchObject({ status: 404 });
  });
});

describe('§5 prompts', () => {
  test('§5 prompt() resolves with the turn_complete data; promptNonBlocking returns the 202 envelope', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const session = await threadSession(client);
    const result = await client.prompt(session.sessionId, text('hello'), undefined, session.clientId);
    expect(result).toMatchObject({
      stopReason: 'end_turn',
      sessionId: session.sessionId,
      promptId: expect.any(String),
    });
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    const accepted = await client.promptNonBlocking(session.sessionId, text('fire'));
    expect(accepted).toMatchObject({
      promptId: expect.any(String),
      lastEventId: expect.any(Number),
      eventEpoch: expect.any(String),
    });
    await client.closeSession(session.sessionId);
  });

  test('§5 pending prompts: the running one first; removing a queued one ends its prompt() with stopReason cancelled', async () => {
    const client = new DaemonClient({ baseUrl: slow.url });
    const session = await threadSession(client);
    const running = client.prompt(session.sessionId, text('first'));
    const queued = client.prompt(session.sessionId, text('second'));
    await expect
      .poll(async () => (await client.pendingPrompts(session.sessionId)).pendingPrompts.map((p) => p.state))
      .toEqual(['running', 'queued']);
    const list = (await client.getPendingPrompts(session.sessionId)).pendingPrompts;
    await expect(client.removePendingPrompt(session.sessionId, list[1]!.promptId)).resolves.toEqual({
      removed: true,
    });
    await expect(queued).resolves.toMatchObject({ stopReason: 'cancelled' });
    await expect(client.removePendingPrompt(session.sessionId, 'no-such-prompt')).resolves.toEqual({
      removed: false,
    });
    await client.cancel(session.sessionId, session.clientId);
    await expect(running).resolves.toMatchObject({ stopReason: 'cancelled' });
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    await client.closeSession(session.sessionId);
  });

  test('§5 a caller abort after the 202 also takes the prompt back on the daemon', async () => {
    const client = new DaemonClient({ baseUrl: slow.url });
    const session = await threadSession(client);
    const abort = new AbortController();
    const running = client.prompt(session.sessionId, text('abandon me'), abort.signal);
    await expect.poll(async () => (await client.sessionStatus(session.sessionId)).hasActivePrompt).toBe(true);
    abort.abort();
    await expect(running).rejects.toMatchObject({ name: 'AbortError' });
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    await expect
      .poll(async () => (await client.pendingPrompts(session.sessionId)).pendingPrompts)
      .toEqual([]);
    await client.closeSession(session.sessionId);
  });

  test('§5 a caller abort while the POST is still out rejects at once; the prompt the daemon then admits is taken back', async () => {
    const client = new DaemonClient({ baseUrl: slow.url });
    const session = await threadSession(client);
    const abort = new AbortController();
    const prompt = client.prompt(session.sessionId, text('abandoned before its 202'), abort.signal);
    abort.abort(); // the POST is on the wire, unanswered
    await expect(prompt).rejects.toMatchObject({ name: 'AbortError' });
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    // the daemon admitted it (a 60 s turn) and it ends cancelled, not after a minute
    const events = await collectUntil(
      client.subscribeEvents(session.sessionId, { lastEventId: 0 }),
      (e) => e.type === 'turn_complete',
    );
    expect(events.at(-1)).toMatchObject({ type: 'turn_complete', data: { stopReason: 'cancelled' } });
    expect((await client.pendingPrompts(session.sessionId)).pendingPrompts).toEqual([]);
    await client.closeSession(session.sessionId);
  });

  test('§5 a caller abort of a queued prompt removes it from the daemon queue; the running one keeps running', async () => {
    const client = new DaemonClient({ baseUrl: slow.url });
    const session = await threadSession(client);
    const running = client.prompt(session.sessionId, text('keep running'));
    const abort = new AbortController();
    const queued = client.prompt(session.sessionId, text('abandon me while queued'), abort.signal);
    await expect
      .poll(async () => (await client.pendingPrompts(session.sessionId)).pendingPrompts.map((p) => p.state))
      .toEqual(['running', 'queued']);
    const [first] = (await client.pendingPrompts(session.sessionId)).pendingPrompts;
    abort.abort();
    await expect(queued).rejects.toMatchObject({ name: 'AbortError' });
    expect(client.pendingPromptCount(session.sessionId)).toBe(1);
    await expect
      .poll(async () => (await client.pendingPrompts(session.sessionId)).pendingPrompts)
      .toEqual([expect.objectContaining({ promptId: first!.promptId, state: 'running' })]);
    expect((await client.sessionStatus(session.sessionId)).hasActivePrompt).toBe(true);
    await client.cancel(session.sessionId, session.clientId);
    await expect(running).resolves.toMatchObject({ stopReason: 'cancelled' });
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    await client.closeSession(session.sessionId);
  });

  test('§5 an invalid deadlineMs is a 400 invalid_deadline_ms DaemonHttpError and gives the slot back', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const session = await threadSession(client);
    const refused: unknown = await client
      .prompt(session.sessionId, { ...text('late'), deadlineMs: -1 })
      .catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DaemonHttpError);
    expect(refused).toMatchObject({ status: 400, code: 'invalid_deadline_ms', retryable: false });
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    await expect(client.prompt(session.sessionId, { prompt: [] })).rejects.toMatchObject({ status: 400 });
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    await client.closeSession(session.sessionId);
  });

  test('§5 the prompt deadline ends the turn with a DaemonTurnError prompt_deadline_exceeded', async () => {
    const client = new DaemonClient({ baseUrl: deadline.url });
    const session = await threadSession(client);
    const error: unknown = await client.prompt(session.sessionId, text('too slow')).catch((e: unknown) => e);
    expect(isDaemonTurnError(error)).toBe(true);
    expect(error).toMatchObject({ status: 504, code: 'prompt_deadline_exceeded' });
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    await client.closeSession(session.sessionId);
  });
});

describe('BP-11 … BP-13 the local reservation against the daemon', () => {
  test('BP-12 the local limit rejects without a request reaching the daemon', async () => {
    const client = new DaemonClient({ baseUrl: proxy.url });
    const caps = await client.capabilities();
    const limited = new DaemonClient({
      baseUrl: proxy.url,
      maxPendingPromptsPerSession: caps.limits!.maxPendingPromptsPerSession,
    });
    const session = await threadSession(limited);
    const pending = Array.from({ length: 5 }, (_, i) => limited.prompt(session.sessionId, text(`p${i}`)));
    for (const p of pending) p.catch(() => {});
    await expect
      .poll(async () => (await client.pendingPrompts(session.sessionId)).pendingPrompts.length)
      .toBe(5);
    const posts = (): number =>
      proxy.seen.filter((line) => line === `POST /session/${session.sessionId}/prompt`).length;
    expect(posts()).toBe(5);
    const before = proxy.seen.length;
    const refused: unknown = await limited.prompt(session.sessionId, text('sixth')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DaemonPendingPromptLimitError);
    expect(refused).toMatchObject({ local: true, limit: 5, pendingCount: 5, sessionId: session.sessionId });
    expect(proxy.seen.length).toBe(before);
    expect(posts()).toBe(5);
    await limited.closeSession(session.sessionId);
    await Promise.allSettled(pending);
    expect(limited.pendingPromptCount(session.sessionId)).toBe(0);
  });

  test('BP-4/BP-8 without a local limit the daemon refuses: the 503 surfaces as the same error class with Retry-After', async () => {
    const client = new DaemonClient({ baseUrl: slow.url, maxPendingPromptsPerSession: null });
    const session = await threadSession(client);
    const pending = Array.from({ length: 5 }, (_, i) => client.prompt(session.sessionId, text(`p${i}`)));
    for (const p of pending) p.catch(() => {});
    await expect
      .poll(async () => (await client.pendingPrompts(session.sessionId)).pendingPrompts.length)
      .toBe(5);
    const refused: unknown = await client.prompt(session.sessionId, text('sixth')).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(DaemonPendingPromptLimitError);
    expect(refused).toMatchObject({
      local: false,
      limit: 5,
      pendingCount: 5,
      retryAfterMs: 5000,
      sessionId: session.sessionId,
    });
    expect(client.pendingPromptCount(session.sessionId)).toBe(0); // a disabled limit counts nothing
    // withRetry honours that Retry-After: with a cap below it, it does not retry early
    let attempts = 0;
    await expect(
      withRetry(
        () => {
          attempts++;
          return client.prompt(session.sessionId, text('retry'));
        },
        { retries: 2, capMs: 1_000 },
      ),
    ).rejects.toBeInstanceOf(DaemonPendingPromptLimitError);
    expect(attempts).toBe(1);
    await client.closeSession(session.sessionId);
    await Promise.allSettled(pending);
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
  });

  test('BP-13 maxPendingPromptsPerSession: caps.limits value null (--max-pending-prompts-per-session 0) disables the local limit', async () => {
    const probe = new DaemonClient({ baseUrl: unlimited.url });
    const caps = await probe.capabilities();
    expect(caps.limits!.maxPendingPromptsPerSession).toBeNull();
    const client = new DaemonClient({
      baseUrl: unlimited.url,
      maxPendingPromptsPerSession: caps.limits!.maxPendingPromptsPerSession,
    });
    expect(client.maxPendingPromptsPerSession).toBe(Infinity);
    const session = await threadSession(client);
    const pending = Array.from({ length: 7 }, (_, i) => client.prompt(session.sessionId, text(`p${i}`)));
    for (const p of pending) p.catch(() => {});
    await expect
      .poll(async () => (await client.pendingPrompts(session.sessionId)).pendingPrompts.length)
      .toBe(7);
    await client.closeSession(session.sessionId);
    const settled = await Promise.allSettled(pending);
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
  });
});

describe('§6 events', () => {
  test('§6 subscribeEvents replays from Last-Event-ID with increasing ids, then replay_complete', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const session = await threadSession(client);
    const result = await client.prompt(session.sessionId, text('replay me'));
    const abort = new AbortController();
    const events = await collectUntil(
      client.subscribeEvents(session.sessionId, { lastEventId: 0, signal: abort.signal }),
      (e) => e.type === 'replay_complete',
    );
    abort.abort();
    const withIds = events.filter((e) => e.id !== undefined);
    expect(withIds.map((e) => e.id)).toEqual(withIds.map((_, i) => i + 1));
    expect(withIds.at(-1)).toMatchObject({ type: 'turn_complete', data: { promptId: result['promptId'] } });
    expect(events.at(-1)).toMatchObject({ type: 'replay_complete', data: { replayedCount: withIds.length } });
    await client.closeSession(session.sessionId);
  });

  test('§6 a stale epoch gets state_resync_required epoch_reset and the whole ring; onEpoch reports the real one', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const session = await threadSession(client);
    const accepted = await client.promptNonBlocking(session.sessionId, text('epoch'));
    await client.prompt(session.sessionId, text('and more'));
    const epochs: string[] = [];
    const abort = new AbortController();
    const events = await collectUntil(
      client.subscribeEvents(session.sessionId, {
        lastEventId: 1,
        epoch: 'not-the-epoch',
        onEpoch: (e) => epochs.push(e),
        signal: abort.signal,
      }),
      (e) => e.type === 'replay_complete',
    );
    abort.abort();
    expect(events[0]).toMatchObject({ type: 'state_resync_required', data: { reason: 'epoch_reset' } });
    expect(events.find((e) => e.id !== undefined)?.id).toBe(1);
    expect(epochs).toEqual([(accepted as { eventEpoch: string }).eventEpoch]);
    await client.closeSession(session.sessionId);
  });
});

describe('§6 subscription bounds', () => {
  test('§6 a maxQueued outside [16, 2048] is a 400 invalid_max_queued DaemonHttpError, not a reconnect loop', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const session = await threadSession(client);
    const failure: unknown = await collectUntil(
      client.subscribeEvents(session.sessionId, { maxQueued: 4 }),
      () => true,
    ).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(DaemonHttpError);
    expect(failure).toMatchObject({ status: 400, code: 'invalid_max_queued' });
    await client.closeSession(session.sessionId);
  });
});

describe('§2 bearer token and §6 ring eviction', () => {
  test('§2 the token is sent on every request; without it the daemon answers 401 as a DaemonHttpError', async () => {
    await expect(new DaemonClient({ baseUrl: secured.url }).health()).rejects.toMatchObject({ status: 401 });
    const client = new DaemonClient({ baseUrl: secured.url, token: 'sdk-secret' });
    await expect(client.health()).resolves.toEqual({ status: 'ok' });
    const session = await threadSession(client);
    await expect(client.prompt(session.sessionId, text('authorised'))).resolves.toMatchObject({
      stopReason: 'end_turn',
    });
    await client.closeSession(session.sessionId);
  });

  test('§6 a cursor older than the ring gets state_resync_required ring_evicted, then the ring that is left', async () => {
    const client = new DaemonClient({ baseUrl: secured.url, token: 'sdk-secret' });
    const session = await threadSession(client);
    for (const word of ['one', 'two', 'three']) await client.prompt(session.sessionId, text(word));
    const abort = new AbortController();
    const events = await collectUntil(
      client.subscribeEvents(session.sessionId, { lastEventId: 1, signal: abort.signal }),
      (e) => e.type === 'replay_complete',
    );
    abort.abort();
    expect(events[0]).toMatchObject({
      type: 'state_resync_required',
      data: { reason: 'ring_evicted', lastDeliveredId: 1 },
    });
    const ids = events.filter((e) => e.id !== undefined).map((e) => e.id!);
    expect(ids).toHaveLength(6);
    expect(ids[0]).toBe((events[0]!.data as { earliestAvailableId: number }).earliestAvailableId);
    await client.closeSession(session.sessionId);
  });
});

describe('§7 branching and permissions', () => {
  test('§7 branchSession copies the session (201 shape); while a prompt is pending it is a 409', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const session = await threadSession(client);
    await client.prompt(session.sessionId, text('before'));
    const branched = await client.branchSession(session.sessionId, { name: 'b1' }, session.clientId);
    expect(branched).toMatchObject({
      attached: false,
      displayName: 'b1',
      forkedFrom: { sessionId: session.sessionId },
      lastEventId: expect.any(Number),
    });
    await expect(client.prompt(branched.sessionId, text('on the branch'))).resolves.toMatchObject({
      stopReason: 'end_turn',
    });
    await client.closeSession(branched.sessionId);

    const busyClient = new DaemonClient({ baseUrl: slow.url });
    const busy = await threadSession(busyClient);
    const running = busyClient.prompt(busy.sessionId, text('long'));
    running.catch(() => {});
    await expect
      .poll(async () => (await busyClient.sessionStatus(busy.sessionId)).hasActivePrompt)
      .toBe(true);
    await expect(busyClient.branchSession(busy.sessionId)).rejects.toMatchObject({
      status: 409,
      code: 'branch_while_prompt_active',
    });
    await busyClient.closeSession(busy.sessionId);
    await client.closeSession(session.sessionId);
  });

  test('§7 a permission_request on the stream, respondToSessionPermission → true and the turn goes on with that option; a late vote → false', async () => {
    const client = new DaemonClient({ baseUrl: asking.url });
    const session = await threadSession(client);
    const running = client.prompt(session.sessionId, text('may I?'));
    const events: DaemonEvent[] = [];
    let requestId: string | undefined;
    for await (const event of client.subscribeEvents(session.sessionId, { lastEventId: 0 })) {
      events.push(event);
      if (event.type === 'permission_request') {
        const data = event.data as { requestId: string; options: Array<{ optionId: string }> };
        requestId = data.requestId;
        expect(data.options.map((o) => o.optionId)).toEqual(['allow', 'deny']);
        expect((await client.sessionStatus(session.sessionId)).isWaitingForPermission).toBe(true);
        await expect(
          client.respondToSessionPermission(session.sessionId, requestId, {
            outcome: { outcome: 'selected', optionId: 'deny' },
          }),
        ).resolves.toBe(true);
      }
      if (event.type === 'turn_complete') break;
    }
    await expect(running).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(events.find((e) => e.type === 'permission_resolved')?.data).toMatchObject({
      requestId,
      outcome: { outcome: 'selected', optionId: 'deny' },
    });
    expect(JSON.stringify(events)).toContain('selected:deny');
    await expect(
      client.respondToPermission(requestId!, { outcome: { outcome: 'selected', optionId: 'allow' } }),
    ).resolves.toBe(false);
    expect(client.pendingPromptCount(session.sessionId)).toBe(0);
    await client.closeSession(session.sessionId);
  });

  test('§7 a vote on an unknown or already resolved permission request is answered false, on both routes', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const vote = { outcome: { outcome: 'selected' as const, optionId: 'allow' } };
    await expect(client.respondToPermission('req-1', vote)).resolves.toBe(false);
    const session = await threadSession(client);
    await expect(client.respondToSessionPermission(session.sessionId, 'req-1', vote)).resolves.toBe(false);
    const malformed = { outcome: { outcome: 'maybe' } } as unknown as typeof vote;
    await expect(client.respondToPermission('req-1', malformed)).rejects.toMatchObject({ status: 400 });
    await client.closeSession(session.sessionId);
  });
});

describe('BP-14 DaemonSessionClient against the daemon', () => {
  test('§1 a session client the daemon forgot (400 invalid_client_id) re-registers through resume and sends once more', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const sc = await DaemonSessionClient.createOrAttach(client, { sessionScope: 'thread' });
    const forgotten = sc.clientId;
    await sc.detach();
    await expect(client.prompt(sc.sessionId, text('raw'), undefined, forgotten)).rejects.toMatchObject({
      status: 400,
      code: 'invalid_client_id',
    });
    await expect(sc.prompt(text('temporary stream path'))).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(sc.clientId).toEqual(expect.any(String));
    expect(sc.clientId).not.toBe(forgotten);

    await sc.detach();
    const stop = new AbortController();
    let accepted = false;
    const listening = (async () => {
      for await (const _ of sc.events({ signal: stop.signal, onSseStreamAccepted: () => (accepted = true) }));
    })();
    await until(() => accepted);
    const before = sc.clientId;
    await expect(sc.prompt(text('stream path'))).resolves.toMatchObject({ stopReason: 'end_turn' });
    expect(sc.clientId).not.toBe(before);
    expect(sc.pendingPromptCount).toBe(0);
    stop.abort();
    await listening;
    await sc.close();
  });

  test('BP-14 prompts settle from the long-lived events() stream, under the same local limit', async () => {
    const client = new DaemonClient({ baseUrl: proxy.url });
    const caps = await client.capabilities();
    const sc = await DaemonSessionClient.createOrAttach(
      client,
      { sessionScope: 'thread' },
      { maxPendingPromptsPerSession: 2 },
    );
    expect(sc.maxPendingPromptsPerSession).toBe(2);
    expect(caps.limits!.maxPendingPromptsPerSession).toBe(5);
    const stop = new AbortController();
    let accepted = false;
    const seen: DaemonEvent[] = [];
    const listening = (async () => {
      for await (const event of sc.events({
        signal: stop.signal,
        onSseStreamAccepted: () => (accepted = true),
      }))
        seen.push(event);
    })();
    await until(() => accepted);
    const a = sc.prompt(text('one'));
    const b = sc.prompt(text('two'));
    a.catch(() => {});
    b.catch(() => {});
    await until(() => sc.pendingPromptCount === 2);
    const before = proxy.seen.length;
    await expect(sc.prompt(text('three'))).rejects.toMatchObject({ local: true, limit: 2, pendingCount: 2 });
    expect(proxy.seen.length).toBe(before);
    await expect.poll(async () => (await sc.getPendingPrompts()).pendingPrompts.length).toBe(2);
    await sc.cancel();
    await expect(a).resolves.toMatchObject({ stopReason: 'cancelled' });
    const gets = proxy.seen.filter((line) => line.startsWith(`GET /session/${sc.sessionId}/events`)).length;
    expect(gets).toBe(1); // no temporary streams: the long-lived one settled the prompt
    await sc.close();
    await expect(b).rejects.toMatchObject({ code: 'session_closed' });
    expect(sc.pendingPromptCount).toBe(0);
    stop.abort();
    await listening;
    expect(seen.some((e) => e.type === 'session_closed')).toBe(true);
  });
});
