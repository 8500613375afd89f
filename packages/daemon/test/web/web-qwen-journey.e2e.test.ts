import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { createQwenHome, installQwenAgent } from '../../../../scripts/qwen-agent.js';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { qwenScript } from '../helpers/qwen-upstream.js';
import { startQwenSluice } from '../helpers/qwen-sluice.js';
import type { SluiceProcess } from '../helpers/sluice-process.js';
import { ARTIFACTS, launchChromium, newSession, send, signInPage, watchProblems } from './web-page.js';

// Issue 31's full journey, with the real qwen agent (@qwen-code/qwen-code, as the agent tests
// install it) behind the daemon's model gateway and a scripted OpenAI upstream: a person signs
// in, creates a session, asks for a file edit, approves the permission, sees the diff and the
// turn end, reloads the page and finds the conversation again.

const MODEL = 'fake-qwen-model';
const TOKEN = 'web-qwen-journey-token';
let upstream: FakeOpenAIServer;
let sluice: SluiceProcess;
let browser: Browser;
let home: string;
let workspace: string;

beforeAll(async () => {
  const agent = await installQwenAgent();
  upstream = await startFakeOpenAIServer({ reply: qwenScript });
  home = createQwenHome({ model: MODEL });
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-web-qwen-')));
  sluice = await startQwenSluice({ workspace, agent: agent.command, home, model: MODEL, upstream }, [
    '--token',
    TOKEN,
    // qwen takes seconds to start on a busy machine; the default 10 s is for a quiet one.
    '--agent-start-timeout-ms',
    '90000',
  ]);
  browser = await launchChromium();
}, 20 * 60_000);

afterAll(async () => {
  await browser?.close();
  await sluice?.stop();
  await upstream?.close();
  for (const dir of [home, workspace]) if (dir) rmSync(dir, { recursive: true, force: true });
});

test(
  'sign in, create a session, ask for a file edit, approve it, see the diff and turn_complete, reload and find the history',
  { timeout: 240_000 },
  async () => {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    try {
      const page = await signInPage(context, sluice.url, TOKEN);
      const problems = watchProblems(page);
      await expect.poll(() => page.locator('#workspace').inputValue()).toBe(workspace);
      const sessionId = await newSession(page, 120_000);
      const file = join(workspace, 'notes.txt');
      await send(page, `Please write my notes [write ${file}]`);

      const permission = page.getByTestId('permission');
      await permission.waitFor({ timeout: 120_000 });
      await permission.locator('button.allow').first().click();
      await page.getByTestId('permission-resolved').waitFor();
      const ends = page.getByTestId('turn-end');
      await ends.first().waitFor({ timeout: 120_000 });
      expect(await ends.first().textContent()).toContain('turn complete');
      const diff = page.getByTestId('diff').first();
      await diff.waitFor();
      expect(await diff.textContent()).toContain('written by qwen');
      expect(readFileSync(file, 'utf8')).toBe('written by qwen\n');
      mkdirSync(ARTIFACTS, { recursive: true });
      await page.screenshot({ path: join(ARTIFACTS, 'web-qwen-journey.png'), fullPage: true });

      await page.reload();
      await page.getByTestId('link').filter({ hasText: 'live' }).waitFor();
      expect(new URL(page.url()).hash).toBe(`#${sessionId}`);
      await page.getByTestId('turn-end').first().waitFor();
      expect(await page.getByTestId('user-message').first().textContent()).toContain('Please write my notes');
      expect(await page.getByTestId('diff').first().textContent()).toContain('written by qwen');
      expect(await page.getByTestId('permission-resolved').count()).toBe(1);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
    }
  },
);
