import type { PromptResult } from './queue-items.js';
import type { StreamPosition } from './session-buses.js';

/** Keys a session remembers; the oldest is forgotten first (a retry comes soon after its try). */
export const MAX_IDEMPOTENCY_KEYS_PER_SESSION = 256;

/** Longest `Idempotency-Key` accepted (the IETF draft's keys are UUIDs; 255 is generous). */
export const MAX_IDEMPOTENCY_KEY_CHARS = 255;

/** What a retried admission answers again: the first answer's ids. */
export interface RememberedAdmission extends StreamPosition {
  readonly promptId: string;
  readonly queued: boolean;
  /** The first admission's outcome (settled or not). */
  readonly done: Promise<PromptResult>;
}

interface Entry {
  readonly fingerprint: string;
  readonly admission: RememberedAdmission;
}

/**
 * The `Idempotency-Key`s of one session's admitted prompts (issue 19 item 12): a client that
 * could not read the answer to its POST (a network error, a timeout) sends it again with the
 * same key and gets the first answer back, and nothing is admitted twice. Bounded: the oldest
 * keys are forgotten first. Refused prompts are not remembered, so their retry is a new try.
 */
export class IdempotencyKeys {
  private readonly entries = new Map<string, Entry>();

  /**
   * The first admission made with `key`; `undefined` for a new key; `'mismatch'` when the key
   * came with a different request (`fingerprint`) before.
   */
  lookup(key: string, fingerprint: string): RememberedAdmission | 'mismatch' | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    return entry.fingerprint === fingerprint ? entry.admission : 'mismatch';
  }

  remember(key: string, fingerprint: string, admission: RememberedAdmission): void {
    this.entries.set(key, { fingerprint, admission });
    if (this.entries.size > MAX_IDEMPOTENCY_KEYS_PER_SESSION) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
    }
  }
}
