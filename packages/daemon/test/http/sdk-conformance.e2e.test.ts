import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import {
  DaemonClient,
  DaemonHttpError,
  DaemonPendingPromptLimitError,
  DaemonSessionClient,
  createDaemonTranscriptState,
  isDaemonTurnError,
  normalizeDaemonEvent,
  reduceDaemonTranscriptEvents,
  selectTranscriptBlocks,
  type DaemonEvent,
} from '@qwen-code/sdk/daemon';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// The unmodified @qwen-code/sdk 0.1.14 client drives our daemon (PROTOCOL preamble).
let fast: SluiceProcess;
let slow: SluiceProcess;

beforeAll(async () => {
  [fast, slow] = await Promise.all([
    startSluice(),
    startSluice(['--echo-delay-ms', '60000', '--drain-timeout-ms', '0']),
  ]);
});

afterAll(async () => {
  await Promise.all([fast?.stop(), slow?.stop()]);
});

const text = (value: string) => ({ prompt: [{ type: 'text' as const, text: value }] });

/** The session's events from the start up to `promptId`'s turn_complete, read with the official client. */
async function eventsUntilTurnComplete(
  client: DaemonClient,
  sessionId: string,
  promptId: string,
): Promise<DaemonEvent[]> {
  const abort = new AbortController();
  const events: DaemonEvent[] = [];
  for await (const event of client.subscribeEvents(sessionId, { lastEventId: 0, signal: abort.signal })) {
    events.push(event);
    if (event.type === 'turn_complete' && event.promptId === promptId) break;
  }
  abort.abort();
  return events;
}

