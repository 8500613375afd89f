import { Option, type Command } from 'commander';
import { integer, nonEmpty } from './argument-parsers.js';

/** The flags of the in-process daemon, shared by `serve` and `acp`, in the order the help lists them. */
export function daemonOptions(command: Command): Command {
  return shutdownOptions(modelOptions(sessionOptions(command)));
}

/** The workspace, its sessions and their prompts and events. */
function sessionOptions(command: Command): Command {
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
    );
}

/** The model scheduler's limits and the provider behind it. */
function modelOptions(command: Command): Command {
  return command
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
    );
}

/** Where the journal lives, and how long shutdown and permission requests wait. */
function shutdownOptions(command: Command): Command {
  return command
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
