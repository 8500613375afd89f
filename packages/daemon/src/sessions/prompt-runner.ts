import { LinkedQueue } from '@sluice/runtime/queue';
import type { AgentTurn, SessionUpdate } from './agent.js';
import { PromptDeadlineExceededError, PromptQueueFullError, type SessionClosedError } from './errors.js';
import {
  describeTicket,
  type BranchTicket,
  type PendingPromptInfo,
  type PromptOutcome,
  type PromptTicket,
  type QueueItem,
} from './queue-items.js';
import type { RunnerHost, RunnerServices } from './runner-host.js';
import { SESSION_EVENT, type SessionEvent } from './session-events.js';
import { errorOutcome, isTurnResult, turnOutcome, type AgentOutcome } from './turn-outcome.js';

/** Stands in for the agent's result when the turn was aborted before the agent started. */
const SKIPPED: unique symbol = Symbol('skipped');

/**
 * One session's FIFO of prompts and branches, served one at a time (SPEC BP-1, BP-3): the
 * running turn, its cancel and deadline, and the settling of every admitted prompt — exactly
 * one terminal event, and its pending slot released once, in the step that settles `done`.
 */
export class PromptRunner {
  private readonly queue = new LinkedQueue<QueueItem>();
  private readonly prompts = new Map<string, PromptTicket>();
  /** True from the start of an item until it is fully done (agent returned, session saved). */
  private busy = false;
  /** The item holding the runner, while it does. */
  private active: QueueItem | undefined;
  private pending = 0;
  /** The last refusal of a full queue, reused while the count is the same (see `refusal`). */
  private lastRefusal: PromptQueueFullError | undefined;

  constructor(
    private readonly host: RunnerHost,
    private readonly services: RunnerServices,
  ) {}

  /** Admitted prompts not yet settled: queued plus running (SPEC BP-1). */
  get pendingPromptCount(): number {
    return this.pending;
  }

  /** True while an item runs: a prompt admitted now waits in the FIFO. */
  get isBusy(): boolean {
    return this.busy;
  }

  /** Whether a prompt's turn is running (or its decided end is waiting for the terminal delay). */
  get hasActivePrompt(): boolean {
    const active = this.active;
    return active?.kind === 'prompt' && (active.phase === 'running' || active.phase === 'finishing');
  }

  /**
   * The refusal of a full queue. Under overload a session refuses at the rate prompts arrive,
   * and every refusal while the count stands is the same immutable value, so one instance
   * serves them all (SPEC BP-8; docs/decisions/005).
   */
  refusal(limit: number): PromptQueueFullError {
    const last = this.lastRefusal;
    if (last !== undefined && last.pendingCount === this.pending) return last;
    return (this.lastRefusal = new PromptQueueFullError(this.host.sessionId, limit, this.pending));
  }

  /** Takes an admitted prompt: counts it, arms its deadline and signal, and queues or starts it. */
  enqueuePrompt(ticket: PromptTicket, signal: AbortSignal | undefined): void {
    this.pending++;
    this.prompts.set(ticket.promptId, ticket);
    if (ticket.deadlineMs !== undefined)
      ticket.timer = this.services.clock.setTimer(
        () => this.guard('deadline', () => this.onDeadline(ticket)),
        ticket.deadlineMs,
      );
    if (signal !== undefined) {
      const onAbort = (): void => this.guard('signal', () => this.cancelTicket(ticket));
      signal.addEventListener('abort', onAbort, { once: true });
      ticket.detachSignal = () => signal.removeEventListener('abort', onAbort);
    }
    ticket.node = this.queue.enqueue(ticket);
    if (ticket.queuedBehind)
      this.promptEvent(ticket, SESSION_EVENT.pendingPromptAdded, {
        sessionId: this.host.sessionId,
        promptId: ticket.promptId,
        text: ticket.text,
        queuedAt: ticket.queuedAt,
      });
    else this.pump();
  }

