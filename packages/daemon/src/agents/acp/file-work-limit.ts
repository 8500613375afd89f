import { LinkedQueue, type QueueNode } from '@sluice/runtime/queue';
import { RPC_ERROR, RpcError } from './json-rpc-channel.js';

/** The size of libuv's thread pool, which every `fs` call of this process shares. */
export function libuvPoolSize(env: NodeJS.ProcessEnv = process.env): number {
  const size = Number(env['UV_THREADPOOL_SIZE']);
  return Number.isInteger(size) && size > 0 ? Math.min(size, 1024) : 4;
}

/** What a {@link FileWorkLimit} allows. */
export interface FileWorkLimitOptions {
  /** Operations running at once: fewer than the libuv pool's threads. */
  readonly maxRunning: number;
  /** Operations waiting for a turn; more are refused at once. */
  readonly maxQueued: number;
  /** An operation not done this long (waiting included) is answered with an error. */
  readonly timeoutMs: number;
}

interface Waiter {
  start(): void;
}

/**
 * Bounds the file work agents ask of the daemon so that it can never hold the libuv thread
 * pool the journal and the rest of the daemon need: at most `maxRunning` operations run, at
 * most `maxQueued` wait, and each is answered within `timeoutMs`. An operation that overruns
 * is answered with an error but keeps its slot until it really ends (a thread stuck in the
 * kernel is still taken), so stuck operations can never take more than `maxRunning` threads.
 */
export class FileWorkLimit {
  private running = 0;
  private readonly waiting = new LinkedQueue<Waiter>();

  constructor(private readonly options: FileWorkLimitOptions) {
    for (const key of ['maxRunning', 'maxQueued', 'timeoutMs'] as const)
      if (!Number.isInteger(options[key]) || options[key] < (key === 'maxQueued' ? 0 : 1))
        throw new RangeError(`${key} must be a positive integer, got ${String(options[key])}`);
  }

  /** Operations running now (stuck ones included). */
  get runningCount(): number {
    return this.running;
  }

  /** Runs `work` when a slot is free; its result, or an {@link RpcError} when busy or late. */
  run<T>(what: string, work: () => Promise<T>): Promise<T> {
    if (this.running >= this.options.maxRunning && this.waiting.size >= this.options.maxQueued)
      return Promise.reject(
        new RpcError(RPC_ERROR.internalError, `too many file operations in progress; retry ${what} later`),
      );
    return new Promise<T>((resolve, reject) => {
      let node: QueueNode<Waiter> | undefined;
      const timer = setTimeout(() => {
        // Still waiting: it leaves the queue; already running: it keeps its slot until it ends.
        if (node !== undefined) this.waiting.remove(node);
        reject(
          new RpcError(RPC_ERROR.internalError, `${what} did not finish within ${this.options.timeoutMs} ms`),
        );
      }, this.options.timeoutMs);
      timer.unref();
      const waiter: Waiter = {
        start: () => {
          node = undefined;
          this.running++;
          work()
            .then(resolve, reject)
            .finally(() => {
              clearTimeout(timer);
              this.running--;
              this.next();
            });
        },
      };
      if (this.running < this.options.maxRunning) waiter.start();
      else node = this.waiting.enqueue(waiter);
    });
  }

  private next(): void {
    while (this.running < this.options.maxRunning) {
      const waiter = this.waiting.dequeue();
      if (waiter === undefined) return;
      waiter.start();
    }
  }
}

/** Agents' file work in this process: half the libuv pool at most, the rest kept for the daemon. */
export const agentFileWork = new FileWorkLimit({
  maxRunning: Math.max(1, Math.floor(libuvPoolSize() / 2)),
  maxQueued: 256,
  timeoutMs: 10_000,
});
