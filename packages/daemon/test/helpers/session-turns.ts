import { expect } from 'vitest';
import { api, textPrompt } from './http-client.js';

/**
 * Runs `texts` as prompts, one after the other, on a new thread session; returns its id. Each
 * turn may take 10 s (expect.poll's default second is short on a loaded machine).
 */
export async function sessionWithTurns(url: string, texts: readonly string[]): Promise<string> {
  const sessionId = (await api(url, 'POST', '/session', { body: { sessionScope: 'thread' } })).body
    .sessionId as string;
  for (const text of texts) {
    const sent = await api(url, 'POST', `/session/${sessionId}/prompt`, { body: textPrompt(text) });
    expect(sent.status).toBe(202);
    await expect
      .poll(async () => (await api(url, 'GET', `/session/${sessionId}/status`)).body.pendingPromptCount, {
        timeout: 10_000,
      })
      .toBe(0);
  }
  return sessionId;
}
