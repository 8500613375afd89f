import { setImmediate as turnOfTheLoop } from 'node:timers/promises';
import {
  type ChatMessage,
  type ModelCatalogue,
  type ModelRuntime,
  type TaskBudget,
  type TaskBudgetLimits,
  type Usage,
} from '@sluice/runtime';
import {
  promptText,
  type Agent,
  type AgentTurn,
  type ConversationMessage,
  type SessionUpdate,
  type TurnResult,
} from '../sessions/index.js';
import { nonNegativeInteger } from '../validate.js';
import { explainProviderFailure } from './provider-failure.js';

/** Options of {@link ChatAgent}. */
export interface ChatAgentOptions {
  /** The one model runtime every turn of every session goes through. */
  runtime: ModelRuntime;
  /**
   * The daemon's catalogue: a turn of a session that picked a model (`AgentTurn.model`) calls
   * that model (with its fallbacks). Turns naming no model go to `runtime`.
   */
  models?: ModelCatalogue;
  /** Sent as the first message of every turn when set. */
  systemPrompt?: string;
  /** Limits of each session's task budget; unlimited when absent. */
  budgetLimits?: TaskBudgetLimits;
  /** Model name; the provider's default when absent. */
  model?: string;
  /**
   * Bytes of conversation history (message texts, UTF-8) sent with each turn, newest first; an
   * older message that does not fit is left out, with all before it. Default: all of it.
   */
  contextMaxBytes?: number;
  /**
   * Durable budgets: a turn whose prompt names a `budgetId` charges its model calls to that
   * budget instead of the session's (issue 21).
   */
  budgets?: { open(budgetId: string): Promise<TaskBudget> };
}

/** Chunks a turn publishes before it lets the event loop turn (sockets flush, other sessions run). */
const YIELD_EVERY_CHUNKS = 16;

/**
 * The built-in chat agent: one turn is one streamed model call with the conversation so far
 * plus the prompt's text. Each session has one task budget, reused across its turns (SCH-2).
 * The model's token usage is reported as the reference daemon reports it: one empty
 * `agent_message_chunk` carrying `_meta.usage {inputTokens, outputTokens, totalTokens}`, which
 * the official client turns into an `assistant.usage` entry. Runtime errors propagate with
 * their stable `code`, which the bridge reports as `turn_error`.
 */
export class ChatAgent implements Agent {
  private readonly runtime: ModelRuntime;
  private readonly models: ModelCatalogue | undefined;
  private readonly systemPrompt: string | undefined;
  private readonly budgetLimits: TaskBudgetLimits | undefined;
  private readonly model: string | undefined;
  private readonly contextMaxBytes: number;
  private readonly budgets = new Map<string, TaskBudget>();
  private readonly durableBudgets: ChatAgentOptions['budgets'];

  constructor(options: ChatAgentOptions) {
    if (!options?.runtime) throw new TypeError('runtime is required');
    this.runtime = options.runtime;
    this.models = options.models;
    this.systemPrompt = options.systemPrompt;
    this.budgetLimits = options.budgetLimits;
    this.model = options.model;
    this.durableBudgets = options.budgets;
    this.contextMaxBytes =
      options.contextMaxBytes === undefined
        ? Infinity
        : nonNegativeInteger('contextMaxBytes', options.contextMaxBytes);
  }

  /** Sessions that currently hold a budget (bounded by the bridge's session cap). */
  get budgetCount(): number {
    return this.budgets.size;
  }

  /** The session's task budget, created on its first turn. */
  budgetFor(sessionId: string): TaskBudget {
    let budget = this.budgets.get(sessionId);
    if (budget === undefined) {
      budget = this.runtime.createBudget(sessionId, this.budgetLimits);
      this.budgets.set(sessionId, budget);
    }
    return budget;
  }

  /** Drops the session's budget once the session closed (the `Agent` port's hook). */
  sessionClosed(sessionId: string): void {
    this.forgetSession(sessionId);
  }

  /** Drops the session's budget. */
  forgetSession(sessionId: string): void {
    this.budgets.delete(sessionId);
  }

