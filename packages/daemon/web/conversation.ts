// A session's conversation as the page shows it, folded from the session's events (PROTOCOL §6):
// messages, thoughts, tool calls, plans, permission requests and turn ends, plus the prompts
// still pending. Pure state, no DOM: each item carries a revision, bumped when it changes, so
// the view re-renders only what changed (a long session stays cheap).

/** One event of the stream, as the SDK yields it. */
export interface StreamEvent {
  id?: number;
  type: string;
  data: unknown;
  promptId?: string;
}

/** A file change of a tool call (ACP `diff` content). */
export interface FileDiff {
  path: string;
  oldText: string | null;
  newText: string;
}

/** A permission option offered to the person. */
export interface PermissionOption {
  optionId: string;
  name: string;
  kind: string;
}

interface Base {
  /** Stable key of the item in the list. */
  key: string;
  /** Bumped on every change: the view's memo key. */
  rev: number;
  promptId: string | undefined;
}

/** What the page draws, in order. */
export type Item =
  | (Base & { kind: 'user' | 'agent' | 'thought'; text: string })
  | (Base & {
      kind: 'tool';
      toolCallId: string;
      title: string;
      status: string;
      input: string | undefined;
      output: string[];
      diffs: FileDiff[];
    })
  | (Base & { kind: 'plan'; entries: Array<{ content: string; status: string; priority: string }> })
  | (Base & {
      kind: 'permission';
      requestId: string;
      title: string;
      options: PermissionOption[];
      outcome: string | undefined;
    })
  | (Base & { kind: 'end'; stopReason: string | undefined; error: string | undefined });

type Record_ = Record<string, unknown>;
const obj = (value: unknown): Record_ =>
  typeof value === 'object' && value !== null ? (value as Record_) : {};
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** The text of ACP content (a block, or a list of `{type:'content', content}` entries). */
function textOf(content: unknown): string {
  const block = obj(content);
  if (block['type'] === 'text') return str(block['text']) ?? '';
  if (block['type'] === 'content') return textOf(block['content']);
  return '';
}

/** A value shown as text: a string as it is, anything else as indented JSON. */
function shown(value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'string' ? value : JSON.stringify(value, null, 2);
}

/** The folded state of one session's stream. */
export class Conversation {
  /** The items, oldest first; a new array whenever something changed. */
  items: Item[] = [];
  /** The id of the newest event applied: where a reconnect resumes (`Last-Event-ID`). */
  lastEventId = 0;
  /** Admitted prompts that have not ended yet (running and queued). */
  readonly pending = new Set<string>();
  private readonly tools = new Map<string, Item & { kind: 'tool' }>();
  private readonly permissions = new Map<string, Item & { kind: 'permission' }>();
  private nextKey = 0;

  /** Forgets everything: the stream is about to replay the session from its start. */
  reset(): void {
    this.items = [];
    this.lastEventId = 0;
    this.pending.clear();
    this.tools.clear();
    this.permissions.clear();
  }

  /** Applies one event; false when it changed nothing (a duplicate, or a type the page ignores). */
  apply(event: StreamEvent): boolean {
    if (event.id !== undefined) {
      if (event.id <= this.lastEventId) return false;
      this.lastEventId = event.id;
    }
    const data = obj(event.data);
    const promptId = event.promptId ?? str(data['promptId']);
    switch (event.type) {
      case 'session_update':
        return this.update(obj(data['update']), promptId);
      case 'pending_prompt_added':
      case 'pending_prompt_started':
        if (promptId !== undefined) this.pending.add(promptId);
        return true;
      case 'turn_complete':
      case 'turn_error':
        return this.end(event.type, data, promptId);
      case 'permission_request':
        return this.ask(data, promptId);
      case 'permission_resolved':
      case 'permission_already_resolved':
        return this.resolved(data);
      default:
        return false;
    }
  }

  /** A prompt the daemon admitted (its `202`), before its events arrive. */
  admitted(promptId: string): void {
    this.pending.add(promptId);
  }

  private update(update: Record_, promptId: string | undefined): boolean {
    const kind = str(update['sessionUpdate']);
    if (kind === 'user_message_chunk' || kind === 'agent_message_chunk' || kind === 'agent_thought_chunk') {
      const text = textOf(update['content']);
      if (kind === 'user_message_chunk' && promptId !== undefined) this.pending.add(promptId);
      if (text === '') return false;
      this.appendText(
        kind === 'user_message_chunk' ? 'user' : kind === 'agent_message_chunk' ? 'agent' : 'thought',
        text,
        promptId,
      );
      return true;
    }
    if (kind === 'tool_call' || kind === 'tool_call_update') return this.tool(update, promptId);
    if (kind === 'plan') {
      const entries = (Array.isArray(update['entries']) ? update['entries'] : []).map((entry) => {
        const e = obj(entry);
        return {
          content: str(e['content']) ?? '',
          status: str(e['status']) ?? '',
          priority: str(e['priority']) ?? '',
        };
      });
      this.push({ kind: 'plan', key: this.key(), rev: 0, promptId, entries });
      return true;
    }
    return false;
  }

