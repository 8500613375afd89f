import { DEFAULT_MAX_WAITING, DEFAULT_SCHEDULER_LIMITS, MAX_TIMER_MS } from '@sluice/runtime';
import { Option, type Command } from 'commander';
import {
  DEFAULT_AGENT_IDLE_TIMEOUT_MS,
  DEFAULT_AGENT_LIVENESS_TIMEOUT_MS,
  DEFAULT_AGENT_MAX_PROCESSES,
  DEFAULT_AGENT_SESSIONS_PER_PROCESS,
  DEFAULT_CONTEXT_MAX_BYTES,
  DEFAULT_DATA_DIR,
  DEFAULT_DRAIN_TIMEOUT_MS,
  DEFAULT_ECHO_DELAY_MS,
  DEFAULT_EVENT_MEMORY_BYTES,
  DEFAULT_EVENT_RING_BYTES,
  DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SESSIONS_PER_WORKSPACE,
  DEFAULT_PERMISSION_RESPONSE_TIMEOUT_MS,
  DEFAULT_RING_SIZE,
  DEFAULT_JOURNAL_RETENTION_DAYS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  MAX_JOURNAL_RETENTION_DAYS,
  DEFAULT_STORE_LEASE_MS,
  MAX_RING_SIZE,
  DEFAULT_MAX_BUDGETS,
} from '../defaults.js';
import { collectString, integer, nonEmpty } from './argument-parsers.js';

// The defaults named in the help are the daemon's own constants, so that the help cannot drift
// from what an unset flag means (test/cli/help-defaults.e2e.test.ts). They come from defaults.ts,
// not the folders that use them: this module loads on every start, and so does what it imports.

/** The flags of the in-process daemon, shared by `serve` and `acp`, in the order the help lists them. */
export function daemonOptions(command: Command): Command {
  return fleetOptions(agentOptions(shutdownOptions(modelOptions(sessionOptions(command)))));
}

/** Model limits shared with other daemons through Redis (docs/fleet.md); absent, limits are per daemon. */
function fleetOptions(command: Command): Command {
  return command
    .option(
      '--fleet-redis <url>',
      'share the model limits with every daemon of the fleet through this Redis (redis://host:port)',
      nonEmpty,
    )
    .option('--fleet-name <name>', 'namespace of the fleet in Redis (default: sluice)', nonEmpty)
    .addOption(
      new Option(
        '--fleet-on-outage <policy>',
        "while Redis is unreachable: this node's share of the limits, or refuse calls (default: local)",
      ).choices(['local', 'refuse']),
    )
    .addOption(
      new Option(
        '--fleet-lease-ttl-ms <ms>',
        'a daemon that has not renewed its fleet leases for this long is dead and its slots are freed (default: 3000)',
      ).argParser(integer(30, MAX_TIMER_MS)),
    )
    .addOption(
      new Option(
        '--fleet-rpm <n>',
        'model calls per minute per provider/model across the fleet (default: none)',
      ).argParser(integer(1)),
    )
    .addOption(
      new Option(
        '--fleet-tpm <n>',
        'tokens per minute per provider/model across the fleet (default: none)',
      ).argParser(integer(1)),
    );
}

/** External ACP agents as session backends (parsed, with the rest, once the flags are valid). */
function agentOptions(command: Command): Command {
  return command
    .option(
      '--agent <command>',
      'run sessions on an external ACP agent over stdio, e.g. "qwen --acp"; repeatable as name="command" (the first is the default, POST /session {agent} picks one)',
      collectString,
    )
    .addOption(
      new Option(
        '--agent-sessions-per-process <n>',
        `sessions one agent process hosts (default: ${DEFAULT_AGENT_SESSIONS_PER_PROCESS})`,
      ).argParser(integer(1)),
    )
    .addOption(
      new Option(
        '--agent-max-processes <n>',
        `agent processes at once (default: ${DEFAULT_AGENT_MAX_PROCESSES})`,
      ).argParser(integer(1)),
    )
    .addOption(
      new Option(
        '--agent-idle-timeout-ms <ms>',
        `an agent process without a running turn is stopped after this long (default: ${DEFAULT_AGENT_IDLE_TIMEOUT_MS})`,
      ).argParser(integer(1, MAX_TIMER_MS)),
    )
    .addOption(
      new Option(
        '--agent-liveness-timeout-ms <ms>',
        `an agent process that leaves a liveness probe unanswered this long is killed (default: ${DEFAULT_AGENT_LIVENESS_TIMEOUT_MS})`,
      ).argParser(integer(1, MAX_TIMER_MS)),
    );
}

/** The workspace, its sessions and their prompts and events. */
function sessionOptions(command: Command): Command {
  return command
    .option('--workspace <dir>', 'the served workspace (default: the current directory)', nonEmpty)
    .addOption(
      new Option('--max-pending-prompts-per-session <n>', 'outstanding prompts per session (0 = unlimited)')
        .default(DEFAULT_MAX_PENDING_PROMPTS_PER_SESSION)
        .argParser(integer(0)),
    )
    .addOption(
      new Option(
        '--prompt-deadline-ms <ms>',
        'deadline of every prompt from admission (default: none)',
      ).argParser(integer(1, MAX_TIMER_MS)),
    )
    .addOption(
      new Option(
        '--max-sessions <n>',
        `sessions over all workspaces (default: ${DEFAULT_MAX_SESSIONS})`,
      ).argParser(integer(1)),
    )
    .addOption(
      new Option(
        '--max-sessions-per-workspace <n>',
        `sessions in one workspace (default: ${DEFAULT_MAX_SESSIONS_PER_WORKSPACE})`,
      ).argParser(integer(1)),
    )
    .addOption(
      new Option(
        '--event-ring-size <n>',
        `events kept per session for replay (default: ${DEFAULT_RING_SIZE})`,
      ).argParser(integer(1, MAX_RING_SIZE)),
    )
    .addOption(
      new Option(
        '--event-ring-bytes <n>',
        `bytes one session's replay window may hold; oldest events go first (default: ${DEFAULT_EVENT_RING_BYTES})`,
      ).argParser(integer(1)),
    )
    .addOption(
      new Option(
        '--event-memory-bytes <n>',
        `bytes all replay windows may hold together (default: ${DEFAULT_EVENT_MEMORY_BYTES})`,
      ).argParser(integer(1)),
    )
    .addOption(
      new Option(
        '--session-idle-timeout-ms <ms>',
        `close a live session with no prompt, no event subscriber and no client activity for this long; it stays stored (0 = never; default: ${DEFAULT_SESSION_IDLE_TIMEOUT_MS})`,
      ).argParser(integer(0, MAX_TIMER_MS)),
    );
}

