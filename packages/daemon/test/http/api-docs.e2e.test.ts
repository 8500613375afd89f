import { chromium, type Browser } from 'playwright-core';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { ensureChromium } from '../helpers/debian-package.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// Issue 30 item 4: `/docs`, the API reference for people, drawn by a real browser (Debian's
// chromium) from the bundled daemon: every operation of `/openapi.json` is on the page, with its
// example, and the page fetches nothing past the daemon (no CDN), under its own CSP.

type Document = { paths: Record<string, Record<string, { operationId: string }>> };

/** The little of the DOM the page-side functions below read. */
interface PageElement {
  textContent: string | null;
}
declare const document: { querySelectorAll(selector: string): Iterable<PageElement> };

let browser: Browser;
let sluice: SluiceProcess;

beforeAll(async () => {
  browser = await chromium.launch({
    executablePath: await ensureChromium(),
    headless: true,
    args: ['--no-sandbox', '--disable-background-networking'],
  });
  sluice = await startSluice();
}, 20 * 60_000); // the first run installs chromium

afterAll(async () => {
  await sluice?.stop();
  await browser?.close();
});

test('/docs shows every operation of /openapi.json and fetches nothing past the daemon', async () => {
  const spec = (await (await fetch(`${sluice.url}/openapi.json`)).json()) as Document;
  const operationIds = Object.values(spec.paths).flatMap((methods) =>
    Object.values(methods).map((operation) => operation.operationId),
  );
  const page = await browser.newPage();
  const requested: string[] = [];
  const problems: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  page.on('pageerror', (error) => problems.push(error.message));
  page.on('console', (message) => {
    // A CSP refusal or a failed load is a console error.
    if (message.type() === 'error') problems.push(message.text());
  });
  try {
    const answer = await page.goto(`${sluice.url}/docs`);
    expect(answer?.status()).toBe(200);
    await page.waitForFunction(
      (count) => [...document.querySelectorAll('.opblock-summary-operation-id')].length === count,
      operationIds.length,
      { timeout: 30_000 },
    );
    const shown = await page.$$eval('.opblock-summary-operation-id', (ids) =>
      ids.map((id) => id.textContent),
    );
    expect(shown.sort()).toEqual([...operationIds].sort());

    // An operation opened shows its example answer (POST /session's, from the route description).
    await page.click('#operations-sessions-post_session .opblock-summary');
    await page.waitForFunction(
      () =>
        [...document.querySelectorAll('#operations-sessions-post_session .microlight')].some((code) =>
          (code.textContent ?? '').includes('alice-laptop'),
        ),
      undefined,
      { timeout: 30_000 },
    );
  } finally {
    await page.close();
  }
  const origin = new URL(sluice.url).origin;
  expect(requested.filter((url) => !url.startsWith('data:') && new URL(url).origin !== origin)).toEqual([]);
  expect(requested).toContain(`${origin}/docs/swagger-ui-bundle.js`);
  expect(problems).toEqual([]);
}, 120_000);

test('/docs and its files need the bearer token, as /openapi.json does', async () => {
  const token = 'docs-test-token-0123456789abcdef';
  const guarded = await startSluice(['--token', token]);
  try {
    for (const path of ['/openapi.json', '/docs', '/docs/start.js', '/docs/swagger-ui-bundle.js']) {
      expect((await fetch(`${guarded.url}${path}`)).status, `${path} without the token`).toBe(401);
      const answer = await fetch(`${guarded.url}${path}`, { headers: { Authorization: `Bearer ${token}` } });
      expect(answer.status, `${path} with the token`).toBe(200);
    }
  } finally {
    await guarded.stop();
  }
}, 60_000);
