import { expect, test } from 'vitest';
import { commanderCode, ErrorReport } from '../../src/cli/error-report.js';

test('a terminal gets one readable line; commander\'s "error: " prefix and line breaks are not repeated', () => {
  const report = new ErrorReport('auto', true);
  expect(report.json).toBe(false);
  expect(report.line("error: unknown option '--x'\n(Did you mean --y?)", 'unknown_option')).toBe(
    "sluice: unknown option '--x' (Did you mean --y?) (unknown_option)\n",
  );
});

test("elsewhere, or with json, a JSON line in pino's shape carries the code and the fields", () => {
  for (const report of [new ErrorReport('auto', false), new ErrorReport('json', true)]) {
    const line = JSON.parse(report.line('no journal', 'journal_unavailable', { stack: 's' })) as object;
    expect(line).toMatchObject({
      level: 50,
      name: 'sluice',
      code: 'journal_unavailable',
      stack: 's',
      msg: 'no journal',
    });
  }
});

test('the format comes from the last --log-format of the arguments, then SLUICE_LOG_FORMAT; use() applies the parsed one', () => {
  const argv = ['node', 'sluice', 'serve', '--log-format', 'json', '--log-format=text'];
  expect(ErrorReport.fromProcess(argv, { SLUICE_LOG_FORMAT: 'json' }, false).json).toBe(false);
  expect(ErrorReport.fromProcess(['serve'], { SLUICE_LOG_FORMAT: 'text' }, false).json).toBe(false);
  expect(ErrorReport.fromProcess(['serve', '--', '--log-format', 'text'], {}, false).json).toBe(true);
  const report = ErrorReport.fromProcess(['serve', '--log-format', 'yaml'], {}, true);
  expect(report.json).toBe(false); // an unknown value leaves auto; commander refuses it
  report.use('json');
  expect(report.json).toBe(true);
});

test("commander's codes read like Sluice's", () => {
  expect(commanderCode('commander.unknownOption')).toBe('unknown_option');
  expect(commanderCode('commander.optionMissingArgument')).toBe('option_missing_argument');
  expect(commanderCode('commander.invalidArgument')).toBe('invalid_argument');
});
