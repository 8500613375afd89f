import { messageBytes } from './conversation-delta.js';
import type { ConversationMessage } from './session-record.js';

/** What the store last saved of one session: its messages `[firstSeq, firstSeq + messages.length)`. */
interface CachedConversation {
  revision: number;
  messages: readonly ConversationMessage[];
  bytes: number;
}

/**
 * The message text of the conversations a session store (the daemon's SQLite one, the fleet's
 * PostgreSQL one) last saved or loaded, so that a save finds the messages to append without
 * reading the stored ones back. Bounded by `maxBytes` of message text, least recently
 * remembered dropped first; `0` keeps nothing.
 */
export class ConversationCache {
  /** Least recently used first. */
  private readonly entries = new Map<string, CachedConversation>();
  private bytes = 0;

  constructor(readonly maxBytes: number) {}

  /** The cached messages of the session when they are those of `revision`. */
  messages(sessionId: string, revision: number): readonly ConversationMessage[] | undefined {
    const cached = this.entries.get(sessionId);
    return cached !== undefined && cached.revision === revision ? cached.messages : undefined;
  }

  /** Keeps `messages` as the session's `revision`, dropping the oldest entries beyond the bound. */
  remember(sessionId: string, revision: number, messages: readonly ConversationMessage[]): void {
    this.forget(sessionId);
    if (this.maxBytes === 0) return;
    let bytes = 0;
    for (const message of messages) bytes += messageBytes(message);
    if (bytes > this.maxBytes) return;
    this.entries.set(sessionId, { revision, messages, bytes });
    this.bytes += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(oldest);
      this.bytes -= entry.bytes;
    }
  }

  forget(sessionId: string): void {
    const entry = this.entries.get(sessionId);
    if (entry === undefined) return;
    this.entries.delete(sessionId);
    this.bytes -= entry.bytes;
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
