import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { INITIALIZE } from '../helpers/acp-client.js';
import { runSluice, startSluice, type SluiceProcess } from '../helpers/sluice-process.js';
import { httpsRequest, makeCertificate, promptOverTls, type TestCertificate } from '../helpers/tls.js';

// Issue 28 item 6 (docs/decisions/034): `sluice serve --tls-cert --tls-key` serves every route
// over HTTPS, with a certificate this file makes with openssl; clients trust it as a user's
// would (`ca`, or NODE_EXTRA_CA_CERTS for a Node client).

const TOKEN = 'tls-test-token';
let certificate: TestCertificate;
let sluice: SluiceProcess;

beforeAll(async () => {
  certificate = makeCertificate();
  sluice = await startSluice(
    ['--token', TOKEN, '--tls-cert', certificate.certFile, '--tls-key', certificate.keyFile],
    { SLUICE_LOG_LEVEL: 'info' },
  );
});

afterAll(async () => {
  await sluice?.stop();
  if (certificate) rmSync(certificate.dir, { recursive: true, force: true });
});

const bearer = { authorization: `Bearer ${TOKEN}` };

describe('sluice serve --tls-cert --tls-key', () => {
  test('the listening line and the log speak https', async () => {
    expect(sluice.url).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    await expect.poll(() => sluice.stderr()).toContain(`"msg":"Server listening at ${sluice.url}"`);
    await expect.poll(() => sluice.stderr()).toContain(`"certFile":${JSON.stringify(certificate.certFile)}`);
  });

  test('REST, /acp, the /v1 gateway and the dashboard answer over HTTPS', async () => {
    const ca = certificate.cert;
    const health = await httpsRequest(`${sluice.url}/health`, { ca });
    expect(health).toMatchObject({ status: 200, body: '{"status":"ok"}' });
    const capabilities = await httpsRequest(`${sluice.url}/capabilities`, { ca, headers: bearer });
    expect(capabilities.status).toBe(200);
    expect(JSON.parse(capabilities.body)).toMatchObject({ v: 1 });
    const models = await httpsRequest(`${sluice.url}/v1/models`, { ca, headers: bearer });
    expect(models.status).toBe(200);
    expect(JSON.parse(models.body)).toMatchObject({ object: 'list' });
    const acp = await httpsRequest(`${sluice.url}/acp`, {
      ca,
      method: 'POST',
      headers: { ...bearer, 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: INITIALIZE }),
    });
    expect(acp.status).toBe(200);
    expect(JSON.parse(acp.body)).toMatchObject({ id: 0, result: { protocolVersion: 1 } });
    const dashboard = await httpsRequest(`${sluice.url}/dashboard`, { ca });
    expect(dashboard.status).toBe(401);
    expect(dashboard.body).toContain('<form method="post" action="/dashboard/sign-in">');
  });

  test('the dashboard sign-in accepts the https origin and sets a Secure cookie', async () => {
    const signIn = (origin: string) =>
      httpsRequest(`${sluice.url}/dashboard/sign-in`, {
        ca: certificate.cert,
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', origin },
        body: new URLSearchParams({ token: TOKEN }).toString(),
      });
    const signedIn = await signIn(sluice.url);
    expect(signedIn.status).toBe(303);
    const cookie = signedIn.headers['set-cookie']?.[0] ?? '';
    expect(cookie.split('; ')).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Strict', 'Secure']));
    // The http:// origin of the same port is another site: a page there cannot sign in.
    expect((await signIn(sluice.url.replace('https:', 'http:'))).status).toBe(403);
    const page = await httpsRequest(`${sluice.url}/dashboard`, {
      ca: certificate.cert,
      headers: { cookie: cookie.split(';', 1)[0]! },
    });
    expect(page.status).toBe(200);
  });

  test('our SDK creates a session, prompts and reads the SSE stream to turn_complete over TLS', async () => {
    const run = await promptOverTls('sluice', {
      url: sluice.url,
      token: TOKEN,
      certFile: certificate.certFile,
      text: 'hello over tls',
    });
    expect(run).toMatchObject({ stopReason: 'end_turn', text: 'Echo: hello over tls' });
    expect(run.types.at(-1)).toBe('turn_complete');
  });

  test('the official @qwen-code/sdk DaemonClient prompts and streams over TLS', async () => {
    const run = await promptOverTls('qwen', {
      url: sluice.url,
      token: TOKEN,
      certFile: certificate.certFile,
      text: 'official client over tls',
    });
    expect(run).toMatchObject({ stopReason: 'end_turn', text: 'Echo: official client over tls' });
    expect(run.types.at(-1)).toBe('turn_complete');
  });

  test('plain HTTP to the TLS port gets no answer', async () => {
    const plain = sluice.url.replace('https:', 'http:');
    await expect(fetch(`${plain}/health`)).rejects.toMatchObject({ cause: { code: 'UND_ERR_SOCKET' } });
    // The daemon is still serving: the refused connection cost it nothing.
    expect((await httpsRequest(`${sluice.url}/health`, { ca: certificate.cert })).status).toBe(200);
  });

  test('a client that does not trust the certificate refuses the connection', async () => {
    await expect(fetch(`${sluice.url}/health`)).rejects.toMatchObject({
      cause: { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' },
    });
  });

  test('sluice status reads the daemon over https, trusting NODE_EXTRA_CA_CERTS', async () => {
    const status = await runSluice(['status', '--url', sluice.url, '--token', TOKEN, '--json'], {
      NODE_EXTRA_CA_CERTS: certificate.certFile,
    });
    expect(status.code).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ url: sluice.url, health: 'ok' });
    const untrusted = await runSluice(['status', '--url', sluice.url, '--token', TOKEN]);
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toContain('its TLS certificate is not trusted here: set NODE_EXTRA_CA_CERTS');
    const plain = await runSluice(['status', '--url', sluice.url.replace('https:', 'http:')]);
    expect(plain.code).toBe(1);
    expect(plain.stderr).toContain('if it serves HTTPS (--tls-cert), pass --url https://');
  });
});
