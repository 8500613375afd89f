import {
  appendThroughWrite,
  tell,
  type AppendListener,
  type Journal,
  type JournalRecord,
} from '../journal/records.js';

interface Held {
  record: JournalRecord;
  listener: AppendListener;
}

/**
 * Wraps a real journal and injects faults on command: stall appends until released, or fail
 * the next ones. Tests use it to show what the runtime does when its disk hangs or breaks —
 * the runtime itself is never mocked.
 */
export class FaultInjectingJournal implements Journal {
  readonly name: string;
  private stalled = false;
  private failures: Array<{ remaining: number; message: string; when: (r: JournalRecord) => boolean }> = [];
  private held: Held[] = [];

  constructor(private readonly inner: Journal) {
    this.name = inner.name;
  }

  /** From now on, appends wait until {@link resume}. */
  stall(): void {
    this.stalled = true;
  }

  /** Lets stalled appends (and later ones) through to the inner journal, in order. */
  resume(): void {
    this.stalled = false;
    const held = this.held;
    this.held = [];
    for (const h of held) this.forward(h.record, h.listener);
  }

  /** Fails held appends with `message` instead of writing them. */
  failHeld(message = 'injected journal failure'): void {
    const held = this.held;
    this.held = [];
    for (const h of held) tell(h.listener, new Error(message));
  }

  /** The next `count` appends matching `when` reject with `message`. */
  failNext(
    count = 1,
    message = 'injected journal failure',
    when: (r: JournalRecord) => boolean = () => true,
  ): void {
    this.failures.push({ remaining: count, message, when });
  }

  /** Appends currently held by a stall. */
  get heldCount(): number {
    return this.held.length;
  }

  write(record: JournalRecord, listener: AppendListener): void {
    if (this.stalled) this.held.push({ record, listener });
    else this.forward(record, listener);
  }

  append(record: JournalRecord): Promise<void> {
    return appendThroughWrite(this, record);
  }

  close(): Promise<void> {
    this.resume();
    return this.inner.close();
  }

  private forward(record: JournalRecord, listener: AppendListener): void {
    const failure = this.failures.find((f) => f.remaining > 0 && f.when(record));
    if (failure) {
      failure.remaining--;
      if (failure.remaining === 0) this.failures = this.failures.filter((f) => f.remaining > 0);
      return tell(listener, new Error(failure.message));
    }
    this.inner.write(record, listener);
  }
}
