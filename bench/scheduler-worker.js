// One subject of the scheduler bench in a worker of its own: it answers the main thread's
// requests ({ id, op, args }) with { id, result } or { id, error }, one at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { subjectFor } from './scheduler-subjects.js';

const subject = subjectFor(workerData.key, workerData.deep);
parentPort.on('message', async ({ id, op, args }) => {
  try {
    globalThis.gc?.();
    parentPort.postMessage({ id, result: await subject[op](...args) });
  } catch (error) {
    parentPort.postMessage({ id, error: error instanceof Error ? error.stack : String(error) });
  }
});
