import { Component } from 'preact';
import type { FileDiff, Item } from './conversation.js';
import { Markdown } from './markdown-view.js';

// How each item of a conversation is drawn. Model text goes through the markdown renderer and
// its sanitiser (markdown-view.tsx); everything else is text nodes, so nothing the agent says is run.

/** The handlers an item needs: a permission vote, a prompt's report. */
export interface ItemActions {
  vote(requestId: string, optionId: string): void;
  report(promptId: string): Promise<unknown>;
}

function Diff({ diff }: { diff: FileDiff }) {
  const before = diff.oldText === null ? [] : diff.oldText.split('\n');
  const after = diff.newText.split('\n');
  const removed = new Set(before.filter((line) => !after.includes(line)));
  const added = new Set(after.filter((line) => !before.includes(line)));
  const lines = [
    ...before.filter((line) => removed.has(line)).map((line) => ['-', line] as const),
    ...after.map((line) => [added.has(line) ? '+' : ' ', line] as const),
  ];
  return (
    <figure class="diff" data-testid="diff">
      <figcaption>{diff.oldText === null ? `new file ${diff.path}` : diff.path}</figcaption>
      <pre>
        {lines.map(([mark, line], i) => (
          <span key={i} class={mark === '+' ? 'add' : mark === '-' ? 'del' : ''}>
            {mark} {line}
            {'\n'}
          </span>
        ))}
      </pre>
    </figure>
  );
}

function Report({ promptId, actions }: { promptId: string; actions: ItemActions }) {
  const load = (event: Event): void => {
    const details = event.currentTarget as HTMLDetailsElement;
    if (!details.open || details.dataset['loaded'] === 'yes') return;
    details.dataset['loaded'] = 'yes';
    const body = details.querySelector('.report-body')!;
    actions.report(promptId).then(
      (report) => (body.textContent = describeReport(report)),
      (error: unknown) => (body.textContent = `No report: ${String(error)}`),
    );
  };
  return (
    <details class="report" onToggle={load}>
      <summary>Report</summary>
      <pre class="report-body">loading…</pre>
    </details>
  );
}

/** A run report as a few readable lines: calls, tokens, cost, time per phase. */
function describeReport(report: unknown): string {
  const totals = (report as { totals?: Record<string, number> }).totals ?? {};
  const n = (key: string): string => String(totals[key] ?? 0);
  return [
    `model calls ${n('calls')}`,
    `tokens in ${n('inputTokens')} · out ${n('outputTokens')}`,
    `cost ${n('costMinor')} (minor units)`,
    `queued ${n('queuedMs')} ms · preparing ${n('preparingMs')} ms · executing ${n('executingMs')} ms · wall ${n('wallMs')} ms`,
  ].join('\n');
}

function ToolCall({ item }: { item: Item & { kind: 'tool' } }) {
  return (
    <section class={`tool status-${item.status}`} data-testid="tool-call" data-status={item.status}>
      <h3>
        <span class="badge">{item.status}</span> {item.title}
      </h3>
      {item.input === undefined ? null : (
        <details>
          <summary>Input</summary>
          <pre>{item.input}</pre>
        </details>
      )}
      {item.diffs.map((diff, i) => (
        <Diff key={i} diff={diff} />
      ))}
      {item.output.length === 0 ? null : (
        <details>
          <summary>Output</summary>
          <pre>{item.output.join('\n')}</pre>
        </details>
      )}
    </section>
  );
}

function Permission({ item, actions }: { item: Item & { kind: 'permission' }; actions: ItemActions }) {
  return (
    <section class="permission" data-testid="permission" data-request-id={item.requestId} aria-live="polite">
      <h3>Permission: {item.title}</h3>
      {item.outcome === undefined ? (
        <div class="options">
          {item.options.map((option) => (
            <button
              key={option.optionId}
              type="button"
              class={option.kind.startsWith('reject') ? 'reject' : 'allow'}
              onClick={() => actions.vote(item.requestId, option.optionId)}
            >
              {option.name}
            </button>
          ))}
        </div>
      ) : (
        <p class="resolved" data-testid="permission-resolved">
          Resolved: {item.outcome}
        </p>
      )}
    </section>
  );
}

function ItemView({ item, actions }: { item: Item; actions: ItemActions }) {
  switch (item.kind) {
    case 'user':
      return (
        <article class="msg user" data-testid="user-message">
          <h3 class="who">You</h3>
          <p class="plain">{item.text}</p>
        </article>
      );
    case 'agent':
      return (
        <article class="msg agent" data-testid="agent-message">
          <h3 class="who">Agent</h3>
          <Markdown id={item.key} text={item.text} />
        </article>
      );
    case 'thought':
      return (
        <details class="thought" data-testid="thought">
          <summary>Thought</summary>
          <p class="plain">{item.text}</p>
        </details>
      );
    case 'tool':
      return <ToolCall item={item} />;
    case 'plan':
      return (
        <section class="plan" data-testid="plan">
          <h3>Plan</h3>
          <ol>
            {item.entries.map((entry, i) => (
              <li key={i} class={`plan-${entry.status}`}>
                {entry.content} <span class="muted">({entry.status})</span>
              </li>
            ))}
          </ol>
        </section>
      );
    case 'permission':
      return <Permission item={item} actions={actions} />;
    case 'end':
      return (
        <div
          class={`end${item.error === undefined ? '' : ' error'}`}
          data-testid="turn-end"
          data-prompt-id={item.promptId}
        >
          <span>{item.error ?? `turn complete (${item.stopReason ?? 'end_turn'})`}</span>
          {item.promptId === undefined ? null : <Report promptId={item.promptId} actions={actions} />}
        </div>
      );
  }
}

interface ItemRowProps {
  item: Item;
  actions: ItemActions;
}

/**
 * One item, drawn again only when it changed (the conversation replaces a changed item's object).
 * A class rather than `preact/compat`'s `memo`: compat hooks into every element the page creates.
 */
export class ItemRow extends Component<ItemRowProps> {
  override shouldComponentUpdate(next: ItemRowProps): boolean {
    return next.item !== this.props.item || next.actions !== this.props.actions;
  }

  override render() {
    return <ItemView item={this.props.item} actions={this.props.actions} />;
  }
}

interface ItemBlockProps {
  items: Item[];
  actions: ItemActions;
}

/**
 * A run of consecutive items, compared as a whole before any of its rows: a redraw while a long
 * session streams in visits a few blocks instead of every drawn row.
 */
export class ItemBlock extends Component<ItemBlockProps> {
  override shouldComponentUpdate(next: ItemBlockProps): boolean {
    const { items, actions } = this.props;
    return (
      next.actions !== actions ||
      next.items.length !== items.length ||
      next.items.some((item, i) => item !== items[i])
    );
  }

  override render() {
    const { items, actions } = this.props;
    return items.map((item) => <ItemRow key={item.key} item={item} actions={actions} />);
  }
}