  /**
   * Runs the turn. Its model call waits for room in the runtime when the scheduler is full — in
   * arrival order, within the call's deadline and the turn's life (cancel, close) — rather than
   * failing late: the prompt was accepted (issue 19 item 10, docs/decisions/029).
   */
  async runTurn(turn: AgentTurn): Promise<TurnResult> {
    try {
      return await this.streamTurn(turn);
    } catch (error) {
      throw explainProviderFailure(error);
    }
  }

  private async streamTurn(turn: AgentTurn): Promise<TurnResult> {
    const messages: ChatMessage[] = [];
    if (this.systemPrompt !== undefined) messages.push({ role: 'system', content: this.systemPrompt });
    for (const message of recentHistory(turn.conversation, this.contextMaxBytes))
      messages.push(toChatMessage(message));
    messages.push({ role: 'user', content: promptText(turn.prompt) });

    const budget =
      turn.budgetId !== undefined && this.durableBudgets !== undefined
        ? await this.durableBudgets.open(turn.budgetId)
        : this.budgetFor(turn.sessionId);
    const options = {
      budget,
      sessionId: turn.sessionId,
      turnId: turn.promptId,
      signal: turn.signal,
      waitForCapacity: true,
    };
    // A session's own model goes through the catalogue (its fallbacks too), which asks each
    // model's upstream for its own id; the default model's calls keep the configured `model`.
    const models = this.models;
    const own = turn.model === undefined || models === undefined ? undefined : models.get(turn.model);
    const stream =
      models !== undefined && own !== undefined && own !== models.defaultModel
        ? models.stream(own.name, { messages }, options)
        : this.runtime.stream(
            { messages },
            this.model === undefined ? options : { ...options, model: this.model },
          );
    let text = '';
    let stopReason: TurnResult['stopReason'] = 'end_turn';
    let sinceYield = 0;
    for await (const event of stream) {
      if (event.type === 'delta') {
        if (event.text.length === 0) continue;
        text += event.text;
        turn.emit({ sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: event.text } });
        // A provider that answers faster than the network (the echo model, a burst read from a
        // local server) would otherwise publish the whole answer in one turn of the loop: no
        // socket could flush, so readers that keep up would be evicted, and other sessions wait.
        if (++sinceYield === YIELD_EVERY_CHUNKS) {
          sinceYield = 0;
          await turnOfTheLoop();
        }
      } else if (event.type === 'finished') {
        // The chat agent offers no tools, so a `tool_calls` stop is an ordinary end of turn.
        stopReason = event.stopReason === 'tool_calls' ? 'end_turn' : event.stopReason;
        turn.emit(usageUpdate(event.usage));
      }
    }
    return { stopReason, messages: [{ role: 'assistant', content: text }] };
  }
}

function usageUpdate(usage: Usage): SessionUpdate {
  return {
    sessionUpdate: 'agent_message_chunk',
    content: { type: 'text', text: '' },
    _meta: {
      usage: {
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        totalTokens: usage.inputTokens + usage.outputTokens,
      },
    },
  };
}

function toChatMessage(message: ConversationMessage): ChatMessage {
  const chat: ChatMessage = { role: message.role, content: message.content };
  if (message.name !== undefined) chat.name = message.name;
  if (message.toolCallId !== undefined) chat.toolCallId = message.toolCallId;
  return chat;
}

/**
 * The newest messages of `history` whose texts fit in `maxBytes` together, oldest first: what a
 * turn sends, so that its cost (serializing, journaling, the provider's context) stops growing
 * with the session's age. The session keeps its whole history (within its own bounds).
 */
export function recentHistory(
  history: readonly ConversationMessage[],
  maxBytes: number,
): readonly ConversationMessage[] {
  let bytes = 0;
  let start = history.length;
  while (start > 0) {
    const size = Buffer.byteLength(history[start - 1]!.content, 'utf8');
    if (bytes + size > maxBytes) break;
    bytes += size;
    start--;
  }
  return start === 0 ? history : history.slice(start);
}
