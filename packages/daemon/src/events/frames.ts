import { deflateRaw, inflateRawSync } from 'node:zlib';
/** Version of the event envelope; the client drops frames without `v: 1` (PROTOCOL §6). */
export const EVENT_ENVELOPE_VERSION = 1;

/**
 * Frames the bus (or the SSE route) makes for one subscriber. They carry no `id`, so they
 * never take a slot in the session's id sequence (PROTOCOL §6).
 */
export const SYNTHETIC_EVENT_TYPES = [
  'replay_complete',
  'state_resync_required',
  'slow_client_warning',
  'client_evicted',
  'stream_error',
] as const;

/** One of {@link SYNTHETIC_EVENT_TYPES}. */
export type SyntheticEventType = (typeof SYNTHETIC_EVENT_TYPES)[number];

/** The JSON object on an SSE `data:` line (PROTOCOL §6). `id` is absent on synthetic frames. */
export interface EventEnvelope {
  readonly id?: number;
  readonly v: typeof EVENT_ENVELOPE_VERSION;
  readonly type: string;
  readonly data: unknown;
  readonly promptId?: string;
  readonly originatorClientId?: string;
  readonly _meta: { readonly serverTimestamp: number };
}

/**
 * One SSE frame, ready to write: `id: <id>` (only when `id` is set), `event: <type>`,
 * `data: <json>`, blank line. `json` is the envelope serialized once, when the frame was made,
 * and is shared by every subscriber; it never contains a line break. The frame keeps only that
 * text, not the envelope object it was made from: a session's replay ring holds frames for the
 * session's life, and an agent's large updates (qwen's command list carries every skill's text,
 * ~1.5 MB) would otherwise be held twice per session. `envelope` parses the text on each read.
 * A large frame kept for replay is deflated off the event loop ({@link pack}).
 */
export class EventFrame {
  /** Characters of {@link json}; what the ring's byte accounting counts, packed or not. */
  readonly chars: number;
  private text: string | undefined;
  private packed: Buffer | undefined;
  private packing: Promise<void> | undefined;

  constructor(
    readonly id: number | undefined,
    readonly type: string,
    json: string,
  ) {
    this.text = json;
    this.chars = json.length;
  }

  /** The envelope's JSON text (inflated again when the frame was packed). */
  get json(): string {
    return this.text ?? inflateRawSync(this.packed!).toString('utf8');
  }

  /** The envelope, parsed from {@link json} (a fresh object on each read). */
  get envelope(): EventEnvelope {
    return JSON.parse(this.json) as EventEnvelope;
  }

  /**
   * Deflates the text of a frame of at least {@link PACK_MIN_CHARS} characters on the thread
   * pool and keeps only the packed bytes when they are at most 3/4 of the text's; readers meanwhile
   * and afterwards get the same text. Resolves once done; called again, the same promise.
   */
  pack(): Promise<void> {
    if (this.packing !== undefined) return this.packing;
    const text = this.text;
    // Most frames are small: no promise of their own (the ring calls this on every append).
    if (text === undefined || this.chars < PACK_MIN_CHARS) return NOTHING_TO_PACK;
    this.packing = new Promise((resolve) => {
      deflateRaw(text, { level: 1 }, (error, packed) => {
        if (error === null && packed.length <= (Buffer.byteLength(text) * 3) / 4) {
          this.packed = packed;
          this.text = undefined;
        }
        resolve();
      });
    });
    return this.packing;
  }
}

const NOTHING_TO_PACK: Promise<void> = Promise.resolve();

/** Frames at least this long are deflated while a replay ring holds them. */
export const PACK_MIN_CHARS = 256 * 1024;

/** `data` of `state_resync_required`: the ids in `(lastDeliveredId, earliestAvailableId)` are lost. */
export interface StateResyncRequiredData {
  reason: 'epoch_reset' | 'ring_evicted';
  /** `epoch_mismatch` when an `epoch_reset` came from the epoch token, not from the id. */
  detail?: 'epoch_mismatch';
  lastDeliveredId: number;
  earliestAvailableId: number;
}

/** `data` of `replay_complete`, sent after every replay (also an empty one). */
export interface ReplayCompleteData {
  lastReplayedEventId?: number;
  replayedCount: number;
}

/** `data` of `slow_client_warning`: the subscriber's queue reached 75 % of `maxQueued`. */
export interface SlowClientWarningData {
  queueSize: number;
  maxQueued: number;
  /** The newest event id of the session when the warning was raised. */
  lastEventId: number;
}

/** `data` of `client_evicted`: the queue overflowed; the stream ends after this frame. */
export interface ClientEvictedData {
  reason: 'queue_overflow';
  /** The last event id this subscriber receives; resume with `Last-Event-ID: droppedAfter`. */
  droppedAfter: number;
  queueSize: number;
  maxQueued: number;
}

/** Makes an id-less frame, e.g. the SSE route's `stream_error`. */
export function syntheticFrame(type: string, data: unknown, serverTimestamp: number): EventFrame {
  const envelope: EventEnvelope = { v: EVENT_ENVELOPE_VERSION, type, data, _meta: { serverTimestamp } };
  return new EventFrame(undefined, type, JSON.stringify(envelope));
}

/** The SSE text of `frame`, ending with the blank line that dispatches it. */
export function formatSseFrame(frame: EventFrame): string {
  const idLine = frame.id === undefined ? '' : `id: ${frame.id}\n`;
  return `${idLine}event: ${frame.type}\ndata: ${frame.json}\n\n`;
}
