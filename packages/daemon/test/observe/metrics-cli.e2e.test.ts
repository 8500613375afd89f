import { expect, test } from 'vitest';
import { api, openEvents, textPrompt } from '../helpers/http-client.js';
import { Scrape } from '../helpers/prometheus-text.js';
import { startSluice } from '../helpers/sluice-process.js';

// `sluice serve` keeps metrics by default (prom-client loaded from its own chunk of the bundle on
// the first scrape); `--no-metrics` serves neither /metrics nor /dashboard.

test('sluice serve answers /metrics by default, counting what it served', async () => {
  const sluice = await startSluice();
  try {
    const { sessionId } = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } }))
      .body;
    const events = await openEvents(sluice.url, sessionId);
    const accepted = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt('hi'),
    });
    await events.waitFor((f) => f.event === 'turn_complete' && f.data.promptId === accepted.body.promptId);
    events.close();
    const res = await api(sluice.url, 'GET', '/metrics');
    expect(res.status).toBe(200);
    const scrape = new Scrape(res.text);
    expect(scrape.value('sluice_prompts_admitted_total')).toBe(1);
    expect(scrape.value('sluice_turns_total', { outcome: 'completed', code: 'end_turn' })).toBe(1);
    expect(scrape.value('nodejs_heap_size_used_bytes')).toBeGreaterThan(0);
    expect((await api(sluice.url, 'GET', '/dashboard')).status).toBe(200);
  } finally {
    await sluice.stop();
  }
});

test('sluice serve --no-metrics serves neither /metrics nor /dashboard', async () => {
  const sluice = await startSluice(['--no-metrics']);
  try {
    expect((await api(sluice.url, 'GET', '/metrics')).status).toBe(404);
    expect((await api(sluice.url, 'GET', '/dashboard')).status).toBe(404);
    expect((await api(sluice.url, 'GET', '/health')).status).toBe(200);
  } finally {
    await sluice.stop();
  }
});
