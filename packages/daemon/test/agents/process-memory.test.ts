import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { effectiveMemoryLimitBytes, processTreeRss } from '../../src/agents/acp/process-memory.js';

// Issue 27 item 1: agent processes are bounded by the memory of their whole trees, and the
// default budget derives from the cgroup's or the machine's memory.

describe('the memory an agent process tree uses', () => {
  test('counts the root and every descendant, from /proc', async () => {
    // a parent holding ~40 MB that starts a child holding ~40 MB
    const hold = (mb: number) => `globalThis.b = Buffer.alloc(${mb} * 1048576, 1);`;
    const script = `${hold(40)} require('node:child_process').spawn(process.execPath, ['-e', "${hold(40)} setInterval(() => {}, 1000)"], { stdio: 'ignore' }); setInterval(() => {}, 1000);`;
    // its own process group, so that the test ends the whole tree
    const root = spawn(process.execPath, ['-e', script], { stdio: 'ignore', detached: true });
    try {
      await expect
        .poll(() => processTreeRss([root.pid!]).get(root.pid!) ?? 0, { timeout: 15_000 })
        .toBeGreaterThan(80 * 1_048_576);
      expect(processTreeRss([999_999_999]).get(999_999_999)).toBe(0);
    } finally {
      process.kill(-root.pid!, 'SIGKILL');
    }
  });
});

describe('the memory limit the default budget derives from', () => {
  test('is the cgroup limit when below the machine, else the machine', () => {
    const dir = mkdtempSync(join(tmpdir(), 'sluice-cgroup-'));
    const limited = join(dir, 'memory.max');
    writeFileSync(limited, '1073741824\n');
    expect(effectiveMemoryLimitBytes([limited])).toBe(1_073_741_824);
    const unlimited = join(dir, 'unlimited');
    writeFileSync(unlimited, 'max\n');
    expect(effectiveMemoryLimitBytes([unlimited, join(dir, 'missing')])).toBe(totalmem());
    const above = join(dir, 'above');
    writeFileSync(above, `${totalmem() * 2}\n`);
    expect(effectiveMemoryLimitBytes([above])).toBe(totalmem());
  });
});
