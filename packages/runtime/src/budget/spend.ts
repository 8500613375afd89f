import { estimateTokens } from '../providers/echo-provider.js';
import type { JournalRecord, ModelRequestRecord, ModelResultRecord } from '../journal/records.js';
import { contentText, type GenerationRequest, type Usage } from '../types.js';
import { costMicroOf, minorOfMicro, type Pricing } from './pricing.js';

/** What a task spent according to the journal: the start of a durable budget after a restart. */
export interface TaskSpend {
  /** Calls admitted: one per `model_request`. */
  calls: number;
  inputTokens: number;
  outputTokens: number;
  /** Exact cost in millionths of a minor unit (what `TaskBudget` sums). */
  costMicro: number;
  /** `costMicro` in whole minor units, rounded up once. */
  costMinor: number;
  /** Time during which at least one of the task's calls was in flight (union of their spans). */
  activityMs: number;
  /** Calls a killed daemon left (result code `interrupted`), counted at their reserved cost. */
  interruptedCalls: number;
  /** Calls with no result yet (running elsewhere), counted at their reserved cost too. */
  openCalls: number;
}

/** The result code the start-up reconcile gives a call a killed daemon left open (SCH-15). */
const INTERRUPTED = 'interrupted';

/**
 * What a call whose usage is unknown may have used: its input estimated from the request's
 * message texts — the larger of the built-in model's word count and the usual 4 UTF-8 bytes
 * per token, so that neither under-counts — and its output at the request's `maxOutputTokens`,
 * or the `max_completion_tokens` / `max_tokens` a gateway call carries in `extra` (0 when it set
 * none: nothing bounds it, and inventing a number would be a guess).
 */
export function reservedUsage(request: GenerationRequest | undefined): Usage {
  let words = 0;
  let bytes = 0;
  for (const message of request?.messages ?? []) {
    const text = contentText(message.content);
    words += estimateTokens(text);
    bytes += Buffer.byteLength(text, 'utf8');
  }
  return { inputTokens: Math.max(words, Math.ceil(bytes / 4)), outputTokens: maxOutputOf(request) };
}

function maxOutputOf(request: GenerationRequest | undefined): number {
  if (request === undefined) return 0;
  if (request.maxOutputTokens !== undefined) return request.maxOutputTokens;
  for (const field of ['max_completion_tokens', 'max_tokens']) {
    const value = request.extra?.[field];
    if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  }
  return 0;
}

/**
 * Sums a task's journal records into its spend (SCH-2, issue 21): calls are its requests;
 * tokens and cost are its results' usage, except that a call without a usage — `interrupted`
 * by a kill, or still open — counts at its {@link reservedUsage}. Cost is exact from usage
 * with `pricing` (as a live budget sums it), else the recorded `costMinor` of each result.
 * Activity is the union of the calls' spans; an interrupted or open call's span is its
 * recorded timeout at most. Pure: the same records always give the same spend.
 */
export function spendOf(records: readonly JournalRecord[], pricing?: Pricing): TaskSpend {
  const requests = new Map<string, ModelRequestRecord>();
  const results = new Map<string, ModelResultRecord>();
  for (const record of records) {
    if (record.type === 'model_request') requests.set(record.callId, record);
    else results.set(record.callId, record);
  }
  const spend: TaskSpend = {
    calls: requests.size,
    inputTokens: 0,
    outputTokens: 0,
    costMicro: 0,
    costMinor: 0,
    activityMs: 0,
    interruptedCalls: 0,
    openCalls: 0,
  };
  const spans: Array<[number, number]> = [];
  for (const [callId, request] of requests) {
    const result = results.get(callId);
    const reserved = result === undefined || result.error?.code === INTERRUPTED;
    if (result === undefined) spend.openCalls++;
    else if (reserved) spend.interruptedCalls++;
    const usage = reserved ? reservedUsage(request.request) : result.usage;
    if (usage !== undefined) {
      spend.inputTokens += usage.inputTokens;
      spend.outputTokens += usage.outputTokens;
    }
    spend.costMicro +=
      pricing !== undefined || reserved ? costMicroOf(usage, pricing) : (result.costMinor ?? 0) * 1_000_000;
    const start = Date.parse(request.at);
    const timeoutMs = request.options.timeoutMs;
    const duration = reserved ? Math.min(result?.durationMs ?? timeoutMs, timeoutMs) : result.durationMs;
    if (Number.isFinite(start) && duration > 0) spans.push([start, start + duration]);
  }
  spend.costMinor = minorOfMicro(spend.costMicro);
  spend.activityMs = unionLength(spans);
  return spend;
}

/** Total length covered by `spans` (each [start, end)), overlaps counted once. */
function unionLength(spans: Array<[number, number]>): number {
  spans.sort((a, b) => a[0] - b[0]);
  let total = 0;
  let end = -Infinity;
  for (const [start, stop] of spans) {
    if (stop <= end) continue;
    total += stop - Math.max(start, end);
    end = stop;
  }
  return Math.round(total);
}