describe('@qwen-code/sdk DaemonClient against sluice', () => {
  test('capabilities() reads our §3 document', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const caps = await client.capabilities();
    expect(caps.v).toBe(1);
    expect(caps.limits?.maxPendingPromptsPerSession).toBe(5);
    expect(caps.features).toContain('non_blocking_prompt');
    // no --prompt-deadline-ms: the deadline feature is not advertised
    expect(caps.features).not.toContain('prompt_absolute_deadline');
  });

  test('createOrAttachSession coalesces and prompt() resolves {stopReason:end_turn}', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const caps = await client.capabilities();
    const session = await client.createOrAttachSession({ workspaceCwd: caps.workspaceCwd! });
    const again = await client.createOrAttachSession({ workspaceCwd: caps.workspaceCwd! });
    expect(again.sessionId).toBe(session.sessionId);
    const result = await client.prompt(session.sessionId, text('hello from the sdk'));
    expect(result).toMatchObject({ stopReason: 'end_turn' });
    const second = await client.prompt(session.sessionId, text('and again'));
    expect(second).toMatchObject({ stopReason: 'end_turn' });
  });

  test('a DaemonClient without a transport stays on REST although acp-http is offered', async () => {
    // The other tests of this file rely on it: they cover REST with the official client.
    const paths: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      paths.push(
        new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url).pathname,
      );
      return fetch(input, init);
    };
    const client = new DaemonClient({ baseUrl: fast.url, fetch: countingFetch });
    expect(client.transport.type).toBe('rest');
    const caps = await client.capabilities();
    expect(caps.transports).toEqual(['rest', 'acp-http']);
    const session = await client.createOrAttachSession({
      workspaceCwd: caps.workspaceCwd!,
      sessionScope: 'thread',
    });
    await expect(client.prompt(session.sessionId, text('over rest'))).resolves.toMatchObject({
      stopReason: 'end_turn',
    });
    expect(paths).toContain(`/session/${session.sessionId}/prompt`);
    expect(paths).not.toContain('/acp');
    await client.closeSession(session.sessionId);
  });

  test('createOrAttachSession({sessionId}) creates a session with the caller-chosen id', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const caps = await client.capabilities();
    // the SDK refuses to send a sessionId unless the daemon advertises session_id_override
    expect(caps.features).toContain('session_id_override');
    const sessionId = randomUUID();
    const session = await client.createOrAttachSession({ workspaceCwd: caps.workspaceCwd!, sessionId });
    expect(session).toMatchObject({ sessionId, attached: false });
    await expect(client.prompt(sessionId, text('chosen'))).resolves.toMatchObject({ stopReason: 'end_turn' });
    await client.closeSession(sessionId);
  });

  test('BP-4/BP-11/BP-12 a full queue: local refusal, and a client without a local limit is refused by the server (503 as DaemonPendingPromptLimitError)', async () => {
    const client = new DaemonClient({ baseUrl: slow.url });
    const caps = await client.capabilities();
    const session = await client.createOrAttachSession({
      workspaceCwd: caps.workspaceCwd!,
      sessionScope: 'thread',
    });
    const pending = Array.from({ length: 5 }, (_, i) => client.prompt(session.sessionId, text(`p${i}`)));
    for (const p of pending) p.catch(() => {});
    // local reservation: the 6th never leaves the client
    await expect(client.prompt(session.sessionId, text('local'))).rejects.toBeInstanceOf(
      DaemonPendingPromptLimitError,
    );
    // another client without a local limit hits the server's admission
    const other = new DaemonClient({ baseUrl: slow.url, maxPendingPromptsPerSession: null });
    await expect
      .poll(
        async () =>
          (
            (await fetch(`${slow.url}/session/${session.sessionId}/pending-prompts`).then((r) =>
              r.json(),
            )) as {
              pendingPrompts: unknown[];
            }
          ).pendingPrompts.length,
      )
      .toBe(5);
    const refused = other.prompt(session.sessionId, text('server'));
    await expect(refused).rejects.toBeInstanceOf(DaemonPendingPromptLimitError);
    await expect(refused).rejects.toMatchObject({ sessionId: session.sessionId, limit: 5, pendingCount: 5 });
    await client.closeSession(session.sessionId);
    const settled = await Promise.allSettled(pending);
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
    // each one ended with the daemon's turn_error (session_closed)
    for (const s of settled) expect(isDaemonTurnError((s as PromiseRejectedResult).reason)).toBe(true);
  });

  test('subscribeEvents yields the turn of a prompt, ids increasing, ending with its turn_complete', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const caps = await client.capabilities();
    const session = await client.createOrAttachSession({
      workspaceCwd: caps.workspaceCwd!,
      sessionScope: 'thread',
    });
    const accepted = await client.promptNonBlocking(session.sessionId, text('watch me'));
    expect(accepted).toMatchObject({ promptId: expect.any(String), lastEventId: 0 });
    const promptId = (accepted as { promptId: string }).promptId;
    const events = await eventsUntilTurnComplete(client, session.sessionId, promptId);
    const withIds = events.filter((e) => e.id !== undefined);
    expect(withIds.map((e) => e.id)).toEqual(withIds.map((_, i) => i + 1));
    expect(withIds.every((e) => e.v === 1 && e.promptId === promptId)).toBe(true);
    expect(events.at(-1)).toMatchObject({
      type: 'turn_complete',
      data: { sessionId: session.sessionId, promptId, stopReason: 'end_turn' },
    });
    const chunks = withIds.filter((e) => e.type === 'session_update');
    expect(chunks.map((e) => (e.data as { update: { sessionUpdate: string } }).update.sessionUpdate)[0]).toBe(
      'user_message_chunk',
    );
  });

  test("a turn's token usage reaches the official client's transcript as the assistant block's usage", async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const caps = await client.capabilities();
    const session = await client.createOrAttachSession({
      workspaceCwd: caps.workspaceCwd!,
      sessionScope: 'thread',
    });
    const accepted = await client.promptNonBlocking(session.sessionId, text('how many tokens is this'));
    const promptId = (accepted as { promptId: string }).promptId;
    const events = await eventsUntilTurnComplete(client, session.sessionId, promptId);
    const usageEvents = events.filter(
      (e) =>
        e.type === 'session_update' && (e.data as { update: { _meta?: unknown } }).update._meta !== undefined,
    );
    expect(usageEvents).toHaveLength(1);
    const sent = (usageEvents[0]!.data as { update: { _meta: { usage: Record<string, number> } } }).update
      ._meta.usage;
    expect(sent.inputTokens).toBeGreaterThan(0);
    expect(sent.outputTokens).toBeGreaterThan(0);
    expect(sent.totalTokens).toBe(sent.inputTokens! + sent.outputTokens!);
    const state = reduceDaemonTranscriptEvents(
      createDaemonTranscriptState(),
      events.flatMap((event) => normalizeDaemonEvent(event)),
    );
    const assistant = selectTranscriptBlocks(state).filter((block) => block.kind === 'assistant');
    expect(assistant).toHaveLength(1);
    expect(assistant[0]).toMatchObject({
      text: 'Echo: how many tokens is this',
      usage: { inputTokens: sent.inputTokens, outputTokens: sent.outputTokens },
    });
    await client.closeSession(session.sessionId);
  });

  test('cancel() aborts the running prompt: prompt() resolves {stopReason:cancelled}', async () => {
    const client = new DaemonClient({ baseUrl: slow.url });
    const caps = await client.capabilities();
    const session = await client.createOrAttachSession({
      workspaceCwd: caps.workspaceCwd!,
      sessionScope: 'thread',
    });
    const running = client.prompt(session.sessionId, text('never finishes on its own'));
    await expect.poll(async () => (await client.sessionStatus(session.sessionId)).hasActivePrompt).toBe(true);
    await client.cancel(session.sessionId, session.clientId);
    await expect(running).resolves.toMatchObject({ stopReason: 'cancelled' });
    await client.closeSession(session.sessionId);
  });

  test('branchSession() copies the conversation into a new session the client can prompt', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const caps = await client.capabilities();
    const session = await client.createOrAttachSession({
      workspaceCwd: caps.workspaceCwd!,
      sessionScope: 'thread',
    });
    await expect(client.prompt(session.sessionId, text('before the branch'))).resolves.toMatchObject({
      stopReason: 'end_turn',
    });
    const branched = await client.branchSession(session.sessionId, { name: 'sdk-branch' }, session.clientId);
    expect(branched).toMatchObject({
      sessionId: expect.any(String),
      workspaceCwd: caps.workspaceCwd,
      attached: false,
      clientId: expect.any(String),
      displayName: 'sdk-branch',
      forkedFrom: { sessionId: session.sessionId },
    });
    expect(branched.sessionId).not.toBe(session.sessionId);
    const status = await client.sessionStatus(branched.sessionId);
    expect(status).toMatchObject({ sessionId: branched.sessionId });
    await expect(client.prompt(branched.sessionId, text('on the branch'))).resolves.toMatchObject({
      stopReason: 'end_turn',
    });
    await client.closeSession(branched.sessionId);
    await client.closeSession(session.sessionId);
  });

  test('closeSession() ends a pending prompt with a turn error and is idempotent', async () => {
    const client = new DaemonClient({ baseUrl: slow.url });
    const caps = await client.capabilities();
    const session = await client.createOrAttachSession({
      workspaceCwd: caps.workspaceCwd!,
      sessionScope: 'thread',
    });
    const pending = client.prompt(session.sessionId, text('interrupted by close'));
    pending.catch(() => {});
    await expect.poll(async () => (await client.sessionStatus(session.sessionId)).hasActivePrompt).toBe(true);
    await client.closeSession(session.sessionId, session.clientId);
    const error: unknown = await pending.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isDaemonTurnError(error)).toBe(true);
    expect(error).toMatchObject({ body: 'session_closed' });
    await expect(client.sessionStatus(session.sessionId)).rejects.toBeInstanceOf(DaemonHttpError);
    await expect(client.sessionStatus(session.sessionId)).rejects.toMatchObject({ status: 404 });
    // a second close (404 on the wire) still resolves
    await expect(client.closeSession(session.sessionId)).resolves.toBeUndefined();
  });
});

