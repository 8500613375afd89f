export { collectOrigin, collectString, integer, nonEmpty } from './argument-parsers.js';
export type { AgentConfig, AgentTable } from './agent-kind.js';
export type { Kind } from './kinds.js';
export {
  TOPICS,
  environmentName,
  flagName,
  type EnvironmentVariable,
  type Setting,
  type SettingTable,
  type Topic,
} from './setting.js';
export {
  SETTINGS,
  SETTING_ENTRIES,
  type CommandOptions,
  type DaemonSettings,
  type DefaultedSetting,
} from './table.js';
