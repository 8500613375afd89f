import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, test } from 'vitest';
import { freshSchema, PG_URL, type TestSchema } from '../../../fleet/test/postgres/pg-schema.js';
import { REDIS_URL } from '../../../fleet/test/redis/helpers/fleet-scripts.js';
import { api } from '../helpers/http-client.js';
import { startSluice, type SluiceProcess } from '../helpers/sluice-process.js';

// What deploy/ hands the daemon, run by the real daemon: the systemd unit's config file, and the
// compose file's two fleet daemons (their commands and variables as written, the services'
// host names pointed at the test's PostgreSQL and Redis, paths and ports at scratch ones).
const DEPLOY = resolve(dirname(fileURLToPath(import.meta.url)), '../../../../deploy');
const scratch = mkdtempSync(join(tmpdir(), 'sluice-deploy-'));
const running: SluiceProcess[] = [];
let schema: TestSchema | undefined;

afterAll(async () => {
  await Promise.all(running.map((daemon) => daemon.stop()));
  await schema?.drop();
  rmSync(scratch, { recursive: true, force: true });
});

test("the systemd unit's deploy/sluice.toml is a config file sluice serve starts with", async () => {
  const daemon = await startSluice(['--config', join(DEPLOY, 'sluice.toml')]);
  running.push(daemon);
  expect(daemon.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
});

/** A compose service's `command: [...]` flow list, as the file writes it. */
function composeCommand(compose: string, service: string): string[] {
  const block = compose.slice(compose.indexOf(`\n  ${service}:`));
  const list = /\n\s+command:\s*\[([^\]]*)\]/.exec(block)?.[1];
  if (list === undefined) throw new Error(`compose.yaml: no command for ${service}`);
  return list
    .split(',')
    .map((word) => word.trim().replace(/^'|'$/g, ''))
    .filter((word) => word !== '');
}

/** A variable of the shared `x-sluice` block. */
function composeVariable(compose: string, name: string): string {
  const value = new RegExp(`\\n\\s+${name}: (\\S+)`).exec(compose)?.[1];
  if (value === undefined) throw new Error(`compose.yaml: no ${name}`);
  return value;
}

test("compose.yaml's two daemons start on one PostgreSQL store and one Redis, and refer clients to each other", async () => {
  const compose = readFileSync(join(DEPLOY, 'compose.yaml'), 'utf8');
  schema = await freshSchema('compose');
  const env = {
    SLUICE_TOKEN: 'compose-test-token',
    SLUICE_STORE: composeVariable(compose, 'SLUICE_STORE').replace(
      'postgres://sluice@postgres:5432/sluice',
      `${PG_URL}?search_path=${schema.name}`,
    ),
    SLUICE_FLEET_REDIS: composeVariable(compose, 'SLUICE_FLEET_REDIS').replace(
      'redis://redis:6379',
      REDIS_URL,
    ),
  };
  // the same path in both containers, as the file has it
  const workspace = mkdtempSync(join(scratch, 'workspace-'));
  const [a, b] = await Promise.all(
    ['sluice-a', 'sluice-b'].map(async (service) => {
      const args = composeCommand(compose, service)
        .slice(1) // serve: startSluice adds it
        .map((word) => (word === '/workspace' ? workspace : word));
      // startSluice's --port 0 and scratch --data-dir come first; the file's own follow and win,
      // so they are replaced here rather than overridden
      const port = args.indexOf('--port');
      args.splice(port, 2);
      args.splice(args.indexOf('--data-dir'), 2);
      const daemon = await startSluice(args, env);
      running.push(daemon);
      return daemon;
    }),
  );
  const headers = { Authorization: `Bearer ${env.SLUICE_TOKEN}` };
  const created = await api(a!.url, 'POST', '/session', { headers, body: { sessionScope: 'thread' } });
  expect(created.status).toBe(200);
  // the create's first save, which claims the session in the store, is not awaited by the create
  await expect
    .poll(
      async () =>
        (
          await schema!
            .sql`SELECT 1 FROM sluice_session_owners WHERE session_id = ${created.body.sessionId as string}`
        ).length,
    )
    .toBe(1);
  const elsewhere = await api(b!.url, 'POST', `/session/${created.body.sessionId as string}/load`, {
    headers,
    body: {},
  });
  expect(elsewhere.status).toBe(409);
  expect(elsewhere.body).toMatchObject({
    code: 'session_owned_elsewhere',
    owner: { url: 'http://sluice-a:4170' },
  });
});
