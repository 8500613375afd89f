import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { expect } from 'vitest';
import { ensureChromium } from '../helpers/debian-package.js';

// What the web client's browser tests share: Debian's Chromium, signing in through the page's
// own form, opening a session by the page's buttons, and reading what the page shows.

/** Where screenshots are kept (gitignored). */
export const ARTIFACTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../.artifacts');

/** A headless Chromium, installed with apt when missing. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: await ensureChromium(),
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}

/** Content-Security-Policy violations and page errors, collected for a test to assert none. */
export function watchProblems(page: Page): string[] {
  const problems: string[] = [];
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/.test(message.text()))
      problems.push(message.text());
  });
  return problems;
}

/**
 * Opens `/` and, unless the context already holds the cookie, signs in with the form (the token
 * is typed, never put in a URL); waits for the app.
 */
export async function signInPage(context: BrowserContext, baseUrl: string, token: string): Promise<Page> {
  const page = await context.newPage();
  const response = await page.goto(`${baseUrl}/`);
  if (response?.status() === 401) {
    await page.fill('input[name=token]', token);
    await page.click('button[type=submit]');
  }
  await page.getByTestId('new-session').waitFor();
  return page;
}

/**
 * Creates a session with the page's button; its id (the page names it in its URL's hash). An
 * agent that starts slowly gets `timeout`; a refusal the page shows fails with its text.
 */
export async function newSession(page: Page, timeout = 30_000): Promise<string> {
  await page.getByTestId('new-session').click();
  await page.locator('[data-testid=prompt], .problem').first().waitFor({ timeout });
  const problem = page.locator('.problem');
  if ((await problem.count()) > 0) throw new Error(`the page refused: ${await problem.textContent()}`);
  await expect.poll(() => new URL(page.url()).hash.length, { timeout: 10_000 }).toBeGreaterThan(1);
  await page.getByTestId('link').filter({ hasText: 'live' }).waitFor();
  return new URL(page.url()).hash.slice(1);
}

/** Types `text` in the prompt box and sends it. */
export async function send(page: Page, text: string): Promise<void> {
  await page.getByTestId('prompt').fill(text);
  await page.getByTestId('send').click();
}

/** The text of the page's agent messages, joined. */
export async function agentText(page: Page): Promise<string> {
  return (await page.getByTestId('agent-message').locator('.md').allTextContents()).join('');
}

/** axe-core's source, injected into a page to audit it. */
export function axeSource(): string {
  const require = createRequire(import.meta.url);
  return readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
}

/** What `recordFrames` uses of the page's global scope (the tests compile without the DOM library). */
interface FramesScope {
  requestAnimationFrame(callback: (now: number) => void): number;
  stopFrames(): number[];
}

/** requestAnimationFrame intervals (ms) recorded in `page` from now until `stop()` returns them. */
export async function recordFrames(page: Page): Promise<{ stop(): Promise<number[]> }> {
  await page.evaluate(() => {
    const scope = globalThis as unknown as FramesScope;
    const frames: number[] = [];
    let last = performance.now();
    let on = true;
    const tick = (now: number): void => {
      frames.push(now - last);
      last = now;
      if (on) scope.requestAnimationFrame(tick);
    };
    scope.requestAnimationFrame(tick);
    scope.stopFrames = () => ((on = false), frames);
  });
  return { stop: () => page.evaluate(() => (globalThis as unknown as FramesScope).stopFrames()) };
}
