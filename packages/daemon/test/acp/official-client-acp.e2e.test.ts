import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DaemonClient, DaemonHttpError, type DaemonEvent } from '@qwen-code/sdk/daemon';
import { negotiateTransport } from '@qwen-code/sdk/daemon/transports';
import { api } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// The unmodified @qwen-code/sdk 0.1.14 client picks acp-http from /capabilities (PROTOCOL §3) and
// drives the bundled daemon over /acp only (PROTOCOL §8): every request it sends is recorded.
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

/** The official client on the transport it negotiated, and every `METHOD /path` it requested. */
async function officialClient(
  baseUrl: string,
  options: { maxPendingPromptsPerSession?: number | null } = {},
) {
  const requests: string[] = [];
  const fetchFn: typeof fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    requests.push(`${init?.method ?? 'GET'} ${new URL(url).pathname}`);
    return fetch(input, init);
  };
  const transport = await negotiateTransport(baseUrl, undefined, { fetchFn });
  const client = new DaemonClient({ baseUrl, transport, ...options });
  const caps = await client.capabilities();
  return { client, transport, requests, workspaceCwd: caps.workspaceCwd! };
}

/** Everything but the discovery probe and ACP itself: what would mean the client fell back to REST. */
function restRequests(requests: string[]): string[] {
  return requests.filter((r) => !r.endsWith(' /acp') && r !== 'GET /capabilities');
}

/** The session's events from the start, read with the client, until `until` matches. */
async function eventsUntil(
  client: DaemonClient,
  sessionId: string,
  until: (event: DaemonEvent) => boolean,
): Promise<DaemonEvent[]> {
  const abort = new AbortController();
  const events: DaemonEvent[] = [];
  for await (const event of client.subscribeEvents(sessionId, { lastEventId: 0, signal: abort.signal })) {
    events.push(event);
    if (until(event)) break;
  }
  abort.abort();
  return events;
}

