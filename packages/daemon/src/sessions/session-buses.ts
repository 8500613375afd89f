import { EventBus, EventMemory } from '../events/index.js';
import { SESSION_EVENT, type SessionEvent, type SessionEventSink } from './session-events.js';

/** Where a session's event stream stands: the id of its last event, and the stream's epoch. */
export interface StreamPosition {
  lastEventId: number;
  eventEpoch: string;
}

/** How long, and for how many sessions, a closed session's events stay replayable. */
export interface ClosedBusRetention {
  ms: number;
  maxSessions: number;
  now: () => number;
}

/** Bytes the sessions' replay windows may hold: each one, and all of them together (issue 19 item 3). */
export interface EventByteBudget {
  ringBytes: number;
  totalBytes: number;
}

/** One minute, 64 sessions: enough to reconnect after a close, bounded in memory. */
export const DEFAULT_CLOSED_BUS_RETENTION: ClosedBusRetention = {
  ms: 60_000,
  maxSessions: 64,
  now: Date.now,
};

/**
 * One event bus per session, fed by the bridge through the {@link SessionEventSink} it
 * sees. A bus is made on first use and closed right after its session's `session_closed`.
 */
export class SessionBuses implements SessionEventSink {
  private readonly buses = new Map<string, EventBus>();
  /** Buses of recently closed sessions, oldest first: their replay outlives the session briefly. */
  private readonly closed = new Map<string, { bus: EventBus; closedAt: number }>();

  /** The daemon-wide budget every ring counts against, live and retained ones alike. */
  readonly memory: EventMemory;
  private readonly ringBytes: number;
  private evictions = 0;
  private readonly countEviction = (): void => {
    this.evictions++;
  };

  constructor(
    private readonly ringSize: number,
    private readonly onSessionClosed: (sessionId: string) => void = () => {},
    private readonly retention: ClosedBusRetention = DEFAULT_CLOSED_BUS_RETENTION,
    budget: EventByteBudget = { ringBytes: Infinity, totalBytes: Infinity },
  ) {
    this.memory = new EventMemory(budget.totalBytes);
    this.ringBytes = budget.ringBytes;
  }

  /** Where the session's stream stands now: what a client passes back as `Last-Event-ID`. */
  position(sessionId: string): StreamPosition {
    const bus = this.busFor(sessionId);
    return { lastEventId: bus.lastEventId, eventEpoch: bus.epoch };
  }

  /** The session's bus; the caller has checked that the session is live. */
  busFor(sessionId: string): EventBus {
    let bus = this.buses.get(sessionId);
    if (bus === undefined) {
      bus = new EventBus({
        ringSize: this.ringSize,
        ringBytes: this.ringBytes,
        memory: this.memory,
        onSubscriberEvicted: this.countEviction,
      });
      this.buses.set(sessionId, bus);
      this.dropClosed(sessionId); // a session restored under the same id starts a new epoch
    }
    return bus;
  }

  /**
   * The closed bus of a session that ended within the retention window, if any. A client that
   * reconnects right after a close (its `Last-Event-ID` in hand) still gets the terminal events
   * of its prompts and `session_closed` by replay, then the stream ends — nothing is lost.
   */
  closedBus(sessionId: string): EventBus | undefined {
    this.expireClosed();
    return this.closed.get(sessionId)?.bus;
  }

  get size(): number {
    return this.buses.size;
  }

  /** Subscribers of the session's live stream now; 0 when it has none (no bus is made). */
  subscriberCount(sessionId: string): number {
    return this.buses.get(sessionId)?.subscriberCount ?? 0;
  }

  /** Subscribers held now by the live sessions' streams and the retained closed ones. */
  get totalSubscriberCount(): number {
    let count = 0;
    for (const bus of this.buses.values()) count += bus.subscriberCount;
    for (const { bus } of this.closed.values()) count += bus.subscriberCount;
    return count;
  }

  /** Subscribers evicted for a full queue since start (PROTOCOL §6 `client_evicted`). */
  get evictedSubscribers(): number {
    return this.evictions;
  }

  /** Whether the session has a bus now (made on first use, dropped after `session_closed`). */
  has(sessionId: string): boolean {
    return this.buses.has(sessionId);
  }

  publish(sessionId: string, event: SessionEvent): void {
    const bus = this.busFor(sessionId);
    bus.publish(event);
    if (event.type === SESSION_EVENT.sessionClosed) {
      bus.close(typeof event.data['reason'] === 'string' ? event.data['reason'] : 'closed');
      this.buses.delete(sessionId);
      this.retainClosed(sessionId, bus);
      this.onSessionClosed(sessionId);
    }
  }

  closeAll(reason: string): void {
    for (const bus of this.buses.values()) bus.close(reason);
    for (const bus of this.buses.values()) bus.dispose();
    this.buses.clear();
    for (const sessionId of [...this.closed.keys()]) this.dropClosed(sessionId);
  }

  private retainClosed(sessionId: string, bus: EventBus): void {
    this.expireClosed();
    if (this.retention.maxSessions === 0 || this.retention.ms === 0) return bus.dispose();
    this.closed.set(sessionId, { bus, closedAt: this.retention.now() });
    while (this.closed.size > this.retention.maxSessions) {
      const oldest = this.closed.keys().next();
      if (oldest.done) break;
      this.dropClosed(oldest.value);
    }
  }

  /** Forgets a closed session's retained events at once (a purge: nothing of it stays). */
  forgetClosed(sessionId: string): void {
    this.dropClosed(sessionId);
  }

  /** Forgets a retained bus and releases what its ring held. */
  private dropClosed(sessionId: string): void {
    const retained = this.closed.get(sessionId);
    if (retained === undefined) return;
    this.closed.delete(sessionId);
    retained.bus.dispose();
  }

  /** Drops buses past the retention window; insertion order is closing order, so it stops early. */
  private expireClosed(): void {
    const cutoff = this.retention.now() - this.retention.ms;
    for (const [sessionId, { closedAt }] of this.closed) {
      if (closedAt > cutoff) break;
      this.dropClosed(sessionId);
    }
  }
}
