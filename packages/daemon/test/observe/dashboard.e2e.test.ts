import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ensureChromium } from '../helpers/debian-package.js';
import { api, openEvents, textPrompt, type EventStream, type SseFrame } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// Issue 20 "Observe": the live dashboard, drawn by a real browser (Debian's chromium, installed
// with apt when missing) against the bundled daemon under load. Every wait is for a condition
// on the page, never a fixed time. The screenshot is kept in .artifacts/dashboard.png.

const ARTIFACTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../.artifacts');
/** The prompts' text: it must appear nowhere on the page. */
const SECRET = 'quokka-marmalade';
const SESSIONS = 3;

let browser: Browser;
let sluice: SluiceProcess;
const streams: EventStream[] = [];
let stopped = false;
let stop: () => void = () => {};
/** Settles when the test is over: the load stops waiting for turns that will not end. */
const stopping = new Promise<void>((resolve) => (stop = resolve));
let load: Promise<void>;

const terminal = (promptId: string) => (f: SseFrame) =>
  (f.event === 'turn_complete' || f.event === 'turn_error') && f.data.promptId === promptId;

/** One session kept busy: three prompts at a time (the third is refused), then their ends. */
async function keepBusy(sessionId: string, stream: EventStream): Promise<void> {
  while (!stopped) {
    const accepted: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(SECRET) });
      if (res.status === 202) accepted.push(res.body.promptId);
    }
    for (const promptId of accepted)
      await Promise.race([stream.waitFor(terminal(promptId), 60_000), stopping]);
  }
}

async function launch(): Promise<Browser> {
  return chromium.launch({
    executablePath: await ensureChromium(),
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking'],
  });
}

beforeAll(async () => {
  browser = await launch();
  sluice = await startSluice([
    '--echo-delay-ms',
    '300',
    '--max-pending-prompts-per-session',
    '2',
    '--model-max-concurrency',
    '2',
    '--drain-timeout-ms',
    '0',
  ]);
  const loops: Array<Promise<void>> = [];
  for (let i = 0; i < SESSIONS; i++) {
    const { sessionId } = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } }))
      .body;
    const stream = await openEvents(sluice.url, sessionId);
    streams.push(stream);
    loops.push(keepBusy(sessionId, stream));
  }
  // The loops end when the daemon stops and their streams end.
  load = Promise.allSettled(loops).then(() => undefined);
}, 20 * 60_000); // the first run installs chromium

afterAll(async () => {
  stopped = true;
  stop();
  await load;
  for (const stream of streams) stream.close();
  await sluice?.stop();
  await browser?.close();
});

/** The little of the DOM the predicates below read; they run in the page, not here. */
interface PageElement {
  textContent: string | null;
  dataset: Record<string, string | undefined>;
  getAttribute(name: string): string | null;
}
declare const document: {
  getElementById(id: string): PageElement | null;
  querySelector(selector: string): PageElement | null;
  querySelectorAll(selector: string): Iterable<PageElement>;
};

/** Waits until `predicate` holds in the page, as the browser polls it on each animation frame. */
async function until(page: Page, predicate: () => boolean, what: string): Promise<void> {
  try {
    await page.waitForFunction(predicate, undefined, { timeout: 30_000 });
  } catch (error) {
    throw new Error(`the dashboard never showed ${what}`, { cause: error });
  }
}

const LIVE = () => document.getElementById('status')?.textContent === 'live';
const SLOT_LIMIT_2 = () => document.getElementById('slots')?.dataset['limit'] === '2';
const BUSY_SESSION = () =>
  [...document.querySelectorAll('[data-testid=session-row]')].some(
    (row) => Number(row.dataset['pending']) > 0,
  );
const QUEUE_FULL_REFUSAL = () =>
  document.querySelector('[data-testid=refusal][data-code=prompt_queue_full]') !== null;
