import { DaemonClient } from '@sluice/sdk';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test, vi } from 'vitest';
import { api } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';
import { traceTasks, type PageTask } from './page-tasks.js';
import { launchChromium, recordFrames, watchProblems } from './web-page.js';

// Issue 31 item 5, "long sessions stay smooth (1,000 messages)": a real Chromium follows one
// session of the bundled daemon (the echo model) while 500 prompts, posted 4 at a time, bring
// 1,000 messages, the answers rendered as markdown; and opens a session that has them. Frame
// times are requestAnimationFrame intervals in the page; the work done in one go is the CPU
// time of the page's longest main-thread task (Chromium's trace). The bounds are looser than
// the targets the bench shows (p95 ≤ 33 ms, no frame over 100 ms, the last message within 1 s:
// BENCHMARKS.md, "The web client") so a loaded CI machine meets them; the task bound is the one
// the page before this work failed on every run.

const PROMPTS = 500;
/**
 * The p95 frame interval allowed: twelve 60 Hz frames, with room for the timer's jitter (frames
 * come in steps of 16.7 ms). Only a gross stall fails it: frames are wall time, and the suite
 * runs another test file beside this one on 2 cores (at load 6–8 this page measured 50–83 ms,
 * the one before it 100–167 ms; 33.4 ms in the bench on a quiet machine). The CPU bound of a
 * task below is what separates this page from the one before it.
 */
const TWELVE_VSYNCS_MS = 205;
/**
 * The CPU time one main-thread task may take: the work the page does in one go, which a loaded
 * machine stretches far less than wall time. Measured at load 4–8: this page 37–45 ms, the one
 * before it 124–165 ms (a burst of messages, or a history, drawn in one frame).
 */
const TASK_CPU_MS = 75;
const AT_ONCE = 4;
const TEXT = 'Summarise the **design** of the bounded scheduler, with `code` and a list:\n\n- one\n- two';

let browser: Browser;
let sluice: SluiceProcess;

beforeAll(async () => {
  browser = await launchChromium();
  sluice = await startSluice(['--max-pending-prompts-per-session', String(PROMPTS)]);
}, 20 * 60_000); // the first run installs chromium

afterAll(async () => {
  await sluice?.stop();
  await browser?.close();
});

/** The quantile `q` of `values`. */
const quantile = (values: number[], q: number): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? NaN;

/** Posts `total` prompts, `AT_ONCE` at a time; the id of the last one posted (it ends last: FIFO). */
async function postPrompts(sessionId: string, total: number): Promise<string> {
  let posted = 0;
  let last = '';
  const worker = async (): Promise<void> => {
    while (posted < total) {
      posted++;
      const response = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
        body: { prompt: [{ type: 'text', text: TEXT }] },
      });
      expect(response.status).toBe(202);
      last = response.body.promptId;
    }
  };
  await Promise.all(Array.from({ length: AT_ONCE }, worker));
  return last;
}

/** When (performance.now()) a second subscriber, in this process, saw each turn end, by prompt id. */
function turnEnds(client: DaemonClient, sessionId: string, signal: AbortSignal): Map<string, number> {
  const ends = new Map<string, number>();
  void (async () => {
    for await (const event of client.subscribeEvents(sessionId, { lastEventId: 0, signal }))
      if (event.type === 'turn_complete' && event.promptId !== undefined)
        ends.set(event.promptId, performance.now());
  })().catch(() => {}); // ends with the abort
  return ends;
}

/** A new session, a client of it, a desktop-sized browser context and the abort for the test's streams. */
async function freshSession(): Promise<{
  client: DaemonClient;
  sessionId: string;
  context: BrowserContext;
  abort: AbortController;
}> {
  const client = new DaemonClient({ baseUrl: sluice.url });
  const { sessionId } = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } }))
    .body;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  return { client, sessionId, context, abort: new AbortController() };
}

/** The task that took the most CPU time. */
const longestTask = (tasks: PageTask[]): PageTask => tasks.reduce((a, b) => (b.cpuMs > a.cpuMs ? b : a));

/** Whether the conversation's last row is shown, at the bottom of its scroller. */
async function lastRowShown(page: Page): Promise<boolean> {
  const list = await page.getByTestId('items').boundingBox();
  const row = await page.locator('.items-content > :last-child').boundingBox();
  if (list === null || row === null) return false;
  return row.y >= list.y && row.y + row.height <= list.y + list.height + 1;
}

