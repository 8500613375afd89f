import type { Clock } from '@sluice/runtime';
import type { Agent, ConversationMessage } from './agent.js';
import type { TurnFailure } from './options.js';
import type { PromptLedger } from './prompt-ledger.js';
import type { SessionEvent } from './session-events.js';

/** Where a session is in its life: it admits only while `open`. */
export type SessionState = 'open' | 'closing' | 'closed';

/** What a runner needs of the session it serves. */
export interface RunnerHost {
  readonly sessionId: string;
  /** The session's working directory, given to the agent with every turn. */
  readonly cwd: string;
  readonly workspaceCwd: string;
  /** The session's catalogue model, given to the agent with every turn; absent: the default. */
  readonly model: string | undefined;
  readonly state: SessionState;
  /** The history a new turn starts from. */
  history(): ConversationMessage[];
  publish(event: SessionEvent): void;
  /** Appends a finished turn to the history. */
  recordTurn(text: string, messages: readonly unknown[] | undefined): void;
  /** Marks the session changed now (`updatedAt`). */
  touch(): void;
  /** Saves the session; `undefined` when there is no store. Never rejects. */
  save(): Promise<void> | undefined;
  /** The runner went idle while the session was closing. */
  finishClose(): void;
}

/** What every runner of a bridge shares. */
export interface RunnerServices {
  readonly agent: Agent;
  readonly clock: Clock;
  readonly terminalEventDelayMs: number;
  readonly onError: (error: unknown, context: string) => void;
  readonly onTurnError: (failure: TurnFailure) => void;
  /** Where accepted prompts are recorded; told when each ends. */
  readonly ledger: PromptLedger;
}
