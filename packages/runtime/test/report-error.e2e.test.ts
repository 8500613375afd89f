import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';
import { MemoryJournal } from '../src/journal/memory-journal.js';
import type { ModelRequestRecord } from '../src/journal/records.js';

const record: ModelRequestRecord = {
  version: 1,
  type: 'model_request',
  callId: 'c1',
  taskId: 't1',
  at: '2025-01-01T00:00:00.000Z',
  request: { messages: [{ role: 'user', content: 'hi' }] },
  options: { timeoutMs: 1_000, provider: 'echo', model: 'echo-1', kind: 'complete' },
};

const broken = {
  appended(): void {
    throw new Error('listener is broken');
  },
};

describe('errors thrown by code the host hands the runtime', () => {
  test('MemoryJournal.write never throws: a throwing listener is reported and the record kept', () => {
    const reported: unknown[] = [];
    const journal = new MemoryJournal({ reportError: (error) => reported.push(error) });
    expect(() => journal.write(record, broken)).not.toThrow();
    expect(reported).toEqual([new Error('listener is broken')]);
    expect(journal.records()).toEqual([record]);
  });

  test('by default the exception surfaces as an uncaught exception of its own, after the step finished', () => {
    const dist = fileURLToPath(new URL('../dist/index.js', import.meta.url));
    const script = `
      import { MemoryJournal } from ${JSON.stringify(dist)};
      process.on('uncaughtException', (error) => console.log('uncaught: ' + error.message));
      const journal = new MemoryJournal();
      journal.write(${JSON.stringify(record)}, { appended() { throw new Error('listener is broken'); } });
      console.log('write returned, records: ' + journal.records().length);
    `;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    expect(out.trim().split('\n')).toEqual(['write returned, records: 1', 'uncaught: listener is broken']);
  });
});
