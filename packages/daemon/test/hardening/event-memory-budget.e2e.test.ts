import { mkdtempSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION } from '@sluice/protocol';
import { expect, test } from 'vitest';
import { TEST_AGENT } from '../agents/acp-helpers.js';
import { api } from '../helpers/http-client.js';
import { memoryMiB } from '../helpers/process-memory.js';
import { startSluice } from '../helpers/sluice-process.js';

// Issue 19 item 3 / issue 28 item 10: 30 prompts of 9.5 MiB took the daemon from 64 MB to 759 MB,
// because the replay windows were bounded by event count only. Here the daemon is its own process
// (the bundle) and its memory is what is measured, under 32 MiB of prompts whose events would
// overfill every replay window. V8 collects lazily, so resident memory alone cannot tell what the
// daemon holds from garbage not yet collected (without a heap limit, budgets of 12 MiB and of
// 1 GiB both peaked at ~220 MiB). So the daemon's heap is capped, as a container's limit would
// cap it, at what the budgets leave it room for: a daemon that held its prompts' events beyond
// the budgets dies of heap exhaustion (checked with --event-ring-bytes 512 MiB and
// --event-memory-bytes 1 GiB: "read ECONNRESET", the child gone), and its peak resident memory
// must stay within the README's "Memory, worst case" for these flags.

const MiB = 1024 * 1024;
const SESSIONS = 2;
const PROMPTS = 32; // per session, one after the other
const PROMPT_CHARS = MiB / 2;
const RING_BYTES = 4 * MiB;
const MEMORY_BYTES = 6 * MiB;
/**
 * The README's bound for these flags above the process's own share: replay windows
 * (`--event-memory-bytes`), histories (4 MiB a session), pending prompts (sessions × the pending
 * limit × the prompt's size) and one agent process's output in flight (65 MiB).
 */
const README_BOUND_MIB =
  (MEMORY_BYTES + SESSIONS * 4 * MiB + SESSIONS * DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION * PROMPT_CHARS) /
    MiB +
  65;
/** The daemon's heap: ~20 MiB idle, the budgets' 19 MiB, a few copies of the prompts in flight. */
const HEAP_MIB = 64;

/** Sends `count` prompts to `sessionId`, one after the other (none pending behind another). */
async function load(url: string, sessionId: string, text: string, count: number): Promise<void> {
  for (let sent = 0; sent < count; sent++) {
    // The test agent answers the last block ("pid") with a few bytes: the prompt's own event
    // (`user_message_chunk`, the whole text) carries the weight.
    const body = {
      prompt: [
        { type: 'text', text: `${sent} ${text}` },
        { type: 'text', text: 'pid' },
      ],
    };
    expect((await api(url, 'POST', `/session/${sessionId}/prompt`, { body })).status).toBe(202);
    await expect
      .poll(async () => (await api(url, 'GET', `/session/${sessionId}/status`)).body.pendingPromptCount, {
        timeout: 20_000,
        interval: 50,
      })
      .toBe(0);
  }
}

test("prompts that would overfill every replay window keep the daemon process's heap and resident memory within the README's bound", async () => {
  const workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-memory-')));
  const sluice = await startSluice(
    [
      '--workspace',
      workspace,
      '--agent',
      `"${process.execPath}" "${TEST_AGENT}"`,
      // The count bound out of the way: it would hide the byte budgets.
      '--event-ring-size',
      '1000000',
      '--event-ring-bytes',
      String(RING_BYTES),
      '--event-memory-bytes',
      String(MEMORY_BYTES),
    ],
    { NODE_OPTIONS: `--max-old-space-size=${HEAP_MIB}` },
  );
  const pid = sluice.child.pid!;
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, memoryMiB(pid).now)), 50);
  try {
    const sessions: string[] = [];
    for (let i = 0; i < SESSIONS; i++) {
      const created = await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } });
      sessions.push(created.body.sessionId);
    }
    // A first turn in each session: the agent process runs and the code every turn needs is loaded.
    await Promise.all(sessions.map((sessionId) => load(sluice.url, sessionId, 'warm-up', 1)));
    const baseline = memoryMiB(pid).now;
    peak = 0;

    await Promise.all(
      sessions.map((sessionId) => load(sluice.url, sessionId, 'w'.repeat(PROMPT_CHARS), PROMPTS)),
    );

    expect(sluice.child.exitCode).toBeNull(); // the heap sufficed
    peak = Math.max(peak, memoryMiB(pid).now);
    // The process's own share is what it held after the warm-up (the README says ~60 MiB).
    expect(
      peak,
      `peak RSS ${peak.toFixed(0)} MiB, ${baseline.toFixed(0)} after the warm-up`,
    ).toBeLessThanOrEqual(baseline + README_BOUND_MIB);
  } finally {
    clearInterval(sampler);
    await sluice.stop('SIGKILL');
  }
});