describe('issue 31: a long session in Chromium', { timeout: 180_000 }, () => {
  test('while 1,000 messages stream in, frames stay short and the page keeps up with the stream', async () => {
    const { client, sessionId, context, abort } = await freshSession();
    try {
      const page = await context.newPage();
      const problems = watchProblems(page);
      await page.goto(`${sluice.url}/#${sessionId}`);
      await page.getByTestId('link').filter({ hasText: 'live' }).waitFor();
      const ends = turnEnds(client, sessionId, abort.signal);
      const trace = await traceTasks(page);
      const frames = await recordFrames(page);
      const last = await postPrompts(sessionId, PROMPTS);
      await page.locator(`[data-testid=turn-end][data-prompt-id="${last}"]`).waitFor({
        state: 'attached',
        timeout: 60_000,
      });
      const shown = performance.now();
      const intervals = await frames.stop();
      const longest = longestTask(await trace.stop());
      await expect.poll(() => ends.has(last), { timeout: 10_000 }).toBe(true);
      const lagMs = shown - ends.get(last)!;

      expect(intervals.length).toBeGreaterThan(100);
      expect(longest.cpuMs, `the longest task (${longest.wallMs} ms wall)`).toBeLessThanOrEqual(TASK_CPU_MS);
      expect(quantile(intervals, 0.95), `p95 of ${intervals.length} frames`).toBeLessThanOrEqual(
        TWELVE_VSYNCS_MS,
      );
      expect(lagMs, 'the last message shown after the stream’s end').toBeLessThanOrEqual(3_000);
      // Every drawn answer is markdown (none left waiting for its frame), the newest ones drawn.
      await expect.poll(() => page.locator('[data-pending]').count(), { timeout: 5_000 }).toBe(0);
      await expect(
        page.getByTestId('agent-message').last().locator('.md strong').textContent(),
      ).resolves.toBe('design');
      // 1,500 items (a question, an answer, a turn's end each): the newest 300 or so drawn, the
      // earlier ones a click away.
      const rows = page.locator('.items-content > :not(.earlier)');
      expect(await rows.count()).toBe(300);
      // Two clean-clone CI runs (two test files at once on 2 cores) saw a first click leave 300
      // rows for 10 s, cause not found yet (see the closing note of 2026-12-03): the click is
      // tried again if the rows did not grow, and the earlier rows must come.
      const earlier = page.getByRole('button', { name: /^Show 300 earlier of/ });
      await vi.waitFor(
        async () => {
          if ((await rows.count()) < 600) await earlier.click({ timeout: 2_000 });
          await expect.poll(() => rows.count(), { timeout: 3_000 }).toBeGreaterThanOrEqual(600);
        },
        { timeout: 20_000, interval: 100 },
      );
      expect(problems).toEqual([]);
    } finally {
      abort.abort();
      await context.close();
    }
  });

  test('opening a session of 1,000 messages draws the newest first, with no long task', async () => {
    const { client, sessionId, context, abort } = await freshSession();
    try {
      const ends = turnEnds(client, sessionId, abort.signal);
      const last = await postPrompts(sessionId, PROMPTS);
      await expect.poll(() => ends.has(last), { timeout: 60_000 }).toBe(true);
      const page = await context.newPage();
      const problems = watchProblems(page);
      await page.goto(`${sluice.url}/`);
      const row = page.locator(`[data-testid=session-row][data-session-id="${sessionId}"] button.open`);
      const trace = await traceTasks(page);
      await row.click();
      await page.locator(`[data-testid=turn-end][data-prompt-id="${last}"]`).waitFor({ state: 'attached' });
      const rows = page.locator('.items-content > :not(.earlier)');
      await expect.poll(() => rows.count(), { timeout: 10_000 }).toBe(300);
      await expect.poll(() => page.locator('[data-pending]').count(), { timeout: 10_000 }).toBe(0);
      const tasks = await trace.stop();

      const longest = longestTask(tasks);
      expect(longest.cpuMs, `the longest task (${longest.wallMs} ms wall)`).toBeLessThanOrEqual(TASK_CPU_MS);
      expect(await lastRowShown(page)).toBe(true);
      expect(problems).toEqual([]);
    } finally {
      abort.abort();
      await context.close();
    }
  });
});