describe('@qwen-code/sdk DaemonSessionClient against sluice', () => {
  test('createOrAttach(...).prompt() with an active subscription resolves {stopReason:end_turn}', async () => {
    // count the SSE connections the SDK opens (the fetch is injected; the SDK is unmodified)
    const streams: string[] = [];
    const countingFetch: typeof fetch = (input, init) => {
      const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
      if (new URL(url).pathname.endsWith('/events')) streams.push(url);
      return fetch(input, init);
    };
    const client = new DaemonClient({ baseUrl: fast.url, fetch: countingFetch });
    const caps = await client.capabilities();
    const session = await DaemonSessionClient.createOrAttach(client, {
      workspaceCwd: caps.workspaceCwd!,
      sessionScope: 'thread',
    });
    expect(session.attached).toBe(false);
    expect(session.clientId).toEqual(expect.any(String));
    const abort = new AbortController();
    const seen: DaemonEvent[] = [];
    const iterator = session.events({ signal: abort.signal });
    let wake: () => void = () => {};
    const consuming = (async () => {
      try {
        for await (const event of iterator) {
          seen.push(event);
          wake();
        }
      } catch {
        /* aborted */
      }
    })();
    // the subscription is active once the iterator was first pulled
    const first = await session.prompt(text('via the session client'));
    expect(first).toMatchObject({ stopReason: 'end_turn' });
    const second = await session.prompt(text('and once more'));
    expect(second).toMatchObject({ stopReason: 'end_turn' });
    // both terminal events came through the long-lived subscription
    await new Promise<void>((resolve) => {
      const check = (): void => {
        if (seen.filter((e) => e.type === 'turn_complete').length >= 2) resolve();
      };
      wake = check;
      check();
    });
    const completes = seen.filter((e) => e.type === 'turn_complete');
    expect(completes.map((e) => (e.data as { stopReason: string }).stopReason)).toEqual([
      'end_turn',
      'end_turn',
    ]);
    // prompt() used the long-lived subscription instead of opening a temporary stream each
    expect(streams).toHaveLength(1);
    const status = await session.status();
    expect(status).toMatchObject({ sessionId: session.sessionId, hasActivePrompt: false });
    abort.abort();
    await consuming;
    await session.close();
  });
});
