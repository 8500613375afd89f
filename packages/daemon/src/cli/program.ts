import { MAX_TIMER_MS } from '@sluice/runtime';
import { Command, Option } from 'commander';
import type { AcpCommandOptions } from './acp.js';
import { collectOrigin, integer, nonEmpty } from './argument-parsers.js';
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_REQUEST_TIMEOUT_MS } from '../defaults.js';
import { daemonOptions } from './daemon-options.js';
import { operatorCommands } from './operator-commands.js';
import { configOptions, SERVE_ONLY_KEYS } from './config-options.js';
import { jsonLine } from './json-line.js';
import { environmentHelp } from './environment.js';
import { daemonVersion } from '../version.js';
import type { RunningServer, ServeOptions } from './serve.js';
import { exitWithError, startCommand } from './startup.js';

/** The `sluice` command line. */
export function buildProgram(): Command {
  const program = rootCommand();
  const serve = program
    .command('serve')
    .description('Run the daemon (REST + SSE, and ACP over HTTP on /acp).')
    .addHelpText('after', environmentHelp)
    .addOption(
      new Option('--port <port>', 'port to listen on (0 = a free port)')
        .default(4170)
        .argParser(integer(0, 65535)),
    )
    .addOption(new Option('--hostname <host>', 'address to bind').default('127.0.0.1').argParser(nonEmpty))
    .option('--token <token>', 'bearer token (default env SLUICE_TOKEN, then QWEN_SERVER_TOKEN)')
    .option('--require-auth', 'demand the token on loopback too, /health included')
    .option('--allow-origin <origin>', 'allow this browser origin (repeatable)', collectOrigin);
  configOptions(connectionOptions(daemonOptions(serve)))
    .addOption(
      new Option('--sse-heartbeat-ms <ms>', 'SSE heartbeat interval')
        .hideHelp()
        .argParser(integer(1, MAX_TIMER_MS)),
    )

    .action(async (_options: ServeOptions, command: Command) => {
      const { logger, configFile } = await startCommand(command, 'sluice');
      const options: ServeOptions = { ...(command.opts() as ServeOptions), configFile };
      // Handlers first: a signal may arrive the instant the listening line is out.
      let running: RunningServer | undefined;
      let signalled = false;
      const shutDown = (server: RunningServer): void => {
        server.stop().then(
          () => process.exit(0),
          (error: unknown) => void exitWithError(logger, `shutdown failed: ${String(error)}`),
        );
      };
      const onSignal = (signal: NodeJS.Signals): void => {
        if (signalled) process.exit(1);
        signalled = true;
        logger.warn({ signal }, `${signal}, draining`);
        if (running) shutDown(running);
      };
      process.on('SIGTERM', onSignal);
      process.on('SIGINT', onSignal);
      // The daemon (fastify, SQLite, providers) loads only once the flags are valid.
      const { serve, StartupError } = await import('./serve.js');
      try {
        running = await serve(options, process.env, logger);
      } catch (error) {
        if (error instanceof StartupError) return exitWithError(logger, error.message);
        throw error;
      }
      if (signalled) return shutDown(running);
      process.stdout.write(`sluice listening on ${running.url}\n`);
    });
  configOptions(
    daemonOptions(
      program
        .command('acp')
        .description('Speak ACP (Agent Client Protocol) over stdin/stdout, backed by an in-process daemon.')
        .addHelpText('after', environmentHelp),
    ),
  ).action(async (_options: AcpCommandOptions, command: Command) => {
    // stdout is the protocol channel: every diagnostic goes to stderr.
    const { logger, configFile } = await startCommand(command, 'sluice-acp', SERVE_ONLY_KEYS);
    const options: AcpCommandOptions = { ...(command.opts() as AcpCommandOptions), configFile };
    const { runAcpStdio } = await import('./acp.js');
    const { StartupError } = await import('./serve.js');
    try {
      await runAcpStdio(options, process.env, logger);
    } catch (error) {
      if (error instanceof StartupError) return exitWithError(logger, error.message);
      throw error;
    }
    process.exit(0);
  });
  return operatorCommands(program);
}

/** `sluice` itself: its description, `--version` and the environment it reads in `--help`. */
function rootCommand(): Command {
  return (
    new Command('sluice')
      .description('Serve AI agent sessions to many clients at once, with backpressure.')
      .showHelpAfterError(false)
      // Every line on stderr is JSON, commander's own errors (a bad flag) included.
      .configureOutput({
        writeErr: (text) => process.stderr.write(jsonLine('error', 'sluice', text.trimEnd())),
      })
      // Read from package.json only when asked, rather than on every start (commander's
      // `.version()` wants the string up front).
      .option('-V, --version', 'print the version and exit')
      .on('option:version', () => {
        process.stdout.write(`${daemonVersion()}\n`);
        process.exit(0);
      })
      .addHelpText('after', environmentHelp)
  );
}

/** The bounds of the HTTP server's connections (issue 19 item 4). */
function connectionOptions(command: Command): Command {
  return command
    .addOption(
      new Option(
        '--request-timeout-ms <ms>',
        'a request (headers and body) must arrive within this; answers 408 and closes otherwise',
      )
        .default(DEFAULT_REQUEST_TIMEOUT_MS)
        .argParser(integer(1, MAX_TIMER_MS)),
    )
    .addOption(
      new Option('--max-connections <n>', 'open connections accepted at once; more are closed')
        .default(DEFAULT_MAX_CONNECTIONS)
        .argParser(integer(1, 1_000_000)),
    )
    .option('--no-metrics', 'serve neither GET /metrics nor the /dashboard, and keep no counters for them');
}
