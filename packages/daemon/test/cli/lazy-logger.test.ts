import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, test, vi } from 'vitest';
import { LazyLogger } from '../../src/cli/lazy-logger.js';

let dir: string;
let file: string;
let fd: number;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'sluice-log-'));
  file = join(dir, 'log');
  fd = openSync(file, 'a');
});

afterEach(() => {
  closeSync(fd);
  rmSync(dir, { recursive: true, force: true });
});

/** pino's stream writes asynchronously: wait until `count` lines are in the file. */
async function written(count: number): Promise<Array<Record<string, unknown>>> {
  await vi.waitFor(() => expect(lines()).toHaveLength(count));
  return lines();
}

function lines(): Array<Record<string, unknown>> {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

describe('LazyLogger', () => {
  test('lines logged before pino loaded are written in order, with the time they were logged', async () => {
    const logger = new LazyLogger({ level: 'info', name: 'sluice', setting: 'SLUICE_LOG_LEVEL', fd });
    const before = Date.now();
    logger.info('first');
    logger.error({ err: new TypeError('boom'), route: '/x' }, 'second');
    const after = Date.now();
    await logger.flush();
    logger.warn({ context: 'c' }, 'third');
    const [first, second, third] = await written(3);
    expect(first).toEqual({ level: 30, time: expect.any(Number), name: 'sluice', msg: 'first' });
    expect(first!['time']).toBeGreaterThanOrEqual(before);
    expect(first!['time']).toBeLessThanOrEqual(after);
    expect(second).toMatchObject({ level: 50, name: 'sluice', route: '/x', msg: 'second' });
    expect(second!['err']).toMatchObject({ type: 'TypeError', message: 'boom', stack: expect.any(String) });
    expect(third).toMatchObject({ level: 40, context: 'c', msg: 'third' });
  });

  test('lines below the level are dropped', async () => {
    const logger = new LazyLogger({ level: 'warn', name: 'sluice', setting: 'SLUICE_LOG_LEVEL', fd });
    logger.info('not written');
    await logger.flush();
    expect(lines()).toEqual([]);
    logger.error({}, 'written');
    expect((await written(1)).map((line) => line['msg'])).toEqual(['written']);
  });

  test('a line the operator must read (a generated token) is written whatever the level, silent included', async () => {
    for (const level of ['error', 'silent']) {
      const logger = new LazyLogger({ level, name: 'sluice', setting: '--log-level', fd });
      logger.warn({}, 'filtered');
      logger.always('warn', { token: `t-${level}` }, 'generated a bearer token');
      await logger.flush();
    }
    const logged = await written(2);
    expect(logged.map((line) => [line['level'], line['token']])).toEqual([
      [40, 't-error'],
      [40, 't-silent'],
    ]);
  });

  test('debug is enabled only at debug and trace: the request log is registered then', () => {
    const at = (level: string) =>
      new LazyLogger({ level, name: 'sluice', setting: '--log-level' }).enabled('debug');
    expect([at('trace'), at('debug'), at('info'), at('warn')]).toEqual([true, true, false, false]);
  });

  test('when pino cannot be loaded, lines are dropped, not kept: the buffer stays empty', async () => {
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const logger = new LazyLogger({
        level: 'info',
        name: 'sluice',
        setting: 'SLUICE_LOG_LEVEL',
        fd,
        loadPino: () => Promise.reject(new Error('no pino here')),
      });
      logger.info('first');
      logger.info('second');
      expect(logger.buffered).toBe(2);
      await logger.flush();
      expect(logger.buffered).toBe(0);
      for (let i = 0; i < 1_000; i++) logger.error({ i }, 'later');
      expect(logger.buffered).toBe(0);
      expect(stderr).toHaveBeenCalledTimes(1);
      expect(String(stderr.mock.calls[0]?.[0])).toMatch(
        /could not be loaded, 2 line\(s\) and later ones dropped: .*no pino here/,
      );
    } finally {
      stderr.mockRestore();
    }
    expect(lines()).toEqual([]);
  });

  test('an unknown level is refused, naming where it came from', () => {
    expect(() => new LazyLogger({ level: 'loud', name: 'sluice', setting: 'SLUICE_LOG_LEVEL' })).toThrow(
      /SLUICE_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent, got "loud"/,
    );
  });
});