/** At least three seconds drawn, one of them above the baseline (y = 156: turns completed). */
const CHART_WITH_POINTS = () => {
  const line = document.querySelector('#turn-chart polyline[data-kind=completed]');
  const points = (line?.getAttribute('points') ?? '').split(' ').filter((p) => p !== '');
  return points.length >= 3 && points.some((p) => Number(p.split(',')[1]) < 155.5);
};
const JOURNAL_RATE = () => Number(document.getElementById('journal-rate')?.dataset['rate']) > 0;

test('the dashboard draws slots against their limit, busy sessions, prompt_queue_full refusals and a turn chart, without prompt text', async () => {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    await page.goto(`${sluice.url}/dashboard`);
    await until(page, LIVE, 'a live stream');
    await until(page, SLOT_LIMIT_2, 'the slot limit');
    await until(page, BUSY_SESSION, 'a session with pending prompts');
    await until(page, QUEUE_FULL_REFUSAL, 'a prompt_queue_full refusal');
    await until(page, CHART_WITH_POINTS, 'a chart with points');
    await until(page, JOURNAL_RATE, 'a journal rate');

    const slots = page.getByTestId('slots');
    expect(Number(await slots.getAttribute('data-used'))).toBeLessThanOrEqual(2);
    expect(await slots.locator('.count').textContent()).toMatch(/^\d+ \/ 2$/);
    const refusal = page.locator('[data-testid=refusal][data-code=prompt_queue_full]').first();
    expect(await refusal.textContent()).toContain('Prompt queue full for session');
    expect(await page.content()).not.toContain(SECRET);
    mkdirSync(ARTIFACTS, { recursive: true });
    await page.screenshot({ path: join(ARTIFACTS, 'dashboard.png'), fullPage: true });
  } finally {
    await page.close();
  }
}, 90_000);

/** Model `name`'s row, as the page draws it: its slots text and refusals counted. */
const MODEL_ROWS = () => {
  const row = (name: string) => document.querySelector(`[data-testid=model-row][data-model=${name}]`);
  return row('slow')?.dataset['refusals'] === '1' && row('spare')?.dataset['refusals'] === '0';
};
const TOTAL_CAP = () => document.getElementById('total-slots')?.dataset['limit'] === '3';

