import type { Job } from './job.js';

/**
 * The accepted, unfinished jobs of a scheduler in admission order, linked through the jobs
 * themselves: adding and removing cost no allocation and no hashing, on every call's path.
 */
export class InflightList {
  private head: Job | undefined;
  private tail: Job | undefined;
  private count = 0;

  get size(): number {
    return this.count;
  }

  /** The oldest job; undefined when the list is empty. */
  get first(): Job | undefined {
    return this.head;
  }

  add(job: Job): void {
    job.inflightPrev = this.tail;
    job.inflightNext = undefined;
    if (this.tail) this.tail.inflightNext = job;
    else this.head = job;
    this.tail = job;
    this.count++;
  }

  /** Unlinks `job`, which must be in this list. */
  remove(job: Job): void {
    const { inflightPrev: prev, inflightNext: next } = job;
    if (prev) prev.inflightNext = next;
    else this.head = next;
    if (next) next.inflightPrev = prev;
    else this.tail = prev;
    job.inflightPrev = job.inflightNext = undefined;
    this.count--;
  }

  /** The jobs, oldest first, as an array: callers may finish jobs while they go through it. */
  toArray(): Job[] {
    const jobs: Job[] = [];
    for (let job = this.head; job; job = job.inflightNext) jobs.push(job);
    return jobs;
  }
}
