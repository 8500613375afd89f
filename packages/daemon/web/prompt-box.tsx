import { useEffect, useState } from 'preact/hooks';
import type { SendResult } from './session-live.js';

// The prompt box: the draft stays until the daemon admits it. A full queue (`503
// prompt_queue_full`) keeps the text and counts the `Retry-After` down; the session's pending
// prompts show as n / limit, with a button to cancel the running one.

export interface PromptBoxProps {
  pending: number;
  limit: number | null;
  send(text: string): Promise<SendResult>;
  cancel(): void;
}

/** Seconds left until `until` (epoch ms), counted down once a second while positive. */
function useCountdown(until: number): number {
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (until <= Date.now()) return undefined;
    const timer = setInterval(() => setNow(Date.now()), 250);
    return () => clearInterval(timer);
  }, [until]);
  return Math.max(0, Math.ceil((until - now) / 1000));
}

export function PromptBox({ pending, limit, send, cancel }: PromptBoxProps) {
  const [draft, setDraft] = useState('');
  const [error, setError] = useState<string | undefined>(undefined);
  const [until, setUntil] = useState(0);
  const [sending, setSending] = useState(false);
  const left = useCountdown(until);

  const submit = async (event?: Event): Promise<void> => {
    event?.preventDefault();
    const text = draft.trim();
    if (text === '' || sending || left > 0) return;
    setSending(true);
    const result = await send(text);
    setSending(false);
    if (result.ok) {
      setDraft('');
      setError(undefined);
      return;
    }
    setError(
      result.code === 'prompt_queue_full'
        ? 'The session’s queue is full; your draft is kept.'
        : result.message,
    );
    if (result.retryAfterMs !== undefined) setUntil(Date.now() + result.retryAfterMs);
  };

  const onKey = (event: KeyboardEvent): void => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) void submit(event);
  };

  return (
    <form class="prompt-box" onSubmit={submit}>
      <label for="prompt">Prompt</label>
      <textarea
        id="prompt"
        data-testid="prompt"
        rows={3}
        value={draft}
        onInput={(event) => setDraft((event.currentTarget as HTMLTextAreaElement).value)}
        onKeyDown={onKey}
        placeholder="Ask the agent… (Ctrl+Enter sends)"
      />
      <div class="prompt-bar">
        <span class="pending" data-testid="pending" aria-label="pending prompts">
          {pending} / {limit ?? '∞'} pending
        </span>
        {error === undefined ? null : (
          <span class="refusal" role="alert" data-testid="refusal">
            {error}
            {left > 0 ? (
              <>
                {' '}
                Retry in <span data-testid="countdown">{left}</span> s
              </>
            ) : null}
          </span>
        )}
        <button type="button" onClick={cancel} disabled={pending === 0}>
          Cancel running
        </button>
        <button type="submit" data-testid="send" disabled={sending || left > 0 || draft.trim() === ''}>
          Send
        </button>
      </div>
    </form>
  );
}
