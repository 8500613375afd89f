import { Command, InvalidArgumentError, Option } from 'commander';
import type { AcpCommandOptions } from './acp.js';
import type { RunningServer, ServeOptions } from './serve.js';

function integer(min: number, max = Number.MAX_SAFE_INTEGER) {
  return (raw: string): number => {
    const value = /^\d+$/.test(raw.trim()) ? Number(raw.trim()) : NaN;
    if (!Number.isSafeInteger(value) || value < min || value > max)
      throw new InvalidArgumentError(
        max === Number.MAX_SAFE_INTEGER
          ? `must be an integer >= ${min}`
          : `must be an integer in [${min}, ${max}]`,
      );
    return value;
  };
}

function nonEmpty(raw: string): string {
  if (raw.trim().length === 0) throw new InvalidArgumentError('must not be empty');
  return raw;
}

function collect(value: string, previous: string[] = []): string[] {
  let origin: URL;
  try {
    origin = new URL(value);
  } catch {
    throw new InvalidArgumentError('must be an origin such as https://app.example.com');
  }
  if (origin.origin === 'null' || origin.origin !== value.replace(/\/+$/, ''))
    throw new InvalidArgumentError('must be an origin (scheme://host[:port]) without a path');
  return [...previous, origin.origin];
}

/** The flags of the in-process daemon, shared by `serve` and `acp`. */
function daemonOptions(command: Command): Command {
  return command
    .option('--workspace <dir>', 'the served workspace (default: the current directory)', nonEmpty)
    .addOption(
      new Option('--max-pending-prompts-per-session <n>', 'outstanding prompts per session (0 = unlimited)')
        .default(5)
        .argParser(integer(0)),
    )
    .addOption(
      new Option(
        '--prompt-deadline-ms <ms>',
        'deadline of every prompt from admission (default: none)',
      ).argParser(integer(1, 2 ** 31 - 1)),
    )
    .addOption(
      new Option('--max-sessions <n>', 'sessions over all workspaces (default: 128)').argParser(integer(1)),
    )
    .addOption(
      new Option('--max-sessions-per-workspace <n>', 'sessions in one workspace (default: 32)').argParser(
        integer(1),
      ),
    )
    .addOption(
      new Option('--event-ring-size <n>', 'events kept per session for replay (default: 8000)').argParser(
        integer(1, 1_000_000),
      ),
    )
    .addOption(
      new Option('--model-max-concurrency <n>', 'model calls executing at once (default: 4)').argParser(
        integer(1),
      ),
    )
    .addOption(
      new Option('--model-max-queued <n>', 'model calls waiting for a slot (default: 32)').argParser(
        integer(0),
      ),
    )
    .addOption(
      new Option(
        '--model-max-inflight <n>',
        'model calls accepted and not yet cleaned up (default: 64, at least --model-max-concurrency)',
      ).argParser(integer(1)),
    )
    .addOption(
      new Option(
        '--model-max-request-bytes <n>',
        'largest model request in bytes (default: 8388608)',
      ).argParser(integer(1)),
    )
    .addOption(
      new Option('--model-timeout-ms <ms>', 'default model call timeout (default: 600000)').argParser(
        integer(1, 2 ** 31 - 1),
      ),
    )
    .addOption(new Option('--provider <name>', 'model provider').choices(['echo', 'openai']).default('echo'))
    .option('--model <name>', 'model name (required for openai)', nonEmpty)
    .option(
      '--base-url <url>',
      'OpenAI-compatible base URL including /v1 (default env OPENAI_BASE_URL, then https://api.openai.com/v1)',
      nonEmpty,
    )
    .addOption(
      new Option('--echo-delay-ms <ms>', 'latency of the echo model (default: 0)').argParser(
        integer(0, 2 ** 31 - 1),
      ),
    )
    .addOption(
      new Option('--data-dir <dir>', 'directory of the journal').default('.sluice').argParser(nonEmpty),
    )
    .addOption(
      new Option(
        '--drain-timeout-ms <ms>',
        'how long shutdown lets prompts finish (default: 10000)',
      ).argParser(integer(0, 2 ** 31 - 1)),
    )
    .addOption(
      new Option(
        '--permission-response-timeout-ms <ms>',
        'an unanswered permission request picks a reject option after this long (0 = never; default 300000)',
      ).argParser(integer(0, 2 ** 31 - 1)),
    );
}

/** The `sluice` command line. */
export function buildProgram(): Command {
  const program = new Command('sluice')
    .description('Serve AI agent sessions to many clients at once, with backpressure.')
    .showHelpAfterError(false);
  const serve = program
    .command('serve')
    .description('Run the daemon (REST + SSE, and ACP over HTTP on /acp).')
    .addOption(
      new Option('--port <port>', 'port to listen on (0 = a free port)')
        .default(4170)
        .argParser(integer(0, 65535)),
    )
    .addOption(new Option('--hostname <host>', 'address to bind').default('127.0.0.1').argParser(nonEmpty))
    .option('--token <token>', 'bearer token (default env SLUICE_TOKEN, then QWEN_SERVER_TOKEN)')
    .option('--require-auth', 'demand the token on loopback too, /health included')
    .option('--allow-origin <origin>', 'allow this browser origin (repeatable)', collect);
  daemonOptions(serve)
    .addOption(
      new Option('--sse-heartbeat-ms <ms>', 'SSE heartbeat interval')
        .hideHelp()
        .argParser(integer(1, 2 ** 31 - 1)),
    )

    .action(async (options: ServeOptions) => {
      // Handlers first: a signal may arrive the instant the listening line is out.
      let running: RunningServer | undefined;
      let signalled = false;
      const shutDown = (server: RunningServer): void => {
        server.stop().then(
          () => process.exit(0),
          (error: unknown) => {
            process.stderr.write(`sluice: shutdown failed: ${String(error)}\n`);
            process.exit(1);
          },
        );
      };
      const onSignal = (signal: NodeJS.Signals): void => {
        if (signalled) process.exit(1);
        signalled = true;
        process.stderr.write(`sluice: ${signal}, draining\n`);
        if (running) shutDown(running);
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
      // The daemon (fastify, SQLite, providers) loads only once the flags are valid.
      const { serve, StartupError } = await import('./serve.js');
      try {
        running = await serve(options);
      } catch (error) {
        if (error instanceof StartupError) {
          process.stderr.write(`error: ${error.message}\n`);
          process.exit(1);
        }
        throw error;
      }
      if (signalled) return shutDown(running);
      process.stdout.write(`sluice listening on ${running.url}\n`);
    });
  daemonOptions(
    program
      .command('acp')
      .description('Speak ACP (Agent Client Protocol) over stdin/stdout, backed by an in-process daemon.'),
  ).action(async (options: AcpCommandOptions) => {
    // stdout is the protocol channel: every diagnostic goes to stderr.
    const { runAcpStdio } = await import('./acp.js');
    const { StartupError } = await import('./serve.js');
    try {
      await runAcpStdio(options);
    } catch (error) {
      if (error instanceof StartupError) {
        process.stderr.write(`error: ${error.message}\n`);
        process.exit(1);
      }
      throw error;
    }
    process.exit(0);
  });
  return program;
}
