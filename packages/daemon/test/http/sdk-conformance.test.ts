import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { DaemonClient, DaemonPendingPromptLimitError } from '@qwen-code/sdk/daemon';
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

describe('@qwen-code/sdk DaemonClient against sluice', () => {
  test('capabilities() reads our §3 document', async () => {
    const client = new DaemonClient({ baseUrl: fast.url });
    const caps = await client.capabilities();
    expect(caps.v).toBe(1);
    expect(caps.limits?.maxPendingPromptsPerSession).toBe(5);
    expect(caps.features).toContain('non_blocking_prompt');
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

  test('BP-11/BP-12 a full queue: local refusal, and the server 503 surfaces as DaemonPendingPromptLimitError', async () => {
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
    await fetch(`${slow.url}/session/${session.sessionId}`, { method: 'DELETE' });
    const settled = await Promise.allSettled(pending);
    expect(settled.every((s) => s.status === 'rejected')).toBe(true);
  });
});
