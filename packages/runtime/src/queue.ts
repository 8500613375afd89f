// `@sluice/runtime/queue`: the O(1) FIFO the scheduler queues with, for hosts that need one whose
// members can leave early (timeouts, cancellation) — see STYLE.md, "Queues are O(1) and bounded".
export { LinkedQueue, type QueueNode } from './scheduler/linked-queue.js';