describe('@qwen-code/sdk over acp-http against the bundled daemon (PROTOCOL §3, §8)', () => {
  test('§3 negotiateTransport picks acp-http; create → prompt → events run over /acp alone', async () => {
    const { client, transport, requests, workspaceCwd } = await officialClient(fast.url);
    try {
      expect(transport.type).toBe('acp-http');
      const session = await client.createOrAttachSession({ workspaceCwd, sessionScope: 'thread' });
      expect(session.sessionId).toMatch(/^[0-9a-f-]{36}$/);
      await expect(client.prompt(session.sessionId, text('hello over acp'))).resolves.toEqual({
        stopReason: 'end_turn',
      });
      const events = await eventsUntil(client, session.sessionId, (e) => e.type === 'turn_complete');
      // ACP session/update notifications arrive typed by their sessionUpdate, with the bus ids.
      const chunks = events.filter((e) => e.type === 'agent_message_chunk');
      const reply = chunks.map((e) => (e.data as { content: { text: string } }).content.text).join('');
      expect(reply).toBe('Echo: hello over acp');
      expect(events[0]).toMatchObject({ type: 'user_message_chunk', id: 1 });
      expect(events.at(-1)).toMatchObject({
        type: 'turn_complete',
        data: { sessionId: session.sessionId, stopReason: 'end_turn' },
      });
      // The transport really is ACP: the daemon saw /acp requests and no REST session route.
      expect(requests).toContain('POST /acp');
      expect(requests).toContain('GET /acp');
      expect(restRequests(requests)).toEqual([]);
      await client.closeSession(session.sessionId).catch(() => undefined);
    } finally {
      transport.dispose();
    }
  });

  test('§8 cancel reaches the running turn: prompt() resolves {stopReason:cancelled}', async () => {
    const { client, transport, requests, workspaceCwd } = await officialClient(slow.url);
    try {
      const session = await client.createOrAttachSession({ workspaceCwd, sessionScope: 'thread' });
      const running = client.prompt(session.sessionId, text('never finishes on its own'));
      await expect
        .poll(async () => (await api(slow.url, 'GET', `/session/${session.sessionId}/status`)).body)
        .toMatchObject({ hasActivePrompt: true });
      await client.cancel(session.sessionId);
      await expect(running).resolves.toEqual({ stopReason: 'cancelled' });
      expect(restRequests(requests)).toEqual([]);
    } finally {
      transport.dispose();
    }
  });

  test('BP-10 the 6th outstanding prompt is refused with 503 and errorKind prompt_queue_full', async () => {
    const { client, transport, workspaceCwd } = await officialClient(slow.url, {
      maxPendingPromptsPerSession: null,
    });
    try {
      const session = await client.createOrAttachSession({ workspaceCwd, sessionScope: 'thread' });
      const pending = Array.from({ length: 5 }, (_, i) => client.prompt(session.sessionId, text(`p${i}`)));
      for (const p of pending) p.catch(() => {});
      await expect
        .poll(
          async () =>
            (await api(slow.url, 'GET', `/session/${session.sessionId}/pending-prompts`)).body.pendingPrompts
              .length,
        )
        .toBe(5);
      const refused = await client.prompt(session.sessionId, text('one too many')).catch((e: unknown) => e);
      expect(refused).toBeInstanceOf(DaemonHttpError);
      expect(refused).toMatchObject({
        status: 503,
        body: { data: { errorKind: 'prompt_queue_full', limit: 5, pendingCount: 5 } },
      });
      // closing ends the queued turns with session_closed
      await client.closeSession(session.sessionId).catch(() => undefined);
      const settled = await Promise.allSettled(pending);
      for (const s of settled)
        expect(s).toMatchObject({
          status: 'rejected',
          reason: { body: { data: { errorKind: 'session_closed' } } },
        });
    } finally {
      transport.dispose();
    }
  });

  test('§8 list, fork, load, resume, heartbeat and a caller-chosen id over acp-http', async () => {
    const { client, transport, requests, workspaceCwd } = await officialClient(fast.url);
    try {
      const session = await client.createOrAttachSession({ workspaceCwd, sessionScope: 'thread' });
      await client.prompt(session.sessionId, text('before the fork'));
      const listed = await client.listWorkspaceSessions(workspaceCwd);
      expect(listed).toContainEqual(
        expect.objectContaining({ sessionId: session.sessionId, workspaceCwd, hasActivePrompt: false }),
      );
      const fork = await client.branchSession(session.sessionId, { name: 'acp-branch' });
      expect(fork.sessionId).not.toBe(session.sessionId);
      const forked = await api(fast.url, 'GET', `/session/${fork.sessionId}/status`);
      expect(forked.body).toMatchObject({ displayName: 'acp-branch' });
      await expect(client.loadSession(session.sessionId, { workspaceCwd })).resolves.toEqual({});
      await expect(client.resumeSession(session.sessionId, { workspaceCwd })).resolves.toEqual({});
      await expect(client.heartbeat(session.sessionId)).resolves.toMatchObject({
        sessionId: session.sessionId,
        lastSeenAt: expect.any(Number),
      });
      const chosen = randomUUID();
      await expect(client.createOrAttachSession({ workspaceCwd, sessionId: chosen })).resolves.toEqual({
        sessionId: chosen,
      });
      expect(restRequests(requests)).toEqual([]);
    } finally {
      transport.dispose();
    }
  });

  test('§8 closeSession closes the session (the 0.1.14 client then misreads the 200 it synthesizes)', async () => {
    const { client, transport, workspaceCwd } = await officialClient(fast.url);
    try {
      const session = await client.createOrAttachSession({ workspaceCwd, sessionScope: 'thread' });
      // AcpHttpTransport turns every JSON-RPC success into a 200, and closeSession() accepts only
      // 204 or 404, so it rejects although the daemon answered session/close with success.
      const outcome = await client.closeSession(session.sessionId).catch((e: unknown) => e);
      expect(outcome).toMatchObject({ status: 200 });
      await expect
        .poll(async () => (await api(fast.url, 'GET', `/session/${session.sessionId}/status`)).status)
        .toBe(404);
      // a vote on a request nobody asked is the client's `false` (JSON-RPC error with httpStatus 404)
      await expect(
        client.respondToPermission('no-such-request', { outcome: { outcome: 'cancelled' } }),
      ).resolves.toBe(false);
    } finally {
      transport.dispose();
    }
  });
});
