import { Command } from 'commander';
import type { AcpCommandOptions } from './acp.js';
import { daemonCommand } from './setting-options.js';
import { operatorCommands } from './operator-commands.js';
import { SERVE_ONLY_KEYS } from './config-options.js';
import { jsonLine } from './json-line.js';
import { environmentHelp } from './environment.js';
import { daemonVersion } from '../version.js';
import type { RunningServer, ServeOptions } from './serve.js';
import { exitWithError, startCommand } from './startup.js';

/** The `sluice` command line. */
export function buildProgram(): Command {
  const program = rootCommand();
  daemonCommand(program, 'serve', 'Run the daemon (REST + SSE, and ACP over HTTP on /acp).', {
    http: true,
  }).action(async (_options: ServeOptions, command: Command) => {
    const { logger, options } = await startCommand<ServeOptions>(command, 'sluice');
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
  daemonCommand(
    program,
    'acp',
    'Speak ACP (Agent Client Protocol) over stdin/stdout, backed by an in-process daemon.',
    { http: false },
  ).action(async (_options: AcpCommandOptions, command: Command) => {
    // stdout is the protocol channel: every diagnostic goes to stderr.
    const { logger, options } = await startCommand<AcpCommandOptions>(command, 'sluice-acp', SERVE_ONLY_KEYS);
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
