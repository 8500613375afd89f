import type { ConversationMessage } from './session-record.js';

// Every session store — the daemon's SQLite one and the fleet's PostgreSQL one — saves a
// history by its delta: the messages a turn appended, and the deletion of those trimmed.

/** True when two messages have the same role, text, name and tool call id. */
export function sameMessage(a: ConversationMessage, b: ConversationMessage): boolean {
  return (
    a.role === b.role &&
    a.content === b.content &&
    (a.name ?? undefined) === (b.name ?? undefined) &&
    (a.toolCallId ?? undefined) === (b.toolCallId ?? undefined)
  );
}

/**
 * The length of the longest suffix of `stored` that is also a prefix of `next`: the messages
 * a save can keep. A session's history only grows at its end and is trimmed at its start, so
 * between two saves `next` is `stored` less its oldest `stored.length - overlap` messages, plus
 * the messages appended after them. Any overlap this returns is exact (messages compared
 * field by field), so the store stays correct even for a `next` that was not made that way.
 * Knuth–Morris–Pratt over messages: O(stored.length + next.length) comparisons.
 */
export function conversationOverlap(
  stored: readonly ConversationMessage[],
  next: readonly ConversationMessage[],
): number {
  const patternLength = Math.min(stored.length, next.length);
  if (patternLength === 0) return 0;
  // failure[i]: length of the longest proper prefix of next[0..i] that is also its suffix.
  const failure = new Array<number>(patternLength).fill(0);
  for (let i = 1, k = 0; i < patternLength; i++) {
    while (k > 0 && !sameMessage(at(next, i), at(next, k))) k = at(failure, k - 1);
    if (sameMessage(at(next, i), at(next, k))) k++;
    failure[i] = k;
  }
  // Only the last `patternLength` stored messages can take part in a suffix that short.
  let matched = 0;
  for (let i = stored.length - patternLength; i < stored.length; i++) {
    while (matched > 0 && !sameMessage(at(stored, i), at(next, matched))) matched = at(failure, matched - 1);
    if (sameMessage(at(stored, i), at(next, matched))) matched++;
    if (matched === patternLength && i < stored.length - 1) matched = at(failure, matched - 1);
  }
  return matched;
}

/**
 * The index of the first message of the longest suffix of `messages` that holds at most
 * `maxMessages` messages and `maxBytes` UTF-8 bytes of text: exactly what a session's
 * `ConversationLog` keeps when these messages are appended to it one by one.
 */
export function boundedStart(
  messages: readonly ConversationMessage[],
  maxMessages: number,
  maxBytes: number,
): number {
  let bytes = 0;
  let start = messages.length;
  while (start > 0 && messages.length - start < maxMessages) {
    const size = messageBytes(at(messages, start - 1));
    if (bytes + size > maxBytes) break;
    bytes += size;
    start--;
  }
  return start;
}

/** UTF-8 bytes of a message's texts, as the session's history counts them. */
export function messageBytes(message: ConversationMessage): number {
  return (
    Buffer.byteLength(message.content, 'utf8') +
    (message.name === undefined ? 0 : Buffer.byteLength(message.name, 'utf8')) +
    (message.toolCallId === undefined ? 0 : Buffer.byteLength(message.toolCallId, 'utf8'))
  );
}

function at<T>(items: readonly T[], index: number): T {
  return items[index] as T;
}
