import { Option, type Command } from 'commander';
import { DEFAULT_DATA_DIR } from '../../defaults.js';
import { integer, nonEmpty } from '../../kinds/index.js';
import { timeBound } from './time-bound.js';
import type { JournalOptions } from './journal-command.js';
import { operatorCommandSignal } from '../command-signal.js';
import type { ErrorReport } from '../error-report.js';
import { tableOption } from '../setting-options.js';

/** Records `sluice journal` prints without `--limit`. */
export const DEFAULT_JOURNAL_LIMIT = 100;
/** How often `--follow` looks for new records. */
export const DEFAULT_FOLLOW_POLL_MS = 500;

/**
 * `sluice journal`: the model calls recorded in a data directory's SQLite journal, filtered,
 * without raw SQL. Read-only and lock-free, so it runs beside the daemon.
 */
export function addJournalCommand(program: Command, report: ErrorReport): Command {
  return program
    .command('journal')
    .description(
      'Print the model calls recorded in the journal (read-only; works while the daemon runs). ' +
        'Prompt and answer text are hidden unless --show-content is given: by default a record shows ' +
        'ids, codes, sizes, usage and timings only.',
    )
    .addOption(
      new Option('--data-dir <dir>', "the daemon's data directory")
        .default(DEFAULT_DATA_DIR)
        .argParser(nonEmpty),
    )
    .option(
      '--store <url>',
      "a fleet's PostgreSQL database (postgres://user@host:port/database), read instead of --data-dir",
      nonEmpty,
    )
    .option('--session <id>', 'only the calls of this session', nonEmpty)
    .option('--prompt <id>', 'only the calls made for this prompt (its promptId)', nonEmpty)
    .option(
      '--code <code>',
      'only results with this stop reason (end_turn, …) or error code (model_timeout, …)',
      nonEmpty,
    )
    .addOption(
      new Option(
        '--since <time>',
        'records at or after this time: ISO 8601, or a duration ago (10m, 2h, 7d)',
      ).argParser(timeBound),
    )
    .addOption(
      new Option('--until <time>', 'records before this time (same forms as --since)').argParser(timeBound),
    )
    .addOption(
      new Option('--limit <n>', 'print the newest n matching records (0 = all)')
        .default(DEFAULT_JOURNAL_LIMIT)
        .argParser(integer(0)),
    )
    .option('-f, --follow', 'keep printing new records as they are committed, until interrupted')
    .addOption(
      new Option('--poll-ms <ms>', 'how often --follow looks for new records')
        .default(DEFAULT_FOLLOW_POLL_MS)
        .argParser(integer(10, 60_000)),
    )
    .option('--json', 'one JSON object per line (the record and its seq; redacted unless --show-content)')
    .option('--show-content', 'also print prompt and answer text, tool-call arguments and error messages')
    .addOption(tableOption('logFormat'))
    .action(async (options: JournalOptions & { logFormat: string }) => {
      report.use(options.logFormat);
      if (options.follow && options.store !== undefined) {
        // Daemons of a fleet commit their batches out of seq order: a poll could skip a record.
        const message = '--follow reads a --data-dir journal only; with --store, run the command again';
        process.stderr.write(report.line(message, 'invalid_config'));
        process.exit(1);
      }
      const { journalFailure, runJournal } = await import('./journal-command.js');
      const signal = operatorCommandSignal();
      try {
        await runJournal(options, process.stdout, signal);
      } catch (error) {
        const failure = journalFailure(error);
        if (failure === undefined) throw error;
        process.stderr.write(report.line(failure.message, failure.code));
        process.exit(1);
      }
    });
}
