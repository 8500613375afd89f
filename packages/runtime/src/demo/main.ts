/**
 * `npm start` until the daemon lands: real calls through the scheduler with the built-in echo
 * model, recorded in the SQLite journal, with the live snapshot printed along the way.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { ModelSchedulerSnapshot } from '@sluice/protocol';
import { ModelRuntimeError } from '../errors.js';
import { ModelRuntime } from '../gateway/model-runtime.js';
import { SqliteJournal } from '../journal/sqlite-journal.js';
import { EchoProvider } from '../providers/echo-provider.js';

const dataDir = resolve(process.env.SLUICE_DATA_DIR ?? '.sluice');
mkdirSync(dataDir, { recursive: true });
const journal = new SqliteJournal({ path: join(dataDir, 'journal.db') });
const runtime = new ModelRuntime({
  provider: new EchoProvider({ latencyMs: 150, chunkDelayMs: 15, chunkSize: 6 }),
  journal,
  scheduler: { maxConcurrency: 2, maxQueued: 4, maxInflight: 8, defaultTimeoutMs: 30_000 },
});
const budget = runtime.createBudget(`demo-${Date.now()}`, { maxCalls: 20, maxOutputTokens: 500 });

function printSnapshot(title: string, snapshot: ModelSchedulerSnapshot): void {
  const { accepting, inflight, queued, preparing, executing, cleaning } = snapshot;
  console.log(
    `\n${title}: ${JSON.stringify({ accepting, inflight, queued, preparing, executing, cleaning })}`,
  );
  for (const job of snapshot.jobs) {
    console.log(
      `  ${job.callId}  ${job.kind.padEnd(8)} ${job.phase.padEnd(9)} remaining ${String(job.remainingMs).padStart(5)} ms` +
        `  requestRecorded=${job.requestRecorded}`,
    );
  }
}

console.log(`Sluice runtime demo — journal ${journal.path}`);
console.log(`limits: ${JSON.stringify(runtime.limits)}`);

const prompts = [
  'What is backpressure?',
  'Name a FIFO.',
  'Why bound queues?',
  'Say hi.',
  'Count to three.',
  'Bye.',
];
const work: Array<Promise<string>> = [];
for (const [i, prompt] of [...prompts, 'one too many', 'and another'].entries()) {
  const request = { messages: [{ role: 'user' as const, content: prompt }] };
  try {
    if (i % 2 === 0) {
      work.push(runtime.complete(request, { budget, sessionId: 'demo' }).then((r) => `complete → ${r.text}`));
    } else {
      const stream = runtime.stream(request, { budget, sessionId: 'demo' });
      work.push(
        (async () => {
          let text = '';
          let chunks = 0;
          for await (const event of stream) {
            if (event.type === 'delta') {
              text += event.text;
              chunks++;
            }
          }
          return `stream (${chunks} chunks) → ${text}`;
        })(),
      );
    }
  } catch (error) {
    if (!(error instanceof ModelRuntimeError)) throw error;
    console.log(`call ${i + 1} refused at admission: ${error.code} — ${error.message}`);
  }
}

printSnapshot('snapshot right after admission', runtime.schedulerSnapshot());
await new Promise((r) => setTimeout(r, 200));
printSnapshot('snapshot 200 ms later', runtime.schedulerSnapshot());

for (const line of await Promise.all(work)) console.log(`  ${line}`);
printSnapshot('snapshot at rest', runtime.schedulerSnapshot());
console.log(`\nbudget: ${JSON.stringify(budget.usage())}`);

await runtime.shutdown();
await journal.close();
const audit = new SqliteJournal({ path: journal.path });
const records = audit.recordsForTask(budget.taskId);
console.log(`journal: ${records.length} records for task ${budget.taskId} (${audit.count()} in the file)`);
await audit.close();
