import { describe, expect, test } from 'vitest';
import { FileWorkLimit, libuvPoolSize } from '../../src/agents/acp/file-work-limit.js';
import { RpcError } from '../../src/agents/acp/json-rpc-channel.js';

// Issue 27 item 6: agents' file work never takes more than its share of the libuv pool, a
// queue bounds the rest, and a stuck operation is answered in time but keeps its slot.

/** A unit of work that ends when told to. */
function gate(): { work: () => Promise<string>; open: () => void; started: () => boolean } {
  let release: (value: string) => void = () => {};
  let began = false;
  const done = new Promise<string>((resolve) => (release = resolve));
  return {
    work: () => {
      began = true;
      return done;
    },
    open: () => release('done'),
    started: () => began,
  };
}

describe('FileWorkLimit', () => {
  test('runs at most maxRunning at once, queues up to maxQueued, refuses the rest at once', async () => {
    const limit = new FileWorkLimit({ maxRunning: 2, maxQueued: 1, timeoutMs: 60_000 });
    const gates = [gate(), gate(), gate()];
    const runs = gates.map((g) => limit.run('read', g.work));
    expect(gates.map((g) => g.started())).toEqual([true, true, false]);
    await expect(limit.run('read', async () => 'x')).rejects.toThrow(/too many file operations/);
    gates[0]!.open();
    await runs[0];
    await expect.poll(() => gates[2]!.started()).toBe(true);
    gates[1]!.open();
    gates[2]!.open();
    expect(await Promise.all(runs)).toEqual(['done', 'done', 'done']);
    expect(limit.runningCount).toBe(0);
  });

  test('an operation past its bound is answered with an error but keeps its slot until it ends', async () => {
    const limit = new FileWorkLimit({ maxRunning: 1, maxQueued: 4, timeoutMs: 50 });
    const stuck = gate();
    const error = await limit.run('fs/read_text_file', stuck.work).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RpcError);
    expect((error as RpcError).message).toMatch(/did not finish within 50 ms/);
    expect(limit.runningCount).toBe(1);
    let started = false;
    const waiting = limit.run('fs/read_text_file', async () => {
      started = true;
      return 'done';
    });
    expect(started).toBe(false);
    stuck.open();
    expect(await waiting).toBe('done');
  });

  test('takes the pool size from UV_THREADPOOL_SIZE, else libuv’s 4', () => {
    expect(libuvPoolSize({})).toBe(4);
    expect(libuvPoolSize({ UV_THREADPOOL_SIZE: '16' })).toBe(16);
    expect(libuvPoolSize({ UV_THREADPOOL_SIZE: 'many' })).toBe(4);
    expect(() => new FileWorkLimit({ maxRunning: 0, maxQueued: 1, timeoutMs: 1 })).toThrow(/maxRunning/);
  });
});
