import type { AcpDaemon } from '../acp-daemon.js';
import { AcpHttpConnection, type AcpHttpConnectionLimits } from './acp-http-connection.js';
import { positiveInteger } from '../../validate.js';

/** Default cap of ACP connections per daemon. */
export const DEFAULT_MAX_ACP_CONNECTIONS = 64;
/** Default of requests in flight plus unread answers per connection. */
export const DEFAULT_MAX_ACP_OUTSTANDING = 64;
/** Default of session streams per connection. */
export const DEFAULT_MAX_ACP_SESSION_STREAMS = 32;
/** A connection with no open stream and no request for this long is closed. */
export const DEFAULT_ACP_IDLE_TIMEOUT_MS = 10 * 60_000;

/** Limits of an {@link AcpHttpRegistry}. */
export interface AcpHttpRegistryOptions extends Partial<AcpHttpConnectionLimits> {
  maxConnections?: number;
  idleTimeoutMs?: number;
  log(error: unknown, context: string): void;
}

/**
 * The daemon's ACP-over-HTTP connections, bounded in number; connections nobody reads from
 * or writes to for `idleTimeoutMs` are closed, so abandoned clients cannot fill the cap.
 */
export class AcpHttpRegistry {
  readonly maxConnections: number;
  private readonly limits: AcpHttpConnectionLimits;
  private readonly idleTimeoutMs: number;
  private readonly connections = new Map<string, AcpHttpConnection>();
  private readonly sweeper: ReturnType<typeof setInterval>;

  constructor(
    private readonly daemon: AcpDaemon,
    private readonly options: AcpHttpRegistryOptions,
  ) {
    this.maxConnections = positiveInteger(
      'maxAcpConnections',
      options.maxConnections ?? DEFAULT_MAX_ACP_CONNECTIONS,
    );
    this.limits = {
      maxOutstanding: positiveInteger(
        'maxOutstanding',
        options.maxOutstanding ?? DEFAULT_MAX_ACP_OUTSTANDING,
      ),
      maxSessionStreams: positiveInteger(
        'maxSessionStreams',
        options.maxSessionStreams ?? DEFAULT_MAX_ACP_SESSION_STREAMS,
      ),
    };
    this.idleTimeoutMs = positiveInteger(
      'acpIdleTimeoutMs',
      options.idleTimeoutMs ?? DEFAULT_ACP_IDLE_TIMEOUT_MS,
    );
    this.sweeper = setInterval(() => this.sweep(), Math.min(60_000, this.idleTimeoutMs));
    this.sweeper.unref();
  }

  get size(): number {
    return this.connections.size;
  }

  /** A new connection, or `undefined` when the cap is reached. */
  create(): AcpHttpConnection | undefined {
    if (this.connections.size >= this.maxConnections) return undefined;
    const connection = new AcpHttpConnection(this.daemon, this.limits, this.options.log);
    this.connections.set(connection.id, connection);
    return connection;
  }

  get(id: string): AcpHttpConnection | undefined {
    return this.connections.get(id);
  }

  /** Closes and forgets the connection; false when it is unknown. */
  close(id: string): boolean {
    const connection = this.connections.get(id);
    if (connection === undefined) return false;
    this.connections.delete(id);
    connection.close();
    return true;
  }

  closeAll(): void {
    clearInterval(this.sweeper);
    for (const id of [...this.connections.keys()]) this.close(id);
  }

  private sweep(): void {
    const now = Date.now();
    for (const [id, connection] of this.connections)
      if (connection.idleFor(now) >= this.idleTimeoutMs) this.close(id);
  }
}