  /** Queues a branch behind everything admitted before it. */
  enqueueBranch(ticket: BranchTicket): void {
    ticket.node = this.queue.enqueue(ticket);
    this.pump();
  }

  /** The pending prompts, the running one first, then the queue in FIFO order. */
  pendingPrompts(): PendingPromptInfo[] {
    const result: PendingPromptInfo[] = [];
    const active = this.active;
    if (active?.kind === 'prompt' && active.phase !== 'settled')
      result.push(describeTicket(active, 'running'));
    for (const item of this.queue) if (item.kind === 'prompt') result.push(describeTicket(item, 'queued'));
    return result;
  }

  /** Aborts the running prompt; false when none runs. */
  cancelRunning(): boolean {
    const active = this.active;
    return active?.kind === 'prompt' ? this.cancelTicket(active) : false;
  }

  /** Removes a queued prompt in O(1), or cancels the running one; false when unknown or ending. */
  remove(promptId: string): boolean {
    const ticket = this.prompts.get(promptId);
    return ticket === undefined ? false : this.cancelTicket(ticket);
  }

  /**
   * Ends everything for a closing session: the running prompt and every queued one settle with
   * `error`, queued branches are abandoned. `announce` publishes `session_closed` after them;
   * then the runner is released if the agent already returned, and an idle runner finishes the close.
   */
  close(error: SessionClosedError, announce: () => void): void {
    const outcome = errorOutcome(error);
    const active = this.active;
    if (active?.kind === 'prompt' && active.phase !== 'settled') {
      this.settle(active, outcome);
      active.controller?.abort(error);
    }
    for (let item = this.queue.dequeue(); item !== undefined; item = this.queue.dequeue()) {
      item.node = undefined;
      if (item.kind === 'prompt') this.settle(item, outcome);
      else item.abandon(error);
    }
    announce();
    // A prompt whose agent already returned (its terminal event was waiting for the delay)
    // frees the runner now; a running agent frees it when it returns.
    if (active?.kind === 'prompt') this.release(active);
    if (!this.busy) this.host.finishClose();
  }

  /** Starts queued items while the runner is free. */
  private pump(): void {
    while (!this.busy && this.host.state === 'open') {
      const item = this.queue.dequeue();
      if (item === undefined) return;
      item.node = undefined;
      if (item.kind === 'prompt') this.startPrompt(item);
      else this.startBranch(item);
    }
  }

  private startPrompt(ticket: PromptTicket): void {
    this.busy = true;
    this.active = ticket;
    ticket.phase = 'running';
    const controller = new AbortController();
    ticket.controller = controller;
    const { sessionId } = this.host;
    if (ticket.queuedBehind)
      this.promptEvent(ticket, SESSION_EVENT.pendingPromptStarted, {
        sessionId,
        promptId: ticket.promptId,
        text: ticket.text,
      });
    this.promptEvent(ticket, SESSION_EVENT.sessionUpdate, {
      sessionId,
      update: { sessionUpdate: 'user_message_chunk', content: { type: 'text', text: ticket.text } },
    });
    const turn: AgentTurn = {
      sessionId,
      cwd: this.host.cwd,
      workspaceCwd: this.host.workspaceCwd,
      promptId: ticket.promptId,
      prompt: ticket.prompt,
      conversation: this.host.history(),
      signal: controller.signal,
      emit: (update) => this.emitUpdate(ticket, update),
      ...(ticket.budgetId === undefined ? {} : { budgetId: ticket.budgetId }),
      ...(this.host.model === undefined ? {} : { model: this.host.model }),
    };
    // The agent starts on a microtask: admission never runs agent code, and nothing it does re-enters the runner mid-admission.
    Promise.resolve()
      .then<unknown>(() => (controller.signal.aborted ? SKIPPED : this.services.agent.runTurn(turn)))
      .then(
        (result) =>
          this.onAgentSettled(
            ticket,
            result === SKIPPED ? { type: 'skipped' } : { type: 'returned', result },
          ),
        (error: unknown) => this.onAgentSettled(ticket, { type: 'threw', error }),
      );
  }

