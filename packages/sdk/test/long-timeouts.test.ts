import { afterAll, beforeAll, expect, test } from 'vitest';
import { DaemonClient } from '../src/index.js';
import { startInProcess, type InProcessDaemon } from '../../daemon/test/helpers/in-process-daemon.js';

let daemon: InProcessDaemon;
beforeAll(async () => {
  daemon = await startInProcess();
});
afterAll(() => daemon?.stop());

// fetchTimeoutMs accepts any finite number of ms, but a value above setTimeout's 2^31-1 ms
// range fires after 1 ms (Node's TimeoutOverflowWarning): a user who sets a "very long"
// timeout gets every request aborted at once instead.
test('a very long fetchTimeoutMs never aborts a request early', async () => {
  for (const fetchTimeoutMs of [2 ** 31, Number.MAX_SAFE_INTEGER]) {
    const client = new DaemonClient({ baseUrl: daemon.url, fetchTimeoutMs });
    await expect(client.health()).resolves.toEqual({ status: 'ok' });
    await expect(client.capabilities()).resolves.toHaveProperty('limits');
  }
});
