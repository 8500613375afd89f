import type { AcpDaemon } from './acp-daemon.js';
import { DaemonDrainingError } from '../sessions/index.js';
import { isUntypedFailure, toRequestError } from './rpc-errors.js';

/** What the agent handlers need from the transport that carries one ACP connection. */
export interface AcpSessionHost {
  /** The connection created or attached `sessionId`; `replay` = also deliver its history. */
  attach(sessionId: string, clientId: string, replay: boolean): void;
  /** The connection closed `sessionId`. */
  detach(sessionId: string): void;
  /** The client id the daemon stamped for this connection on the session, if it attached it. */
  clientIdFor(sessionId: string): string | undefined;
  /** Failures the client only sees as `errorKind: 'internal'`. */
  log(error: unknown, context: string): void;
}

/** One ACP handler as the SDK calls it. */
export type AcpHandler<P, R> = (request: { params: P; signal: AbortSignal }) => Promise<R>;

/** What every handler of one ACP connection shares: the daemon, its transport, the error guard. */
export class AcpHandlerContext {
  constructor(
    readonly daemon: AcpDaemon,
    readonly host: AcpSessionHost,
  ) {}

  /** The session bridge every handler calls into. */
  get bridge(): AcpDaemon['bridge'] {
    return this.daemon.bridge;
  }

  /**
   * `handler` with every error leaving through {@link toRequestError}, so that a typed daemon
   * error keeps its `data.errorKind` (SPEC BP-10); an untyped one is logged under `method`.
   */
  guard<P, R>(method: string, handler: (params: P, signal: AbortSignal) => Promise<R> | R): AcpHandler<P, R> {
    return async ({ params, signal }) => {
      try {
        return await handler(params, signal);
      } catch (error) {
        const mapped = toRequestError(error);
        if (isUntypedFailure(mapped)) this.host.log(error, `acp ${method}`);
        throw mapped;
      }
    };
  }

  /** Throws while the daemon drains: nothing new is opened or admitted. */
  admitting(): void {
    if (this.daemon.bridge.draining) throw new DaemonDrainingError();
  }

  /** The client id this connection holds on `sessionId`, as options to spread. */
  stamp(sessionId: string): { clientId?: string } {
    const clientId = this.host.clientIdFor(sessionId);
    return clientId === undefined ? {} : { clientId };
  }
}
