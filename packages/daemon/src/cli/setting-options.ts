import { Option, type Command } from 'commander';
import { environmentHelp } from './environment.js';
import { TOPICS, environmentName, type Setting } from '../kinds/index.js';
import { SETTINGS, SETTING_ENTRIES } from '../settings/index.js';

/** `--help`'s heading of a topic: `Model scheduler:`. */
function heading(topic: string): string {
  return `${topic[0]!.toUpperCase()}${topic.slice(1)}:`;
}

/** The commander option of a setting: its flag, parser, choices, default, variable and help group. */
export function settingOption(setting: Setting<unknown, unknown> & { flag: string }): Option {
  const { kind } = setting;
  const option = new Option(setting.flag, setting.help).helpGroup(heading(setting.topic));
  if (kind.parse !== undefined) option.argParser(kind.parse);
  if (kind.choices !== undefined) option.choices(kind.choices);
  if (setting.default !== undefined || setting.defaultText !== undefined)
    option.default(setting.default, setting.defaultText);
  const variable = environmentName(setting);
  if (variable !== undefined) option.env(variable);
  if (setting.hidden === true) option.hideHelp();
  return option;
}

/** The commander option of the setting named `key`, for a command outside the table's (`status`, `journal`). */
export function tableOption(key: keyof typeof SETTINGS): Option {
  return settingOption(SETTINGS[key] as Setting<unknown, unknown> & { flag: string });
}

/** An option's line in `--help`: its help, then `(choices: …)`, `(default: …)` and `(env: …)`. */
function describeOption(option: Option): string {
  const shown =
    option.defaultValueDescription ??
    (option.defaultValue === undefined ? undefined : JSON.stringify(option.defaultValue));
  return [
    option.description,
    option.argChoices && `(choices: ${option.argChoices.map((choice) => JSON.stringify(choice)).join(', ')})`,
    shown !== undefined && `(default: ${shown})`,
    option.envVar !== undefined && `(env: ${option.envVar})`,
  ]
    .filter(Boolean)
    .join(' ');
}

/** `sluice <name>` with the options of the settings table (`http`: the HTTP server's too). */
export function daemonCommand(
  program: Command,
  name: string,
  description: string,
  scope: { http: boolean },
): Command {
  return settingOptions(
    program.command(name).description(description).addHelpText('after', environmentHelp),
    scope,
  );
}

/**
 * The options of `sluice serve` (`http`: the HTTP server's too) or `sluice acp`, from the settings
 * table, grouped by topic in `--help`.
 */
export function settingOptions(command: Command, { http }: { http: boolean }): Command {
  const settings = SETTING_ENTRIES.map(([, setting]) => setting).filter(
    (setting): setting is Setting<unknown, unknown> & { flag: string } =>
      setting.flag !== undefined && (http || setting.scope !== 'serve'),
  );
  command.configureHelp({ optionDescription: describeOption });
  for (const topic of TOPICS)
    for (const setting of settings) if (setting.topic === topic) command.addOption(settingOption(setting));
  return command;
}
