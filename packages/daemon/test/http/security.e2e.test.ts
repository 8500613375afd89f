import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { api } from '../helpers/http-client.js';
import { generatedToken } from '../helpers/log-lines.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

const TOKEN = 'correct-horse-battery-staple';
const ALLOWED = 'https://app.example.com';
let sluice: SluiceProcess;
let base: string;
const auth = { authorization: `Bearer ${TOKEN}` };

beforeAll(async () => {
  sluice = await startSluice(['--token', TOKEN, '--allow-origin', ALLOWED]);
  base = sluice.url;
});

afterAll(async () => {
  await sluice?.stop();
});

describe('§2 security gates', () => {
  test('Host allowlist: a foreign Host → 403 Invalid Host header; loopback names with the port pass', async () => {
    const evil = await api(base, 'GET', '/capabilities', {
      headers: { ...auth, host: `evil.example:${sluice.port}` },
    });
    expect(evil.status).toBe(403);
    expect(evil.body).toEqual({ error: 'Invalid Host header' });
    const noPort = await api(base, 'GET', '/capabilities', { headers: { ...auth, host: 'localhost' } });
    expect(noPort.status).toBe(403);
    for (const host of [`localhost:${sluice.port}`, `127.0.0.1:${sluice.port}`, `[::1]:${sluice.port}`]) {
      const ok = await api(base, 'GET', '/capabilities', { headers: { ...auth, host } });
      expect(ok.status, host).toBe(200);
    }
  });

  test('the Host gate runs before auth', async () => {
    const res = await api(base, 'GET', '/capabilities', { headers: { host: `evil.example:${sluice.port}` } });
    expect(res.status).toBe(403);
  });

  test('Origin: foreign and null origins → 403 CORS; own and allowed origins get CORS headers', async () => {
    for (const origin of ['https://evil.example', 'null']) {
      const res = await api(base, 'GET', '/capabilities', { headers: { ...auth, origin } });
      expect(res.status, origin).toBe(403);
      expect(res.body).toEqual({ error: 'Request denied by CORS policy' });
    }
    const own = await api(base, 'GET', '/capabilities', {
      headers: { ...auth, origin: `http://127.0.0.1:${sluice.port}` },
    });
    expect(own.status).toBe(200);
    const allowed = await api(base, 'GET', '/capabilities', { headers: { ...auth, origin: ALLOWED } });
    expect(allowed.status).toBe(200);
    expect(allowed.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(allowed.headers['access-control-expose-headers']).toBe(
      'Retry-After, X-Qwen-Event-Epoch, X-Qwen-SSE-Stream-Id, Acp-Connection-Id',
    );
  });

  test('preflight OPTIONS → 204 with allow headers, without a token', async () => {
    const res = await api(base, 'OPTIONS', '/session', {
      headers: { origin: ALLOWED, 'access-control-request-method': 'POST' },
    });
    expect(res.status).toBe(204);
    expect(res.headers['access-control-allow-origin']).toBe(ALLOWED);
    expect(res.headers['access-control-allow-methods']).toContain('POST');
    expect(res.headers['access-control-allow-headers']).toContain('X-Qwen-Client-Id');
    expect(res.headers['access-control-allow-headers']).toContain('Acp-Connection-Id, Acp-Session-Id');
  });

  test('bearer token: missing or wrong → 401 {error:Unauthorized}; right → 200', async () => {
    const missing = await api(base, 'GET', '/capabilities');
    expect(missing.status).toBe(401);
    expect(missing.body).toEqual({ error: 'Unauthorized' });
    for (const authorization of [`Bearer ${TOKEN}x`, 'Bearer short', `Basic ${TOKEN}`, TOKEN]) {
      const wrong = await api(base, 'GET', '/capabilities', { headers: { authorization } });
      expect(wrong.status, authorization).toBe(401);
    }
    const right = await api(base, 'GET', '/capabilities', { headers: auth });
    expect(right.status).toBe(200);
  });

  test('the token also gates SSE and mutations', async () => {
    const session = await api(base, 'POST', '/session', { body: {} });
    expect(session.status).toBe(401);
    const created = await api(base, 'POST', '/session', { body: {}, headers: auth });
    expect(created.status).toBe(200);
    const events = await api(base, 'GET', `/session/${created.body.sessionId}/events`);
    expect(events.status).toBe(401);
  });

  test('/health stays open on loopback without --require-auth', async () => {
    const res = await api(base, 'GET', '/health');
    expect(res.status).toBe(200);
  });
});

describe('--require-auth', () => {
  test('without a token one is generated and printed; /health is gated too', async () => {
    const own = await startSluice(['--require-auth']);
    try {
      const token = await generatedToken(() => own.stderr());
      const health = await api(own.url, 'GET', '/health');
      expect(health.status).toBe(401);
      const ok = await api(own.url, 'GET', '/health', { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
    } finally {
      await own.stop();
    }
  });

  test('SLUICE_TOKEN is used when --token is absent, QWEN_SERVER_TOKEN after it', async () => {
    const own = await startSluice([], { SLUICE_TOKEN: 'from-env', QWEN_SERVER_TOKEN: 'other' });
    try {
      expect(
        (await api(own.url, 'GET', '/capabilities', { headers: { authorization: 'Bearer other' } })).status,
      ).toBe(401);
      expect(
        (await api(own.url, 'GET', '/capabilities', { headers: { authorization: 'Bearer from-env' } }))
          .status,
      ).toBe(200);
    } finally {
      await own.stop();
    }
  });
});
