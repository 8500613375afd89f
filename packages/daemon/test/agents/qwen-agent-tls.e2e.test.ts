import { mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { createQwenHome, installQwenAgent } from '../../../../scripts/qwen-agent.js';
import {
  startFakeOpenAIServer,
  type FakeOpenAIServer,
} from '../../../runtime/test/helpers/fake-openai-server.js';
import { qwenScript } from '../helpers/qwen-upstream.js';
import { startQwenSluice } from '../helpers/qwen-sluice.js';
import type { SluiceProcess } from '../helpers/sluice-process.js';
import { makeCertificate, promptOverTls, type TestCertificate } from '../helpers/tls.js';

// Issue 28 item 6 with the real agent (docs/decisions/034): under TLS, qwen reaches the model
// gateway on the daemon's loopback agent listener (plain HTTP, /v1/ only, same credentials), so
// it needs no trust in the daemon's certificate and no name in it.

const MODEL = 'fake-qwen-model';
const TOKEN = 'qwen-tls-token';
let upstream: FakeOpenAIServer;
let sluice: SluiceProcess;
let certificate: TestCertificate;
let home: string;
let workspace: string;

beforeAll(async () => {
  const agent = await installQwenAgent();
  upstream = await startFakeOpenAIServer({ reply: qwenScript });
  home = createQwenHome({ model: MODEL });
  workspace = realpathSync(mkdtempSync(join(tmpdir(), 'sluice-qwen-tls-ws-')));
  // A certificate for a name that is not this machine's: the agent must not need it.
  certificate = makeCertificate(['DNS:sluice.invalid', 'IP:127.0.0.1']);
  sluice = await startQwenSluice({ workspace, agent: agent.command, home, model: MODEL, upstream }, [
    // qwen's first start on a loaded machine (8 test runs on 2 cores) can pass the 10 s default.
    '--agent-start-timeout-ms',
    '60000',
    '--token',
    TOKEN,
    '--tls-cert',
    certificate.certFile,
    '--tls-key',
    certificate.keyFile,
  ]);
}, 300_000);

afterAll(async () => {
  await sluice?.stop();
  await upstream?.close();
  for (const dir of [home, workspace, certificate?.dir])
    if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The OPENAI_BASE_URL of each of the daemon's qwen processes, from /proc. */
function agentGatewayUrls(): string[] {
  const pid = sluice.child.pid!;
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .flatMap((name) => {
      try {
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        if (ppid !== pid || !readFileSync(`/proc/${name}/cmdline`, 'utf8').includes('--acp')) return [];
        const env = readFileSync(`/proc/${name}/environ`, 'utf8').split('\0');
        return env.filter((line) => line.startsWith('OPENAI_BASE_URL=')).map((line) => line.slice(16));
      } catch {
        return []; // gone meanwhile
      }
    });
}

describe('the real qwen agent behind a daemon served over TLS', () => {
  test('a prompt over HTTPS runs the agent, whose model calls reach the gateway', async () => {
    const before = upstream.requests.length;
    const run = await promptOverTls('sluice', {
      url: sluice.url,
      token: TOKEN,
      certFile: certificate.certFile,
      text: 'hello over tls',
      workspace,
    });
    expect(run).toMatchObject({ stopReason: 'end_turn', text: 'echo: hello over tls' });
    expect(run.types.at(-1)).toBe('turn_complete');
    expect(upstream.requests.length).toBeGreaterThan(before);
  }, 120_000);

  test("the agents' gateway is loopback HTTP that serves /v1/ only, with the same credentials", async () => {
    const urls = agentGatewayUrls();
    expect(urls.length).toBeGreaterThan(0);
    const url = urls[0]!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v1$/);
    expect(new URL(url).port).not.toBe(new URL(sluice.url).port);
    const origin = new URL(url).origin;
    expect((await fetch(`${origin}/v1/models`)).status).toBe(401);
    const models = await fetch(`${origin}/v1/models`, { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(models.status).toBe(200);
    for (const path of ['/health', '/capabilities', '/dashboard', '/acp']) {
      const refused = await fetch(`${origin}${path}`, { headers: { authorization: `Bearer ${TOKEN}` } });
      expect(refused.status, path).toBe(404);
    }
  });
});