test("with two [[model]] entries the dashboard shows each model's slots, queue and in-flight calls, and a refusal on the model that refused", async () => {
  const models = [
    { name: 'slow', provider: 'echo', echoDelayMs: 20_000, maxConcurrency: 1, maxQueued: 0 },
    { name: 'spare', provider: 'echo', maxConcurrency: 2 },
  ];
  const catalogue = await startSluice([
    '--models',
    JSON.stringify(models),
    '--model-max-concurrency-total',
    '3',
    '--drain-timeout-ms',
    '0',
  ]);
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const held = new AbortController();
  try {
    const call = (model: string, signal?: AbortSignal) =>
      fetch(`${catalogue.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model, messages: [{ role: 'user', content: SECRET }] }),
        ...(signal === undefined ? {} : { signal }),
      });
    const holding = call('slow', held.signal).catch(() => undefined);
    await expect
      .poll(async () => (await api(catalogue.url, 'GET', '/runtime/snapshot')).body.models[0].executing)
      .toBe(1);
    // The slow model's one slot is taken and it has no queue: the next call to it is refused.
    expect((await call('slow')).status).toBe(429);
    await page.goto(`${catalogue.url}/dashboard`);
    await until(page, LIVE, 'a live stream');
    await until(page, MODEL_ROWS, "each model's row with its refusals");
    await until(page, TOTAL_CAP, 'the total cap');
    const slow = page.locator('[data-testid=model-row][data-model=slow]');
    expect(await slow.getAttribute('data-slots')).toBe('1');
    expect(await slow.locator('td').nth(1).textContent()).toBe('1 / 1');
    expect(await page.getByTestId('total-slots').locator('.count').textContent()).toBe('1 / 3');
    expect(await page.content()).not.toContain(SECRET);
    held.abort();
    await holding;
  } finally {
    await page.close();
    await catalogue.stop();
  }
}, 60_000);

const GUARD_TOKEN = 'dashboard-test-token';

/** Clicks `selector` and waits until the page it leads to has loaded (a new document, not the old one). */
async function submit(page: Page, selector: string): Promise<void> {
  const navigated = page.waitForEvent('framenavigated', { predicate: (frame) => frame === page.mainFrame() });
  await page.click(selector);
  await navigated;
  await page.waitForLoadState('load');
}

/** Fills the sign-in form with `token` and submits it, as a person does. */
async function submitSignIn(page: Page, token: string): Promise<void> {
  await page.fill('input[name=token]', token);
  await submit(page, 'button[type=submit]');
}

test('with a token, the dashboard asks for it, signs the browser in by POST with an expiring cookie and streams; no URL ever holds the token (issue 28 item 3)', async () => {
  const guarded = await startSluice(['--token', GUARD_TOKEN, '--drain-timeout-ms', '0']);
  const page = await browser.newPage();
  const urls: string[] = [];
  page.on('request', (request) => urls.push(request.url()));
  page.on('framenavigated', (frame) => urls.push(frame.url()));
  try {
    const first = await page.goto(`${guarded.url}/dashboard`);
    expect(first?.status()).toBe(401);
    const signIn = page.waitForRequest((request) => request.url().endsWith('/dashboard/sign-in'));
    await submitSignIn(page, GUARD_TOKEN);
    expect((await signIn).method()).toBe('POST');
    expect(page.url()).toBe(`${guarded.url}/dashboard`);
    await until(page, LIVE, 'a live stream');
    const cookies = await page.context().cookies();
    expect(cookies.map((c) => [c.name, c.httpOnly, c.sameSite, c.path])).toEqual([
      ['sluice_dashboard', true, 'Strict', '/dashboard'],
    ]);
    expect(cookies[0]!.value).not.toContain(GUARD_TOKEN);
    const twelveHours = Date.now() / 1000 + 12 * 3600;
    expect(cookies[0]!.expires).toBeGreaterThan(twelveHours - 600);
    expect(cookies[0]!.expires).toBeLessThan(twelveHours + 600);
    expect(urls.length).toBeGreaterThan(3);
    expect(urls.filter((url) => url.includes(GUARD_TOKEN) || url.includes('token='))).toEqual([]);

    // A token typed into the address bar is refused, not traded for a cookie.
    const typed = await page.goto(`${guarded.url}/dashboard?token=${GUARD_TOKEN}`);
    expect(typed?.status()).toBe(400);
    expect(await page.content()).toContain('token_in_url');
    expect(await page.content()).not.toContain(GUARD_TOKEN);
  } finally {
    await page.close();
    await guarded.stop();
  }
}, 60_000);

test('the browser is told a wrong token, signs out with the page button, and a revoke signs every browser out', async () => {
  const guarded = await startSluice(['--token', GUARD_TOKEN, '--drain-timeout-ms', '0']);
  const page = await browser.newPage();
  try {
    await page.goto(`${guarded.url}/dashboard`);
    await submitSignIn(page, 'not-the-token');
    expect(page.url()).toBe(`${guarded.url}/dashboard/sign-in`);
    expect(await page.textContent('[role=status]')).toContain('That is not this daemon’s token');
    expect(page.url()).not.toContain('token');
    await submitSignIn(page, GUARD_TOKEN);
    await until(page, LIVE, 'a live stream');

    await submit(page, '#sign-out button');
    expect(page.url()).toBe(`${guarded.url}/dashboard`);
    expect(await page.context().cookies()).toEqual([]);
    expect(await page.locator('input[name=token]').count()).toBe(1);

    await submitSignIn(page, GUARD_TOKEN);
    await until(page, LIVE, 'a live stream');
    const revoked = await api(guarded.url, 'POST', '/dashboard/revoke', {
      headers: { authorization: `Bearer ${GUARD_TOKEN}` },
    });
    expect(revoked.status).toBe(204);
    const reloaded = await page.reload();
    expect(reloaded?.status()).toBe(401);
    expect(await page.locator('input[name=token]').count()).toBe(1);
  } finally {
    await page.close();
    await guarded.stop();
  }
}, 60_000);
