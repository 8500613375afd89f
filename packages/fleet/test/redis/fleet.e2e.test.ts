import { Redis } from 'ioredis';
import { afterEach, expect, test, vi } from 'vitest';
import { startSluice, runSluice, type SluiceProcess } from '../../../daemon/test/helpers/sluice-process.js';
import { fleetPrefix, poolPrefix } from '../../src/index.js';
import { CountingUpstream } from './helpers/counting-upstream.js';
import { REDIS_URL, REDIS_WAIT, deleteFleet, randomFleetName } from './helpers/fleet-scripts.js';

// Real bundled daemons as child processes sharing one fleet on the real Redis, in front of an
// upstream that counts the calls it serves at once (issue 21 acceptance).
const TOKEN = 'fleet-e2e-token';
const daemons: SluiceProcess[] = [];
const upstreams: CountingUpstream[] = [];
const fleets: string[] = [];

afterEach(async () => {
  await Promise.all(daemons.splice(0).map((daemon) => daemon.stop('SIGKILL')));
  await Promise.all(upstreams.splice(0).map((upstream) => upstream.close()));
  const redis = new Redis(REDIS_URL);
  for (const name of fleets.splice(0)) await deleteFleet(redis, name);
  redis.disconnect();
});

async function upstream(holdMs: number): Promise<{ upstream: CountingUpstream; baseUrl: string }> {
  const created = new CountingUpstream(holdMs);
  upstreams.push(created);
  return { upstream: created, baseUrl: await created.start() };
}

async function fleetDaemon(fleetName: string, baseUrl: string, extra: string[] = []): Promise<SluiceProcess> {
  const daemon = await startSluice(
    [
      '--token',
      TOKEN,
      '--provider',
      'openai',
      '--model',
      'fleet-model',
      '--base-url',
      baseUrl,
      '--fleet-redis',
      REDIS_URL,
      '--fleet-name',
      fleetName,
      '--model-max-concurrency',
      '4',
      '--model-max-queued',
      '64',
      '--model-max-inflight',
      '96',
      ...extra,
    ],
    { OPENAI_API_KEY: 'unused' },
  );
  daemons.push(daemon);
  return daemon;
}

function chat(daemon: SluiceProcess): Promise<number> {
  return fetch(`${daemon.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ messages: [{ role: 'user', content: 'hello' }] }),
  }).then(async (response) => {
    await response.arrayBuffer();
    return response.status;
  });
}

test('three daemons share maxConcurrency 4: the upstream never serves more than 4 calls at once', async () => {
  const name = randomFleetName();
  fleets.push(name);
  const { upstream: counting, baseUrl } = await upstream(15);
  const fleet = await Promise.all([0, 1, 2].map(() => fleetDaemon(name, baseUrl)));
  const statuses = await Promise.all(
    fleet.flatMap((daemon) => Array.from({ length: 20 }, () => chat(daemon))),
  );
  expect(statuses.filter((status) => status !== 200)).toEqual([]);
  expect(counting.total).toBe(60);
  expect(counting.maxActive).toBeLessThanOrEqual(4);
  expect(counting.maxActive).toBeGreaterThan(1);
});

test('SIGKILL of a daemon frees its fleet slots: a call queued on another daemon gets one', async () => {
  const name = randomFleetName();
  fleets.push(name);
  const { upstream: counting, baseUrl } = await upstream(0);
  const lease = ['--fleet-lease-ttl-ms', '600'];
  const doomed = await fleetDaemon(name, baseUrl, lease);
  const survivor = await fleetDaemon(name, baseUrl, lease);
  counting.held = true;
  // The doomed daemon takes all 4 fleet slots; its calls hang upstream.
  const hung = Array.from({ length: 4 }, () => chat(doomed).catch(() => 0));
  await vi.waitFor(() => expect(counting.active).toBe(4), REDIS_WAIT);
  const redis = new Redis(REDIS_URL);
  const pool = poolPrefix(fleetPrefix(name), 'openai/fleet-model');
  expect(await redis.hget(`${pool}meta`, 'used')).toBe('4');
  const queued = chat(survivor);
  await vi.waitFor(async () => expect(await redis.zcard(`${pool}queue`)).toBe(1), REDIS_WAIT);
  await doomed.stop('SIGKILL');
  await Promise.all(hung);
  // The upstream calls the dead daemon left are gone; answer the survivor's as soon as it comes.
  counting.releaseHeld();
  expect(await queued).toBe(200);
  // The dead node's four slots were reclaimed; the survivor's call released its own.
  await vi.waitFor(async () => {
    expect(await redis.hget(`${pool}meta`, 'used')).toBe('0');
    expect(await redis.hlen(`${pool}leases`)).toBe(0);
  }, REDIS_WAIT);
  redis.disconnect();
});

test('a bad --fleet-redis URL stops start-up with exit 1, naming the flag and the value', async () => {
  const result = await runSluice(['serve', '--port', '0', '--fleet-redis', 'http://127.0.0.1:6379']);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('--fleet-redis');
  expect(result.stderr).toContain('http://127.0.0.1:6379');
});
