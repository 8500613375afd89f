import { expect, test } from 'vitest';
import { api, textPrompt } from '../helpers/http-client.js';
import { logLines, waitForLogLine } from '../helpers/log-lines.js';
import { startSluice } from '../helpers/sluice-process.js';

const SECRET_PROMPT = 'the-prompt-text-never-logged';
const QUERY_TOKEN = 'query-token-never-logged';

test('at --log-level debug every request is one JSON line with its route pattern, never its body or query', async () => {
  const sluice = await startSluice(['--log-level', 'debug']);
  let sessionId: string;
  try {
    sessionId = (await api(sluice.url, 'POST', '/session', { body: {} })).body.sessionId as string;
    const prompt = await api(sluice.url, 'POST', `/session/${sessionId}/prompt`, {
      body: textPrompt(SECRET_PROMPT),
    });
    expect(prompt.status).toBe(202);
    expect((await api(sluice.url, 'GET', `/capabilities?token=${QUERY_TOKEN}`)).status).toBe(200);
    expect((await api(sluice.url, 'GET', `/no-such-route?token=${QUERY_TOKEN}`)).status).toBe(404);
    await waitForLogLine(sluice.stderr, (line) => line['status'] === 404);
  } finally {
    expect(await sluice.stop()).toBe(0);
  }
  // Every line on stderr is JSON (logLines throws otherwise), the drain notice included.
  const lines = logLines(sluice.stderr());
  expect(lines.some((line) => line['msg'] === 'SIGTERM, draining')).toBe(true);
  const requests = lines.filter((line) => line['msg'] === 'request');
  expect(requests.map(({ method, route, status }) => ({ method, route, status }))).toEqual([
    { method: 'POST', route: '/session', status: 200 },
    { method: 'POST', route: '/session/:id/prompt', status: 202 },
    { method: 'GET', route: '/capabilities', status: 200 },
    { method: 'GET', route: null, status: 404 },
  ]);
  expect(requests[1]).toMatchObject({ level: 20, sessionId: sessionId! });
  for (const line of requests) expect(typeof line['durationMs']).toBe('number');
  expect(sluice.stderr()).not.toContain(SECRET_PROMPT);
  expect(sluice.stderr()).not.toContain(QUERY_TOKEN);
});

test('at the default level no request is logged', async () => {
  const sluice = await startSluice([], { SLUICE_LOG_LEVEL: 'info' });
  try {
    expect((await api(sluice.url, 'GET', '/capabilities')).status).toBe(200);
    await waitForLogLine(sluice.stderr, (line) => line['msg'] === 'journal recovered');
  } finally {
    expect(await sluice.stop()).toBe(0);
  }
  expect(logLines(sluice.stderr()).filter((line) => line['msg'] === 'request')).toEqual([]);
});
