import { SETTING_ENTRIES } from './table.js';
import { TOPICS, flagName, variableNames, type Setting } from '../kinds/index.js';

/** The command that rewrites docs/reference/configuration.md from the table. */
export const REFERENCE_COMMAND = 'npm run docs:configuration';

/** A table cell: pipes escaped, nothing on a second line. */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function code(text: string | undefined): string {
  return text === undefined ? '' : `\`${text}\``;
}

/** The default as the reference states it. */
function defaultOf(setting: Setting<unknown, unknown>): string {
  if (setting.default !== undefined) return code(JSON.stringify(setting.default));
  return setting.defaultText ?? '';
}

/** The variables that set it, in the order they are read. */
function variablesOf(setting: Setting<unknown, unknown>): string {
  return variableNames(setting).map(code).join(', ');
}

/** Where a setting applies: both commands, `serve` only, or a host's `DaemonConfig` only. */
function appliesTo(key: string, setting: Setting<unknown, unknown>): string {
  const config = setting.scope === 'daemon' ? `\`${setting.config ?? key}\`` : '';
  if (setting.flag === undefined) return `${config} (host only)`;
  return setting.scope === 'serve' ? 'serve' : `serve, acp${config === '' ? '' : `; ${config}`}`;
}

/** One topic's rows. */
function topicTable(topic: string): string[] {
  const rows = SETTING_ENTRIES.filter(([, setting]) => setting.topic === topic).map(([key, setting]) =>
    [
      setting.flag === undefined ? '' : code(setting.flag),
      variablesOf(setting),
      code(flagName(setting)),
      cell(setting.kind.describe),
      cell(defaultOf(setting)),
      appliesTo(key, setting),
      cell(setting.help),
    ].join(' | '),
  );
  return [
    `## ${topic[0]!.toUpperCase()}${topic.slice(1)}`,
    '',
    '| Flag | Environment | TOML key | Type | Default | Commands; `DaemonConfig` key | Meaning |',
    '| --- | --- | --- | --- | --- | --- | --- |',
    ...rows.map((row) => `| ${row} |`),
    '',
  ];
}

/** docs/reference/configuration.md, generated from the settings table (settings/). */
export function configurationReference(): string {
  return [
    '# Configuration reference',
    '',
    `<!-- Generated from packages/daemon/src/settings by \`${REFERENCE_COMMAND}\`; do not edit. -->`,
    '',
    "Every setting of `sluice serve` and `sluice acp` (`acp` has all but the HTTP server's), and of",
    '`DaemonConfig` for a host that embeds the daemon (`createDaemon`). A setting is read, the first',
    'found winning, from: the command line; the `--config` TOML file (its key is the flag without',
    '`--`); the environment (`SLUICE_` and the flag in upper snake case); the default. A flag without',
    'a value (`--require-auth`, `--no-metrics`) is set by its variable whatever the variable holds.',
    "The token is read by `serve` itself: `--token` (or the file's `token`), then `SLUICE_TOKEN`,",
    'then `QWEN_SERVER_TOKEN`; an empty one is refused.',
    '',
    ...TOPICS.flatMap((topic) => topicTable(topic)),
  ].join('\n');
}