  private startBranch(ticket: BranchTicket): void {
    this.busy = true;
    this.active = ticket;
    const opening = ticket.start();
    if (opening === undefined) {
      this.active = undefined;
      this.busy = false; // the pump loop that started this branch goes on
      return;
    }
    void opening.then(() => {
      this.active = undefined;
      this.idle();
    });
  }

  private emitUpdate(ticket: PromptTicket, update: SessionUpdate): void {
    if (typeof update !== 'object' || update === null || typeof update.sessionUpdate !== 'string')
      throw new TypeError(
        `emit expects an object with a string "sessionUpdate", got ${JSON.stringify(update)}`,
      );
    if (ticket.phase !== 'running' || this.host.state !== 'open') return;
    this.promptEvent(ticket, SESSION_EVENT.sessionUpdate, { sessionId: this.host.sessionId, update });
  }

  private onAgentSettled(ticket: PromptTicket, outcome: AgentOutcome): void {
    this.guard('agent', () => {
      ticket.agentDone = true;
      if (ticket.phase === 'running') {
        if (outcome.type === 'returned' && isTurnResult(outcome.result)) {
          this.host.recordTurn(ticket.text, outcome.result.messages);
          ticket.dirty = true;
        }
        this.settleAfterDelay(ticket, turnOutcome(outcome, ticket.promptId, ticket.cancelRequested));
      }
      this.release(ticket);
    });
  }

  /** Settles with the agent-decided outcome now, or `terminalEventDelayMs` after admission. */
  private settleAfterDelay(ticket: PromptTicket, outcome: PromptOutcome): void {
    const wait = ticket.admittedAt + this.services.terminalEventDelayMs - this.services.clock.now();
    if (wait <= 0) {
      this.settle(ticket, outcome);
      return;
    }
    ticket.phase = 'finishing';
    ticket.pendingOutcome = outcome;
    this.clearTimer(ticket);
    ticket.timer = this.services.clock.setTimer(
      () =>
        this.guard('terminal delay', () => {
          ticket.timer = undefined;
          const pending = ticket.pendingOutcome;
          if (ticket.phase !== 'finishing' || pending === undefined) return;
          this.settle(ticket, pending);
          this.release(ticket);
        }),
      wait,
    );
  }

  /** Frees the runner once the prompt settled and its agent returned; saves, then goes on. */
  private release(ticket: PromptTicket): void {
    if (this.active !== ticket || ticket.phase !== 'settled' || !ticket.agentDone) return;
    this.active = undefined;
    const saving = ticket.dirty && this.host.state === 'open' ? this.host.save() : undefined;
    if (saving === undefined) this.idle();
    else {
      ticket.dirty = false;
      void saving.then(() => this.idle());
    }
  }

  private idle(): void {
    this.guard('runner', () => {
      this.busy = false;
      if (this.host.state === 'closing') this.host.finishClose();
      else this.pump();
    });
  }

  /**
   * Ends a prompt exactly once: releases its slot, publishes its one terminal event (and
   * `pending_prompt_completed` when it had queued), and settles the caller's promise.
   */
  private settle(ticket: PromptTicket, outcome: PromptOutcome): void {
    if (ticket.phase === 'settled') return;
    const neverRan = ticket.phase === 'queued';
    ticket.phase = 'settled';
    ticket.pendingOutcome = undefined;
    if (neverRan) ticket.agentDone = true;
    this.clearTimer(ticket);
    ticket.detachSignal?.();
    ticket.detachSignal = undefined;
    this.prompts.delete(ticket.promptId);
    this.pending--;
    this.services.ledger.settle({ sessionId: this.host.sessionId, promptId: ticket.promptId });
    this.host.touch();
    // A removed prompt leaves the queue before it ends (the reference daemon's order); one that
    // ran ends, then leaves.
    if (ticket.queuedBehind && neverRan) this.pendingCompleted(ticket, 'removed');
    this.publishTerminal(ticket, outcome);
    if (ticket.queuedBehind && !neverRan) this.pendingCompleted(ticket, 'completed');
    if (outcome.kind === 'complete')
      ticket.deferred.resolve({ promptId: ticket.promptId, stopReason: outcome.stopReason });
    else ticket.deferred.reject(outcome.error);
  }

