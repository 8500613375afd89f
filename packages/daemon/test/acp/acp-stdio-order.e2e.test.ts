import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { expect, test } from 'vitest';
import { SLUICE_MAIN } from '../helpers/sluice-process.js';

// Issue 28.8: JSON-RPC lets a client send requests without waiting for earlier answers. Over
// stdio, a session/new written right behind initialize was refused -32600 "ACP connection must
// be initialized" — and that error came out before the initialize result. A connection's
// messages are handled in the order they arrive.

interface Answer {
  id: number;
  result?: Record<string, unknown>;
  error?: { code: number; message: string };
}

test('§8 requests pipelined behind initialize on stdio are handled after it, in order', async () => {
  const workspace = mkdtempSync(join(tmpdir(), 'sluice-acp-order-'));
  const child = spawn(
    process.execPath,
    [SLUICE_MAIN, 'acp', '--data-dir', workspace, '--workspace', workspace],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, SLUICE_LOG_LEVEL: 'warn' },
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  try {
    const answers: Answer[] = [];
    const lines = createInterface({ input: child.stdout });
    const gotThree = new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        const message = JSON.parse(line) as Answer & { method?: string };
        if (message.method === undefined && typeof message.id === 'number') answers.push(message);
        if (answers.length === 3) resolve();
      }),
    );
    // One write: initialize, then two session/new, none waiting for an answer.
    const request = (id: number, method: string, params: unknown): string =>
      `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;
    child.stdin.write(
      request(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} }) +
        request(2, 'session/new', { cwd: workspace, mcpServers: [] }) +
        request(3, 'session/new', { cwd: workspace, mcpServers: [] }),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      gotThree,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`3 answers expected, got ${JSON.stringify(answers)}`)),
          15_000,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    expect(answers[0]?.id).toBe(1);
    expect(answers[0]?.result?.['protocolVersion']).toBe(1);
    for (const answer of answers.slice(1)) {
      expect(answer.error).toBeUndefined();
      expect(typeof answer.result?.['sessionId']).toBe('string');
    }
    expect(answers.map((a) => a.id).sort()).toEqual([1, 2, 3]);
  } finally {
    child.stdin.end();
    child.kill('SIGTERM');
    await exited;
    rmSync(workspace, { recursive: true, force: true });
  }
});

test("§8 what waits behind initialize counts toward the connection's bound: past 64 outstanding a request is refused at once", async () => {
  const workspace = mkdtempSync(join(tmpdir(), 'sluice-acp-held-'));
  const child = spawn(
    process.execPath,
    [SLUICE_MAIN, 'acp', '--data-dir', workspace, '--workspace', workspace],
    {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, SLUICE_LOG_LEVEL: 'warn' },
    },
  );
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  try {
    const answers: Answer[] = [];
    const total = 81;
    const lines = createInterface({ input: child.stdout });
    const all = new Promise<void>((resolve) =>
      lines.on('line', (line) => {
        const message = JSON.parse(line) as Answer & { method?: string };
        if (message.method === undefined && typeof message.id === 'number') answers.push(message);
        if (answers.length === total) resolve();
      }),
    );
    const request = (id: number, method: string, params: unknown): string =>
      `${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`;
    let batch = request(1, 'initialize', { protocolVersion: 1, clientCapabilities: {} });
    for (let id = 2; id <= total; id++) batch += request(id, 'session/list', {});
    child.stdin.write(batch);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      all,
      new Promise((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${total} answers expected, got ${answers.length}`)),
          15_000,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const refused = answers.filter((a) => a.error?.message.includes('Too many requests in flight'));
    // The bound (64) holds the initialize and the requests held behind it; the rest are refused.
    expect(refused.length).toBeGreaterThan(0);
    expect(refused.every((a) => a.id > 64)).toBe(true);
    expect(answers.find((a) => a.id === 1)?.result?.['protocolVersion']).toBe(1);
    expect(answers.filter((a) => a.result !== undefined && a.id > 1).length).toBe(total - 1 - refused.length);
  } finally {
    child.stdin.end();
    child.kill('SIGTERM');
    await exited;
    rmSync(workspace, { recursive: true, force: true });
  }
});
