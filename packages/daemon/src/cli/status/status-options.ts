import { InvalidArgumentError, Option, type Command } from 'commander';
import { MAX_TIMER_MS } from '@sluice/runtime';
import { integer } from '../../kinds/index.js';
import type { StatusOptions } from './status-command.js';
import { operatorCommandSignal } from '../command-signal.js';

/** Where `sluice status` looks without `--url`: the default bind of `sluice serve`. */
export const DEFAULT_STATUS_URL = 'http://127.0.0.1:4170';
/** `--watch` without a value redraws this often. */
export const DEFAULT_WATCH_MS = 2_000;
/** Live sessions `sluice status` lists without `--sessions`. */
export const DEFAULT_STATUS_SESSIONS = 100;

/** An `http(s)://host[:port]` base URL. */
function baseUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new InvalidArgumentError('must be a URL such as http://127.0.0.1:4170');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new InvalidArgumentError('must be an http:// or https:// URL');
  return url.origin;
}

/** `sluice status`: a running daemon's scheduler, sessions and pending prompts, over its HTTP API. */
export function addStatusCommand(program: Command): Command {
  return program
    .command('status')
    .description(
      "Show a running daemon's model scheduler, live sessions and pending prompts (sizes and ids; no prompt text).",
    )
    .addOption(
      new Option(
        '--url <url>',
        'the daemon to ask (https:// for a daemon with --tls-cert; its CA from the system or NODE_EXTRA_CA_CERTS)',
      )
        .default(DEFAULT_STATUS_URL)
        .argParser(baseUrl),
    )
    .option('--token <token>', 'bearer token (default env SLUICE_TOKEN, then QWEN_SERVER_TOKEN)')
    .option('--json', 'print the status as one JSON object (one per line with --watch)')
    .addOption(
      new Option(
        '--watch [ms]',
        `redraw every ms milliseconds (default ${DEFAULT_WATCH_MS}) until interrupted`,
      )
        .preset(String(DEFAULT_WATCH_MS)) // given to the parser below like a typed value
        .argParser(integer(100, MAX_TIMER_MS)),
    )
    .addOption(
      new Option('--sessions <n>', 'list at most n sessions')
        .default(DEFAULT_STATUS_SESSIONS)
        .argParser(integer(1, 1000)),
    )
    .action(async (options: StatusOptions) => {
      const { runStatus } = await import('./status-command.js');
      const signal = operatorCommandSignal();
      const output = { out: process.stdout, err: process.stderr, terminal: process.stdout.isTTY === true };
      process.exitCode = await runStatus(options, process.env, output, signal);
    });
}
