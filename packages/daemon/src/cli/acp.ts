import { Readable, Writable } from 'node:stream';
import { ndJsonStream } from '@agentclientprotocol/sdk';
import { serveAcpStream } from '../acp/index.js';
import type { LazyLogger } from './lazy-logger.js';
import { daemonFromFlags, logFromEnv, operatorLog, sharedStoreEvents, type DaemonFlags } from './serve.js';

/** Options of `sluice acp`: the daemon flags of `serve`, without the HTTP ones. */
export type AcpCommandOptions = DaemonFlags;

/**
 * `sluice acp`: ACP over stdin/stdout (newline-delimited JSON-RPC) backed by an in-process
 * daemon. stdout carries protocol messages only; logs go to stderr. Resolves once stdin ended
 * and the daemon drained.
 */
export async function runAcpStdio(
  options: AcpCommandOptions,
  env: NodeJS.ProcessEnv = process.env,
  logger: LazyLogger = logFromEnv(env, 'sluice-acp'),
): Promise<void> {
  const daemon = await daemonFromFlags(
    options,
    operatorLog(logger),
    (message) => logger.warn({}, message),
    sharedStoreEvents(logger),
  );
  const stream = ndJsonStream(
    Writable.toWeb(process.stdout) as WritableStream<Uint8Array>,
    Readable.toWeb(process.stdin) as ReadableStream<Uint8Array>,
  );
  const server = serveAcpStream(daemon, stream, {
    log: (error, context) => logger.error({ err: error, context }, 'acp request failed'),
  });
  const stop = (): void => server.close();
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  await server.closed;
  await daemon.close();
  await logger.flush();
}