/** The model scheduler's limits and the provider behind it. */
function modelOptions(command: Command): Command {
  const limits = DEFAULT_SCHEDULER_LIMITS;
  return (
    command
      .addOption(
        new Option(
          '--model-max-concurrency <n>',
          `model calls executing at once (default: ${limits.maxConcurrency})`,
        ).argParser(integer(1)),
      )
      .addOption(
        new Option(
          '--model-max-queued <n>',
          `model calls waiting for a slot (default: ${limits.maxQueued})`,
        ).argParser(integer(0)),
      )
      // Issue 26 item 7 (docs/decisions/029): the bound of the runtime's capacity waiters.
      .addOption(
        new Option(
          '--model-max-waiting <n>',
          `model calls of accepted prompts waiting, in order, for room when the queue or the in-flight cap is full; 0 refuses them (default: ${DEFAULT_MAX_WAITING})`,
        ).argParser(integer(0)),
      )
      .addOption(
        new Option(
          '--model-max-inflight <n>',
          `model calls accepted and not yet cleaned up (default: ${limits.maxInflight}, at least --model-max-concurrency)`,
        ).argParser(integer(1)),
      )
      .addOption(
        new Option(
          '--model-max-request-bytes <n>',
          `largest model request in bytes (default: ${limits.maxRequestBytes})`,
        ).argParser(integer(1)),
      )
      .addOption(
        new Option(
          '--model-timeout-ms <ms>',
          `default model call timeout (default: ${limits.defaultTimeoutMs})`,
        ).argParser(integer(1, MAX_TIMER_MS)),
      )
      .addOption(
        new Option('--provider <name>', 'model provider').choices(['echo', 'openai']).default('echo'),
      )
      .option('--model <name>', 'model name (required for openai)', nonEmpty)
      .option(
        '--base-url <url>',
        'OpenAI-compatible base URL including /v1 (default env OPENAI_BASE_URL, then https://api.openai.com/v1)',
        nonEmpty,
      )
      .addOption(
        new Option(
          '--echo-delay-ms <ms>',
          `latency of the echo model (default: ${DEFAULT_ECHO_DELAY_MS})`,
        ).argParser(integer(0, MAX_TIMER_MS)),
      )
      .addOption(
        new Option(
          '--context-max-bytes <n>',
          `bytes of conversation history the built-in agent sends with each turn, newest first (default: ${DEFAULT_CONTEXT_MAX_BYTES})`,
        ).argParser(integer(0)),
      )
      .addOption(
        new Option(
          '--max-budgets <n>',
          `durable task budgets stored at most (POST /budgets) (default: ${DEFAULT_MAX_BUDGETS})`,
        ).argParser(integer(1)),
      )
  );
}

/** Where the journal lives, and how long shutdown and permission requests wait. */
function shutdownOptions(command: Command): Command {
  return command
    .addOption(
      new Option('--data-dir <dir>', 'directory of the journal')
        .default(DEFAULT_DATA_DIR)
        .argParser(nonEmpty),
    )
    .option(
      '--store <url>',
      'a PostgreSQL database (postgres://user@host:port/database) holding the journal and sessions, shared by a fleet of daemons (default: SQLite in --data-dir)',
      nonEmpty,
    )
    .option(
      '--advertise-url <url>',
      'where clients reach this daemon, told to a client that asks another daemon of the fleet for a session open here (with --store)',
      nonEmpty,
    )
    .addOption(
      new Option(
        '--store-lease-ms <ms>',
        `how long this daemon stays owner of its sessions and calls in --store without renewing (default: ${DEFAULT_STORE_LEASE_MS})`,
      ).argParser(integer(100, MAX_TIMER_MS)),
    )
    .addOption(
      new Option(
        '--journal-retention-days <days>',
        `delete model calls older than this from the journal, at start-up and hourly (0 = keep for ever; default: ${DEFAULT_JOURNAL_RETENTION_DAYS})`,
      ).argParser(integer(0, MAX_JOURNAL_RETENTION_DAYS)),
    )
    .addOption(
      new Option(
        '--drain-timeout-ms <ms>',
        `how long shutdown lets prompts finish (default: ${DEFAULT_DRAIN_TIMEOUT_MS})`,
      ).argParser(integer(0, MAX_TIMER_MS)),
    )
    .addOption(
      new Option(
        '--permission-response-timeout-ms <ms>',
        `an unanswered permission request picks a reject option after this long (0 = never; default ${DEFAULT_PERMISSION_RESPONSE_TIMEOUT_MS})`,
      ).argParser(integer(0, MAX_TIMER_MS)),
    );
}
