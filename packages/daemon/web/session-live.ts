import {
  DaemonHttpError,
  DaemonPendingPromptLimitError,
  type DaemonClient,
  type PromptAccepted,
} from '@sluice/sdk';
import { Conversation } from './conversation.js';

// One open session in the page: its conversation, folded from the event stream, and what a
// person does to it (prompt, cancel, vote). The stream resumes after a dropped connection from
// the newest event applied (`Last-Event-ID`), and events are applied once by id, so text is
// neither duplicated nor lost; `state_resync_required` starts the conversation over from the
// ring the daemon replays after it.

/** How a prompt's send ended. */
export type SendResult =
  | { ok: true; promptId: string }
  | { ok: false; code: string; message: string; retryAfterMs: number | undefined };

/** The stream's health as the page shows it. */
export type LinkState = 'connecting' | 'live' | 'reconnecting' | 'closed';

export class SessionLive {
  readonly conversation = new Conversation();
  link: LinkState = 'connecting';
  private readonly stop = new AbortController();
  private epoch: string | undefined;
  private frame = 0;

  /** Called (at most once an animation frame) when the conversation or the link changed. */
  onChange: () => void = () => {};

  constructor(
    private readonly client: DaemonClient,
    readonly sessionId: string,
  ) {
    void this.follow();
  }

  /** Sends `text` as a prompt; a full queue answers with its code and `Retry-After`. */
  async send(text: string): Promise<SendResult> {
    try {
      const accepted = (await this.client.promptNonBlocking(this.sessionId, {
        prompt: [{ type: 'text', text }],
      })) as PromptAccepted;
      this.conversation.admitted(accepted.promptId);
      this.notify();
      return { ok: true, promptId: accepted.promptId };
    } catch (error) {
      if (error instanceof DaemonPendingPromptLimitError)
        return { ok: false, code: error.code, message: error.message, retryAfterMs: error.retryAfterMs };
      if (error instanceof DaemonHttpError)
        return { ok: false, code: error.code, message: error.message, retryAfterMs: error.retryAfterMs };
      return { ok: false, code: 'network', message: String(error), retryAfterMs: undefined };
    }
  }

  /** Cancels the running prompt (queued ones stay). */
  cancel(): Promise<void> {
    return this.client.cancel(this.sessionId);
  }

  /** Votes on a permission request; false when another vote was first. */
  async vote(requestId: string, optionId: string): Promise<boolean> {
    try {
      return await this.client.respondToSessionPermission(this.sessionId, requestId, {
        outcome: { outcome: 'selected', optionId },
      });
    } catch (error) {
      if (error instanceof DaemonHttpError && error.status === 404) return false;
      throw error;
    }
  }

  /** Stops following the stream (the page moved to another session). */
  close(): void {
    this.stop.abort();
    this.link = 'closed';
  }

  /** Follows the stream for as long as the page shows the session, re-opening it when it ends. */
  private async follow(): Promise<void> {
    let delay = 250;
    while (!this.stop.signal.aborted) {
      try {
        for await (const event of this.client.subscribeEvents(this.sessionId, {
          lastEventId: this.conversation.lastEventId,
          ...(this.epoch === undefined ? {} : { epoch: this.epoch }),
          onEpoch: (epoch) => (this.epoch = epoch),
          signal: this.stop.signal,
          onSseStreamAccepted: () => this.setLink('live'),
        })) {
          delay = 250;
          if (event.type === 'state_resync_required') this.conversation.reset();
          if (event.type === 'session_closed') this.setLink('closed');
          if (this.conversation.apply(event)) this.notify();
        }
      } catch {
        // a refusal re-opening could not mend (the SDK spent its attempts): wait, try again
      }
      if (this.stop.signal.aborted || this.link === 'closed') return;
      this.setLink('reconnecting');
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, 5_000);
    }
  }

  private setLink(link: LinkState): void {
    if (this.link === link) return;
    this.link = link;
    this.notify();
  }

  /** Coalesces changes into one render per animation frame. */
  private notify(): void {
    if (this.frame !== 0) return;
    this.frame = requestAnimationFrame(() => {
      this.frame = 0;
      this.onChange();
    });
  }
}
