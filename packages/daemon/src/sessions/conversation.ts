import { LinkedQueue } from '@sluice/runtime/queue';
import { copyMessage, messageBytes, type ConversationMessage } from '@sluice/store';

interface StoredMessage {
  message: ConversationMessage;
  bytes: number;
}

/** True when `value` has the shape of a {@link ConversationMessage} (the stores' own check). */
export { isConversationMessage } from '@sluice/store';

/**
 * A session's conversation history, bounded by message count and by UTF-8 bytes of the
 * message texts: appending trims the oldest messages until both bounds hold again (a single
 * message larger than `maxBytes` is trimmed too). Trimming is O(1) per message.
 */
export class ConversationLog {
  private readonly messages = new LinkedQueue<StoredMessage>();
  private bytes = 0;
  private trimmed = 0;

  constructor(
    readonly maxMessages: number,
    readonly maxBytes: number,
    initial: readonly ConversationMessage[] = [],
  ) {
    for (const message of initial) this.append(message);
  }

  /** Messages held now. */
  get length(): number {
    return this.messages.size;
  }

  /** UTF-8 bytes of the held messages' texts. */
  get byteSize(): number {
    return this.bytes;
  }

  /** Messages trimmed so far to stay within the bounds. */
  get trimmedCount(): number {
    return this.trimmed;
  }

  /** Appends a copy of `message`, then trims the oldest messages while over a bound. */
  append(message: ConversationMessage): void {
    const copy = copyMessage(message);
    const bytes = messageBytes(copy);
    this.messages.enqueue({ message: copy, bytes });
    this.bytes += bytes;
    while (this.messages.size > this.maxMessages || this.bytes > this.maxBytes) {
      const oldest = this.messages.dequeue();
      if (oldest === undefined) break;
      this.bytes -= oldest.bytes;
      this.trimmed++;
    }
  }

  /** A copy of the history, oldest first. */
  snapshot(): ConversationMessage[] {
    const result: ConversationMessage[] = [];
    for (const stored of this.messages) result.push(copyMessage(stored.message));
    return result;
  }
}
