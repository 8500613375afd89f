import { Redis } from 'ioredis';
import { afterEach, describe, expect, test } from 'vitest';
import { REDIS_URL, deleteFleet, randomFleetName } from '../../../fleet/test/redis/helpers/fleet-scripts.js';
import { api } from '../helpers/http-client.js';
import { runSluice, startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// Issue 28 item 7 over real sockets with the bundled CLI as child processes: the flags reach the
// limiter, and with --fleet-redis the daemons of a fleet share each client's counts on the real
// Redis (127.0.0.1:6379), whose keys expire with the window.

const daemons: SluiceProcess[] = [];
const fleets: string[] = [];
afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.stop()));
  const redis = new Redis(REDIS_URL);
  for (const name of fleets.splice(0)) await deleteFleet(redis, name);
  redis.disconnect();
});

async function serve(args: string[]): Promise<SluiceProcess> {
  const daemon = await startSluice(args);
  daemons.push(daemon);
  return daemon;
}

/** `GET /capabilities` `times` times on `daemon`: the statuses. */
async function reads(daemon: SluiceProcess, times: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let i = 0; i < times; i++) statuses.push((await api(daemon.url, 'GET', '/capabilities')).status);
  return statuses;
}

/** Two daemons of one new fleet on the real Redis, with `--rate-limit` and `args`. */
async function fleetPair(args: string[]): Promise<[SluiceProcess, SluiceProcess, string]> {
  const name = randomFleetName();
  fleets.push(name);
  const flags = ['--rate-limit', '--fleet-redis', REDIS_URL, '--fleet-name', name, ...args];
  const [a, b] = await Promise.all([serve(flags), serve(flags)]);
  return [a, b, name];
}

describe('issue 28 item 7: sluice serve --rate-limit', () => {
  test('--rate-limit-read 3: the fourth read of a window is 429 with Retry-After; /health never is', async () => {
    const daemon = await serve(['--rate-limit', '--rate-limit-read', '3']);
    expect(await reads(daemon, 3)).toEqual([200, 200, 200]);
    const refused = await api(daemon.url, 'GET', '/capabilities');
    expect(refused.status).toBe(429);
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(59);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(refused.body).toMatchObject({
      code: 'rate_limit_exceeded',
      tier: 'read',
      limit: 3,
      windowMs: 60_000,
    });
    for (let i = 0; i < 6; i++) expect((await api(daemon.url, 'GET', '/health')).status).toBe(200);
  });

  test('a window under a second is refused at start, naming the flag', async () => {
    const run = await runSluice(['serve', '--port', '0', '--rate-limit', '--rate-limit-window-ms', '500']);
    expect(run.code).not.toBe(0);
    expect(run.stderr).toContain('--rate-limit-window-ms');
    expect(run.stderr).toContain('1000');
  });

  test('two daemons sharing --fleet-redis share each client’s count, kept in Redis', async () => {
    const [a, b, name] = await fleetPair(['--rate-limit-read', '4']);
    expect([...(await reads(a, 2)), ...(await reads(b, 2))]).toEqual([200, 200, 200, 200]);
    const [onA, onB] = [await api(a.url, 'GET', '/capabilities'), await api(b.url, 'GET', '/capabilities')];
    expect([onA.status, onB.status]).toEqual([429, 429]);
    expect(onB.body).toMatchObject({ code: 'rate_limit_exceeded', tier: 'read', limit: 4 });
    const retryAfter = Number(onB.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);

    const redis = new Redis(REDIS_URL);
    try {
      const keys = await redis.keys(`sluice:\\{${name}\\}:rate-limit:*`);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(/read:127\.0\.0\.1$/);
      expect(await redis.get(keys[0]!)).toBe('6');
      const ttl = await redis.pttl(keys[0]!);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(60_000);
    } finally {
      redis.disconnect();
    }
  });

  test('30 reads at once through two daemons on one Redis: exactly the limit of 10 pass', async () => {
    const [a, b] = await fleetPair(['--rate-limit-read', '10']);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => api(i % 2 === 0 ? a.url : b.url, 'GET', '/capabilities')),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(10);
    expect(statuses.filter((status) => status === 429)).toHaveLength(20);
  });

  test('the shared window ends for the whole fleet: after Retry-After the other daemon answers again', async () => {
    const [a, b] = await fleetPair(['--rate-limit-read', '2', '--rate-limit-window-ms', '1000']);
    expect(await reads(a, 2)).toEqual([200, 200]);
    const refused = await api(b.url, 'GET', '/capabilities');
    expect(refused.status).toBe(429);
    expect(refused.headers['retry-after']).toBe('1');
    // Redis expires the key with the window: a bounded wait, not a sleep that proves nothing.
    await expect
      .poll(async () => (await api(b.url, 'GET', '/capabilities')).status, { timeout: 5_000 })
      .toBe(200);
  });

  test('while Redis is unreachable requests pass, and the failure is logged once', async () => {
    const daemon = await serve([
      '--rate-limit',
      '--rate-limit-read',
      '2',
      '--fleet-redis',
      'redis://127.0.0.1:1',
      '--fleet-name',
      randomFleetName(),
    ]);
    expect(await reads(daemon, 6)).toEqual(Array(6).fill(200));
    await expect.poll(() => daemon.stderr(), { timeout: 5_000 }).toContain('rate limit counters failed');
    expect(daemon.stderr().split('rate limit counters failed')).toHaveLength(2);
  });
});
