import type { Command } from 'commander';
import type { ErrorReport } from './error-report.js';
import { addJournalCommand } from './journal/journal-options.js';
import { addStatusCommand } from './status/status-options.js';

/** The operator's commands, `sluice status` and `sluice journal`, added to `program`; returns it. */
export function operatorCommands(program: Command, report: ErrorReport): Command {
  addStatusCommand(program, report);
  addJournalCommand(program, report);
  return program;
}
