import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { TEST_AGENT } from '../agents/acp-helpers.js';
import { api } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';
import { CuttingProxy } from './cutting-proxy.js';
import {
  ARTIFACTS,
  agentText,
  axeSource,
  launchChromium,
  newSession,
  send,
  signInPage,
  watchProblems,
} from './web-page.js';

// Issue 31's acceptance, as a person uses the page: a real Chromium signs in to the bundled
// daemon, whose sessions run the ACP test agent (a real child process) so a test can make an
// answer slow, hold a prompt, or ask for permission. Every wait is for something on the page.

const TOKEN = 'web-client-e2e-token';
const bearer = { authorization: `Bearer ${TOKEN}` };
const WORDS = 50;
const expected = Array.from({ length: WORDS }, (_, i) => `w${i}`).join(' ');

let browser: Browser;
let sluice: SluiceProcess;
let context: BrowserContext;
let workspace: string;

beforeAll(async () => {
  browser = await launchChromium();
  sluice = await startSluice([
    '--token',
    TOKEN,
    '--agent',
    `test="${process.execPath}" "${TEST_AGENT}"`,
    '--drain-timeout-ms',
    '0',
  ]);
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  workspace = (await api(sluice.url, 'GET', '/capabilities', { headers: bearer })).body.workspaceCwd;
}, 20 * 60_000); // the first run installs chromium

afterAll(async () => {
  await context?.close();
  await sluice?.stop();
  await browser?.close();
});

