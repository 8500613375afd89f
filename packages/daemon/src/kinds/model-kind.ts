import { InvalidArgumentError } from 'commander';
import type { Kind } from './kinds.js';

/** A `[[model]]` table of the config file: its keys are checked where the catalogue is read (models/). */
export type ModelTable = Readonly<Record<string, unknown>>;

function isTableList(value: unknown): value is ModelTable[] {
  return (
    Array.isArray(value) &&
    value.length > 0 &&
    value.every((table) => typeof table === 'object' && table !== null && !Array.isArray(table))
  );
}

/**
 * The model catalogue: `[[model]]` tables in a config file, or their JSON array as the flag's
 * text (`--models '[{"name":"fast",…}]'`). Each table's keys are validated by models/.
 */
export const modelTables: Kind<ModelTable[]> = {
  describe: 'array of model tables ([[model]] in a config file, JSON on the command line)',
  parse: (raw) => {
    let value: unknown;
    try {
      value = JSON.parse(raw);
    } catch {
      throw new InvalidArgumentError(
        'must be a JSON array of model tables, e.g. [{"name":"fast","provider":"echo"}]',
      );
    }
    if (!isTableList(value)) throw new InvalidArgumentError('must be a non-empty JSON array of model tables');
    return value;
  },
  violation: (value) => (isTableList(value) ? undefined : 'must be a non-empty array of model tables'),
};
