export { collectOrigin, integer, nonEmpty } from './argument-parsers.js';
export { agentList, type AgentConfig, type AgentTable } from './agent-kind.js';
export {
  flag,
  httpUrl,
  int,
  matching,
  oneOf,
  origins,
  redisUrl,
  text,
  type IntOptions,
  type Kind,
} from './kinds.js';
export {
  TOPICS,
  environmentName,
  variableNames,
  flagName,
  type ConfigKey,
  type ConfigOf,
  type ConfigValue,
  type EnvironmentVariable,
  type Setting,
  type SettingTable,
  type Topic,
} from './setting.js';
