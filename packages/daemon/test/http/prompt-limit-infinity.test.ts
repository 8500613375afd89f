import { describe, expect, test } from 'vitest';
import { api, textPrompt } from '../helpers/http-client.js';
import { startInProcess } from '../helpers/in-process-daemon.js';

// SPEC BP-2 / the German seed: "0 oder Infinity bedeutet unbegrenzt" — a host that starts the
// daemon with `maxPendingPromptsPerSession: Infinity` gets an unlimited queue, not a refusal.
describe('BP-2 maxPendingPromptsPerSession: Infinity at daemon start', () => {
  test('the daemon starts, advertises null and admits more than the default 5 prompts', async () => {
    const sluice = await startInProcess({ maxPendingPromptsPerSession: Infinity, echoDelayMs: 60_000 });
    try {
      const caps = await api(sluice.url, 'GET', '/capabilities');
      expect(caps.body.limits.maxPendingPromptsPerSession).toBeNull();
      const { sessionId } = (await api(sluice.url, 'POST', '/session', { body: { sessionScope: 'thread' } }))
        .body;
      for (let i = 0; i < 8; i++) {
        const res = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
          body: textPrompt(`p${i}`),
        });
        expect(res.status).toBe(202);
      }
    } finally {
      await sluice.stop();
    }
  });
});