  private appendText(kind: 'user' | 'agent' | 'thought', text: string, promptId: string | undefined): void {
    const last = this.items[this.items.length - 1];
    if (last !== undefined && last.kind === kind && last.promptId === promptId) {
      this.replaceLast({ ...last, text: last.text + text, rev: last.rev + 1 });
      return;
    }
    this.push({ kind, key: this.key(), rev: 0, promptId, text });
  }

  private tool(update: Record_, promptId: string | undefined): boolean {
    const id = str(update['toolCallId']) ?? '';
    const known = this.tools.get(id);
    const content = Array.isArray(update['content']) ? update['content'] : [];
    const diffs: FileDiff[] = [];
    const output: string[] = [];
    for (const entry of content) {
      const e = obj(entry);
      if (e['type'] === 'diff')
        diffs.push({
          path: str(e['path']) ?? '',
          oldText: str(e['oldText']) ?? null,
          newText: str(e['newText']) ?? '',
        });
      else {
        const text = textOf(e);
        if (text !== '') output.push(text);
      }
    }
    const raw = shown(update['rawOutput']);
    if (raw !== undefined && output.length === 0) output.push(raw);
    const next: Item & { kind: 'tool' } = {
      kind: 'tool',
      key: known?.key ?? this.key(),
      rev: (known?.rev ?? -1) + 1,
      promptId: known?.promptId ?? promptId,
      toolCallId: id,
      title: str(update['title']) ?? known?.title ?? id,
      status: str(update['status']) ?? known?.status ?? 'pending',
      input: shown(update['rawInput']) ?? known?.input,
      output: output.length > 0 ? output : (known?.output ?? []),
      diffs: diffs.length > 0 ? diffs : (known?.diffs ?? []),
    };
    this.tools.set(id, next);
    if (known === undefined) this.push(next);
    else this.items = this.items.map((item) => (item === known ? next : item));
    return true;
  }

  private ask(data: Record_, promptId: string | undefined): boolean {
    const requestId = str(data['requestId']);
    if (requestId === undefined || this.permissions.has(requestId)) return false;
    const toolCall = obj(data['toolCall']);
    const options = (Array.isArray(data['options']) ? data['options'] : []).map((option) => {
      const o = obj(option);
      return { optionId: str(o['optionId']) ?? '', name: str(o['name']) ?? '', kind: str(o['kind']) ?? '' };
    });
    const item: Item & { kind: 'permission' } = {
      kind: 'permission',
      key: this.key(),
      rev: 0,
      promptId,
      requestId,
      title: str(toolCall['title']) ?? 'The agent asks for permission',
      options,
      outcome: undefined,
    };
    this.permissions.set(requestId, item);
    this.push(item);
    return true;
  }

  private resolved(data: Record_): boolean {
    const requestId = str(data['requestId']);
    const known = requestId === undefined ? undefined : this.permissions.get(requestId);
    if (known === undefined || known.outcome !== undefined) return false;
    const outcome = obj(data['outcome']);
    const optionId = str(outcome['optionId']) ?? str(obj(outcome['outcome'])['optionId']);
    const chosen = known.options.find((option) => option.optionId === optionId);
    const next = {
      ...known,
      rev: known.rev + 1,
      outcome: chosen?.name ?? str(outcome['outcome']) ?? 'resolved',
    };
    this.permissions.set(known.requestId, next);
    this.items = this.items.map((item) => (item === known ? next : item));
    return true;
  }

  private end(type: string, data: Record_, promptId: string | undefined): boolean {
    if (promptId !== undefined) this.pending.delete(promptId);
    const error = type === 'turn_error' ? (str(data['message']) ?? 'the turn failed') : undefined;
    this.push({ kind: 'end', key: this.key(), rev: 0, promptId, stopReason: str(data['stopReason']), error });
    return true;
  }

  private push(item: Item): void {
    this.items = [...this.items, item];
  }

  private replaceLast(item: Item): void {
    const items = this.items.slice();
    items[items.length - 1] = item;
    this.items = items;
  }

  private key(): string {
    return `i${this.nextKey++}`;
  }
}
