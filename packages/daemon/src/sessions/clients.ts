import { InvalidClientIdError } from './errors.js';

/** Client ids travel in `X-Qwen-Client-Id` (PROTOCOL §1). */
export const CLIENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;

/** Throws {@link InvalidClientIdError} unless `clientId` matches {@link CLIENT_ID_PATTERN}. */
export function assertClientIdFormat(clientId: unknown): asserts clientId is string {
  if (typeof clientId !== 'string' || !CLIENT_ID_PATTERN.test(clientId))
    throw new InvalidClientIdError(clientId);
}

/** One client attached to a session. Times are wall-clock epoch milliseconds. */
export interface ClientRecord {
  readonly clientId: string;
  readonly attachedAt: number;
  lastSeenAt: number;
}

/**
 * The clients attached to one session, bounded by `capacity`: registering one more evicts
 * the client seen least recently (it recovers with `resume`, as the SDK does on
 * `invalid_client_id`). Every touch moves a client to the back, so eviction is O(1).
 */
export class ClientRegistry {
  private readonly clients = new Map<string, ClientRecord>();

  constructor(readonly capacity: number) {}

  get size(): number {
    return this.clients.size;
  }

  has(clientId: string): boolean {
    return this.clients.has(clientId);
  }

  /** Registers `clientId` (or refreshes it when present) and returns its record. */
  register(clientId: string, now: number): ClientRecord {
    const existing = this.touch(clientId, now);
    if (existing) return existing;
    if (this.clients.size >= this.capacity) {
      const stalest = this.clients.keys().next();
      if (!stalest.done) this.clients.delete(stalest.value);
    }
    const record: ClientRecord = { clientId, attachedAt: now, lastSeenAt: now };
    this.clients.set(clientId, record);
    return record;
  }

  /** Marks `clientId` as seen now; `undefined` when it is not registered. */
  touch(clientId: string, now: number): ClientRecord | undefined {
    const record = this.clients.get(clientId);
    if (record === undefined) return undefined;
    this.clients.delete(clientId);
    record.lastSeenAt = now;
    this.clients.set(clientId, record);
    return record;
  }

  remove(clientId: string): boolean {
    return this.clients.delete(clientId);
  }
}