describe('issue 31: the web client in Chromium', { timeout: 90_000 }, () => {
  test('the SSE connection is cut mid-answer: the page resumes, and the final text equals the agent’s', async () => {
    const proxy = new CuttingProxy(sluice.port);
    await proxy.start();
    try {
      const page = await signInPage(context, proxy.url, TOKEN);
      const problems = watchProblems(page);
      await newSession(page);
      await send(page, `slow ${WORDS} 40`);
      await expect.poll(() => agentText(page), { timeout: 10_000 }).toMatch(/w5 /);
      expect(proxy.cut()).toBeGreaterThan(0);
      await page.getByTestId('link').filter({ hasText: 'reconnecting' }).waitFor();
      await page.getByTestId('link').filter({ hasText: 'live' }).waitFor();
      await page.getByTestId('turn-end').waitFor({ timeout: 30_000 });
      expect((await agentText(page)).trim()).toBe(expected);
      expect(await page.getByTestId('agent-message').count()).toBe(1);
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      await proxy.stop();
    }
  });

  test('model output is markdown, and HTML in it is shown as text, never run', async () => {
    const page = await signInPage(context, sluice.url, TOKEN);
    const problems = watchProblems(page);
    await newSession(page);
    await send(page, 'say **bold** <img src=x onerror="window.pwned=1"> <script>window.pwned=2</script>');
    await page.getByTestId('turn-end').waitFor();
    const message = page.getByTestId('agent-message');
    expect(await message.locator('strong').textContent()).toBe('bold');
    expect(await message.locator('img, script').count()).toBe(0);
    expect(await message.textContent()).toContain('<img src=x');
    expect(await page.evaluate(() => (globalThis as { pwned?: number }).pwned)).toBeUndefined();
    expect(problems).toEqual([]);
    await page.close();
  });

  test('six prompts sent quickly: five accepted, the sixth shows the Retry-After countdown and keeps its text', async () => {
    const page = await signInPage(context, sluice.url, TOKEN);
    await newSession(page);
    for (let i = 1; i <= 5; i++) {
      await send(page, `wait ${i}`);
      await expect.poll(() => page.getByTestId('prompt').inputValue()).toBe('');
    }
    await expect.poll(() => page.getByTestId('pending').textContent()).toBe('5 / 5 pending');
    await send(page, 'wait 6: the sixth');
    const refusal = page.getByTestId('refusal');
    await refusal.waitFor();
    expect(await refusal.textContent()).toContain('queue is full');
    expect(Number(await page.getByTestId('countdown').textContent())).toBeGreaterThanOrEqual(1);
    expect(await page.getByTestId('prompt').inputValue()).toBe('wait 6: the sixth');
    expect(await page.getByTestId('send').isDisabled()).toBe(true);
    // Cancel the running prompt: the queue moves and the count goes down.
    await page.getByRole('button', { name: 'Cancel running' }).click();
    await expect
      .poll(() => page.getByTestId('pending').textContent(), { timeout: 10_000 })
      .toBe('4 / 5 pending');
    await page.close();
  });

  test('two pages on one session: both see the request, a vote in one resolves it in the other', async () => {
    const first = await signInPage(context, sluice.url, TOKEN);
    const sessionId = await newSession(first);
    const second = await context.newPage();
    await second.goto(`${sluice.url}/#${sessionId}`);
    await second.getByTestId('link').filter({ hasText: 'live' }).waitFor();
    await send(first, 'ask');
    await first.getByTestId('permission').waitFor();
    await second.getByTestId('permission').waitFor();
    await second.getByRole('button', { name: 'Allow' }).click();
    for (const page of [first, second]) {
      expect(await page.getByTestId('permission-resolved').textContent({ timeout: 10_000 })).toContain(
        'Allow',
      );
      await page.getByTestId('turn-end').waitFor();
      expect((await agentText(page)).trim()).toBe('outcome:allow');
    }
    await first.close();
    await second.close();
  });

  test('sessions: newest first, branch, close, and delete only after the confirmation', async () => {
    const page = await signInPage(context, sluice.url, TOKEN);
    const first = await newSession(page);
    await send(page, 'say hello there');
    await page.getByTestId('turn-end').waitFor();
    const row = (id: string) => page.locator(`[data-testid=session-row][data-session-id="${id}"]`);
    await row(first)
      .getByRole('button', { name: /^Branch/ })
      .click();
    await expect.poll(() => new URL(page.url()).hash.slice(1)).not.toBe(first);
    const branch = new URL(page.url()).hash.slice(1);
    await expect
      .poll(async () => (await page.getByTestId('session-row').first().getAttribute('data-session-id')) ?? '')
      .toBe(branch);
    const status = async (id: string) =>
      (await api(sluice.url, 'GET', `/session/${id}/status`, { headers: bearer })).status;
    await row(first)
      .getByRole('button', { name: /^Close/ })
      .click();
    await expect.poll(() => status(first)).toBe(404);
    await expect.poll(() => row(first).textContent()).toContain('stored');
    await row(first)
      .getByRole('button', { name: /^Delete/ })
      .click();
    await page.getByRole('button', { name: 'Keep it' }).click();
    expect(await row(first).count()).toBe(1);
    await row(first)
      .getByRole('button', { name: /^Delete/ })
      .click();
    await page.getByTestId('purge-confirm').click();
    await expect.poll(() => row(first).count()).toBe(0);
    const listed = await api(sluice.url, 'GET', `/workspace/${encodeURIComponent(workspace)}/sessions`, {
      headers: bearer,
    });
    expect(listed.body.sessions.map((s: { sessionId: string }) => s.sessionId)).not.toContain(first);
    await page.close();
  });

  test('axe-core finds no serious or critical violation; screenshots at desktop and phone width', async () => {
    // axe is injected by the test harness (CDP), which the page's CSP rightly would refuse.
    const audit = await browser.newContext({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
    try {
      const page = await signInPage(audit, sluice.url, TOKEN);
      await newSession(page);
      await send(page, 'say Here is **markdown** with `code`');
      await page.getByTestId('turn-end').waitFor();
      await send(page, 'ask');
      await page.getByTestId('permission').waitFor();
      await page.evaluate(axeSource());
      const violations = await page.evaluate(async () => {
        const axe = (
          globalThis as unknown as {
            axe: { run(): Promise<{ violations: Array<{ id: string; impact: string; nodes: unknown[] }> }> };
          }
        ).axe;
        const result = await axe.run();
        return result.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length }));
      });
      expect(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical')).toEqual([]);
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'web-desktop.png') });
      await page.setViewportSize({ width: 390, height: 844 });
      await page.screenshot({ path: join(ARTIFACTS, 'web-phone.png'), fullPage: true });
      // Keyboard: the prompt box is reachable and sends with Ctrl+Enter.
      await page.getByRole('button', { name: 'Allow' }).click();
      await page.getByTestId('prompt').focus();
      await page.keyboard.type('say typed');
      await page.keyboard.press('Control+Enter');
      await expect.poll(() => agentText(page), { timeout: 10_000 }).toContain('typed');
    } finally {
      await audit.close();
    }
  });
});
