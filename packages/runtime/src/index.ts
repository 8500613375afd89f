// `@sluice/runtime`: the model runtime's public face. The OpenAI-compatible provider is on
// `@sluice/runtime/openai`, the Anthropic one on `@sluice/runtime/anthropic`, the queue on
// `@sluice/runtime/queue`, test doubles on `@sluice/runtime/testing`.

export { ModelRuntime, type ModelRuntimeOptions } from './gateway/model-runtime.js';
export { SharedModelRuntime, type SharedModelRuntimeOptions } from './gateway/shared-model-runtime.js';
export type { CallOptions, ModelGateway, ModelStream } from './gateway/model-gateway.js';
export {
  DEFAULT_ALIAS,
  ModelCatalogue,
  ModelNotFoundError,
  mayFallBack,
  type CatalogueAnswer,
  type CatalogueModel,
  type CatalogueModelOptions,
  type CatalogueStream,
} from './catalogue/index.js';
export { contentText } from './types.js';
export { RawJson, plainJson } from './raw-json.js';
export type {
  ChatMessage,
  ContentPart,
  GenerationStopReason,
  ToolCall,
  ToolCallDelta,
  GenerationRequest,
  ModelProvider,
  ModelResponse,
  ModelStreamEvent,
  ProviderCallOptions,
  ToolSpec,
  Usage,
} from './types.js';
export { MAX_TIMER_MS, systemClock, type Clock, type TimerHandle } from './clock.js';
export { rethrowLater, type ErrorReporter } from './report-error.js';

export {
  BudgetError,
  CancelledError,
  InvalidTimeoutError,
  ModelClosureFailure,
  ModelRuntimeError,
  OverloadedError,
  ProviderError,
  QueueTimeoutError,
  RecordingError,
  RequestTooLargeError,
  RuntimeStoppedError,
  TimeoutError,
  type BudgetReason,
  type RecordingEvidence,
  type TimeoutPhase,
  type UpstreamError,
} from './errors.js';

export { TaskBudget, type SpentBefore, type TaskBudgetLimits, type TaskUsage } from './budget/task-budget.js';
export { reservedUsage, spendOf, type TaskSpend } from './budget/spend.js';
export { runReportOf, type CallRunReport, type TaskRunReport } from './budget/run-report.js';
export { costOf, type Pricing } from './budget/pricing.js';

export { DEFAULT_MAX_WAITING, DEFAULT_SCHEDULER_LIMITS, type SchedulerConfig } from './scheduler/config.js';
export { Scheduler, type SchedulerObserver, type SchedulerOptions } from './scheduler/scheduler.js';
export { finishedCall, type FinishedCall } from './gateway/call.js';

export {
  appendThroughWrite,
  tell,
  type AppendListener,
  type CallCorrelation,
  type CallPhases,
  type Journal,
  type JournalRecord,
  type ModelRequestRecord,
  type ModelResultRecord,
  type RecordedOptions,
} from './journal/records.js';
export { TEMPORARY_TASK_PREFIX } from './journal/records.js';
export type { JournalEntry, JournalFilter } from './journal/journal-filter.js';
export { JournalClosedError, JournalSchemaTooNewError, JournalWriteError } from './journal/journal-errors.js';
export { MemoryJournal, type MemoryJournalOptions } from './journal/memory-journal.js';
export { SqliteJournal } from './journal/sqlite-journal.js';
export { SQLITE_PAGE_CACHE_KIB, openSqlite } from './sqlite-connection.js';
export type { SqliteJournalOptions } from './journal/sqlite-journal-options.js';
export type { SqliteJournalStats } from './journal/sqlite-batch-writer.js';
export { JOURNAL_SCHEMA_VERSION } from './journal/sqlite-schema.js';
export { SqliteJournalPruner, type PruneBatch } from './journal/sqlite-journal-pruner.js';
export { INTERRUPTED_MESSAGE, interruptedResult, type OpenCallRequest } from './journal/sqlite-reconcile.js';

export {
  DEFAULT_ANTHROPIC_MAX_TOKENS,
  EchoProvider,
  estimateTokens,
  type EchoProviderOptions,
} from './providers/index.js';
export { CallIdGenerator } from './ids.js';
export type { CapacityClaim, CapacityEvents, CapacityPort } from './scheduler/capacity-port.js';
export { SharedScheduler, type SharedSchedulerOptions } from './scheduler/shared-scheduler.js';
export { CappedScheduler, type CappedSchedulerOptions } from './scheduler/capped-scheduler.js';
export { TotalSlotCap, type CapMember } from './scheduler/total-slot-cap.js';
export type { Job } from './scheduler/job.js';
