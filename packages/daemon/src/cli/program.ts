import { Command, CommanderError } from 'commander';
import type { AcpCommandOptions } from './acp.js';
import { daemonCommand } from './setting-options.js';
import { operatorCommands } from './operator-commands.js';
import { SERVE_ONLY_KEYS } from './config-options.js';
import { commanderCode, ErrorReport } from './error-report.js';
import { environmentHelp } from './environment.js';
import { daemonVersion } from '../version.js';
import type { RunningServer, ServeOptions } from './serve.js';
import { exitWithError, startCommand } from './startup.js';

/**
 * Runs the `sluice` command line on `argv`. A refused flag, or a failure no command expected,
 * ends it with one line in the format `report` chose (docs/decisions/041) and commander's exit code.
 */
export async function runProgram(
  argv: string[],
  report = ErrorReport.fromProcess(argv, process.env, process.stderr.isTTY === true),
): Promise<void> {
  try {
    await buildProgram(report).parseAsync(argv);
  } catch (error) {
    if (error instanceof CommanderError) {
      // help and version have been printed; any other code is a refused command line
      if (!HELP_CODES.has(error.code))
        process.stderr.write(report.line(error.message, commanderCode(error.code)));
      process.exit(error.exitCode);
    }
    const { message, stack } = error instanceof Error ? error : { message: String(error), stack: undefined };
    const hint = report.json ? '' : ' (--log-format json shows the stack)';
    process.stderr.write(report.line(`internal error: ${message}${hint}`, 'internal_error', { stack }));
    process.exit(1);
  }
}

/** commander's exits that are not errors, or whose text it has written itself. */
const HELP_CODES = new Set(['commander.helpDisplayed', 'commander.help', 'commander.version']);

/** The `sluice` command line; its commands report why they stop through `report`. */
export function buildProgram(report = new ErrorReport('json', false)): Command {
  const program = rootCommand();
  daemonCommand(program, 'serve', 'Run the daemon (REST + SSE, and ACP over HTTP on /acp).', {
    http: true,
  }).action(async (_options: ServeOptions, command: Command) => {
    const { logger, options } = await startCommand<ServeOptions>(command, 'sluice', report);
    // Handlers first: a signal may arrive the instant the listening line is out.
    let running: RunningServer | undefined;
    let signalled = false;
    const shutDown = (server: RunningServer): void => {
      server.stop().then(
        () => process.exit(0),
        (error: unknown) =>
          void exitWithError(report, logger, `shutdown failed: ${String(error)}`, 'shutdown_failed'),
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
      if (error instanceof StartupError) return exitWithError(report, logger, error.message, error.code);
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
    const { logger, options } = await startCommand<AcpCommandOptions>(
      command,
      'sluice-acp',
      report,
      SERVE_ONLY_KEYS,
    );
    const { runAcpStdio } = await import('./acp.js');
    const { StartupError } = await import('./serve.js');
    try {
      await runAcpStdio(options, process.env, logger);
    } catch (error) {
      if (error instanceof StartupError) return exitWithError(report, logger, error.message, error.code);
      throw error;
    }
    process.exit(0);
  });
  return operatorCommands(program, report);
}

/** `sluice` itself: its description, `--version` and the environment it reads in `--help`. */
function rootCommand(): Command {
  return (
    new Command('sluice')
      .description('Serve AI agent sessions to many clients at once, with backpressure.')
      .showHelpAfterError(false)
      // commander's own errors (a bad flag) are thrown to runProgram, which reports them.
      .exitOverride()
      .configureOutput({ outputError: () => {} })
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
