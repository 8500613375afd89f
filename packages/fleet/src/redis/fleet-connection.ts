import { Redis } from 'ioredis';
import { BATCH_LUA, RENEW_LUA } from './lua-scripts.js';

/** The scripts, as ioredis defines them: EVALSHA, falling back to EVAL once per script. */
interface ScriptCommands {
  sluiceBatch(fleet: string, pool: string, ...args: Array<string | number>): Promise<string[]>;
  sluiceRenew(fleet: string, ...args: Array<string | number>): Promise<Array<string | number>>;
}

/** What a {@link FleetConnection} reports. */
export interface ConnectionEvents {
  /** The command connection is ready (first time, or again after an outage). */
  up(): void;
  /** The command connection was lost. */
  down(reason: string): void;
  /** A grant message for one of this node's queued leases. */
  grant(leaseId: string): void;
}

/**
 * The two connections a node keeps to the fleet's Redis: one for the capacity scripts —
 * auto-pipelined, and failing fast instead of queueing while disconnected — and one subscribed to this node's grant channel. ioredis reconnects
 * both on its own; `up` and `down` tell the port when to leave or enter outage mode.
 */
export class FleetConnection {
  readonly commands: Redis & ScriptCommands;
  private readonly subscriber: Redis;
  private connected = false;
  private closing = false;

  constructor(url: string, grantChannel: string, commandTimeoutMs: number, events: ConnectionEvents) {
    const retryStrategy = (times: number): number => Math.min(50 * times, 1_000);
    this.commands = new Redis(url, {
      enableAutoPipelining: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: commandTimeoutMs,
      retryStrategy,
      connectionName: 'sluice-fleet',
    }) as Redis & ScriptCommands;
    this.commands.defineCommand('sluiceBatch', { numberOfKeys: 2, lua: BATCH_LUA });
    this.commands.defineCommand('sluiceRenew', { numberOfKeys: 1, lua: RENEW_LUA });
    // Errors surface through the commands that fail and through `close`; without a listener
    // ioredis would print each reconnection attempt's error.
    this.commands.on('error', () => {});
    this.commands.on('ready', () => {
      this.connected = true;
      events.up();
    });
    this.commands.on('close', () => {
      if (!this.connected || this.closing) return;
      this.connected = false;
      events.down('connection closed');
    });
    this.subscriber = new Redis(url, { retryStrategy, connectionName: 'sluice-fleet-grants' });
    this.subscriber.on('error', () => {});
    this.subscriber.on('message', (_channel: string, leaseId: string) => events.grant(leaseId));
    void this.subscriber.subscribe(grantChannel).catch(() => {});
  }

  /** Whether the command connection is up. */
  get isConnected(): boolean {
    return this.connected;
  }

  /** Resolves once the command connection is ready, or with false after `timeoutMs`. */
  ready(timeoutMs: number): Promise<boolean> {
    if (this.connected) return Promise.resolve(true);
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        clearTimeout(timer);
        this.commands.off('ready', onReady);
        resolve(ok);
      };
      const onReady = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.commands.once('ready', onReady);
    });
  }

  /** The local port of the command connection, to find its commands in `MONITOR` (tests). */
  get localPort(): number | undefined {
    return (this.commands as unknown as { stream?: { localPort?: number } }).stream?.localPort;
  }

  /** Closes both connections; pending commands are answered first. */
  async close(): Promise<void> {
    this.closing = true;
    // QUIT lets a ready connection answer what is pending; one still connecting is just dropped.
    await Promise.allSettled(
      [this.commands, this.subscriber].map((client) =>
        client.status === 'ready' ? client.quit() : Promise.resolve(client.disconnect()),
      ),
    );
    this.commands.disconnect();
    this.subscriber.disconnect();
  }
}
