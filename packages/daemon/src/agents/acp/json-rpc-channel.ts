import type { Readable, Writable } from 'node:stream';
import { asciiJsonText } from '../../wire/index.js';

/** A JSON-RPC error object (the agent's, or one we answer with). */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: unknown;
}

/** A JSON-RPC error an agent answered with, or one a request handler throws to answer with. */
export class RpcError extends Error {
  constructor(
    readonly rpcCode: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/** JSON-RPC codes this client answers with. */
export const RPC_ERROR = {
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internalError: -32603,
} as const;

/** What the channel does with the agent's messages. */
export interface ChannelHandlers {
  /** A request of the agent; resolves with its result or throws an {@link RpcError}. */
  onRequest(method: string, params: unknown): Promise<unknown>;
  /** A notification of the agent, with its params exactly as sent and the bytes of its line. */
  onNotification(method: string, params: unknown, bytes: number): void;
  /** The stream broke its framing (a line too long, or not JSON-RPC): the process is unusable. */
  onProtocolError(reason: string): void;
}

interface Pending {
  resolve(result: unknown): void;
  reject(error: Error): void;
}

/** Longest line accepted from an agent (a frame); a longer one is a protocol error. */
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;
/**
 * Bytes of an agent's output handled in one turn of the event loop: past it, reading pauses
 * (the pipe, then the agent's writes, hold the rest) until the daemon has served its other I/O.
 */
export const MAX_BYTES_PER_TURN = 1024 * 1024;

/**
 * Newline-delimited JSON-RPC 2.0 over a child's stdio, parsed here rather than by the ACP SDK
 * so that every notification reaches us with all its fields (the SDK's client drops unknown
 * `session/update` variants and strips unknown fields). Outgoing requests get numeric ids.
 */
export class JsonRpcChannel {
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private buffered: Buffer[] = [];
  private bufferedBytes = 0;
  private closedWith: Error | undefined;
  /** Bytes handled since reading last yielded to the event loop. */
  private turnBytes = 0;
  private resumeScheduled = false;

  constructor(
    private readonly input: Readable,
    private readonly output: Writable,
    private readonly handlers: ChannelHandlers,
  ) {
    input.on('data', (chunk: Buffer) => this.receive(chunk));
    // A write to a process that is gone fails with EPIPE; its exit is handled by the owner.
    output.on('error', () => {});
  }

  /** Requests awaiting an answer. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Sends a request; settles with its result, its error as {@link RpcError}, or the close error. */
  request(method: string, params: unknown): Promise<unknown> {
    if (this.closedWith !== undefined) return Promise.reject(this.closedWith);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.write({ jsonrpc: '2.0', id, method, params });
    });
  }

  /** Sends a notification (no answer). */
  notify(method: string, params: unknown): void {
    if (this.closedWith === undefined) this.write({ jsonrpc: '2.0', method, params });
  }

  /** Rejects every pending request with `error`; later requests reject with it at once. */
  close(error: Error): void {
    if (this.closedWith !== undefined) return;
    this.closedWith = error;
    const pending = [...this.pending.values()];
    this.pending.clear();
    for (const entry of pending) entry.reject(error);
  }

  private write(message: unknown): void {
    if (!this.output.writable) return;
    this.output.write(`${JSON.stringify(message)}\n`);
  }

  private receive(chunk: Buffer): void {
    this.parse(chunk);
    this.turnBytes += chunk.length;
    if (this.turnBytes < MAX_BYTES_PER_TURN || this.resumeScheduled) return;
    this.resumeScheduled = true;
    this.input.pause();
    setImmediate(() => {
      this.turnBytes = 0;
      this.resumeScheduled = false;
      if (this.closedWith === undefined) this.input.resume();
    });
  }

  private parse(chunk: Buffer): void {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      const line = this.buffered.length === 0 ? piece : Buffer.concat([...this.buffered, piece]);
      this.buffered = [];
      this.bufferedBytes = 0;
      this.dispatch(line);
    }
    if (start < chunk.length) {
      this.buffered.push(chunk.subarray(start));
      this.bufferedBytes += chunk.length - start;
      if (this.bufferedBytes > MAX_FRAME_BYTES) {
        this.buffered = [];
        this.bufferedBytes = 0;
        this.handlers.onProtocolError(`a frame exceeded ${MAX_FRAME_BYTES} bytes`);
      }
    }
  }

  /** Handles one line; its bytes are read as ASCII JSON text (wire/json-text.ts: qwen's lines hold text outside ASCII). */
  private dispatch(line: Buffer): void {
    let message: Record<string, unknown>;
    try {
      message = JSON.parse(asciiJsonText(line)) as Record<string, unknown>;
    } catch {
      // Agents print the odd banner on stdout; skip what is not JSON rather than fail the process.
      return;
    }
    if (typeof message !== 'object' || message === null || Array.isArray(message)) return;
    const { id, method } = message;
    if (typeof method === 'string') {
      if (id === undefined || id === null)
        this.handlers.onNotification(method, message['params'], line.length);
      else void this.answer(id, method, message['params']);
      return;
    }
    if (typeof id !== 'number') return;
    const pending = this.pending.get(id);
    if (pending === undefined) return;
    this.pending.delete(id);
    const error = message['error'] as RpcErrorObject | undefined;
    if (error !== undefined && error !== null)
      pending.reject(new RpcError(Number(error.code), String(error.message ?? 'error'), error.data));
    else pending.resolve(message['result']);
  }

  private async answer(id: unknown, method: string, params: unknown): Promise<void> {
    try {
      const result = await this.handlers.onRequest(method, params);
      this.write({ jsonrpc: '2.0', id, result: result ?? null });
    } catch (error) {
      const rpc = error instanceof RpcError ? error : new RpcError(RPC_ERROR.internalError, 'Internal error');
      this.write({
        jsonrpc: '2.0',
        id,
        error: {
          code: rpc.rpcCode,
          message: rpc.message,
          ...(rpc.data === undefined ? {} : { data: rpc.data }),
        },
      });
    }
  }
}
