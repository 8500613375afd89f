// `@sluice/runtime/queue`: the O(1) FIFO the scheduler queues with, for hosts that need one whose
// members can leave early (timeouts, cancellation) — see docs/architecture.md, "House rules".
export { LinkedQueue, type QueueNode } from './scheduler/linked-queue.js';
