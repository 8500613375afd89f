import type { Command } from 'commander';
import { addJournalCommand } from './journal/journal-options.js';
import { addStatusCommand } from './status/status-options.js';

/** The operator's commands, `sluice status` and `sluice journal`, added to `program`; returns it. */
export function operatorCommands(program: Command): Command {
  addStatusCommand(program);
  addJournalCommand(program);
  return program;
}