  private pendingCompleted(ticket: PromptTicket, state: 'removed' | 'completed'): void {
    this.promptEvent(ticket, SESSION_EVENT.pendingPromptCompleted, {
      sessionId: this.host.sessionId,
      promptId: ticket.promptId,
      state,
    });
  }

  private publishTerminal(ticket: PromptTicket, outcome: PromptOutcome): void {
    const { sessionId } = this.host;
    const { promptId } = ticket;
    if (outcome.kind === 'complete') {
      this.promptEvent(ticket, SESSION_EVENT.turnComplete, {
        sessionId,
        promptId,
        stopReason: outcome.stopReason,
      });
      return;
    }
    const data: Record<string, unknown> = { sessionId, promptId, message: outcome.message };
    for (const key of ['code', 'errorKind', 'retryAfterMs', 'retryable'] as const)
      if (outcome[key] !== undefined) data[key] = outcome[key];
    this.promptEvent(ticket, SESSION_EVENT.turnError, data);
    const failure = {
      sessionId,
      promptId,
      code: outcome.code,
      errorKind: outcome.errorKind,
      message: outcome.message,
    };
    this.guard(`onTurnError ${promptId}`, () => this.services.onTurnError(failure));
  }

  /** Removes a queued prompt, or aborts the running one; false when it is already ending. */
  private cancelTicket(ticket: PromptTicket): boolean {
    if (this.host.state !== 'open') return false;
    if (ticket.phase === 'queued') {
      this.unqueue(ticket);
      this.settle(ticket, { kind: 'complete', stopReason: 'cancelled' });
      return true;
    }
    if (ticket.phase !== 'running' || ticket.cancelRequested) return false;
    ticket.cancelRequested = true;
    this.abortTurn(ticket, undefined, 'cancel');
    return true;
  }

  private onDeadline(ticket: PromptTicket): void {
    ticket.timer = undefined;
    if (ticket.phase !== 'queued' && ticket.phase !== 'running') return;
    const error = new PromptDeadlineExceededError(
      this.host.sessionId,
      ticket.promptId,
      ticket.deadlineMs ?? 0,
    );
    const wasRunning = ticket.phase === 'running';
    if (!wasRunning) this.unqueue(ticket);
    this.settle(ticket, errorOutcome(error));
    if (wasRunning) this.abortTurn(ticket, error, 'deadline');
  }

  private abortTurn(ticket: PromptTicket, reason: unknown, why: 'cancel' | 'deadline'): void {
    this.promptEvent(ticket, SESSION_EVENT.promptCancelled, {
      sessionId: this.host.sessionId,
      promptId: ticket.promptId,
      reason: why,
    });
    ticket.controller?.abort(reason);
  }

  private unqueue(ticket: PromptTicket): void {
    if (ticket.node !== undefined) this.queue.remove(ticket.node);
    ticket.node = undefined;
  }

  private clearTimer(ticket: PromptTicket): void {
    if (ticket.timer === undefined) return;
    this.services.clock.clearTimer(ticket.timer);
    ticket.timer = undefined;
  }

  private promptEvent(ticket: PromptTicket, type: string, data: Record<string, unknown>): void {
    const event: SessionEvent = { type, data, promptId: ticket.promptId };
    if (ticket.clientId !== undefined) event.originatorClientId = ticket.clientId;
    this.host.publish(event);
  }

  /** Runs work from a timer, listener or promise callback; never throws. */
  private guard(context: string, work: () => void): void {
    try {
      work();
    } catch (error) {
      this.services.onError(error, context);
    }
  }
}
